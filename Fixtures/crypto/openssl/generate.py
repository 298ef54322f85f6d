#!/usr/bin/env python3
"""Deterministic differential test vectors for KeychainFile's crypto, computed by OpenSSL.

Every input (lengths and bytes) comes from random.Random seeded with SEED; every
output is computed by OpenSSL through the `cryptography` package (hashes.SHA256,
hmac.HMAC, HKDF, PBKDF2HMAC, AESGCM). Nothing here is computed by KeychainFile.

Usage, from the repository root:

    python3 Fixtures/crypto/openssl/generate.py          # (re)write the JSON files
    python3 Fixtures/crypto/openssl/generate.py --check  # exit 1 if a file would change

Output is byte-identical for the same SEED, script and OpenSSL build: fixed key
order, one case per line, lowercase hex, "\\n" line endings.
"""

import json
import os
import random
import sys

from cryptography.hazmat.backends.openssl import backend as _openssl_backend
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as crypto_hmac
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

SEED = 20260101
OUT_DIR = os.path.dirname(os.path.abspath(__file__))

# Lengths that sit on or next to SHA-256 (64-byte block, 55/56 padding boundary)
# and AES (16-byte block) boundaries; each appears in every message-like stream.
EDGE_LENGTHS = [0, 1, 15, 16, 17, 31, 32, 33, 55, 56, 57, 63, 64, 65, 127, 128, 129,
                255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 4098, 4099]
MAX_MSG = 4099

COUNTS = {"sha256": 500, "hmac_sha256": 400, "hkdf_sha256": 300,
          "pbkdf2_sha256": 200, "aes256_gcm": 1000}

# Each file gets its own stream so changing one count does not reshuffle the others.
STREAM = {"sha256": 1, "hmac_sha256": 2, "hkdf_sha256": 3, "pbkdf2_sha256": 4, "aes256_gcm": 5}


def rng_for(name):
    return random.Random(SEED * 100 + STREAM[name])


def rand_bytes(rng, n):
    # getrandbits + to_bytes is stable across Python 3 versions.
    if n == 0:
        return b""
    return rng.getrandbits(8 * n).to_bytes(n, "big")


def skewed_len(rng, maximum=MAX_MSG):
    """A length in [0, maximum], mostly small."""
    r = rng.random()
    if r < 0.55:
        return rng.randint(0, min(64, maximum))
    if r < 0.85:
        return rng.randint(0, min(512, maximum))
    return rng.randint(0, maximum)


def msg_lengths(rng, count):
    lengths = list(EDGE_LENGTHS)
    while len(lengths) < count:
        lengths.append(skewed_len(rng))
    return lengths[:count]


def sha256(data):
    h = hashes.Hash(hashes.SHA256())
    h.update(data)
    return h.finalize()


def hmac_sha256(key, data):
    h = crypto_hmac.HMAC(key, hashes.SHA256())
    h.update(data)
    return h.finalize()


def gen_sha256():
    rng = rng_for("sha256")
    cases = []
    for n in msg_lengths(rng, COUNTS["sha256"]):
        msg = rand_bytes(rng, n)
        cases.append({"msg": msg.hex(), "digest": sha256(msg).hex()})
    return cases


def gen_hmac():
    rng = rng_for("hmac_sha256")
    count = COUNTS["hmac_sha256"]
    # Every key length 0..200 once (covers 64, 65, 128), then random ones.
    key_lengths = list(range(0, 201))
    while len(key_lengths) < count:
        key_lengths.append(rng.randint(0, 200))
    data_lengths = msg_lengths(rng, count)
    cases = []
    for klen, dlen in zip(key_lengths, data_lengths):
        key = rand_bytes(rng, klen)
        data = rand_bytes(rng, dlen)
        cases.append({"key": key.hex(), "data": data.hex(), "mac": hmac_sha256(key, data).hex()})
    return cases


def gen_hkdf():
    rng = rng_for("hkdf_sha256")
    count = COUNTS["hkdf_sha256"]
    max_len = 255 * 32
    fixed_out = [1, 2, 16, 31, 32, 33, 63, 64, 65, 96, 255, 256, 1000, max_len - 1, max_len]
    fixed_salt = [0, 0, 0, 1, 31, 32, 33, 63, 64, 65, 128]
    cases = []
    for i in range(count):
        if i < len(fixed_out):
            length = fixed_out[i]
        elif rng.random() < 0.85:
            length = rng.randint(1, 96)
        else:
            length = rng.randint(1, max_len)
        salt_len = fixed_salt[i] if i < len(fixed_salt) else (0 if rng.random() < 0.15 else rng.randint(1, 100))
        ikm = rand_bytes(rng, rng.randint(0, 100))
        salt = rand_bytes(rng, salt_len)
        info = rand_bytes(rng, 0 if rng.random() < 0.2 else rng.randint(1, 100))
        # An empty salt is passed as b"": HMAC pads its key with zeros, so this is
        # the same as RFC 5869's "HashLen zeros" default (what salt=None gives).
        okm = HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)
        cases.append({"ikm": ikm.hex(), "salt": salt.hex(), "info": info.hex(),
                      "length": length, "okm": okm.hex()})
    return cases


def gen_pbkdf2():
    rng = rng_for("pbkdf2_sha256")
    count = COUNTS["pbkdf2_sha256"]
    fixed_dklen = [1, 16, 31, 32, 33, 63, 64, 65, 96, 100]
    fixed_pw = [0, 1, 32, 63, 64, 65, 100, 128]
    cases = []
    for i in range(count):
        dklen = fixed_dklen[i] if i < len(fixed_dklen) else rng.randint(1, 100)
        pw_len = fixed_pw[i] if i < len(fixed_pw) else rng.randint(0, 100)
        salt_len = 0 if i in (0, 1) else rng.randint(1, 64)
        iterations = 1 if i < 3 else rng.randint(1, 64)
        password = rand_bytes(rng, pw_len)
        salt = rand_bytes(rng, salt_len)
        dk = PBKDF2HMAC(algorithm=hashes.SHA256(), length=dklen, salt=salt,
                        iterations=iterations).derive(password)
        cases.append({"password": password.hex(), "salt": salt.hex(), "iterations": iterations,
                      "dklen": dklen, "dk": dk.hex()})
    return cases


def gen_gcm():
    rng = rng_for("aes256_gcm")
    count = COUNTS["aes256_gcm"]
    pt_lengths = msg_lengths(rng, count)
    fixed_aad = [0, 1, 15, 16, 17, 31, 32, 33, 300]
    cases = []
    for i, plen in enumerate(pt_lengths):
        if i < len(fixed_aad):
            alen = fixed_aad[-1 - i]  # pair edge AAD lengths with edge plaintext lengths
        elif rng.random() < 0.3:
            alen = 0
        elif rng.random() < 0.7:
            alen = rng.randint(1, 64)
        else:
            alen = rng.randint(0, 300)
        key = rand_bytes(rng, 32)
        iv = rand_bytes(rng, 12)
        aad = rand_bytes(rng, alen)
        pt = rand_bytes(rng, plen)
        sealed = AESGCM(key).encrypt(iv, pt, aad)
        ct, tag = sealed[:-16], sealed[-16:]
        cases.append({"key": key.hex(), "iv": iv.hex(), "aad": aad.hex(), "plaintext": pt.hex(),
                      "ciphertext": ct.hex(), "tag": tag.hex()})
    return cases


GENERATORS = [
    ("sha256.json", gen_sha256, ["msg", "digest"]),
    ("hmac_sha256.json", gen_hmac, ["key", "data", "mac"]),
    ("hkdf_sha256.json", gen_hkdf, ["ikm", "salt", "info", "length", "okm"]),
    ("pbkdf2_sha256.json", gen_pbkdf2, ["password", "salt", "iterations", "dklen", "dk"]),
    ("aes256_gcm.json", gen_gcm, ["key", "iv", "aad", "plaintext", "ciphertext", "tag"]),
]


def render(cases, keys):
    openssl = _openssl_backend.openssl_version_text()
    lines = []
    for case in cases:
        lines.append("{" + ",".join(json.dumps(k) + ":" + json.dumps(case[k]) for k in keys) + "}")
    text = ('{"generator":"generate.py","seed":%d,"openssl":%s,"cases":[\n' % (SEED, json.dumps(openssl))
            + ",\n".join(lines) + "\n]}\n")
    json.loads(text)  # sanity: the output parses
    return text


def main(argv):
    check = "--check" in argv
    stale = []
    for filename, gen, keys in GENERATORS:
        cases = gen()
        text = render(cases, keys)
        path = os.path.join(OUT_DIR, filename)
        if check:
            try:
                with open(path, "r", encoding="ascii", newline="") as f:
                    current = f.read()
            except OSError:
                current = None
            if current != text:
                stale.append(filename)
            print("%-20s %5d cases %s" % (filename, len(cases), "OK" if current == text else "DIFFERS"))
        else:
            with open(path, "w", encoding="ascii", newline="\n") as f:
                f.write(text)
            print("%-20s %5d cases %8d bytes" % (filename, len(cases), len(text)))
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

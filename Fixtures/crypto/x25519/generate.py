#!/usr/bin/env python3
"""Deterministic differential test vectors for KeychainCrypto's X25519, computed by OpenSSL.

Every input comes from random.Random seeded with SEED; every output is computed by
OpenSSL through the `cryptography` package (X25519PrivateKey, X25519PublicKey).
Nothing here is computed by KeychainFile.

Each case has a 32-byte private key (unclamped: OpenSSL clamps it, as RFC 7748 §5 says),
its public key, a 32-byte peer u-coordinate and the shared secret, or null where OpenSSL
refuses to agree because the secret would be all zeros (RFC 7748 §6.1). Peer values
include non-canonical encodings p … 2^255 − 1 (p = 2^255 − 19), encodings with the top bit
(bit 255) set, which RFC 7748 §5 says to ignore, small values, random 32-byte strings
(points on the curve or on its twist) and public keys of random private keys.

Usage, from the repository root (needs `pip install cryptography`):

    python3 Fixtures/crypto/x25519/generate.py          # (re)write x25519_openssl.json
    python3 Fixtures/crypto/x25519/generate.py --check  # exit 1 if the cases would change

Output is byte-identical for the same SEED and script: fixed key order, one case per
line, lowercase hex, "\\n" line endings.
"""

import os
import random
import sys

import cryptography
from cryptography.hazmat.backends.openssl.backend import backend
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

SEED = 20260104
COUNT = 300
OUT_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(OUT_DIR))
import casefile  # noqa: E402  (Fixtures/crypto/casefile.py)
FILENAME = "x25519_openssl.json"
KEYS = ["private", "own_public", "peer_public", "shared"]
P = 2**255 - 19


def rand_bytes(rng, n):
    return rng.getrandbits(8 * n).to_bytes(n, "big")


def encode(value):
    return value.to_bytes(32, "little")


def peer_value(rng, i):
    """The peer's u-coordinate encoding for case i (32 bytes, little-endian)."""
    if i < 19:
        return encode(P + i)                       # non-canonical: p + i ≡ i
    if i < 38:
        return encode((P + i - 19) | 1 << 255)     # non-canonical and top bit set
    if i < 58:
        return encode(i - 38)                      # small values 0 … 19
    if i < 78:
        return encode((i - 58) | 1 << 255)         # small values with the top bit set
    kind = rng.random()
    if kind < 0.5:
        peer = X25519PrivateKey.from_private_bytes(rand_bytes(rng, 32))
        return peer.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    if kind < 0.6:
        public = X25519PrivateKey.from_private_bytes(rand_bytes(rng, 32)).public_key()
        raw = bytearray(public.public_bytes(Encoding.Raw, PublicFormat.Raw))
        raw[31] |= 0x80                            # a real public key with the top bit set
        return bytes(raw)
    if kind < 0.8:
        raw = bytearray(rand_bytes(rng, 32))
        raw[31] &= 0x7F                            # random: on the curve or on its twist
        return bytes(raw)
    return rand_bytes(rng, 32)                     # random, top bit as it falls


# Private keys whose clamping matters most: zero, all ones, only bit 0, only bit 255.
FIXED_PRIVATE = {0: bytes(32), 1: b"\xff" * 32, 2: bytes([1] + [0] * 31), 3: bytes([0] * 31 + [0x80])}


def private_value(rng, i):
    drawn = rand_bytes(rng, 32)                    # drawn every time, so the stream does not depend on i
    return FIXED_PRIVATE.get(i % 97, drawn)


def cases():
    rng = random.Random(SEED)
    result = []
    for i in range(COUNT):
        private_bytes = private_value(rng, i)
        peer_bytes = peer_value(rng, i)
        private = X25519PrivateKey.from_private_bytes(private_bytes)
        own_public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        try:
            shared = private.exchange(X25519PublicKey.from_public_bytes(peer_bytes)).hex()
        except ValueError:
            shared = None                           # OpenSSL refuses an all-zero shared secret
        result.append({"private": private_bytes.hex(), "own_public": own_public.hex(),
                       "peer_public": peer_bytes.hex(), "shared": shared})
    return result


def main(argv):
    items = cases()
    text = casefile.render(items, KEYS, SEED, [("cryptography", cryptography.__version__), ("openssl", backend.openssl_version_text())])
    note = " (%d refused)" % sum(1 for c in items if c["shared"] is None)
    return casefile.write_or_check(OUT_DIR, FILENAME, text, len(items), argv, 22, note)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

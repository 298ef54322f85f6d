#!/usr/bin/env python3
"""Deterministic differential test vectors for KeychainCrypto's Argon2, computed by argon2-cffi.

Every input comes from random.Random seeded with SEED; every tag is computed by the
Argon2 reference C code (phc-winner-argon2) through argon2-cffi's low-level
`argon2.low_level.core`, which takes the whole argon2_context, so the secret K and
the associated data X are covered too. Nothing here is computed by KeychainFile.

Usage, from the repository root (needs `pip install argon2-cffi`):

    python3 Fixtures/crypto/argon2/generate.py          # (re)write argon2_cffi.json
    python3 Fixtures/crypto/argon2/generate.py --check  # exit 1 if the file would change

Output is byte-identical for the same SEED and script: fixed key order, one case
per line, lowercase hex, "\\n" line endings.
"""

import os
import random
import sys
from importlib.metadata import version

from argon2.low_level import ARGON2_VERSION, Type, core, ffi

SEED = 20260102
COUNT = 160
OUT_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(OUT_DIR))
import casefile  # noqa: E402  (Fixtures/crypto/casefile.py)
FILENAME = "argon2_cffi.json"
TYPES = {"argon2d": Type.D, "argon2i": Type.I, "argon2id": Type.ID}
KEYS = ["type", "t", "m", "p", "password", "salt", "secret", "ad", "taglen", "tag"]
# Tag lengths on the H' boundaries (64: one BLAKE2b; 65: the chained form) and the limits.
EDGE_TAGLENS = [4, 5, 16, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 1024]


def rand_bytes(rng, n):
    return rng.getrandbits(8 * n).to_bytes(n, "big") if n else b""


def argon2(kind, t, m, p, password, salt, secret, ad, taglen):
    """The tag, through the reference implementation's argon2_ctx."""
    out = ffi.new("uint8_t[]", taglen)
    keep = []  # keep the cffi buffers alive until core() returns

    def buf(data):
        b = ffi.new("uint8_t[]", data) if data else ffi.NULL
        keep.append(b)
        return b

    ctx = ffi.new("argon2_context *", dict(
        out=out, outlen=taglen, pwd=buf(password), pwdlen=len(password),
        salt=buf(salt), saltlen=len(salt), secret=buf(secret), secretlen=len(secret),
        ad=buf(ad), adlen=len(ad), t_cost=t, m_cost=m, lanes=p, threads=p,
        version=ARGON2_VERSION, allocate_cbk=ffi.NULL, free_cbk=ffi.NULL, flags=0))
    result = core(ctx, TYPES[kind].value)
    if result != 0:
        raise RuntimeError("argon2 error %d" % result)
    return bytes(ffi.buffer(out, taglen))


def cases():
    rng = random.Random(SEED)
    kinds = list(TYPES)
    # Fixed cases first: empty and long passwords, every tag length edge, segments of more than
    # 128 blocks (several address blocks per segment), memory not a multiple of 4p (rounded down).
    fixed = [
        dict(password=b"", t=1, m=8, p=1),
        dict(password=b"", t=2, m=64, p=4),
        dict(password=bytes(range(256)) * 4, t=1, m=16, p=2),
        dict(password=rand_bytes(rng, 1000), t=3, m=33, p=1),
        dict(t=1, m=1024, p=1),
        dict(t=2, m=1100, p=2),
        dict(t=1, m=2048, p=4),
        dict(t=1, m=37, p=3),
        dict(t=4, m=8 * 8, p=8),
        dict(t=1, m=8 * 16, p=16),
    ]
    result = []
    for i in range(COUNT):
        spec = dict(fixed[i // 3]) if i < 3 * len(fixed) else {}
        kind = kinds[i % 3]
        p = spec.get("p", rng.choice([1, 1, 1, 2, 2, 3, 4, 4, 8]))
        t = spec.get("t", rng.randint(1, 4))
        m = spec.get("m", rng.randint(8 * p, max(8 * p, 256)))
        taglen = EDGE_TAGLENS[i] if i < len(EDGE_TAGLENS) else rng.randint(4, 200)
        password = spec.get("password", rand_bytes(rng, rng.randint(0, 100)))
        salt = rand_bytes(rng, 8 if i % 7 == 0 else rng.randint(8, 64))
        secret = b"" if rng.random() < 0.6 else rand_bytes(rng, rng.randint(1, 64))
        ad = b"" if rng.random() < 0.6 else rand_bytes(rng, rng.randint(1, 64))
        tag = argon2(kind, t, m, p, password, salt, secret, ad, taglen)
        result.append({"type": kind, "t": t, "m": m, "p": p, "password": password.hex(),
                       "salt": salt.hex(), "secret": secret.hex(), "ad": ad.hex(),
                       "taglen": taglen, "tag": tag.hex()})
    return result


def main(argv):
    items = cases()
    text = casefile.render(items, KEYS, SEED, [("argon2-cffi", version("argon2-cffi")), ("argon2-cffi-bindings", version("argon2-cffi-bindings"))])
    return casefile.write_or_check(OUT_DIR, FILENAME, text, len(items), argv, 20)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

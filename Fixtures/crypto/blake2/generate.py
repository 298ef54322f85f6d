#!/usr/bin/env python3
"""Deterministic differential test vectors for KeychainCrypto's BLAKE2b, computed by hashlib.

Every input comes from random.Random seeded with SEED; every digest is computed by
Python's hashlib.blake2b, which is the BLAKE2 reference implementation's C code
(CPython Modules/_blake2, from the BLAKE2 authors' sources). Nothing here is
computed by KeychainFile.

Usage, from the repository root (Python 3.6 or later, no packages needed):

    python3 Fixtures/crypto/blake2/generate.py          # (re)write blake2b_hashlib.json
    python3 Fixtures/crypto/blake2/generate.py --check  # exit 1 if the file would change

Output is byte-identical for the same SEED and script: fixed key order, one case
per line, lowercase hex, "\\n" line endings.
"""

import hashlib
import os
import random
import sys

SEED = 20260103
COUNT = 500
OUT_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(OUT_DIR))
import casefile  # noqa: E402  (Fixtures/crypto/casefile.py)
FILENAME = "blake2b_hashlib.json"
KEYS = ["msg", "key", "outlen", "digest"]
# Lengths on and next to the 128-byte block boundary: BLAKE2b keeps a full block back
# until it knows whether more data follows.
EDGE_LENGTHS = [0, 1, 63, 64, 65, 127, 128, 129, 255, 256, 257, 383, 384, 385, 1023, 1024, 1025, 4096, 4097]


def rand_bytes(rng, n):
    return rng.getrandbits(8 * n).to_bytes(n, "big") if n else b""


def cases():
    rng = random.Random(SEED)
    result = []
    for i in range(COUNT):
        if i < len(EDGE_LENGTHS):
            length = EDGE_LENGTHS[i]
        elif rng.random() < 0.7:
            length = rng.randint(0, 300)
        else:
            length = rng.randint(0, 5000)
        # Every output length 1..64 and every key length 0..64 appear early on; then random ones.
        outlen = (i % 64) + 1 if i < 128 else rng.randint(1, 64)
        keylen = (i % 65) if i < 130 else (0 if rng.random() < 0.3 else rng.randint(1, 64))
        msg = rand_bytes(rng, length)
        key = rand_bytes(rng, keylen)
        digest = hashlib.blake2b(msg, digest_size=outlen, key=key).digest()
        result.append({"msg": msg.hex(), "key": key.hex(), "outlen": outlen, "digest": digest.hex()})
    return result


def main(argv):
    items = cases()
    text = casefile.render(items, KEYS, SEED, [("python", sys.version.split()[0])])
    return casefile.write_or_check(OUT_DIR, FILENAME, text, len(items), argv, 22)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

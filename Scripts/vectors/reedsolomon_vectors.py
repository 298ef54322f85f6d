#!/usr/bin/env python3
"""Writes the Reed-Solomon differential vectors the Swift tests read (Fixtures/healing/reedsolomon.json).

A second, independent implementation -- Python's `reedsolo` (pip install reedsolo; a test-only tool, the
library never uses it) -- encodes seeded random data and decodes seeded random damage; the Swift codec must
produce the same parity and the same repaired message. The output is committed, so the tests need no pip.

    python3 Scripts/vectors/reedsolomon_vectors.py > Fixtures/healing/reedsolomon.json

Conventions, checked below rather than assumed: GF(2^8) with the primitive polynomial 0x11d, generator
alpha = 2, first consecutive root fcr = 0, so g(x) = (x - a^0)(x - a^1)...(x - a^(nsym-1)); the message is
the high-degree end of the codeword (first byte = highest degree) and the parity follows it. These are
`reedsolo`'s defaults and `ReedSolomonCode`'s conventions.

Every damaged codeword here is within the code's reach (2 * errors + erasures <= nsym), where any correct
decoder must return the original message; reedsolo's answer is checked against it before it is written.
"""
import json
import random
import sys

import reedsolo

SEED = 0x5EED_2026
PRIM, GENERATOR, FCR = 0x11D, 2, 0


def check_conventions():
    codec = reedsolo.RSCodec(32)
    assert (codec.prim, codec.generator, codec.fcr) == (PRIM, GENERATOR, FCR), "reedsolo defaults changed"
    reedsolo.init_tables(PRIM, GENERATOR, 8)
    assert reedsolo.gf_exp[1] == 2 and reedsolo.gf_exp[8] == 0x1D, "alpha = 2 over 0x11d"
    # The generator's roots are alpha^0 .. alpha^(nsym-1).
    g = reedsolo.rs_generator_poly(4, FCR, GENERATOR)
    assert all(reedsolo.gf_poly_eval(g, reedsolo.gf_pow(2, i)) == 0 for i in range(4))


def make_case(rng, nsym, data_length, errors, erasures):
    data = bytes(rng.randrange(256) for _ in range(data_length))
    codeword = bytes(reedsolo.rs_encode_msg(data, nsym, fcr=FCR, generator=GENERATOR))
    assert codeword[:data_length] == data
    parity = codeword[data_length:]
    length = len(codeword)
    positions = rng.sample(range(length), errors + erasures)
    error_positions, erasure_positions = positions[:errors], positions[errors:]
    received = bytearray(codeword)
    for p in error_positions:
        received[p] ^= rng.randrange(1, 256)  # an error changes the byte
    for p in erasure_positions:
        received[p] = rng.choice([0, received[p], rng.randrange(256)])  # an erasure may even hold the right byte
    message, repaired, _ = reedsolo.rs_correct_msg(
        bytearray(received), nsym, fcr=FCR, generator=GENERATOR, erase_pos=list(erasure_positions) or None)
    assert bytes(message) == data and bytes(repaired) == parity, "within reach, reedsolo must repair"
    return {
        "nsym": nsym,
        "data": data.hex(),
        "parity": parity.hex(),
        "received": bytes(received).hex(),
        "errors": errors,
        "erasures": sorted(erasure_positions),
        "message": bytes(message).hex(),
    }


def main():
    check_conventions()
    rng = random.Random(SEED)
    cases = []
    for nsym in [2, 8, 16, 32, 40, 64, 100, 254]:
        maximum = 255 - nsym
        lengths = sorted({1, maximum, min(maximum, 223), rng.randrange(1, maximum + 1), rng.randrange(1, maximum + 1)})
        for data_length in lengths:
            # Undamaged, errors only at capacity, erasures only at capacity, a mix at capacity, a mix below.
            t = nsym // 2
            mixed_errors = rng.randrange(0, t + 1)
            patterns = [(0, 0), (t, 0), (0, nsym), (mixed_errors, nsym - 2 * mixed_errors)]
            below_errors = rng.randrange(0, t + 1)
            patterns.append((below_errors, rng.randrange(0, nsym - 2 * below_errors + 1)))
            for errors, erasures in patterns:
                cases.append(make_case(rng, nsym, data_length, errors, erasures))
    json.dump({
        "generator": "Scripts/vectors/reedsolomon_vectors.py",
        "implementation": "reedsolo " + getattr(reedsolo, "__version__", "1.7.0"),
        "seed": SEED,
        "conventions": {"primitivePolynomial": PRIM, "generator": GENERATOR, "firstConsecutiveRoot": FCR},
        "cases": cases,
    }, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

"""Reed–Solomon over GF(2⁸) for the reference reader of format version 2 (Docs/FormatVersion2.md §2).

Written from the text of §2 and textbook decoding (Berlekamp–Massey with erasures, Chien search, Forney),
not from the Swift sources and not from `reedsolo` (which only serves as a test oracle, through the vectors
in Fixtures/healing/reedsolomon.json).

Conventions (§2): primitive polynomial 0x11D, α = 2, first consecutive root α⁰, so the generator is
g(x) = (x − α⁰)(x − α¹)…(x − α^(nsym−1)). A codeword is a list of symbols, highest degree first: the message,
then nsym parity symbols. A shortened codeword (fewer than 255 symbols) is the full one with leading zeros
dropped, so position p of an n-symbol codeword has degree n − 1 − p.
"""

from __future__ import annotations

from typing import Optional, Sequence

PRIMITIVE = 0x11D

EXP = [0] * 512
LOG = [0] * 256
_x = 1
for _i in range(255):
    EXP[_i] = _x
    LOG[_x] = _i
    _x <<= 1
    if _x & 0x100:
        _x ^= PRIMITIVE
for _i in range(255, 512):
    EXP[_i] = EXP[_i - 255]


def mul(a: int, b: int) -> int:
    if a == 0 or b == 0:
        return 0
    return EXP[LOG[a] + LOG[b]]


def div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("GF(256) division by zero")
    if a == 0:
        return 0
    return EXP[(LOG[a] - LOG[b]) % 255]


def inverse(a: int) -> int:
    return div(1, a)


def power_of_alpha(e: int) -> int:
    return EXP[e % 255]


# Polynomials below as lists of coefficients, LOWEST degree first (index = degree).

def _poly_mul(p: Sequence[int], q: Sequence[int]) -> list:
    out = [0] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        if a == 0:
            continue
        for j, b in enumerate(q):
            if b:
                out[i + j] ^= mul(a, b)
    return out


def _poly_eval(p: Sequence[int], x: int) -> int:
    """p(x), p lowest degree first (Horner from the top)."""
    y = 0
    for c in reversed(p):
        y = mul(y, x) ^ c
    return y


_GENERATORS: dict = {}


def generator(nsym: int) -> list:
    """g(x) = Π (x − αⁱ), i < nsym, lowest degree first (g[nsym] = 1)."""
    g = _GENERATORS.get(nsym)
    if g is None:
        g = [1]
        for i in range(nsym):
            g = _poly_mul(g, [power_of_alpha(i), 1])
        _GENERATORS[nsym] = g
    return g


def encode(message: Sequence[int], nsym: int) -> bytes:
    """The nsym parity symbols of `message` (highest degree first): the remainder of m(x)·x^nsym by g(x),
    highest degree first, so that message ‖ parity is a codeword."""
    if len(message) + nsym > 255:
        raise ValueError("codeword longer than 255 symbols")
    g = generator(nsym)
    # LFSR division: register r holds the remainder, r[0] the highest degree.
    g_high_first = list(reversed(g))[1:]           # g_{nsym-1} … g_0
    r = [0] * nsym
    for m in message:
        feedback = m ^ r[0]
        r = r[1:] + [0]
        if feedback:
            for k in range(nsym):
                r[k] ^= mul(feedback, g_high_first[k])
    return bytes(r)


def syndromes(codeword: Sequence[int], nsym: int) -> list:
    """S_m = c(α^m), m < nsym."""
    out = []
    for m in range(nsym):
        x = power_of_alpha(m)
        y = 0
        for c in codeword:
            y = mul(y, x) ^ c
        out.append(y)
    return out


class Uncorrectable(Exception):
    """More damage than the code repairs (or the decoder's answer does not check)."""


def decode(codeword: Sequence[int], nsym: int, erasures: Sequence[int] = ()) -> tuple:
    """Corrects a received codeword (highest degree first, length ≤ 255, the last nsym symbols parity).

    erasures: positions (indexes into `codeword`) known to be unreliable.
    Returns (corrected codeword as bytes, positions changed). Raises Uncorrectable when 2·errors +
    erasures > nsym is detected, or the result is not a codeword.
    """
    n = len(codeword)
    received = list(codeword)
    erasures = sorted(set(erasures))
    if len(erasures) > nsym:
        raise Uncorrectable(f"{len(erasures)} erasures > {nsym}")
    synd = syndromes(received, nsym)
    if not any(synd):
        return bytes(received), []
    # Erasure locator Γ(x) = Π (1 − X x), X = α^(degree of the erased position).
    gamma = [1]
    for p in erasures:
        gamma = _poly_mul(gamma, [1, power_of_alpha(n - 1 - p)])
    # Berlekamp–Massey, started from Γ (Blahut's errors-and-erasures form).
    rho = len(erasures)
    lam = list(gamma)
    b = list(gamma)
    big_l = rho
    for k in range(rho, nsym):
        delta = 0
        for j in range(min(len(lam), k + 1)):
            delta ^= mul(lam[j], synd[k - j])
        b = [0] + b                                 # x·B
        if delta == 0:
            continue
        t = list(lam) + [0] * max(0, len(b) - len(lam))
        for j, c in enumerate(b):
            t[j] ^= mul(delta, c)
        if 2 * big_l <= k + rho:
            inv = inverse(delta)
            b = [mul(inv, c) for c in lam]
            big_l = k + 1 + rho - big_l
        lam = t
    while len(lam) > 1 and lam[-1] == 0:
        lam.pop()
    degree = len(lam) - 1
    if degree > big_l or 2 * (degree - rho) + rho > nsym:
        raise Uncorrectable("too many errors")
    # Chien search over the positions of this (possibly shortened) codeword.
    positions = []
    for p in range(n):
        x_inv = power_of_alpha(-(n - 1 - p))
        if _poly_eval(lam, x_inv) == 0:
            positions.append(p)
    if len(positions) != degree:
        raise Uncorrectable("error locator's roots are not all in the codeword")
    # Forney (first consecutive root 0): e = X · Ω(X⁻¹) / Λ'(X⁻¹), Ω = S·Λ mod x^nsym.
    omega = _poly_mul(synd, lam)[:nsym]
    lam_deriv = [lam[j] if j % 2 == 1 else 0 for j in range(1, len(lam))]  # formal derivative
    for p in positions:
        x = power_of_alpha(n - 1 - p)
        x_inv = inverse(x)
        denominator = _poly_eval(lam_deriv, x_inv)
        if denominator == 0:
            raise Uncorrectable("Forney denominator zero")
        magnitude = mul(x, div(_poly_eval(omega, x_inv), denominator))
        received[p] ^= magnitude
    if any(syndromes(received, nsym)):
        raise Uncorrectable("the correction is not a codeword")
    changed = [p for p in positions if received[p] != codeword[p]]
    return bytes(received), changed


# ---------------------------------------------------------------------------------------------
# Fixed-position parity (§2): symbol i of a 223-symbol message sits at degree 254 − i whatever is written,
# so the parity of a message is the XOR of b·parity(unit vector at i) over its bytes. The table below holds,
# per position i, the 32 parity symbols of each byte value there, packed into one Python int, so encoding
# costs one XOR per byte.
# ---------------------------------------------------------------------------------------------

NSYM = 32
DATA = 223
_UNIT_PARITY: list = []          # i -> 32 parity symbols of the unit vector at position i
_BYTE_TABLE: dict = {}           # i -> [int] of 256 packed parities


def _unit_parity(i: int) -> bytes:
    if not _UNIT_PARITY:
        for k in range(DATA):
            message = [0] * DATA
            message[k] = 1
            _UNIT_PARITY.append(encode(message, NSYM))
    return _UNIT_PARITY[i]


def byte_table(i: int) -> list:
    table = _BYTE_TABLE.get(i)
    if table is None:
        unit = _unit_parity(i)
        table = [0] * 256
        for b in range(1, 256):
            table[b] = int.from_bytes(bytes(mul(b, u) for u in unit), "big")
        _BYTE_TABLE[i] = table
    return table


def parity_of_symbols(symbols: Sequence[int]) -> bytes:
    """Parity of a message of ≤ 223 symbols placed at positions 0… (zeros after it), as 32 bytes."""
    acc = 0
    for i, b in enumerate(symbols):
        if b:
            acc ^= byte_table(i)[b]
    return acc.to_bytes(NSYM, "big")


def decode_fixed(symbols: Sequence[int], parity: Sequence[int], erasures: Sequence[int] = ()) -> tuple:
    """Decodes a full 255-symbol codeword: 223 message symbols (zeros where nothing was written) and 32
    parity symbols. erasures index the 255 symbols. Returns (message of 223 bytes, changed positions < 255)."""
    assert len(symbols) == DATA and len(parity) == NSYM
    fixed, changed = decode(list(symbols) + list(parity), NSYM, erasures)
    return fixed[:DATA], changed

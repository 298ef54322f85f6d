#!/usr/bin/env python3
# Derives the bitsliced AES S-box circuits in Sources/KeychainCrypto/AES/AESSBoxCircuit.swift.
#
# Usage:  python3 Scripts/sbox-circuit/derive.py [--jobs N] [--output PATH]
#
# Python 3 standard library only.  Deterministic: every random choice comes from a seeded generator and
# every parallel step is merged in a fixed order.  Runs for a few minutes (most of it the search of
# step 4 below); `--jobs` spreads the work over several processes without changing the result.
#
# ------------------------------------------------------------------------------------------------------
# What is computed
#
#   S'(x) = A·inv(x)          the AES S-box without its additive constant:  S'(x) = SBOX[x] ^ 0x63
#   T(y)  = inv(A^-1·y)       the inverse S-box without its constant:       T(y)  = INV_SBOX[y ^ 0x63]
#
# where inv is inversion in GF(2^8) = GF(2)[x]/(x^8+x^4+x^3+x+1) (inv(0) = 0) and A is the AES affine
# matrix (b'_i = b_i + b_{i+4} + b_{i+5} + b_{i+6} + b_{i+7}, indices mod 8).  Bit i of a byte is the
# coefficient of x^i.  Both tables are computed here from these definitions; nothing is copied.
# Both functions map 0 to 0, so the circuits need no NOT gates.
#
# Construction (tower field, all of it recomputed by this script)
#
#   GF(4)   = GF(2)(W),   W^2 + W + 1 = 0
#   GF(16)  = GF(4)(Z),   Z^2 + Z + N = 0,   N in {W, W^2}
#   GF(256) = GF(16)(Y),  Y^2 + Y + nu = 0,  nu in GF(16) with Tr(nu) = 1
#
# all realised inside the AES field itself (W, Z, Y are AES-field elements), so a "representation" is just
# an 8-element GF(2)-basis of the AES field of the form { k_l·h_j·g_i } with {g_i} a basis of GF(4),
# {h_j} a basis of GF(16) over GF(4) and {k_l} a basis of GF(256) over GF(16).  We try every normal
# ({W,W^2}, {Z,Z^4}, {Y,Y^16}) and polynomial ({1,W}, {1,Z}, {1,Y}) basis, for every N, nu and every root:
# 3·6·24 = 432 representations, each also with an extra scale factor s in GF(16)* (below): 6480 variants.
#
# For x = a1·k1 + a0·k0 (a1, a0 in GF(16)) let x^16 = b1·k1 + b0·k0; b1, b0 are GF(2)-linear in x.
# The norm d = x^17 = x·x^16 lies in GF(16) and inv(x) = x^16 · d^-1, i.e.
#
#   inv(x) = (D·m1)·k1 + (D·m0)·k0      with  m1 = s·b1,  m0 = s·b0,  u = s·d,  D = u^-1,
#   u      = c'·(m1·m0) + L(x)          with  c' in GF(16)* and L GF(2)-linear (both found numerically).
#
# Every GF(16) product p·q is computed with 9 ANDs in "Karatsuba over Karatsuba" form: with p = P1·h1 +
# P0·h0 (P1, P0 in GF(4)) and each GF(4) element written on {g1, g0}, the nine ANDs are f(p) & f(q) for
# the nine linear forms f = (P1 | P0 | P1+P0) x (bit 1 | bit 0 | bit 0 + bit 1), and p·q is a fixed
# GF(2)-linear image of the nine AND outputs (coefficients solved for, per basis, by linear algebra).
# Because the same nine forms of m1 and m0 feed the multiplication m1·m0 (for u) and the output
# multiplications D·m1, D·m0, and the nine forms of D are shared by both output multiplications, the
# circuit is
#
#   top linear layer   : input bits -> 18 forms of m1, m0 and the 4 coordinates of L       (XOR only)
#   9 ANDs             : P_r = f_r(m1) & f_r(m0)
#   linear             : u = c'·Σ P_r·e_r + L                                             (XOR only)
#   GF(16) inversion   : u -> the 9 forms of D = u^-1, with only 5 ANDs (see below)
#   18 ANDs            : f_r(D) & f_r(m1), f_r(D) & f_r(m0)
#   bottom linear layer: 18 products -> 8 output bits (tower basis change, and A for S')   (XOR only)
#
# 9 + 5 + 18 = 32 AND gates.  For S' the top layer folds the basis change into the forms and the bottom
# layer folds in A; for T the top layer folds in A^-1 and the bottom layer is the plain basis change.
#
# GF(16) inversion with 5 ANDs.  Each output bit of inversion in GF(16) is a cubic Boolean function of
# the 4 input bits.  Step 4 searches exhaustively for circuits with 5 AND gates whose AND inputs are
# arbitrary GF(2)-linear combinations of the inputs and of earlier AND outputs, such that all 4 output
# coordinates lie in the GF(2)-span of {1, inputs, AND outputs}.  Pruning: after k ANDs the outputs,
# reduced modulo that span, must have rank <= 5-k.  An AND is identified by the 2-dimensional space
# spanned by its two inputs (any two elements of the space give the same span).  The problem is
# invariant under u -> λ·u^(2^i) (inversion commutes with it up to a linear map of the outputs), so the
# first AND is taken from one representative per orbit, and the XOR optimisation below re-applies the 60
# maps.  The search finds thousands of 5-AND circuits; which one is cheapest in XORs depends on the basis.
#
# XOR minimisation.  All linear parts are optimised with the Boyar–Peralta shortest-linear-program
# heuristic (repeatedly add the sum of two available signals that minimises the total distance of the
# targets, distance = number of further XORs needed; ties by the larger Euclidean norm of the distance
# vector, then seeded random), which exploits cancellation.  Distances are computed exactly by a
# breadth-first search over the whole span, held as bitsets.  The GF(16) inversion is optimised AND by
# AND (each AND may use any two of the three vectors of its input space), then the final 9 forms of D.
#
# Search, per direction: the top layer of all 6480 variants; the bottom layer of every representation
# whose best top layer is within 1 XOR of the overall best; the linear layer computing u for the variants
# within 1 XOR of the best top+bottom; then, for the GF(16) basis of the best variant, every 5-AND
# inversion circuit composed with each of the 60 input maps (branch and bound on the XOR count).  The
# finalists are re-optimised with several tie-breaking seeds, the cheapest circuit is kept, unused gates
# are removed, the circuit is verified EXHAUSTIVELY over all 256 inputs against the tables computed above,
# and the Swift file is written.
# ------------------------------------------------------------------------------------------------------

import argparse
import os
import random
import sys
import time
from multiprocessing import Pool

# ============================================================================ GF(2^8), the AES field

AES_POLY = 0x11B


def gmul(a, b):
    r = 0
    while b:
        if b & 1:
            r ^= a
        a <<= 1
        if a & 0x100:
            a ^= AES_POLY
        b >>= 1
    return r


def gpow(a, e):
    r = 1
    while e:
        if e & 1:
            r = gmul(r, a)
        a = gmul(a, a)
        e >>= 1
    return r


def ginv(a):
    return gpow(a, 254)  # a^(2^8-2); gives 0 for 0


def par(x):
    return bin(x).count("1") & 1


def affine(x):
    """The AES affine matrix A (without the constant 0x63)."""
    r = 0
    for i in range(8):
        b = 0
        for k in (0, 4, 5, 6, 7):
            b ^= x >> ((i + k) % 8) & 1
        r |= b << i
    return r


AFFINE_INV = {affine(x): x for x in range(256)}
assert len(AFFINE_INV) == 256, "A must be invertible"


def affine_inv(y):
    return AFFINE_INV[y]


S_PRIME = [affine(ginv(x)) for x in range(256)]  # S'(x) = SBOX[x] ^ 0x63
T_PRIME = [ginv(affine_inv(y)) for y in range(256)]  # T(y) = INV_SBOX[y ^ 0x63]
# Sanity checks against the published S-box (FIPS-197: S(00)=63, S(01)=7c, S(53)=ed) and inverse property.
assert (S_PRIME[0x00] ^ 0x63, S_PRIME[0x01] ^ 0x63, S_PRIME[0x53] ^ 0x63) == (0x63, 0x7C, 0xED)
assert all(T_PRIME[S_PRIME[x]] == x for x in range(256))
assert all(gmul(x, ginv(x)) == 1 for x in range(1, 256))

GF16 = [x for x in range(256) if gpow(x, 16) == x]  # the subfield GF(16), 0 first
GF4 = [x for x in range(256) if gpow(x, 4) == x]
W = [x for x in GF4 if x > 1][0]
W2 = gmul(W, W)


def span_elements(basis):
    """elements[m] = XOR of basis[i] for the bits i of m."""
    out = [0] * (1 << len(basis))
    for m in range(1, len(out)):
        low = m & -m
        out[m] = out[m ^ low] ^ basis[low.bit_length() - 1]
    return out


# ============================================================================ tower representations


class Rep:
    def __init__(self, desc, gb, hb, kb):
        self.desc = desc
        self.gb, self.hb, self.kb = gb, hb, kb
        # tower coordinate index 4l + 2j + i  <->  basis element k_l·h_j·g_i
        self.basis = [gmul(gmul(kb[l], hb[j]), gb[i]) for l in range(2) for j in range(2) for i in range(2)]
        self.B = [gmul(hb[j], gb[i]) for j in range(2) for i in range(2)]  # GF(16) basis, index 2j + i
        el = span_elements(self.basis)
        self.to_byte = el
        self.coords = {v: m for m, v in enumerate(el)}
        assert len(self.coords) == 256
        e16 = span_elements(self.B)
        self.e16 = e16
        self.c16 = {v: m for m, v in enumerate(e16)}
        assert sorted(self.c16) == GF16


def representations():
    def roots(f):
        return [x for x in range(256) if f(x) == 0]

    gbases = [("normal {W,W^2}", [W, W2]), ("polynomial {1,W}", [1, W]), ("polynomial {1,W^2}", [1, W2])]
    hbases = []
    for n in (W, W2):
        zs = roots(lambda z: gmul(z, z) ^ z ^ n)
        assert len(zs) == 2 and all(z in GF16 for z in zs)
        nname = "N, N=W" if n == W else "N, N=W^2"
        hbases.append(("normal {Z,Z^4}, Z^2+Z+%s, Z=0x%02x" % (nname, zs[0]), [zs[0], gpow(zs[0], 4)]))
        for z in zs:
            hbases.append(("polynomial {1,Z}, Z^2+Z+%s, Z=0x%02x" % (nname, z), [1, z]))
    kbases = []
    for nu in GF16:
        ys = roots(lambda y: gmul(y, y) ^ y ^ nu)
        if len(ys) != 2 or ys[0] in GF16:
            continue  # Y^2+Y+nu must be irreducible over GF(16)
        kbases.append(("normal {Y,Y^16}, Y^2+Y+nu, nu=0x%02x, Y=0x%02x" % (nu, ys[0]), [ys[0], gpow(ys[0], 16)]))
        for y in ys:
            kbases.append(("polynomial {1,Y}, Y^2+Y+nu, nu=0x%02x, Y=0x%02x" % (nu, y), [1, y]))
    reps = []
    for gn, gb in gbases:
        for hn, hb in hbases:
            for kn, kb in kbases:
                desc = "GF(4): %s, W=0x%02x; GF(16)/GF(4): %s; GF(256)/GF(16): %s" % (gn, W, hn, kn)
                reps.append(Rep(desc, gb, hb, kb))
    return reps


# The nine Karatsuba linear forms on GF(16) coordinates (index 2j+i): (σ over h_j) ⊗ (τ over g_i).
FORMS = []
for _sig in (1, 2, 3):
    for _tau in (1, 2, 3):
        FORMS.append(sum(1 << (2 * j + i) for j in range(2) for i in range(2) if _sig >> j & 1 and _tau >> i & 1))


def gf2_solve(rows):
    """rows: (coefficient mask, rhs bit).  Returns one solution mask, or None."""
    piv = {}
    for m, r in rows:
        for p in sorted(piv, reverse=True):
            if m >> p & 1:
                pm, pr = piv[p]
                m ^= pm
                r ^= pr
        if m == 0:
            if r:
                return None
            continue
        p = m.bit_length() - 1
        for q in list(piv):
            qm, qr = piv[q]
            if qm >> p & 1:
                piv[q] = (qm ^ m, qr ^ r)
        piv[p] = (m, r)
    return sum(1 << p for p, (m, r) in piv.items() if r)


_KARATSUBA = {}


def karatsuba_coefficients(rep):
    """e[r] (GF(16) coordinates) with p·q = Σ_r f_r(p)·f_r(q)·e[r] for all p, q."""
    key = tuple(rep.B)
    if key not in _KARATSUBA:
        e = [0] * 9
        for k in range(4):
            rows = []
            for a in range(16):
                for b in range(16):
                    m = sum(1 << r for r, f in enumerate(FORMS) if par(a & f) and par(b & f))
                    rows.append((m, rep.c16[gmul(rep.e16[a], rep.e16[b])] >> k & 1))
            sol = gf2_solve(rows)
            assert sol is not None, "no Karatsuba decomposition for this basis"
            for r in range(9):
                if sol >> r & 1:
                    e[r] |= 1 << k
        _KARATSUBA[key] = e
    return _KARATSUBA[key]


_NORM = {}


def norm_data(ri, direction):
    """Data independent of the scale s: c (d = c·b1·b0 + Lin) and per-unit-vector b1, b0, Lin."""
    key = (ri, direction)
    if key not in _NORM:
        rep = REPS[ri]
        pre = (lambda v: v) if direction == "fwd" else affine_inv

        def parts(v):
            x = pre(v)
            x16 = gpow(x, 16)
            c = rep.coords[x16]
            return rep.e16[c >> 4], rep.e16[c & 15], gmul(x, x16)

        allp = [parts(v) for v in range(256)]
        cc = None
        for cand in GF16[1:]:
            lin = [d ^ gmul(cand, gmul(bh, bl)) for bh, bl, d in allp]
            if all(lin[v] == lin[v & -v] ^ lin[v ^ (v & -v)] for v in range(1, 256)):
                cc = cand
                break
        assert cc is not None
        _NORM[key] = (cc, [allp[1 << i] for i in range(8)], [lin[1 << i] for i in range(8)])
    return _NORM[key]


def decompose(ri, s, direction):
    """Everything the circuit needs for representation ri, scale s, direction 'fwd' (S') or 'inv' (T)."""
    rep = REPS[ri]
    cc, unit, lin = norm_data(ri, direction)
    e = karatsuba_coefficients(rep)

    def mask(fun):
        return sum(1 << i for i in range(8) if fun(i))

    mh = [rep.c16[gmul(s, unit[i][0])] for i in range(8)]
    ml = [rep.c16[gmul(s, unit[i][1])] for i in range(8)]
    lc = [rep.c16[gmul(s, lin[i])] for i in range(8)]
    forms = [mask(lambda i, f=f: par(mh[i] & f)) for f in FORMS] + [mask(lambda i, f=f: par(ml[i] & f)) for f in FORMS]
    ell = [mask(lambda i, j=j: lc[i] >> j & 1) for j in range(4)]
    cp = gmul(cc, ginv(s))
    ecol = [rep.c16[gmul(cp, rep.e16[e[r]])] for r in range(9)]
    bot = affine if direction == "fwd" else (lambda t: t)
    botcols = [bot(rep.to_byte[e[r] << 4]) for r in range(9)] + [bot(rep.to_byte[e[r]]) for r in range(9)]
    return dict(ri=ri, s=s, direction=direction, forms=forms, ell=ell, ecol=ecol, botcols=botcols, B=rep.B)


# ============================================================================ Boyar–Peralta SLP heuristic

_MASKS = {}


def _masks(n):
    if n not in _MASKS:
        N = 1 << n
        ms = []
        for i in range(n):
            m = (1 << (1 << i)) - 1
            span = 1 << (i + 1)
            while span < N:
                m |= m << span
                span *= 2
            ms.append(m)
        _MASKS[n] = ms
    return _MASKS[n]


def _translate(R, s, ms):
    """Bitset R of vectors -> bitset of {v ^ s}."""
    i = 0
    while s:
        if s & 1:
            w = 1 << i
            m = ms[i]
            R = ((R & m) << w) | ((R >> w) & m)
        s >>= 1
        i += 1
    return R


_TR01 = bytes.maketrans(b"01", b"\x01\x00")


def _nu_array(n, base, targets):
    """nu[v] = least number of base vectors summing to v (capped at the largest target value)."""
    ms = _masks(n)
    N = 1 << n
    R = 1
    levels = [R]
    while not all(R >> t & 1 for t in targets):
        nr = R
        for s in base:
            nr |= _translate(R, s, ms)
        if nr == R:
            raise ValueError("target outside the span of the available signals")
        R = nr
        levels.append(R)
    tot = 0
    for R in levels[:-1]:  # nu(v) = number of levels not containing v
        tot += int.from_bytes(format(R, "0%db" % N)[::-1].encode().translate(_TR01), "little")
    return tot.to_bytes(N, "little")


def bp_slp(n, base, groups, rng=None):
    """Adds XOR gates until every group (alternatives, k) has k of its alternatives available.
    base: available n-bit vectors.  Returns (gates, base) with gates (i, j, new index)."""
    base = list(base)
    bset = set(base)
    index = {v: i for i, v in enumerate(base)}
    gates = []

    def add(c, i, j):
        gates.append((i, j, len(base)))
        index[c] = len(base)
        base.append(c)
        bset.add(c)

    while True:
        singles, multi = [], []
        for alts, k in groups:
            if sum(1 for a in alts if a in bset) >= k:
                continue
            if len(alts) == 1:
                singles.append(alts[0])
            else:
                multi.append((alts, k))
        if not singles and not multi:
            return gates, base
        nu = _nu_array(n, base, singles + [a for alts, k in multi for a in alts])
        imm = None
        for t in singles:
            if nu[t] == 2:
                imm = t
                break
        if imm is None:
            for alts, k in multi:
                for a in alts:
                    if a not in bset and nu[a] == 2:
                        imm = a
                        break
                if imm is not None:
                    break
        if imm is not None:  # a target is the sum of two available signals: take it
            for i, v in enumerate(base):
                j = index.get(v ^ imm)
                if j is not None and j != i:
                    add(imm, min(i, j), max(i, j))
                    break
            continue
        cands = {}
        L = len(base)
        for i in range(L):
            bi = base[i]
            for j in range(i + 1, L):
                c = bi ^ base[j]
                if c not in bset and c not in cands:
                    cands[c] = (i, j)
        sn = [(t, nu[t]) for t in singles]
        best, bestc = None, []
        for c in cands:
            tot = sq = 0
            for t, cur in sn:
                x = nu[t ^ c] + 1
                if x < cur:
                    cur = x
                tot += cur
                sq += cur * cur
            for alts, k in multi:
                for d in sorted(min(nu[a], nu[a ^ c] + 1) for a in alts)[:k]:
                    tot += d
                    sq += d * d
            key = (tot, -sq)
            if best is None or key < best:
                best, bestc = key, [c]
            elif key == best:
                bestc.append(c)
        c = bestc[0] if rng is None else rng.choice(bestc)
        add(c, *cands[c])


def express(funcs, f):
    """Mask m with XOR of funcs[i] (i in m) == f, or None."""
    piv = []
    for i, g in enumerate(funcs):
        m = 1 << i
        for p, pv, pm in piv:
            if g >> p & 1:
                g ^= pv
                m ^= pm
        if g:
            piv.append((g.bit_length() - 1, g, m))
    m = 0
    for p, pv, pm in piv:
        if f >> p & 1:
            f ^= pv
            m ^= pm
    return m if f == 0 else None


# ============================================================================ GF(16) inversion, 5 ANDs

# Reference basis B0 = {1, β, β^2, β^3} of GF(16), β a root of z^4+z+1 in the AES field.
BETA = [x for x in GF16 if gpow(x, 4) ^ x ^ 1 == 0][0]
B0 = [1, BETA, gmul(BETA, BETA), gpow(BETA, 3)]
E_B0 = span_elements(B0)
C_B0 = {v: m for m, v in enumerate(E_B0)}
X16 = [sum(1 << v for v in range(16) if v >> i & 1) for i in range(4)]  # truth tables of input bits
ONES16 = 0xFFFF


def _echelon(vecs):
    basis = []
    for v in vecs:
        for p, b in basis:
            if v >> p & 1:
                v ^= b
        if v:
            p = v.bit_length() - 1
            basis = [(q, c ^ v if c >> p & 1 else c) for q, c in basis]
            basis.append((p, v))
    return basis


def _reduce(basis, v):
    for p, b in basis:
        if v >> p & 1:
            v ^= b
    return v


def inversion_search():
    """All 5-AND circuits for GF(16) inversion (in B0 coordinates), first AND up to symmetry.
    A circuit is a list of 5 (operand, operand) truth-table pairs."""
    out_tt = [sum(1 << v for v in range(16) if C_B0[ginv(E_B0[v])] >> j & 1) for j in range(4)]

    def pairs(n):  # canonical 2-dim subspaces {a, b, a^b} of GF(2)^n
        return [(a, b) for a in range(1, 1 << n) for b in range(a + 1, 1 << n) if a ^ b > b]

    PAIRS = {n: pairs(n) for n in range(4, 9)}

    # Orbits of the first AND's input space under u -> λ·u^(2^i).
    def compose(form, lam, i):
        return sum(1 << b for b in range(4) if par(C_B0[gmul(lam, gpow(E_B0[1 << b], 1 << i))] & form))

    seen, first = set(), []
    for a, b in PAIRS[4]:
        sp = frozenset((a, b, a ^ b))
        if sp in seen:
            continue
        for lam in GF16[1:]:
            for i in range(4):
                seen.add(frozenset(compose(f, lam, i) for f in sp))
        first.append((a, b))

    sols = []

    def rec(gs, ops):
        k = len(gs)
        fs = X16 + gs
        wsp = _echelon([ONES16] + fs)
        if len(_echelon([_reduce(wsp, o) for o in out_tt])) > 5 - k:
            return
        if k == 5:
            sols.append(list(ops))
            return
        tab = span_elements(fs)
        for a, b in (first if k == 0 else PAIRS[len(fs)]):
            g = tab[a] & tab[b]
            if _reduce(wsp, g) == 0:
                continue
            ops.append((tab[a], tab[b]))
            gs.append(g)
            rec(gs, ops)
            ops.pop()
            gs.pop()

    rec([], [])
    uniq, keys = [], set()
    for s in sols:
        key = frozenset(frozenset((a, b, a ^ b)) for a, b in s)
        if key not in keys:
            keys.add(key)
            uniq.append(s)
    return uniq, len(first)


def input_maps(B):
    """The 60 maps u -> λ·u^(2^i), as permutations from B coordinates to B0 coordinates."""
    eB = span_elements(B)
    return [((lam, fr), [C_B0[gpow(gmul(lam, eB[v]), 1 << fr)] for v in range(16)]) for lam in GF16[1:] for fr in range(4)]


def d_forms(B):
    """Truth tables (over B coordinates of u) of the 9 Karatsuba forms of D = u^-1."""
    eB = span_elements(B)
    cB = {e: v for v, e in enumerate(eB)}
    inv = [cB[ginv(eB[v])] for v in range(16)]
    return [sum(1 << v for v in range(16) if par(inv[v] & f)) for f in FORMS]


def permute_tt(f, perm):
    return sum(1 << v for v in range(16) if f >> perm[v] & 1)


def inversion_xor_cost(dfs, sol, perm, bound, rng=None, record=None):
    """XOR count of the inversion circuit `sol` (composed with input map perm) from the 4 coordinates of u
    to the 9 forms of D; None if >= bound.  Signals are vectors over [u0..u3, g1..g5]."""
    funcs = list(X16)
    base = [1, 2, 4, 8]
    total = 0
    for fa, fb in sol:
        a, b = permute_tt(fa, perm), permute_tt(fb, perm)
        alts = [a, b, a ^ b]
        sv = [express(funcs, x) for x in alts]
        gates, base = bp_slp(len(funcs), base, [(sv, 2)], rng)
        total += len(gates)
        if total + 4 >= bound:
            return None
        bs = set(base)
        ch = [i for i in range(3) if sv[i] in bs][:2]
        if record is not None:
            record.append(("xor", gates, list(base)))
            record.append(("and", sv[ch[0]], sv[ch[1]]))
        funcs.append(alts[ch[0]] & alts[ch[1]])
        base.append(1 << (len(funcs) - 1))
    targets = [express(funcs, F) for F in dfs]
    bs = set(base)
    if total + len(set(t for t in targets if t not in bs)) >= bound:
        return None
    gates, base = bp_slp(9, base, [([t], 1) for t in targets], rng)
    total += len(gates)
    if record is not None:
        record.append(("xor", gates, list(base)))
        record.append(("out", targets))
    return total if total < bound else None


# ============================================================================ per-layer costs


def top_targets(d):
    lb = _ell_basis(d["ell"])[0]
    return sorted(set(t for t in d["forms"] + lb if t))


def _ell_basis(ell):
    lb, comb = [], []
    for l in ell:
        m = express(lb, l) if lb else (0 if l == 0 else None)
        if m is None:
            lb.append(l)
            m = 1 << (len(lb) - 1)
        comb.append(m)
    return lb, comb


def stage_a_problem(d):
    lb, comb = _ell_basis(d["ell"])
    n = 9 + len(lb)
    tg = []
    for j in range(4):
        v = sum(1 << r for r in range(9) if d["ecol"][r] >> j & 1)
        tg.append(v | comb[j] << 9)
    return n, lb, tg


def bottom_rows(d):
    return [sum(1 << c for c, col in enumerate(d["botcols"]) if col >> o & 1) for o in range(8)]


def cost_top(d, seed=None):
    return len(bp_slp(8, [1 << i for i in range(8)], [([t], 1) for t in top_targets(d)], _rng(seed))[0])


def cost_a(d, seed=None):
    n, lb, tg = stage_a_problem(d)
    return len(bp_slp(n, [1 << i for i in range(n)], [([t], 1) for t in tg if t], _rng(seed))[0])


def cost_bottom(d, seed=None):
    return len(bp_slp(18, [1 << i for i in range(18)], [([r], 1) for r in bottom_rows(d)], _rng(seed))[0])


def _rng(seed):
    return None if seed is None else random.Random(seed)


# ============================================================================ workers (multiprocessing)

REPS = representations()
_SOLS = None


def _w_top(args):
    ri, direction = args
    return [cost_top(decompose(ri, s, direction)) for s in GF16[1:]]


def _w_bottom(args):
    ri, direction = args
    return cost_bottom(decompose(ri, 1, direction))


def _w_a(args):
    ri, s, direction = args
    return cost_a(decompose(ri, s, direction))


def _w_inv_init(sols):
    global _SOLS
    _SOLS = sols


def _w_inv(args):
    """Best (cost, solution index, map index) over a chunk of inversion circuits for basis B."""
    B, lo, hi, bound = args
    dfs = d_forms(B)
    maps = input_maps(B)
    best = None
    for si in range(lo, hi):
        for mi, (_, perm) in enumerate(maps):
            c = inversion_xor_cost(dfs, _SOLS[si], perm, bound)
            if c is not None:
                best, bound = (c, si, mi), c
    return best


def _w_seed_top(args):
    d, seed = args
    return cost_top(d, seed)


def _w_seed_bottom(args):
    d, seed = args
    return cost_bottom(d, seed)


# ============================================================================ circuit assembly


class Circuit:
    """Gates over signals 0..7 (input bits).  Each gate: (op, a, b, section)."""

    def __init__(self):
        self.gates = []

    def add(self, op, a, b, section):
        self.gates.append((op, a, b, section))
        return 8 + len(self.gates) - 1

    def run_slp(self, n, base_vecs, base_sigs, groups, rng, section):
        gates, base = bp_slp(n, base_vecs, groups, rng)
        sigs = list(base_sigs)
        for i, j, k in gates:
            sigs.append(self.add("^", sigs[i], sigs[j], section))
        return dict(zip(base, sigs))


def build(d, sol, perm, seeds):
    """The full circuit; seeds = (top, stage A, inversion, bottom) tie-breaking seeds."""
    st, sa, sb, sbot = seeds
    C = Circuit()
    fmap = C.run_slp(8, [1 << i for i in range(8)], list(range(8)), [([t], 1) for t in top_targets(d)], _rng(st), "top")
    F = d["forms"]
    P = [C.add("&", fmap[F[r]], fmap[F[9 + r]], "mul") for r in range(9)]
    n, lb, tg = stage_a_problem(d)
    amap = C.run_slp(n, [1 << i for i in range(n)], P + [fmap[l] for l in lb], [([t], 1) for t in tg if t], _rng(sa), "norm")
    usig = [amap[t] for t in tg]
    rec = []
    cost = inversion_xor_cost(d_forms(d["B"]), sol, perm, 10 ** 9, _rng(sb), rec)
    assert cost is not None
    sig = {1 << j: usig[j] for j in range(4)}
    ng = 4
    for item in rec:
        if item[0] == "xor":
            _, gates, base = item
            for i, j, k in gates:
                sig[base[k]] = C.add("^", sig[base[i]], sig[base[j]], "inv")
        elif item[0] == "and":
            sig[1 << ng] = C.add("&", sig[item[1]], sig[item[2]], "inv")
            ng += 1
        else:
            dsig = [sig[t] for t in item[1]]
    Q = [C.add("&", dsig[r], fmap[F[r]], "outmul") for r in range(9)] + [C.add("&", dsig[r], fmap[F[9 + r]], "outmul") for r in range(9)]
    rows = bottom_rows(d)
    bmap = C.run_slp(18, [1 << i for i in range(18)], Q, [([r], 1) for r in rows], _rng(sbot), "bottom")
    outs = [bmap[r] for r in rows]
    return prune(C, outs)


def prune(C, outs):
    """Dead-gate elimination and renumbering."""
    live = set(outs)
    for k in range(len(C.gates) - 1, -1, -1):
        if 8 + k in live:
            live.add(C.gates[k][1])
            live.add(C.gates[k][2])
    D = Circuit()
    remap = {i: i for i in range(8)}
    for k, (op, a, b, sec) in enumerate(C.gates):
        if 8 + k in live:
            remap[8 + k] = D.add(op, remap[a], remap[b], sec)
    return D, [remap[o] for o in outs]


def evaluate(C):
    vals = [sum(1 << v for v in range(256) if v >> i & 1) for i in range(8)]
    for op, a, b, _ in C.gates:
        vals.append(vals[a] ^ vals[b] if op == "^" else vals[a] & vals[b])
    return vals


def verify(C, outs, table):
    """Exhaustive check over all 256 inputs (bit v of each truth table = value on input byte v)."""
    vals = evaluate(C)
    for o in range(8):
        if vals[outs[o]] != sum(1 << v for v in range(256) if table[v] >> o & 1):
            return False
    return True


def counts(C):
    a = sum(1 for g in C.gates if g[0] == "&")
    return a, len(C.gates) - a


# ============================================================================ search driver


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def search(jobs):
    t0 = time.time()
    sols, norb = inversion_search()
    log("GF(16) inversion: %d circuits with 5 ANDs (first AND from %d orbits)  [%.0fs]" % (len(sols), norb, time.time() - t0))
    pool = Pool(jobs, initializer=_w_inv_init, initargs=(sols,)) if jobs > 1 else None
    pmap = pool.map if pool else (lambda f, xs: [f(x) for x in xs])
    if not pool:
        _w_inv_init(sols)

    finalists = {}
    for direction in ("fwd", "inv"):
        tops = pmap(_w_top, [(ri, direction) for ri in range(len(REPS))])
        mt = min(min(t) for t in tops)
        good = [ri for ri in range(len(REPS)) if min(tops[ri]) <= mt + 1]
        bots = dict(zip(good, pmap(_w_bottom, [(ri, direction) for ri in good])))
        cands = sorted((tops[ri][k] + bots[ri], ri, s) for ri in good for k, s in enumerate(GF16[1:]))
        cut = cands[0][0] + 1
        cands = [c for c in cands if c[0] <= cut]
        acost = pmap(_w_a, [(ri, s, direction) for _, ri, s in cands])
        f = sorted((tb + a, ri, s) for (tb, ri, s), a in zip(cands, acost))
        finalists[direction] = [x for x in f if x[0] == f[0][0]]
        log("%s: top layer >= %d XOR, %d variants within 1 after adding the bottom layer; best top+bottom+norm = %d  [%.0fs]"
            % (direction, mt, len(cands), f[0][0], time.time() - t0))

    # Inversion circuits for the GF(16) basis of each direction's first finalist (the bound of each search
    # starts one above the best count found so far, so later searches only look for improvements).
    bases = []
    for direction in ("fwd", "inv"):
        B = tuple(REPS[finalists[direction][0][1]].B)
        if B not in bases:
            bases.append(B)
    inv_best = {}
    chunk = 40
    bound = 18
    for B in bases:
        parts = []
        for bd in (bound, 18, 99):  # widen the bound only if nothing was found below it
            parts = [p for p in pmap(_w_inv, [(list(B), lo, min(lo + chunk, len(sols)), bd) for lo in range(0, len(sols), chunk)]) if p]
            if parts:
                break
        inv_best[B] = min(parts)
        bound = min(bound, inv_best[B][0] + 1)
        log("GF(16) basis %s: inversion (5 AND) in %d XOR  [%.0fs]" % ([hex(b) for b in B], inv_best[B][0], time.time() - t0))

    results = {}
    for direction in ("fwd", "inv"):
        table = S_PRIME if direction == "fwd" else T_PRIME
        best = None
        for _, ri, s in finalists[direction]:
            B = tuple(REPS[ri].B)
            if B not in inv_best:
                continue
            d = decompose(ri, s, direction)
            tseeds = pmap(_w_seed_top, [(d, seed) for seed in range(200)])
            bseeds = pmap(_w_seed_bottom, [(d, seed) for seed in range(24)])
            aseeds = [cost_a(d, seed) for seed in range(40)]
            seeds = (tseeds.index(min(tseeds)), aseeds.index(min(aseeds)), None, bseeds.index(min(bseeds)))
            _, si, mi = inv_best[B]
            C, outs = build(d, sols[si], input_maps(list(B))[mi][1], seeds)
            assert verify(C, outs, table), "circuit does not verify"
            key = (len(C.gates), ri, s)
            if best is None or key < best[0]:
                best = (key, C, outs, d, mi, si)
        results[direction] = best
        (ng, ri, s), C, outs, d, mi, si = best
        a, x = counts(C)
        log("%s: %d AND + %d XOR = %d gates; %s, s=0x%02x  [%.0fs]" % (direction, a, x, ng, REPS[ri].desc, s, time.time() - t0))
    if pool:
        pool.close()
    return results


# ============================================================================ Swift emission

SECTION_TITLES = {
    "top": "Top linear layer: Karatsuba forms of m1 and m0, linear part L of u",
    "mul": "m1·m0 in GF(16)",
    "norm": "u = c'·m1·m0 + L",
    "inv": "D = u^-1 in GF(16), ending with the 9 Karatsuba forms of D",
    "outmul": "D·m1 and D·m0 in GF(16)",
    "bottom": "Bottom linear layer: back to the AES basis",
}


def emit_function(name, doc, C, outs):
    a, x = counts(C)
    lines = []
    lines.append("    /// %s" % doc)
    lines.append("    ///")
    lines.append("    /// %d AND + %d XOR + 0 NOT = %d gates. Constant time: straight-line Boolean code (AND/XOR only)," % (a, x, a + x))
    lines.append("    /// with no table lookups and no data-dependent branches or memory accesses.")
    lines.append("    @inline(__always) @usableFromInline")
    lines.append("    static func %s<W: BitsliceWord>(" % name)
    lines.append("        _ x0: inout W, _ x1: inout W, _ x2: inout W, _ x3: inout W,")
    lines.append("        _ x4: inout W, _ x5: inout W, _ x6: inout W, _ x7: inout W")
    lines.append("    ) {")

    def nm(s):
        return "x%d" % s if s < 8 else "t%d" % (s - 8)

    sec = None
    for k, (op, a_, b_, section) in enumerate(C.gates):
        if section != sec:
            sec = section
            na = sum(1 for g in C.gates if g[3] == section and g[0] == "&")
            nx = sum(1 for g in C.gates if g[3] == section and g[0] == "^")
            lines.append("        // %s (%d AND, %d XOR)" % (SECTION_TITLES[section], na, nx))
        lines.append("        let t%d = %s %s %s" % (k, nm(a_), op, nm(b_)))
    for o in range(8):
        lines.append("        x%d = %s" % (o, nm(outs[o])))
    lines.append("    }")
    return lines


def emit_swift(results):
    out = []
    out.append("// AESSBoxCircuit.swift")
    out.append("//")
    out.append("// GENERATED by Scripts/sbox-circuit/derive.py. Do not edit by hand: change and re-run the script.")
    out.append("//")
    out.append("// Bitsliced AES S-box and inverse S-box as straight-line AND/XOR circuits over bit planes.")
    out.append("//   forward: S'(x) = A·inv(x)    = SBOX[x] ^ 0x63,      so SBOX[x] = S'(x) ^ 0x63")
    out.append("//   inverse: T(y)  = inv(A^-1·y) = INV_SBOX[y ^ 0x63],  so INV_SBOX[z] = T(z ^ 0x63)")
    out.append("// Adding 0x63 is left to the caller (complement bit planes 0, 1, 5 and 6).")
    out.append("// inv is inversion in GF(2^8) mod x^8+x^4+x^3+x+1 (inv(0) = 0), A the AES affine matrix; plane i holds")
    out.append("// bit i (coefficient of x^i) of every byte.")
    out.append("//")
    out.append("// Construction: tower field GF(((2^2)^2)^2). With x^16 = b1·k1 + b0·k0 over GF(16) and the norm d = x^17,")
    out.append("// inv(x) = (D·m1)·k1 + (D·m0)·k0 where m = s·b, u = s·d = c'·m1·m0 + L(x), D = u^-1. The GF(16) products use")
    out.append("// nine shared Karatsuba forms per operand (9 + 18 ANDs), and the GF(16) inversion is a 5-AND circuit found by")
    out.append("// exhaustive search; all linear layers are XOR-minimised with the Boyar–Peralta heuristic. See derive.py.")
    for direction in ("fwd", "inv"):
        (ng, ri, s), C, outs, d, mi, si = results[direction]
        a, x = counts(C)
        out.append("//")
        out.append("// %s: %d AND + %d XOR = %d gates." % ("forward" if direction == "fwd" else "inverse", a, x, ng))
        for part in REPS[ri].desc.split("; "):
            out.append("//   %s" % part)
        out.append("//   scale s = 0x%02x (elements are written as AES-field bytes)." % s)
    out.append("")
    out.append("/// Words that hold one bit plane of several bitsliced AES states. Only bitwise operations are used, so every")
    out.append("/// function over them runs in time independent of the data.")
    out.append("@usableFromInline")
    out.append("internal protocol BitsliceWord: Sendable {")
    out.append("    static func ^ (lhs: Self, rhs: Self) -> Self")
    out.append("    static func & (lhs: Self, rhs: Self) -> Self")
    out.append("    static func | (lhs: Self, rhs: Self) -> Self")
    out.append("    static prefix func ~ (x: Self) -> Self")
    out.append("    static var zero: Self { get }")
    out.append("}")
    out.append("")
    out.append("// `zero` and the operators come from the standard library (AdditiveArithmetic, FixedWidthInteger), and for")
    out.append("// SIMD2<UInt64> from AESBitslice.swift, which implements them with whole-register instructions.")
    out.append("extension UInt64: BitsliceWord {}")
    out.append("")
    out.append("extension SIMD2: BitsliceWord where Scalar == UInt64 {}")
    out.append("")
    out.append("@usableFromInline")
    out.append("internal enum AESSBoxCircuit {")
    (_, C, outs, _, _, _) = results["fwd"]
    out += emit_function("forward", "S'(x) = SBOX[x] ^ 0x63 on 8 bit planes, x0 = least significant bit plane.", C, outs)
    out.append("")
    (_, C, outs, _, _, _) = results["inv"]
    out += emit_function("inverse", "T(y) = INV_SBOX[y ^ 0x63] on 8 bit planes, x0 = least significant bit plane.", C, outs)
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.join(here, "..", "..", "Sources", "KeychainCrypto", "AES", "AESSBoxCircuit.swift")
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (result does not depend on it)")
    ap.add_argument("--output", default=os.path.normpath(default_out))
    args = ap.parse_args()
    results = search(max(1, args.jobs))
    for direction, table in (("fwd", S_PRIME), ("inv", T_PRIME)):
        _, C, outs, _, _, _ = results[direction]
        assert verify(C, outs, table)
    with open(args.output, "w") as fh:
        fh.write(emit_swift(results))
    log("wrote %s" % args.output)


if __name__ == "__main__":
    main()

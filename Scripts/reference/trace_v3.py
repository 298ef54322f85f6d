#!/usr/bin/env python3
"""The worked example of format version 3 (SPEC.md §42), derived step by step from a file and its passwords.

    python3 Scripts/reference/trace_v3.py Fixtures/v3/worked-example.kcf \\
        --password 'correct horse battery staple' --scoped-password "the mail app's password" \\
        [--wrong-password hunter2] [--manifest Fixtures/v3/worked-example.json]   > worked-example-v3-trace.md

Prints a Markdown trace: the map of the file, header run A field by field, the slots (KEK, commitment, anchor, key
set, attestation, grants), the key table, the keys of the epoch and C0, the group keys and start values, the commit
slots and the last chunk's parity, every record (frame, segments, page boxes and secret boxes opened, the heads, the
chain tag), the final state, and what the scoped password opens.

Every value is computed here from the file's bytes and the passwords, as SPEC.md §30 – §38 say, with Python's
`cryptography` (PBKDF2, HKDF, HMAC, AES-GCM, X25519), hashlib (SHA-256, BLAKE2b) and the reference's Reed–Solomon
code (rs255.py); the attributes of a put are decoded by the version 1 reference (kcf_reference.decode_attributes,
§7.3). Nothing comes from the Swift library. The slots, the key table, the pages, the heads and the chain are parsed
and opened here from the SPEC's tables, not by the reference reader; at the end the independent reader
(kcf_reference_v3.open_keychain) opens the file with each password and must find the same items and head. A tag,
MAC, checksum, commitment or parity that does not verify stops the trace with an error (exit 1): it never prints a
failed check.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac as _hmac
import json
import os
import struct
import sys
import unicodedata
from datetime import datetime, timezone

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import kcf_reference as K  # noqa: E402   (Tracer, HKDF/GCM spelt out, attributes §7.3)
import kcf_reference_v2 as V2  # noqa: E402   (page, chunk and seal parity of §19: rs255 underneath)
import kcf_reference_v3 as V3  # noqa: E402   (only to cross-check the result at the end)
import rs255 as RS  # noqa: E402

PAGE, PAGE_DATA, PAGE_PARITY = 4096, 3568, 512
SLOT_STRIDE, SLOT_BYTES, SEAL = 12288, 8448, 128
CHUNK = 57088


SPEC_MODE = False          # --spec: the body of SPEC.md §42 (shorter: no AES-GCM internals, the scoped open in brief)


class TraceFailure(Exception):
    pass


class Tracer(K.Tracer):
    """K.Tracer whose level-3 headings are numbered 42.1, 42.2, … in --spec mode (SPEC.md §42's subsections)."""
    number = 0

    def h(self, level: int, text: str):
        if SPEC_MODE and level == 3:
            self.number += 1
            text = f"42.{self.number} {text}"
        super().h(level, text)


def need(condition: bool, what: str):
    """A check the trace relies on: stops the trace loudly when it fails."""
    if not condition:
        raise TraceFailure(what)


def u8(v): return struct.pack(">B", v)
def u32(v): return struct.pack(">I", v)
def u64(v): return struct.pack(">Q", v)
def rd16(b, o): return struct.unpack_from(">H", b, o)[0]
def rd32(b, o): return struct.unpack_from(">I", b, o)[0]
def rd64(b, o): return struct.unpack_from(">Q", b, o)[0]


def c(b: bytes) -> str:
    """Hex in backquotes. In --spec mode a value longer than 64 bytes is abbreviated (every byte is in the section's
    hex dumps of the header and the log)."""
    b = bytes(b)
    if SPEC_MODE and len(b) > 64:
        return f"`{b[:8].hex()}…{b[-4:].hex()}` ({len(b)} bytes)"
    return K._c(b)


def hexlines(b: bytes, base=None) -> str:
    return K.hexdump_lines(b, base=base)


def hmac256(key: bytes, msg: bytes) -> bytes:
    return _hmac.new(key, msg, hashlib.sha256).digest()


def hkdf(name: str, ikm: bytes, info: bytes, salt: bytes = b"", salt_name: str = "") -> tuple:
    """HKDF-SHA256, L = 32, spelt out (RFC 5869): (value, trace rows). Checked against `cryptography`'s HKDF."""
    prk, t1 = K.hkdf_steps(ikm, salt or bytes(32), info)
    need(t1 == K.hkdf_sha256(ikm, salt or bytes(32), info), f"HKDF of {name}")
    what = f"salt = {salt_name}" if salt else "32 zero bytes: the empty salt"
    return t1, [(f"{name}: info ({len(info)} bytes)", c(info)),
                (f"{name}: PRK = HMAC-SHA256({what}, IKM)", c(prk)),
                (f"**{name}** = T(1) = HMAC-SHA256(PRK, info ‖ 01)", c(t1))]


def gcm(key: bytes, box: bytes, aad: bytes, what: str) -> tuple:
    """AES-256-GCM opened and spelt out: (plaintext, rows). A tag that does not verify stops the trace."""
    plain = K.gcm_open(key, box, aad)
    need(plain is not None, f"{what}: the AES-GCM tag does not verify")
    rows = K.gcm_details(key, box, aad)
    need(rows[-1][1] == "yes", f"{what}: the tag computed here differs")
    if SPEC_MODE:           # SPEC.md §42 leaves AES-GCM's inner values to the trace file
        rows = [("the AES-256-GCM tag verifies; plaintext", f"{len(plain)} bytes")]
    return plain, rows


def x_public(private: bytes) -> bytes:
    return X25519PrivateKey.from_private_bytes(private).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def fields(tr, base: int, rows):
    """rows: (relative offset, size, name, bytes, value) -> a table with absolute offsets."""
    tr.table(("offset", "size", "field", "bytes (hex)", "value"),
             [(base + off, size, name, c(b) if b else "—", value) for off, size, name, b, value in rows])


def date_text(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


# ---------------------------------------------------------------------------------------------
# Slots (§33.1)
# ---------------------------------------------------------------------------------------------

def parse_slot(b: bytes, at: int) -> dict:
    """A slot's fields, at header offset `at` (§33.1): [(offset in slot, size, name, bytes, value)] and values."""
    kinds = {1: "1 (password)", 2: "2 (raw key)"}
    kdfs = {1: "1 (PBKDF2-HMAC-SHA256)", 2: "2 (HKDF of a raw key)", 3: "3 (Argon2id)"}
    length = rd16(b, 2)
    need(len(b) == length, f"slot at header offset {at}: length")
    q = b[128]
    scope = list(b[129:129 + q])
    i = 129 + q
    attestation = b[i:i + 32]
    anchor_at = i + 32
    a = rd16(b, anchor_at + 12)
    anchor = b[anchor_at:anchor_at + 12] + b[anchor_at + 14:anchor_at + 14 + a + 16]   # nonce ‖ ciphertext ‖ tag
    h_at = anchor_at + 30 + a
    grant_count = b[h_at]
    grants, g = [], h_at + 1
    for _ in range(grant_count):
        e = b[g:g + 32]
        cl = rd16(b, g + 44)
        grants.append((g, e, b[g + 32:g + 44] + b[g + 46:g + 46 + cl + 16]))
        g += 62 + cl
    need(g == length, f"slot at header offset {at}: its fields do not end at its length")
    kdf = b[1]
    params = b[20:32]
    if kdf == 1:
        need(not any(params[4:]), "PBKDF2 parameters: bytes 4 ..< 12 must be zero")
        pv = f"iterations {rd32(params, 0)}"
    else:
        pv = params.hex()
    rows = [(0, 1, "type", b[0:1], kinds.get(b[0], b[0])), (1, 1, "KDF id", b[1:2], kdfs.get(kdf, kdf)),
            (2, 2, "slot length", b[2:4], length), (4, 16, "slot id", b[4:20], ""),
            (20, 12, "KDF parameters", params, pv), (32, 32, "salt", b[32:64], ""),
            (64, 32, "commitment", b[64:96], ""), (96, 32, "public key P", b[96:128], ""),
            (128, 1 + q, "scope", b[128:129 + q], "q = 0: a full slot" if q == 0 else
             f"q = {q}: scoped to key id{'s' if q > 1 else ''} {', '.join(map(str, scope))}"),
            (129 + q, 32, "attestation", attestation, ""),
            (anchor_at, 12, "anchor: nonce", b[anchor_at:anchor_at + 12], ""),
            (anchor_at + 12, 2, "anchor: u16 a", b[anchor_at + 12:anchor_at + 14], a),
            (anchor_at + 14, a, "anchor: ciphertext", b[anchor_at + 14:anchor_at + 14 + a], ""),
            (anchor_at + 14 + a, 16, "anchor: tag", b[anchor_at + 14 + a:anchor_at + 30 + a], ""),
            (h_at, 1, "grant count h", b[h_at:h_at + 1], grant_count)]
    return {"at": at, "bytes": b, "rows": rows, "type": b[0], "kdf": kdf, "iterations": rd32(params, 0),
            "slotID": b[4:20], "salt": b[32:64], "commitment": b[64:96], "P": b[96:128], "scope": scope,
            "attestation": attestation, "anchor": anchor, "grants": grants,
            # §33.1: identity = type ‖ KDF id ‖ slot id ‖ KDF parameters ‖ salt ‖ commitment ‖ P ‖ scope
            "identity": b[0:1] + b[1:2] + b[4:20] + b[20:32] + b[32:64] + b[64:96] + b[96:128] + b[128:129 + q],
            # public identity = slot id ‖ P ‖ scope
            "public": b[4:20] + b[96:128] + b[128:129 + q]}


def kek_rows(password: str, slot: dict) -> tuple:
    """§33.2, KDF 1: PBKDF2-HMAC-SHA256(NFC(password) as UTF-8, salt, iterations, 32), one block spelt out."""
    need(slot["type"] == 1 and slot["kdf"] == 1, "the example's slots are PBKDF2 password slots")
    pw = unicodedata.normalize("NFC", password).encode("utf-8")
    kek = K.pbkdf2_sha256(pw, slot["salt"], slot["iterations"], 32)
    u1 = hmac256(pw, slot["salt"] + u32(1))
    u2 = hmac256(pw, u1)
    t, u = bytearray(u1), u1
    for _ in range(slot["iterations"] - 1):
        u = hmac256(pw, u)
        t = bytearray(x ^ y for x, y in zip(t, u))
    need(bytes(t) == kek, "PBKDF2 spelt out differs from the library's")
    return kek, [(f"P = UTF-8(NFC(password)) ({len(pw)} bytes)", c(pw)), ("U1 = HMAC-SHA256(P, salt ‖ 00000001)", c(u1)),
                 ("U2 = HMAC-SHA256(P, U1)", c(u2)),
                 (f"**KEK** = U1 XOR U2 XOR … XOR U{slot['iterations']}", c(kek))]


def decode_keyset(b: bytes) -> tuple:
    """§33.4: (key set, rows of (offset, size, field, bytes, value))."""
    rows = [(0, 32, "log key K_log", b[0:32], ""), (32, 32, "ρ of the root that made this key set", b[32:64], ""),
            (64, 1, "flags", b[64:65], "bit 0 set: a root key follows" if b[64] & 1 else "0: no root key")]
    need(not b[64] & 0xFE, "key set flags: other bits set")
    i, root = 65, None
    if b[64] & 1:
        root = b[65:97]
        rows.append((65, 32, "root key R", root, ""))
        i = 97
    count = b[i]
    rows.append((i, 1, "group count", b[i:i + 1], count))
    i += 1
    groups = []
    for _ in range(count):
        k, key, m = b[i], b[i + 1:i + 33], b[i + 33]
        name = b[i + 34:i + 34 + m]
        rows += [(i, 1, "key id", b[i:i + 1], k), (i + 1, 32, f"K_{k}", key, ""),
                 (i + 33, 1, "name length m", b[i + 33:i + 34], m),
                 (i + 34, m, "name", name, json.dumps(name.decode("utf-8")))]
        groups.append({"keyID": k, "key": key, "name": name.decode("utf-8")})
        i += 34 + m
    need(i == len(b), "bytes after the key set's last group")
    return {"logKey": b[0:32], "rho": b[32:64], "root": root, "groups": groups}, rows


def slot_keyset_bytes(ks: dict) -> bytes:
    """§33.4's encoding of a key set (for its length)."""
    out = ks["logKey"] + ks["rho"] + (b"\x01" + ks["root"] if ks["root"] is not None else b"\x00")
    out += bytes([len(ks["groups"])])
    for g in ks["groups"]:
        nm = g["name"].encode("utf-8")
        out += bytes([g["keyID"]]) + g["key"] + bytes([len(nm)]) + nm
    return out


def open_slot(tr, f, slot: dict, password: str, label: str) -> dict | None:
    """§33.7 with a password, traced (tr None: not traced). Returns the key set and the values derived, or
    {"commitment": …} alone when the commitment does not match."""
    quiet = tr is None
    if quiet:
        tr = K.Tracer()
    kek, rows = kek_rows(password, slot)
    sid = slot["slotID"]
    commitment, r = hkdf("commitment", kek, b"KCF3 slot commitment" + f["fileID"] + sid)
    rows += r
    match = _hmac.compare_digest(commitment, slot["commitment"])
    rows.append((f"stored commitment (header bytes {slot['at'] + 64} ..< {slot['at'] + 96}); equal in constant time",
                 c(slot["commitment"]) + (" — yes" if match else " — no: not this credential's slot (§33.7 step 1)")))
    tr.p(f"{label}: KEK (§33.2, KDF 1) and commitment (§33.3: HKDF-SHA256(KEK, empty salt, "
         f"\"KCF3 slot commitment\" ‖ file id ‖ slot id)).")
    tr.kv(rows)
    if not match:
        return {"kek": kek, "commitment": commitment, "keys": None}
    anchor_key, rows = hkdf("anchor key", kek, b"KCF3 slot anchor" + f["fileID"] + sid)
    tr.p("Anchor key (§33.3): HKDF-SHA256(KEK, empty salt, \"KCF3 slot anchor\" ‖ file id ‖ slot id).")
    tr.kv(rows)
    aad = b"KCF3 slot anchor" + f["fileID"] + slot["identity"]
    q = len(slot["scope"])
    tr.p(f"The anchor (§33.4) opens under the anchor key, with associated data \"KCF3 slot anchor\" ‖ file id ‖ "
         f"identity ({len(aad)} bytes = 16 + 16 + {len(slot['identity'])}; the identity is slot bytes 0 ..< 2 ‖ "
         f"4 ..< {129 + q}: type, KDF id, slot id, KDF parameters, salt, commitment, P, scope — §33.1):")
    tr.code(hexlines(aad))
    plain, rows = gcm(anchor_key, slot["anchor"], aad, f"{label}: anchor")
    x = plain[:32]
    need(x_public(x) == slot["P"], f"{label}: X25519(x, 9) is not P")
    rows += [("anchor plaintext: x (agreement private key, bytes 0 ..< 32)", c(x)),
             ("X25519(x, 9); equal to P (slot bytes 96 ..< 128)", c(x_public(x)) + " — yes")]
    tr.kv(rows)
    ks, krows = decode_keyset(plain[32:])
    tr.p(f"The rest of the anchor plaintext is the slot's key set (§33.4), {len(plain) - 32} bytes "
         f"(offsets within the key set):")
    tr.table(("offset", "size", "field", "bytes (hex)", "value"), [(o, s, n, c(b) if b else "(empty)", v)
                                                                   for o, s, n, b, v in krows])
    return {"keys": ks, "x": x, "anchorKey": anchor_key, "kek": kek, "commitment": commitment}


# ---------------------------------------------------------------------------------------------
# The trace
# ---------------------------------------------------------------------------------------------

def trace(path: str, password: str, scoped_password: str, wrong_password: str | None = None,
          manifest: dict | None = None, *, spec: bool = False) -> str:
    """The Markdown trace (spec: the body of SPEC.md §42, §42.1 to its end). Raises TraceFailure at a failed check."""
    global SPEC_MODE
    SPEC_MODE = spec
    with open(path, "rb") as fh:
        data = fh.read()
    tr = Tracer()
    name = os.path.basename(path)
    if not SPEC_MODE:
        tr.h(2, "Worked example of format version 3: step-by-step derivation")
        tr.p(f"`{name}` ({len(data):,} bytes), opened with the password {json.dumps(password)} and, at the end, with "
             f"the scoped password {json.dumps(scoped_password)}, by `Scripts/reference/trace_v3.py`. Every value is "
             f"recomputed here from the file's bytes and the passwords (SPEC.md §30 – §38); every tag, MAC, checksum, "
             f"commitment and parity shown was checked, and the trace stops at the first that fails. All values are "
             f"hex; integers are big-endian. SPEC.md §42 is this trace in short (`--spec`: no AES-GCM internals, "
             f"values over 64 bytes abbreviated, the scoped open in one paragraph). "
             f"Regenerate it from the repository's root with:")
        tr.code("python3 Scripts/reference/trace_v3.py Fixtures/v3/worked-example.kcf \\\n"
                "    --password 'correct horse battery staple' --scoped-password \"the mail app's password\" \\\n"
                "    --wrong-password hunter2 --manifest Fixtures/v3/worked-example.json \\\n"
                "    > Scripts/reference/worked-example-v3-trace.md")

    # -- map ------------------------------------------------------------------------------------------------------
    need(data[:8] == bytes.fromhex("894b43460d0a1a0a") and data[8:12] == b"\x00\x03\x00\x00",
         "the first 12 bytes are not a version 3 header's (§31.5 step 2)")
    length = rd32(data, 12)
    n = max(1, -(-length // PAGE_DATA))
    run_b, log_at = PAGE * n + 2 * SLOT_STRIDE, 8192 * n + 24576
    slot_at = (PAGE * n, PAGE * n + SLOT_STRIDE)
    log = data[log_at:]
    need(len(log) < CHUNK, "the example's log is one partial chunk")
    # frames, for the map (their checks come below)
    frames, pos = [], 0
    while pos + 8 <= len(log):
        body = rd32(log, pos)
        need(rd32(log, pos + 4) == body ^ 0xFFFFFFFF, f"record at log offset {pos}: length check")
        frames.append((pos, pos + 8 + body))
        pos += 8 + body
    need(pos == len(log), "the log does not end at a record's end")
    for at in slot_at:            # §30.2: each commit slot is followed by 3,840 zero bytes
        need(not any(data[at + SLOT_BYTES:at + SLOT_STRIDE]), f"the padding after the commit slot at {at} is not zero")
    tr.h(3, "The map of the file")
    tr.p(f"The first 16 bytes declare a version 3 header (§31.5 step 2) of L = {length} bytes, so each run is "
         f"n = max(1, ⌈{length} / 3,568⌉) = {n} page (§31.3) and the log starts at P = 8,192·n + 24,576 = {log_at:,} "
         f"(§30.2). The file is P + {len(log)} bytes of log: one partial chunk (§18.2), whose parity is in the "
         f"newest commit slot (§23.2).")
    rows = [(f"0 ..< {PAGE * n}", f"header run A (§31.3): the {length}-byte header, zeros to 3,568, 512 parity bytes, "
                                  f"16 zero bytes")]
    for i, at in enumerate(slot_at):
        rows.append((f"{at} ..< {at + SLOT_BYTES}", f"commit slot {i} (§23.2), then zeros to {at + SLOT_STRIDE}"))
    rows.append((f"{run_b} ..< {run_b + PAGE * n}", "header run B: the same page as run A"))
    for k, (a, b) in enumerate(frames):
        rows.append((f"{log_at + a} ..< {log_at + b}", f"record {k + 1}, log bytes {a} ..< {b}"))
    tr.table(("file offsets", "content"), rows)

    # -- header --------------------------------------------------------------------------------------------------
    h = data[:length]
    f = {"fileID": h[16:32], "epoch": rd64(h, 32), "salt": h[40:72], "rewriteEnd": rd64(h, 72),
         "headSeq": rd64(h, 80), "headChain": h[88:104]}
    s_count, c_count, t_len = h[108], h[109], rd16(h, 110)
    tr.h(3, "Header run A (file offset 0, §31.1)")
    table = h[112:112 + t_len]
    starts_at = 112 + t_len
    slots_at = starts_at + 9 * c_count
    slots, at = [], slots_at
    for _ in range(s_count):
        sl = rd16(h, at + 2)
        slots.append(parse_slot(h[at:at + sl], at))
        at += sl
    need(at == length - 48, "the slots do not end at L − 48 (§31.1)")
    need(c_count == 0, "the example has no chain start entries")
    fields(tr, 0, [(0, 8, "magic", h[0:8], "`\\x89KCF\\r\\n\\x1a\\n`"), (8, 2, "format version", h[8:10], rd16(h, 8)),
                   (10, 2, "flags", h[10:12], rd16(h, 10)), (12, 4, "header length L", h[12:16], length),
                   (16, 16, "file id", h[16:32], ""), (32, 8, "epoch", h[32:40], f["epoch"]),
                   (40, 32, "epoch salt", h[40:72], ""), (72, 8, "rewrite end R", h[72:80], f["rewriteEnd"]),
                   (80, 8, "rewrite head sequence", h[80:88], f["headSeq"]),
                   (88, 16, "rewrite head chain value", h[88:104], "record 2's chain tag (below)"),
                   (104, 4, "tombstone horizon", h[104:108], f"{rd32(h, 104)} days"),
                   (108, 1, "slot count s", h[108:109], s_count), (109, 1, "chain start count c", h[109:110], c_count),
                   (110, 2, "key table length T", h[110:112], t_len),
                   (112, 12, "sealed key table: nonce", table[:12], ""),
                   (124, t_len - 28, "sealed key table: ciphertext", table[12:-16], ""),
                   (112 + t_len - 16, 16, "sealed key table: tag", table[-16:], ""),
                   (starts_at, 0, "chain start entries", b"", "none (c = 0)")]
           + [(s["at"], len(s["bytes"]), f"key slot {i}", b"", f"below ({'full' if not s['scope'] else 'scoped'})")
              for i, s in enumerate(slots)]
           + [(length - 48, 32, "MAC", h[length - 48:length - 16], "checked under K_header below"),
              (length - 16, 16, "checksum", h[length - 16:], "")])
    tr.p(f"L = {length} = 112 + T {t_len} + 9·c 0 + slots {' + '.join(str(len(s['bytes'])) for s in slots)} + 48 "
         f"(§31.1).")
    full = hashlib.sha256(h[:length - 16]).digest()
    need(full[:16] == h[length - 16:], "header checksum")
    tr.kv([(f"SHA-256(header[0 ..< {length - 16}])", c(full)),
           ("checksum = its first 16 bytes; equal to the stored one", c(full[:16]) + " — yes")])
    page = data[:PAGE]
    need(not any(page[length:PAGE_DATA]) and not any(page[4080:]), "header page padding not zero")
    cw0 = bytes(page[0:PAGE_DATA:16])
    need(RS.parity_of_symbols(cw0) == page[PAGE_DATA:PAGE_DATA + PAGE_PARITY:16], "header page codeword 0 parity")
    need(V2.page_parity(page[:PAGE_DATA]) == page[PAGE_DATA:PAGE_DATA + PAGE_PARITY], "header page parity")
    need(data[run_b:run_b + PAGE * n] == data[:PAGE * n], "run B is not run A byte for byte")
    tr.p(f"The page (§31.3, §20.2, §19.3): header bytes 0 ..< {length}, zeros to 3,568, the 512 parity bytes of "
         f"its 16 codewords (byte i·16 + j is symbol i of codeword j; parity symbol i at 3,568 + 16·i + j), 16 zero "
         f"bytes. Run B at file offset {run_b} holds the same {PAGE * n} bytes: yes.")
    tr.kv([("codeword 0's parity (page bytes 3568, 3584, …)", c(page[PAGE_DATA:PAGE_DATA + PAGE_PARITY:16])),
           ("computed here from page bytes 0, 16, 32, …", c(RS.parity_of_symbols(cw0))),
           ("all 512 parity bytes equal the parity computed from the 3,568 bytes", "yes")])

    # -- slots ---------------------------------------------------------------------------------------------------
    for i, s in enumerate(slots):
        tr.h(3, f"Key slot {i} (header offset {s['at']}, §33.1): {'full' if not s['scope'] else 'scoped'}")
        fields(tr, s["at"], s["rows"])
        need(not s["grants"], "the example's slots hold no grant")
        tr.p("No grant (h = 0): the slot's key set is its anchor's (§33.7 step 3 has nothing to do).")

    tr.h(3, "Opening with the password (§31.4 step 5, §33.7)")
    tr.p(f"Run A's slots are tried in order; slot 0 is the first. Password {json.dumps(password)}, slot 0:")
    opened = open_slot(tr, f, slots[0], password, "Slot 0")
    need(opened["keys"] is not None, "the password does not open slot 0")
    ks = opened["keys"]
    need(ks["root"] is not None and not ks["groups"], "slot 0's key set is not a full one (§33.4 fits)")
    log_key, root = ks["logKey"], ks["root"]
    r, rows = hkdf("root agreement private key r", root, b"KCF3 root agreement" + f["fileID"])
    rho = x_public(r)
    need(rho == ks["rho"], "ρ of the key set is not X25519(r, 9) of its root (§33.4 fits)")
    rows.append(("ρ = X25519(r, 9); equal to the key set's ρ", c(rho) + " — yes"))
    att_key, r2 = hkdf("attestation key", root, b"KCF3 slot attestation" + f["fileID"])
    rows += r2
    for i, s in enumerate(slots):
        att = hmac256(att_key, s["public"])
        need(att == s["attestation"], f"slot {i}'s attestation")
        rows.append((f"slot {i}: public identity = slot id ‖ P ‖ scope ({len(s['public'])} bytes)", c(s["public"])))
        rows.append((f"slot {i}: attestation = HMAC-SHA256(attestation key, public identity); equal to the stored one",
                     c(att) + " — yes"))
    tr.p("The key set fits the full slot (§33.4): flag bit 0 set, no group, and ρ is the root's agreement public key "
         "(§33.3: r = HKDF-SHA256(R, empty salt, \"KCF3 root agreement\" ‖ file id)). Both slots are attested under "
         "this root (§33.6):")
    tr.kv(rows)

    # -- key table -------------------------------------------------------------------------------------------------
    tr.h(3, "The key table (§32)")
    k_table, rows = hkdf("K_table", root, b"KCF3 key table" + f["fileID"])
    tr.kv(rows)
    aad = b"KCF3 key table" + f["fileID"]
    tr.p(f"Sealed key table = header bytes 112 ..< {112 + t_len}: nonce ‖ ciphertext ‖ tag, opened under K_table "
         f"with associated data \"KCF3 key table\" ‖ file id ({len(aad)} bytes: `{aad.hex()}`).")
    plain, rows = gcm(k_table, table, aad, "key table")
    tr.kv(rows)
    tr.p(f"Plaintext ({len(plain)} bytes):")
    tr.code(hexlines(plain))
    last, count = plain[0], plain[1]
    trows, i, groups = [(0, 1, "last key id assigned a", plain[0:1], last), (1, 1, "group count g", plain[1:2], count)], 2, []
    for _ in range(count):
        k, key, m = plain[i], plain[i + 1:i + 33], plain[i + 33]
        gname = plain[i + 34:i + 34 + m].decode("utf-8")
        need(not groups or k > groups[-1]["keyID"], "key table: key ids out of order")
        trows += [(i, 1, "key id", plain[i:i + 1], k), (i + 1, 32, f"group key K_{k}", key, ""),
                  (i + 33, 1, "name length m", plain[i + 33:i + 34], m),
                  (i + 34, m, "name", plain[i + 34:i + 34 + m],
                   json.dumps(gname) + (" (the default group)" if not gname else ""))]
        groups.append({"keyID": k, "key": key, "name": gname})
        i += 34 + m
    need(i == len(plain), "key table: bytes after the last group")
    tr.table(("offset", "size", "field", "bytes (hex)", "value"),
             [(o, s, nm, c(b) if b else "(empty)", v) for o, s, nm, b, v in trows])
    gkey = {g["keyID"]: g["key"] for g in groups}
    gname_of = {g["keyID"]: g["name"] for g in groups}
    for s in slots:
        need(all(k in gkey for k in s["scope"]), "a scope names a key id the table lacks")

    # -- keys of the epoch --------------------------------------------------------------------------------------
    tr.h(3, "Keys of the epoch, C0 and the header MAC (§34)")
    tr.p("Each HKDF-SHA256(K_log, salt = epoch salt, info = label ‖ file id ‖ u64 epoch).")
    info_tail = f["fileID"] + u64(f["epoch"])
    k_header, rows = hkdf("K_header", log_key, b"KCF3 header" + info_tail, f["salt"], "epoch salt")
    k_chain, r2 = hkdf("K_chain", log_key, b"KCF3 chain" + info_tail, f["salt"], "epoch salt")
    k_heads, r3 = hkdf("K_heads", log_key, b"KCF3 heads" + info_tail, f["salt"], "epoch salt")
    c0_in = b"KCF3 C0" + info_tail + f["salt"]
    c0_full = hmac256(k_header, c0_in)
    c0 = c0_full[:16]
    mac = hmac256(k_header, h[:length - 48])
    need(mac == h[length - 48:length - 16], "the header MAC does not verify under K_header")
    tr.kv(rows + r2 + r3 + [("C0 input: \"KCF3 C0\" ‖ file id ‖ u64 epoch ‖ epoch salt", c(c0_in)),
                            ("HMAC-SHA256(K_header, input)", c(c0_full)), ("**C0** = first 16 bytes", c(c0)),
                            (f"header MAC = HMAC-SHA256(K_header, header[0 ..< {length - 48}]); equal to the stored one",
                             c(mac) + " — yes")])
    tr.p(f"Run A verifies (§31.4 step 6), run B is the same bytes, so run A's copy is chosen (epoch {f['epoch']}). "
         f"The rewrite end is {f['rewriteEnd']}, not 0, so the rewrite head ({f['headSeq']}, "
         f"`{f['headChain'].hex()}`) is checked against the record ending there (below).")

    # -- group keys ----------------------------------------------------------------------------------------------
    tr.h(3, "Group keys and start values (§35.4)")
    tr.p(f"For key id k with group key K_k, each HKDF-SHA256(K_k, empty salt, label ‖ file id ‖ u8 k). No chain start "
         f"entry (c = 0), so every chain starts at the header's epoch {f['epoch']} (§31.2): start value = "
         f"HMAC-SHA256(start key, u64 {f['epoch']})[0 ..< 16].")
    gk = {}
    for k in sorted(gkey):
        page_key, rows = hkdf(f"page key (k = {k})", gkey[k], b"KCF3 group page" + f["fileID"] + u8(k))
        secret_key, r2 = hkdf(f"secret key (k = {k})", gkey[k], b"KCF3 group secret" + f["fileID"] + u8(k))
        start_key, r3 = hkdf(f"start key (k = {k})", gkey[k], b"KCF3 group start" + f["fileID"] + u8(k))
        sv = hmac256(start_key, u64(f["epoch"]))
        gk[k] = {"page": page_key, "secret": secret_key, "start": start_key, "startValue": sv[:16]}
        tr.p(f"Key id {k} ({json.dumps(gname_of[k])}):")
        tr.kv(rows + r2 + r3 + [(f"start value for epoch {f['epoch']} = HMAC-SHA256(start key, "
                                 f"{u64(f['epoch']).hex()})[0 ..< 16]", c(sv[:16]))])

    # -- commit slots --------------------------------------------------------------------------------------------
    tr.h(3, "Commit slots (§34, §23)")
    seals = []
    for index, at in enumerate(slot_at):
        region = data[at:at + SLOT_BYTES]
        seal = region[:SEAL]
        need(seal == region[SLOT_BYTES - SEAL:], f"commit slot {index}: the two seal copies differ")
        need(seal[:4] == b"KCFS" and not any(seal[60:64]), f"commit slot {index}: magic or reserved bytes")
        smac = hmac256(k_header, seal[:64])
        need(smac == seal[64:96], f"commit slot {index}: the seal's MAC does not verify under K_header")
        need(V2.seal_parity(seal[:96]) == seal[96:128], f"commit slot {index}: the seal's parity")
        counter = rd64(seal, 12)
        need(counter % 2 == index, f"commit slot {index}: counter {counter} in the wrong place")
        need(rd64(seal, 4) == f["epoch"], f"commit slot {index}: another epoch")
        sv = {"slot": index, "counter": counter, "Ew": rd64(seal, 20), "Ec": rd64(seal, 28), "seq": rd64(seal, 36),
              "chain": seal[44:60], "parity": region[SEAL:SEAL + 8192]}
        seals.append(sv)
        tr.p(f"Commit slot {index} (file offset {at}): seal copy 1 at {at}, the last chunk's parity at "
             f"{at + SEAL} ..< {at + SEAL + 8192}, seal copy 2 at {at + SEAL + 8192}: the two copies are equal.")
        fields(tr, at, [(0, 4, "magic", seal[0:4], '"KCFS"'), (4, 8, "epoch", seal[4:12], rd64(seal, 4)),
                        (12, 8, "counter c", seal[12:20], f"{counter} (slot c mod 2 = {counter % 2})"),
                        (20, 8, "written end E_w", seal[20:28], sv["Ew"]),
                        (28, 8, "committed end E_c", seal[28:36], sv["Ec"]),
                        (36, 8, "head sequence", seal[36:44], sv["seq"]),
                        (44, 16, "head chain value", seal[44:60], "C0" if sv["chain"] == c0 else ""),
                        (60, 4, "reserved", seal[60:64], ""),
                        (64, 32, "MAC = HMAC-SHA256(K_header, seal[0 ..< 64])", seal[64:96], "verifies"),
                        (96, 32, "RS parity of seal[0 ..< 96] (§19.4)", seal[96:128], "equals the parity computed")])
    newest = max(seals, key=lambda s: s["counter"])
    older = min(seals, key=lambda s: s["counter"])
    need(newest["Ew"] == len(log), "the newest seal's written end is not the log's length")
    par = V2.chunk_parity(log)
    need(par == newest["parity"], "the newest slot's parity is not the parity of the log")
    sym0 = log[0::256]
    need(RS.parity_of_symbols(sym0) == newest["parity"][0::256], "codeword 0 of the last chunk")
    need(older["parity"] == V2.chunk_parity(log[:older["Ew"]]), "the older slot's parity")
    tr.p(f"The newest seal is counter {newest['counter']} (slot {newest['slot']}): E_w = {newest['Ew']} = the log's "
         f"length, E_c = {newest['Ec']}, head ({newest['seq']}, `{newest['chain'].hex()}`). The older, counter "
         f"{older['counter']}, has E_w = {older['Ew']} and E_c = {older['Ec']} with head ({older['seq']}, C0): the seal "
         f"of the rewrite's transaction part, written before its commit (§34, §38.5). The parity of the last chunk "
         f"(§19.2, §23.2) in the newest slot is that of log bytes 0 ..< {len(log)} followed by zeros:")
    tr.kv([(f"codeword 0's data symbols (log bytes 0, 256, 512, …): {len(sym0)}, then zeros", c(sym0)),
           ("its 32 parity symbols (slot parity bytes 0, 256, 512, …)", c(newest["parity"][0::256])),
           ("computed here", c(RS.parity_of_symbols(sym0))),
           (f"all 8,192 parity bytes equal the parity of log bytes 0 ..< {len(log)}", "yes"),
           (f"the older slot's 8,192 bytes equal the parity of log bytes 0 ..< {older['Ew']}", "yes")])

    # -- records -------------------------------------------------------------------------------------------------
    chain = c0
    chains = {k: {"start": f["epoch"], "seq": 0, "last": gk[k]["startValue"]} for k in gkey}
    items, live_group, record_tags, ends = {}, {}, [], {}
    expected_seq, expected_part = 1, 0
    pending = []          # a transaction's entries, applied at its commit
    for number, (ra, rb) in enumerate(frames, start=1):
        rec = log[ra:rb]
        body, kind, seq, part, count = rd32(rec, 0), rec[8], rd64(rec, 9), rd32(rec, 17), rd16(rec, 21)
        kind_name = {1: "commit", 3: "transaction part"}[kind]
        tr.h(3, f"Record {number}: log offset {ra} (file offset {log_at + ra}), sequence {seq}, {kind_name}")
        need(72 <= body and 1 <= count <= (body - 35) // 37, "frame: body length or segment count out of range")
        need(seq == expected_seq and part == expected_part, f"record {number}: sequence or part not the one due")
        fields(tr, ra, [(0, 4, "body length L", rec[0:4], body),
                        (4, 4, "length check", rec[4:8], f"L XOR FFFFFFFF = {body ^ 0xFFFFFFFF:08x}"),
                        (8, 1, "kind", rec[8:9], f"{kind} ({kind_name})"), (9, 8, "sequence", rec[9:17], seq),
                        (17, 4, "part", rec[17:21], part), (21, 2, "segment count N", rec[21:23], count),
                        (23, 4, "frame check", rec[23:27], "")])
        segs, p = [], 27
        for _ in range(count):
            k, S, Q = rec[p], rd32(rec, p + 1), rd32(rec, p + 5)
            need(S >= 28 and 28 <= Q <= S, "segment lengths")
            segs.append({"at": p, "k": k, "S": S, "Q": Q, "header": rec[p:p + 9], "box": rec[p + 9:p + 9 + Q],
                         "secrets": rec[p + 9 + Q:p + 9 + S]})
            p += 9 + S
        need(p == len(rec) - 16, f"record {number}: the segments do not end 16 bytes before the record's end")
        seg_headers = b"".join(s["header"] for s in segs)
        fc = hashlib.sha256(rec[:23] + seg_headers).digest()
        need(fc[:4] == rec[23:27], f"record {number}: frame check")
        if kind == 1:
            need(segs[-1]["k"] == 0 and all(s["k"] for s in segs[:-1]) and segs[-1]["Q"] == segs[-1]["S"],
                 "a commit's heads segment must be its last, with Q = S (§35.2)")
        else:
            need(all(s["k"] for s in segs), "a part holds no heads segment")
        tr.p(f"Record length 8 + L = {8 + body} (log bytes {ra} ..< {rb}). {count} segment{'s' if count > 1 else ''}: "
             + "; ".join(f"at record offset {s['at']}, key id {s['k']}" + (" (the heads)" if s["k"] == 0 else "")
                         + f", S = {s['S']}, Q = {s['Q']}" for s in segs)
             + ". Frame check (§35.1) = SHA-256(record[0 ..< 23] ‖ each segment's 9-byte header)[0 ..< 4]:")
        tr.kv([("segment headers, in order", c(seg_headers)), ("SHA-256(…)", c(fc)),
               ("first 4 bytes; equal to the stored frame check", c(fc[:4]) + " — yes")])
        heads = None
        for index, s in enumerate(segs):
            box = s["box"]
            if s["k"] == 0:
                aad = b"KCF3 heads" + f["fileID"] + u64(f["epoch"]) + u64(seq)
                tr.p(f"**Segment {index}: the heads** (§35.7), record offsets {s['at']} ..< {s['at'] + 9 + s['S']}: "
                     f"header `{s['header'].hex()}` (key id 0, S = Q = {s['S']}); the page box opens under K_heads "
                     f"with associated data \"KCF3 heads\" ‖ file id ‖ u64 epoch ‖ u64 sequence ({len(aad)} bytes: "
                     f"`{aad.hex()}`).")
                plain, rows = gcm(k_heads, box, aad, f"record {number}: heads")
                tr.kv([("nonce", c(box[:12])), (f"ciphertext ({len(box) - 28} bytes)", c(box[12:-16])),
                       ("tag (the segment's page tag)", c(box[-16:]))] + rows)
                need(len(plain) % 33 == 0, "heads length")
                heads, hrows, prev = {}, [], 0
                for o in range(0, len(plain), 33):
                    k, st, gs, tag = plain[o], rd64(plain, o + 1), rd64(plain, o + 9), plain[o + 17:o + 33]
                    need(prev < k and st <= f["epoch"], "heads out of order or out of range")
                    prev = k
                    heads[k] = (st, gs, tag)
                    hrows.append((o, k, st, gs, c(tag)))
                tr.p(f"Heads plaintext ({len(plain)} bytes, 33 per head):")
                tr.code(hexlines(plain))
                tr.table(("offset", "key id", "start epoch", "group sequence", "last tag"), hrows)
                continue
            k = s["k"]
            need(k in gkey, f"a segment of key id {k}, which the key table lacks (§35.9 step 4)")
            ch = chains[k]
            j = ch["seq"] + 1
            aad = b"KCF3 page" + f["fileID"] + u8(k) + u64(j) + ch["last"]
            tr.p(f"**Segment {index}: key id {k}** ({json.dumps(gname_of[k])}), record offsets {s['at']} ..< "
                 f"{s['at'] + 9 + s['S']} (log {ra + s['at']} ..< {ra + s['at'] + 9 + s['S']}): header "
                 f"`{s['header'].hex()}` — S = {s['S']}, Q = {s['Q']}: a page box of {s['Q']} bytes and "
                 f"{s['S'] - s['Q']} bytes of secret boxes. Page {j} of key id {k}'s chain (§35.5), under its page key, "
                 f"associated data ({len(aad)} bytes):")
            tr.table(("page AAD field", "offset", "size", "bytes (hex)"),
                     [('"KCF3 page"', 0, 9, c(aad[0:9])), ("file id", 9, 16, c(aad[9:25])), ("key id", 25, 1, c(aad[25:26])),
                      ("group sequence j", 26, 8, c(aad[26:34])),
                      ("previous page tag" + (f" (j = 1: the start value for epoch {ch['start']})" if j == 1 else ""),
                       34, 16, c(aad[34:50]))])
            plain, rows = gcm(gk[k]["page"], box, aad, f"record {number} segment {index}: page")
            tr.kv([("nonce", c(box[:12])), (f"ciphertext ({len(box) - 28} bytes)", c(box[12:-16])),
                   ("tag = the page tag", c(box[-16:]))] + rows)
            need(plain[0] == 1 and rd16(plain, 1) >= 1, "page encoding or entry count")
            pos, box_at, entries = 3, 0, []
            texts = []
            for _ in range(rd16(plain, 1)):
                ek = plain[pos]
                need(ek == 1, "the example's pages hold puts only")
                a = rd32(plain, pos + 1)
                attrs = plain[pos + 5:pos + 5 + a]
                slen, digest = rd32(plain, pos + 5 + a), plain[pos + 9 + a:pos + 25 + a]
                arows = []
                item_id, cls, values = K.decode_attributes(attrs, arows)
                texts.append((pos, a, attrs, arows, slen, digest, item_id, cls, values))
                pos += 25 + a
            used = pos
            T = len(plain)
            padded = 256 if used <= 256 else (1 << (used - 1).bit_length() if used <= 8192 else -(-used // 8192) * 8192)
            need(T == padded and not any(plain[used:]), "page padding (§35.5)")
            tr.p(f"Page plaintext: {T} bytes = padded(U) for U = {used} (§35.5): encoding {plain[0]}, entry count "
                 f"{rd16(plain, 1)}, the entries to byte {used}, then {T - used} zero bytes. Bytes 0 ..< {used}:")
            tr.code(hexlines(plain[:used]))
            for (epos, a, attrs, arows, slen, digest, item_id, cls, values) in texts:
                tr.p(f"Entry at page offset {epos}: put (`01`), A = {a}, attributes at {epos + 5} ..< {epos + 5 + a} "
                     f"(§7.3): encoding {attrs[0]}, item id `{item_id.hex()}`, class {cls} ({K.CLASS_NAMES[cls]}), "
                     f"{rd16(attrs, 18)} attributes; secret length s = {slen} at {epos + 5 + a}, digest "
                     f"`{digest.hex()}` at {epos + 9 + a}. Attributes (offsets within the attributes):")
                tr.table(("offset", "tag", "name", "type", "length", "value"),
                         [(ap, f"0x{tag:04X}", nm, f"{t} ({K.TYPE_NAMES[t]})", ln,
                           (json.dumps(v) if isinstance(v, str) else
                            f"{v} ms ({date_text(v)})" if t == 5 else str(v).lower() if isinstance(v, bool) else v))
                          for ap, tag, nm, t, ln, vb, v in arows])
                need((values.get("accessGroup") or "") == gname_of[k], "a put whose access group is not its page's (§36)")
                sbox = s["secrets"][box_at:box_at + slen + 28]
                need(len(sbox) == slen + 28, "secret box length")
                need(hashlib.blake2b(sbox, digest_size=16).digest() == digest, "BLAKE2b-128 of the secret box")
                saad = b"KCF3 secret box\x00" + f["fileID"] + u8(k) + item_id
                secret, srows = gcm(gk[k]["secret"], sbox, saad, "secret box")
                tr.p(f"Its secret box: segment bytes {9 + s['Q'] + box_at} ..< {9 + s['Q'] + box_at + slen + 28} "
                     f"({slen + 28} = s + 28 bytes, not padded), BLAKE2b-128 = `{digest.hex()}` = the digest: yes. "
                     f"Opened under key id {k}'s secret key (§35.6), associated data \"KCF3 secret box\" ‖ 00 ‖ file id "
                     f"‖ u8 key id ‖ item id ({len(saad)} bytes: `{saad.hex()}`):")
                tr.kv([("nonce", c(sbox[:12])), (f"ciphertext ({slen} bytes)", c(sbox[12:-16])), ("tag", c(sbox[-16:]))]
                      + srows + [("**secret**", c(secret) + f" = {json.dumps(secret.decode())}")])
                entries.append((k, item_id, cls, values, secret))
                box_at += slen + 28
            need(box_at == s["S"] - s["Q"], "secret bytes no put names")
            ch["seq"], ch["last"], ch["record"] = j, box[-16:], number
            pending += entries
        # chain tag
        msg = chain + rec[:27] + b"".join(s["header"] + s["box"][-16:] for s in segs)
        full_tag = hmac256(k_chain, msg)
        need(full_tag[:16] == rec[-16:], f"record {number}: the chain tag does not verify under K_chain")
        tr.p(f"**Chain tag** (§35.8) = HMAC-SHA256(K_chain, previous chain tag ‖ record[0 ..< 27] ‖ for each segment "
             f"its 9-byte header ‖ its page tag)[0 ..< 16]; the previous chain tag is "
             f"{'C0 (the epoch' + chr(39) + 's first record)' if chain == c0 else 'record ' + str(number - 1) + chr(39) + 's'}. "
             f"Message ({len(msg)} bytes = 16 + 27 + {len(segs)} × 25):")
        tr.code(hexlines(msg))
        tr.kv([("HMAC-SHA256(K_chain, message)", c(full_tag)),
               (f"first 16 bytes; equal to record bytes {len(rec) - 16} ..< {len(rec)}", c(full_tag[:16]) + " — yes")])
        chain = rec[-16:]
        record_tags.append((seq, chain))
        ends[rb] = (seq, chain)
        if kind == 1:
            for k, ch in chains.items():
                need(k in heads, f"the heads do not name key id {k} (§35.9 step 6)")
                need(heads[k] == (ch["start"], ch["seq"], ch["last"]), f"key id {k}'s head is not its chain's end")
            need(set(heads) <= set(gkey), "a head of a key id the key table lacks")
            tr.p("At this commit every group of the key table has a head equal to its chain's end (§35.9 step 6): "
                 + "; ".join(f"key id {k}: start epoch {ch['start']}, group sequence {ch['seq']}, last tag "
                             f"`{ch['last'].hex()}` ("
                             + (f"the page tag of page {ch['seq']}, in record {ch['record']})" if ch["seq"] else
                                "the start value: no page)") for k, ch in sorted(chains.items()))
                 + f". The transaction (parts and commit) applies now (§24.6, §36), "
                   f"{len(pending)} put{'s' if len(pending) != 1 else ''}.")
            for k, iid, cls, values, secret in pending:
                items[iid] = (k, cls, values, secret)
            pending = []
            expected_part = 0
        else:
            expected_part += 1
        expected_seq += 1
        tr.p(f"Chain value after record {number}: `{chain.hex()}`.")

    # -- result --------------------------------------------------------------------------------------------------
    head = record_tags[-1]
    need(f["rewriteEnd"] == len(log) and (f["headSeq"], f["headChain"]) == head,
         "the header's rewrite head is not the record ending at its rewrite end")
    need(newest["Ec"] == len(log) and (newest["seq"], newest["chain"]) == head, "the newest seal's head")
    tr.h(3, "Result")
    tr.p(f"The log replays to its end ({len(log)} bytes, all acknowledged: the newest seal's E_c, §37.2, §25.2). Head "
         f"({head[0]}, `{head[1].hex()}`) = the header's rewrite head (sequence {f['headSeq']}, at rewrite end "
         f"{f['rewriteEnd']}) = the newest seal's head: yes.")
    rows = []
    for iid, (k, cls, values, secret) in sorted(items.items(), key=lambda kv: kv[1][0]):
        rows.append((k, json.dumps(gname_of[k]), f"`{iid.hex()}`", K.CLASS_NAMES[cls], values.get("service"),
                     values.get("account"), json.dumps(secret.decode())))
    tr.table(("key id", "group", "item id", "class", "service", "account", "secret"), rows)
    tr.table(("key id", "start epoch", "group sequence", "last tag"),
             [(k, ch["start"], ch["seq"], c(ch["last"])) for k, ch in sorted(chains.items())])
    if manifest is not None:
        e = manifest["expect"]
        need((e["head"]["sequence"], e["head"]["chainValue"]) == (head[0], head[1].hex()), "the manifest's head")
        need([(g["keyID"], g["startEpoch"], g["sequence"], g["lastTag"]) for g in e["groupHeads"]]
             == [(k, ch["start"], ch["seq"], ch["last"].hex()) for k, ch in sorted(chains.items())],
             "the manifest's group heads")
        need(sorted(i["id"] for i in e["items"]) == sorted(i.hex() for i in items), "the manifest's items")
        for it in e["items"]:
            need(items[bytes.fromhex(it["id"])][3].hex() == it["secret"], "a manifest item's secret")
        tr.p("The head, the group heads, the item ids and the secrets equal those of the fixture's manifest "
             "(`worked-example.json`, `expect`): yes.")
    kc = V3.open_keychain(data, {"password": password})
    need((kc.head[0], bytes(kc.head[1])) == head and sorted(kc.items) == sorted(items)
         and all(kc.items[i].secret == items[i][3] for i in items),
         "the reference reader (kcf_reference_v3.open_keychain) disagrees with this trace")
    tr.p("The reference reader `kcf_reference_v3.open_keychain` finds the same head and items: yes.")

    # -- the scoped password -----------------------------------------------------------------------------------------
    tr.h(3, "What the scoped password opens (§33.7, §37.3, §37.4)")
    quiet = SPEC_MODE
    if not quiet:
        tr.p(f"Password {json.dumps(scoped_password)}. Run A's slots in order: slot 0 first.")
    miss = open_slot(None if quiet else tr, f, slots[0], scoped_password, "Slot 0")
    need(miss["keys"] is None, "the scoped password opens slot 0")
    sopen = open_slot(None if quiet else tr, f, slots[1], scoped_password, "Slot 1")
    need(sopen["keys"] is not None, "the scoped password does not open slot 1")
    sks = sopen["keys"]
    need(sks["root"] is None and [g["keyID"] for g in sks["groups"]] == slots[1]["scope"],
         "slot 1's key set does not fit its scope (§33.4)")
    need(sks["logKey"] == log_key, "the scoped key set's log key is not the full one's")
    need(sks["rho"] == rho, "the scoped key set's ρ is not the current root's")
    for g in sks["groups"]:
        need(g["key"] == gkey[g["keyID"]] and g["name"] == gname_of[g["keyID"]], "a scoped group key differs from the table's")
    held = {g["keyID"] for g in sks["groups"]}
    # what it reads: its groups' segments open as above; every other group's segments are kept as bytes (§37.3)
    counts, kept, opens = {}, [], []
    for number, (ra, rb) in enumerate(frames, start=1):
        rec = log[ra:rb]
        p, count = 27, rd16(rec, 21)
        for index in range(count):
            k, S, Q = rec[p], rd32(rec, p + 1), rd32(rec, p + 5)
            if k and k not in held:
                tag = rec[p + 9 + Q - 16:p + 9 + Q]
                counts[k] = (counts.get(k, (0, b""))[0] + 1, tag)
                kept.append(f"record {number}'s segment {index} (key id {k}, {9 + S} bytes, page tag `{tag.hex()}`)")
            elif k:
                opens.append(f"record {number}'s segment {index} (key id {k})")
            p += 9 + S
    for k, (cnt, tag) in sorted(counts.items()):      # §37.4, against the last commit's heads read above
        st, gs, lt = heads[k]
        need(st == f["epoch"] and gs == cnt and lt == tag, f"§37.4: key id {k}'s head against its segments")
    skc = V3.open_keychain(data, {"password": scoped_password})
    mine = {i: v for i, v in items.items() if v[0] in held}
    theirs = {i: v for i, v in items.items() if v[0] not in held}
    need(sorted(skc.items) == sorted(mine) and all(skc.items[i].secret == mine[i][3] for i in mine),
         "the reference reader's scoped open disagrees")
    need((skc.head[0], bytes(skc.head[1])) == head, "the scoped open's head")
    group_text = ", ".join(f"key id {g['keyID']} ({json.dumps(g['name'])}, K_{g['keyID']} = `{g['key'].hex()}`, the "
                           f"key table's)" for g in sks["groups"])
    other_heads = "; ".join(f"key id {k}'s head ({heads[k][0]}, {heads[k][1]}, `{heads[k][2].hex()}`) has the header's "
                            f"epoch as start epoch (no chain start entry), group sequence = its {cnt} segment in the "
                            f"file and last tag = that segment's page tag" for k, (cnt, tag) in sorted(counts.items()))
    served = ", ".join(f"`{i.hex()}` ({json.dumps(v[2].get('account'))}, secret {json.dumps(v[3].decode())})"
                       for i, v in mine.items())
    unread = ", ".join(f"`{i.hex()}` ({json.dumps(v[2].get('account'))}, key id {v[0]})" for i, v in theirs.items())
    if quiet:
        tr.p(f"The password {json.dumps(scoped_password)} fails slot 0's commitment (§33.7 step 1: KEK "
             f"`{miss['kek'].hex()}`, commitment `{miss['commitment'].hex()}` ≠ the stored one) and matches slot 1's "
             f"(KEK `{sopen['kek'].hex()}`, commitment `{sopen['commitment'].hex()}` = header bytes "
             f"{slots[1]['at'] + 64} ..< {slots[1]['at'] + 96}). Slot 1's anchor key `{sopen['anchorKey'].hex()}` "
             f"(§33.3) opens its anchor (associated data over slot 1's identity, whose scope is `0102`); x = "
             f"`{sopen['x'].hex()}` gives X25519(x, 9) = P. The key set (§33.4, {len(slot_keyset_bytes(sks))} bytes) "
             f"has flags `00` — **no root key**, so the key table stays sealed (§31.4 step 8) — and fits the scope: "
             f"K_log = `{sks['logKey'].hex()}`, the same log key as the full set's (so K_header, K_chain, K_heads, C0 and "
             f"the header MAC are those above), ρ = the current root's `{sks['rho'].hex()}`, and one group: "
             f"{group_text}. Replaying (§37.3) it opens {', '.join(opens)} as page 1 of key id 2's chain, exactly as "
             f"above; it keeps {', '.join(kept)} as bytes, with no key to open it; at record 2 it opens the heads "
             f"under K_heads, checks key id 2's head against its chain (§35.9 step 6) and, for the key id it does not "
             f"hold, §37.4: {other_heads}. It serves {served} only, head ({head[0]}, `{head[1].hex()}`); {unread} is "
             f"in a page it cannot open.")
    else:
        tr.p(f"The key set fits the scoped slot (§33.4): flag bit 0 clear (no root key), its groups' key ids "
             f"{sorted(held)} are exactly the scope. It holds K_log = `{log_key.hex()}` (the full set's, so K_header, "
             f"K_chain, K_heads, C0 and the header MAC are as above), ρ = the current root's, and {group_text}. "
             f"No root key: the key table stays sealed (§31.4 step 8).")
        tr.p(f"Replaying the log with K_log and its group keys (§37.3): {', '.join(opens)} opens as page 1 of its "
             f"chain, as above; {', '.join(kept)} is kept as its bytes. At record 2 the heads open under K_heads as "
             f"above; key id 2's head is its chain's end (§35.9 step 6), and for the key id it does not hold, §37.4 "
             f"holds: {other_heads}.")
        tr.p(f"It serves {served} only, with the same head ({head[0]}, `{head[1].hex()}`); {unread} is in a page it "
             f"cannot open.")
    tr.p("`kcf_reference_v3.open_keychain` with this password finds the same items and head: yes.")
    if manifest is not None:
        oc = next(o for o in manifest["otherCredentials"] if o["credential"].get("password") == scoped_password)
        need(sorted(i["id"] for i in oc["expect"]["items"]) == sorted(i.hex() for i in mine), "the manifest's scoped items")
    if wrong_password is not None:
        for i, s in enumerate(slots):
            kek, _ = kek_rows(wrong_password, s)
            need(K.hkdf_sha256(kek, bytes(32), b"KCF3 slot commitment" + f["fileID"] + s["slotID"]) != s["commitment"],
                 f"the wrong password matches slot {i}'s commitment")
        try:
            V3.open_keychain(data, {"password": wrong_password})
            need(False, "the wrong password opens the file")
        except K.WrongCredentials:
            pass
        tr.p(f"The password {json.dumps(wrong_password)} matches neither slot's commitment (§33.7 step 1), so no slot "
             f"opens and nothing is corrupted: `wrongCredentials` (§31.4 step 7).")

    # -- the log ---------------------------------------------------------------------------------------------------
    tr.h(3, f"The log ({len(log)} bytes, file offsets {log_at} ..< {len(data)})")
    tr.p("Each row is prefixed by its log offset (decimal).")
    tr.code(hexlines(log, base=0))
    tr.h(3, f"Header run A's first {length} bytes (the header)")
    tr.code(hexlines(h, base=0))
    return tr.text()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--password", required=True)
    ap.add_argument("--scoped-password", required=True)
    ap.add_argument("--wrong-password")
    ap.add_argument("--manifest")
    ap.add_argument("--spec", action="store_true",
                    help="print the body of SPEC.md §42: no AES-GCM internals, the scoped open in one paragraph")
    a = ap.parse_args(argv)
    manifest = None
    if a.manifest:
        with open(a.manifest) as fh:
            manifest = json.load(fh)
    try:
        sys.stdout.write(trace(a.file, a.password, a.scoped_password, a.wrong_password, manifest, spec=a.spec))
    except TraceFailure as e:
        print(f"trace_v3: CHECK FAILED: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

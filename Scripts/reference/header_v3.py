#!/usr/bin/env python3
"""KeychainFile format version 3's header (Docs/FormatVersion3.md §2.4, §2.9): an independent implementation.

Written from the design document's tables (header bytes, key table, keys of an epoch, runs of header pages), with
Python's `cryptography` for HKDF, HMAC and AES-GCM, the version 2 reference's header-page parity (kcf_reference_v2.py)
and the version 3 slots (slots_v3.py): the second implementation the Swift header is checked against
(Tests/KeychainFileTests/Format/V3/HeaderV3ReferenceTests.swift). Version 3 is a design still; this reads and writes
a file's prefix (both runs of header pages and the commit slots, zero), not records. Since session 47 (§2.6) the
byte at offset 109 is the chain start count c, and c entries of 9 bytes (u8 key id ‖ u64 start epoch, key ids
strictly increasing, each epoch before the header's) follow the sealed key table, before the slots: parse_header
returns them as "chainStarts" and refuses them out of order or not before the epoch; build_header writes them.

CLI, for the Swift tests:

    header_v3.py open PREFIX_FILE (--password P | --key HEX)
        prints {"fileID", "epoch", "pageCount", "slotIndex", "logKey", "root" (or null), "c0", "header" (hex of the
        chosen copy), "groups": [{"keyID", "name", "key"}], "runs": ["intact"|"repaired"|"unusable", ...]}
        or {"result": "wrongCredentials"}; exit 6 when corrupted, with the reason on stderr
    header_v3.py make PREFIX_FILE --password P --iterations N --seed N [--groups N] [--scoped-password P]
        writes a new keychain's prefix (N more groups named "group-i", and a slot for --scoped-password scoped to the
        first two of them) and prints {"fileID", "logKey", "root", "groups": [...]}
"""

from __future__ import annotations

import argparse
import hashlib
import hmac as _hmac
import json
import random
import struct
import sys
from typing import Optional

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import kcf_reference_v2 as V2
import slots_v3 as S

MAGIC = bytes([0x89, 0x4B, 0x43, 0x46, 0x0D, 0x0A, 0x1A, 0x0A])
FIXED, TRAILER = 112, 48
CHAIN_START = 9                 # a chain start entry: u8 key id ‖ u64 start epoch (§2.6, after the key table)
MIN_TABLE = 30
MIN_SLOT = 192
MIN_HEADER = FIXED + MIN_TABLE + MIN_SLOT + TRAILER
PAGE, PAGE_DATA = 4096, 3568
MAX_PAGES = 16
MAX_HEADER = MAX_PAGES * PAGE_DATA
SLOT_STRIDE = 12288
MAX_ITERATIONS_TOTAL = 20_000_000
MAX_ARGON_WORK = 1 << 26


class Corrupted(Exception):
    pass


def page_count(length: int) -> int:
    return max(1, -(-length // PAGE_DATA))


def run_b_offset(n: int) -> int:
    return n * PAGE + 2 * SLOT_STRIDE


def log_start(n: int) -> int:
    return run_b_offset(n) + n * PAGE


def epoch_keys(log_key: bytes, file_id: bytes, epoch: int, salt: bytes) -> dict:
    def derive(label: bytes) -> bytes:
        return S.hkdf(log_key, label + file_id + struct.pack(">Q", epoch), salt=salt)
    return {"header": derive(b"KCF3 header"), "chain": derive(b"KCF3 chain"), "heads": derive(b"KCF3 heads")}


def c0(header_key: bytes, file_id: bytes, epoch: int, salt: bytes) -> bytes:
    return _hmac.new(header_key, b"KCF3 C0" + file_id + struct.pack(">Q", epoch) + salt, hashlib.sha256).digest()[:16]


def table_key(root: bytes, file_id: bytes) -> bytes:
    return S.hkdf(root, b"KCF3 key table" + file_id)


def seal_table(last: int, groups: list, root: bytes, file_id: bytes, rng: random.Random) -> bytes:
    plain = bytes([last, len(groups)])
    for g in groups:
        name = g["name"].encode()
        plain += bytes([g["keyID"]]) + g["key"] + bytes([len(name)]) + name
    nonce = rng.randbytes(12)
    return nonce + AESGCM(table_key(root, file_id)).encrypt(nonce, plain, b"KCF3 key table" + file_id)


def open_table(sealed: bytes, root: bytes, file_id: bytes) -> tuple:
    if len(sealed) < 28:
        raise Corrupted("key table too short")
    try:
        plain = AESGCM(table_key(root, file_id)).decrypt(sealed[:12], sealed[12:], b"KCF3 key table" + file_id)
    except Exception:
        raise Corrupted("the key table does not authenticate under the root key")
    last, count, at, groups, previous, names = plain[0], plain[1], 2, [], 0, set()
    for _ in range(count):
        if at + 34 > len(plain):
            raise Corrupted("key table truncated")
        key_id, key, n = plain[at], plain[at + 1:at + 33], plain[at + 33]
        name = plain[at + 34:at + 34 + n]
        if len(name) != n:
            raise Corrupted("key table truncated")
        at += 34 + n
        if not (previous < key_id <= last):
            raise Corrupted("key ids out of order or past the last assigned")
        previous = key_id
        name = name.decode("utf-8")  # UnicodeDecodeError: corrupted too
        if name in names:
            raise Corrupted("two groups with one name")
        names.add(name)
        groups.append({"keyID": key_id, "name": name, "key": key})
    if at != len(plain):
        raise Corrupted("bytes after the key table's last group")
    return last, groups


def parse_header(h: bytes) -> dict:
    """Structure, limits and checksum (§2.9); the MAC needs a log key."""
    if len(h) < 16 or h[:8] != MAGIC or h[8:12] != b"\x00\x03\x00\x00":
        raise Corrupted("not a version 3 header")
    length = struct.unpack(">I", h[12:16])[0]
    if not (MIN_HEADER <= length <= MAX_HEADER) or len(h) != length:
        raise Corrupted("length")
    if hashlib.sha256(h[:length - 16]).digest()[:16] != h[length - 16:]:
        raise Corrupted("checksum")
    file_id, epoch, salt = h[16:32], struct.unpack(">Q", h[32:40])[0], h[40:72]
    rewrite_end, head_seq = struct.unpack(">QQ", h[72:88])
    head_chain, horizon = h[88:104], struct.unpack(">I", h[104:108])[0]
    slot_count, start_count, table_length = h[108], h[109], struct.unpack(">H", h[110:112])[0]
    if not (1 <= slot_count <= 16) or not (1 <= horizon <= 36525):
        raise Corrupted("slot count or horizon")
    if rewrite_end > (1 << 62) - 1 or (rewrite_end == 0) != (head_seq == 0):
        raise Corrupted("rewrite end and head")
    if table_length < MIN_TABLE:
        raise Corrupted("key table length")
    body_end = length - TRAILER
    table = h[FIXED:FIXED + table_length]
    at = FIXED + table_length
    # §2.6 (decided in session 47): the chain start count c at offset 109 and c entries of 9 bytes after the sealed
    # key table — u8 key id ‖ u64 start epoch, key ids strictly increasing, each start epoch before the header's epoch.
    if at + CHAIN_START * start_count > body_end:
        raise Corrupted("chain starts past the MAC")
    chain_starts, previous = [], 0
    for _ in range(start_count):
        key_id, start = h[at], struct.unpack(">Q", h[at + 1:at + 9])[0]
        if not previous < key_id:
            raise Corrupted(f"chain start of key id {key_id}: key ids not strictly increasing (or 0)")
        if start >= epoch:
            raise Corrupted(f"chain start of key id {key_id}: start epoch {start}, not before the header's epoch "
                            f"{epoch}")
        chain_starts.append((key_id, start))
        previous = key_id
        at += CHAIN_START
    slots, iterations, argon = [], 0, 0
    for _ in range(slot_count):
        if at + 4 > body_end:
            raise Corrupted("slots truncated")
        n = struct.unpack(">H", h[at + 2:at + 4])[0]
        if at + n > body_end:
            raise Corrupted("slot past the MAC")
        b = h[at:at + n]
        s = S.parse_slot(b)
        if s["kdf"] == 1:
            iterations += struct.unpack(">I", s["params"][:4])[0]
        elif s["kdf"] == 3:
            memory, passes = struct.unpack(">II", s["params"][:8])
            argon += memory * passes
        slots.append((at, b, s))
        at += n
    if at != body_end:
        raise Corrupted("length does not match the key table and slots")
    if len({s["slotID"] for _, _, s in slots}) != len(slots):
        raise Corrupted("two slots with one id")
    if iterations > MAX_ITERATIONS_TOTAL or argon > MAX_ARGON_WORK:
        raise Corrupted("key derivation work")
    return {"fileID": file_id, "epoch": epoch, "salt": salt, "rewriteEnd": rewrite_end, "headChain": head_chain,
            "table": table, "chainStarts": chain_starts, "slots": slots, "bytes": h}


def header_in(data: bytes, n: int, reasons: Optional[list] = None):
    """The header at the start of data, if it is one of n pages whose structure and checksum verify; else None,
    with the reason its structure was refused (a checksum that verified) appended to `reasons`."""
    if len(data) < 16 or data[:8] != MAGIC or data[8:12] != b"\x00\x03\x00\x00":
        return None
    length = struct.unpack(">I", data[12:16])[0]
    if not (MIN_HEADER <= length <= MAX_HEADER) or page_count(length) != n:
        return None
    try:
        return parse_header(data[:length])
    except (Corrupted, S.Corrupted) as e:
        if reasons is not None and len(data) >= length and \
                hashlib.sha256(data[:length - 16]).digest()[:16] == data[length - 16:length]:
            reasons.append(str(e))
        return None


def read_run(prefix: bytes, offset: int, n: int, reasons: Optional[list] = None):
    """(parsed header or None, "intact" | "repaired" | "unusable")."""
    run = prefix[offset:offset + n * PAGE]
    run += bytes(n * PAGE - len(run))
    as_read, repaired, clean = b"", b"", True
    for i in range(n):
        page = run[i * PAGE:(i + 1) * PAGE]
        block, changed, failed = V2.repair_page(page)
        as_read += page[:PAGE_DATA]
        repaired += block
        if changed or failed or any(page[PAGE_DATA + 512:]) or V2.page_parity(page[:PAGE_DATA]) != page[PAGE_DATA:PAGE_DATA + 512]:
            clean = False
    h = header_in(as_read, n, reasons)
    if h is not None:
        return h, "intact" if clean else "repaired"
    h = header_in(repaired, n, reasons)
    return (h, "repaired") if h is not None else (None, "unusable")


def declared_pages(prefix: bytes, offset: int) -> list:
    """The page counts a run's first page declares: as read, and as its parity repairs it (a damaged length can
    declare another count in range; the checksum decides)."""
    page = prefix[offset:offset + PAGE]
    page += bytes(PAGE - len(page))
    counts = []
    for data in (page[:16], V2.repair_page(page)[0][:16]):
        if data[:8] == MAGIC and data[8:12] == b"\x00\x03\x00\x00":
            length = struct.unpack(">I", data[12:16])[0]
            if MIN_HEADER <= length <= MAX_HEADER and page_count(length) not in counts:
                counts.append(page_count(length))
    return counts


def open_prefix(prefix: bytes, cred: dict) -> dict:
    runs = []   # (name, offset, n, header or None, how)
    reasons: list = []    # why a run whose checksum verified was refused for its structure
    counts_a = declared_pages(prefix, 0)
    for na in counts_a:
        runs.append(("A", 0, na) + read_run(prefix, 0, na, reasons))
    for na in counts_a:
        runs.append(("B", run_b_offset(na), na) + read_run(prefix, run_b_offset(na), na, reasons))
    if all(run[3] is None for run in runs if run[0] == "B"):
        for n in range(1, MAX_PAGES + 1):
            if n not in counts_a and n in declared_pages(prefix, run_b_offset(n)):
                h, how = read_run(prefix, run_b_offset(n), n)
                if h is not None:
                    runs.append(("B", run_b_offset(n), n, h, how))
    candidates = []
    for run in runs:
        if run[3] is not None and all(run[3]["bytes"] != c[3]["bytes"] for c in candidates):
            candidates.append(run)
    if not candidates:
        raise Corrupted("neither run holds a header" + (f" ({reasons[0]})" if reasons else ""))
    if len({c[3]["fileID"] for c in candidates}) > 1:
        raise Corrupted("the two runs hold headers of different keychains")
    # §2.9 with §20.3: each copy's slots (run A's first), each copy's MAC under every log key a slot gave (its own
    # first), the highest epoch among the copies that verify (run A on a tie), whose own slot must have given the key.
    failure, openings = None, []
    for name, offset, n, h, how in candidates:
        opened = None
        for index, (_, b, _) in enumerate(h["slots"]):
            try:
                result = S.open_slot_anchored(b, h["fileID"], cred)
            except S.Corrupted as e:
                failure = failure or Corrupted(f"slot: {e}")
                continue
            if result is not None:
                opened = (index, result["keys"], b, result)
                break
        openings.append(opened)
    verified = []
    for i, (name, offset, n, h, how) in enumerate(candidates):
        log_keys = ([openings[i][1]["logKey"]] if openings[i] else []) + [o[1]["logKey"] for o in openings if o]
        for log_key in log_keys:
            keys = epoch_keys(log_key, h["fileID"], h["epoch"], h["salt"])
            if _hmac.compare_digest(_hmac.new(keys["header"], h["bytes"][:-TRAILER], hashlib.sha256).digest(), h["bytes"][-TRAILER:-16]):
                start = c0(keys["header"], h["fileID"], h["epoch"], h["salt"])
                if h["rewriteEnd"] == 0 and h["headChain"] != start:
                    failure = failure or Corrupted("rewrite end 0 with a head other than C0")
                else:
                    verified.append((i, log_key, keys, start))
                break
        else:
            if log_keys:
                failure = failure or Corrupted(f"run {name}: the MAC does not verify under the log keys the slots gave")
    if not verified:
        if failure:
            raise failure
        return {"result": "wrongCredentials"}
    i, log_key, keys, start = min(verified, key=lambda v: (-candidates[v[0]][3]["epoch"], candidates[v[0]][0]))
    name, offset, n, h, how = candidates[i]
    if any(c[3]["epoch"] > h["epoch"] for c in candidates):
        raise Corrupted("a run of a later epoch does not verify: the older copy is not opened in its place")
    if openings[i] is None or openings[i][1]["logKey"] != log_key:
        raise Corrupted("the chosen copy has no slot for this credential, but the other copy's opened")
    index, ks, own, own_opening = openings[i]
    groups = ks["groups"]
    if ks["root"] is not None:
        _, groups = open_table(h["table"], ks["root"], h["fileID"])
    statuses = []
    for run_name, offset in (("A", 0), ("B", run_b_offset(n))):
        other, how = read_run(prefix, offset, n)
        statuses.append(how if other is not None and other["bytes"] == h["bytes"] else "unusable")
    return {"fileID": h["fileID"].hex(), "epoch": h["epoch"], "pageCount": n, "slotIndex": index,
            "logKey": ks["logKey"].hex(), "root": ks["root"].hex() if ks["root"] else None, "c0": start.hex(),
            "chainKey": keys["chain"].hex(), "headsKey": keys["heads"].hex(),
            "header": h["bytes"].hex(), "runs": statuses,
            # The opened slot as the header holds it, and what its holder re-anchors it with (§2.2).
            "ownSlot": {"bytes": own.hex(), "x": own_opening["x"].hex(), "anchorKey": own_opening["anchorKey"].hex(),
                        "grants": own_opening["grants"], "keySet": S.keyset_to_json(own_opening["keys"])},
            "groups": [{"keyID": g["keyID"], "name": g["name"], "key": g["key"].hex()} for g in groups]}


def build_header(file_id: bytes, epoch: int, salt: bytes, rewrite_end: int, head_sequence: int, head_chain: bytes,
                 horizon_days: int, table: bytes, slots: list, log_key: bytes, chain_starts: tuple = ()) -> bytes:
    """One copy of a header (§2.9's table), its MAC under the epoch's K_header and its checksum: what a rewrite
    writes (make_prefix below writes a new keychain's the same way). chain_starts: [(key id, start epoch)] of the
    groups whose chains in this file began before `epoch` (§2.6, a scoped rewrite's copied groups), in increasing
    key id; empty for a file written whole."""
    keys = epoch_keys(log_key, file_id, epoch, salt)
    body_slots = b"".join(slots)
    starts = b"".join(bytes([k]) + struct.pack(">Q", e) for k, e in chain_starts)
    length = FIXED + len(table) + len(starts) + len(body_slots) + TRAILER
    h = (MAGIC + struct.pack(">HHI", 3, 0, length) + file_id + struct.pack(">Q", epoch) + salt
         + struct.pack(">QQ", rewrite_end, head_sequence) + head_chain + struct.pack(">I", horizon_days)
         + bytes([len(slots), len(chain_starts)]) + struct.pack(">H", len(table)) + table + starts + body_slots)
    h += _hmac.new(keys["header"], h, hashlib.sha256).digest()
    return h + hashlib.sha256(h).digest()[:16]


def run_of(header: bytes) -> bytes:
    """A header's run of n pages (§2.9): 3,568 bytes of it per page, each with its parity."""
    n = page_count(len(header))
    return b"".join(V2.build_page(header[i * PAGE_DATA:(i + 1) * PAGE_DATA]) for i in range(n))


def make_prefix(password: str, iterations: int, seed: int, extra_groups: int, scoped_password,
                scoped_slots: tuple = ()) -> tuple:
    """A new keychain's prefix. scoped_password: a slot scoped to key ids 2 and 3. scoped_slots: more password
    slots, each (password, [key ids]) scoped to those groups (tests of scoped opens and appends), made after it."""
    rng = random.Random(seed)
    file_id, salt = rng.randbytes(16), rng.randbytes(32)
    log_key, root = rng.randbytes(32), rng.randbytes(32)
    groups = [{"keyID": 1, "name": "", "key": rng.randbytes(32)}]
    groups += [{"keyID": i + 2, "name": f"group-{i}", "key": rng.randbytes(32)} for i in range(extra_groups)]
    rho = S.rho_of(root, file_id)
    full = {"logKey": log_key, "rho": rho, "root": root, "groups": []}
    slots = [S.make_slot(file_id, {"password": password}, iterations, full, root, rng)]
    if scoped_password is not None and len(groups) >= 3:   # a scoped slot reaches at least one group
        scoped = {"logKey": log_key, "rho": rho, "root": None, "groups": groups[1:3]}
        slots.append(S.make_slot(file_id, {"password": scoped_password}, iterations, scoped, root, rng))
    for scoped_pw, key_ids in scoped_slots:
        chosen = [g for g in groups if g["keyID"] in key_ids]
        if len(chosen) != len(key_ids) or not chosen:
            raise ValueError(f"a scoped slot's key ids {list(key_ids)} are not all in the key table")
        scoped = {"logKey": log_key, "rho": rho, "root": None, "groups": chosen}
        slots.append(S.make_slot(file_id, {"password": scoped_pw}, iterations, scoped, root, rng))
    table = seal_table(len(groups), groups, root, file_id, rng)
    keys = epoch_keys(log_key, file_id, 1, salt)
    body_slots = b"".join(slots)
    length = FIXED + len(table) + len(body_slots) + TRAILER
    h = (MAGIC + struct.pack(">HHI", 3, 0, length) + file_id + struct.pack(">Q", 1) + salt
         + struct.pack(">QQ", 0, 0) + c0(keys["header"], file_id, 1, salt) + struct.pack(">I", 90)
         + bytes([len(slots), 0]) + struct.pack(">H", len(table)) + table + body_slots)
    h += _hmac.new(keys["header"], h, hashlib.sha256).digest()
    h += hashlib.sha256(h).digest()[:16]
    n = page_count(len(h))
    run = b"".join(V2.build_page(h[i * PAGE_DATA:(i + 1) * PAGE_DATA]) for i in range(n))
    prefix = run + bytes(2 * SLOT_STRIDE) + run
    assert len(prefix) == log_start(n)
    return prefix, {"fileID": file_id.hex(), "logKey": log_key.hex(), "root": root.hex(), "pageCount": n,
                    "groups": [{"keyID": g["keyID"], "name": g["name"], "key": g["key"].hex()} for g in groups]}


def main(argv) -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    o = sub.add_parser("open")
    o.add_argument("prefix")
    o.add_argument("--password")
    o.add_argument("--key")
    m = sub.add_parser("make")
    m.add_argument("prefix")
    m.add_argument("--password", required=True)
    m.add_argument("--iterations", type=int, default=1)
    m.add_argument("--seed", type=int, required=True)
    m.add_argument("--groups", type=int, default=0)
    m.add_argument("--scoped-password")
    a = ap.parse_args(argv)
    if a.command == "open":
        cred = {"password": a.password} if a.password is not None else {"key": bytes.fromhex(a.key)}
        with open(a.prefix, "rb") as f:
            prefix = f.read()
        try:
            print(json.dumps(open_prefix(prefix, cred)))
        except (Corrupted, S.Corrupted, UnicodeDecodeError) as e:
            print(f"corrupted: {e}", file=sys.stderr)
            return 6
        return 0
    prefix, keys = make_prefix(a.password, a.iterations, a.seed, a.groups, a.scoped_password)
    with open(a.prefix, "wb") as f:
        f.write(prefix)
    print(json.dumps(keys))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

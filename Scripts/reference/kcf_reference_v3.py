#!/usr/bin/env python3
"""KeychainFile (.kcf) format version 3: independent reference reader and writer of a whole file.

Written from Docs/FormatVersion3.md (§2.5.1 the records, §2.9 the header and the keys of an epoch, §2.10 the file)
and SPEC.md §18–§28 (version 2, whose file this is with three things changed), WITHOUT reading the Swift engine:
the second implementation a Swift version 3 file is checked against. It writes and reads nothing itself that its
parts do not: it composes

    header_v3.py         the header's runs of n pages, the slots (slots_v3.py), the key table, the keys of an epoch
    records_v3.py        a record: frame, segments, group pages, secret boxes, heads, chain tag
    kcf_reference_v2.py  the commit slots and seals (§23), the log's chunks and parity (§18.2, §19), the replay
                         rules (§25: acknowledged / possibly acknowledged / torn, transactions in parts, the fork
                         check, what does not verify), and the writer's appending (§26)

with the three changes of §2.10: the prefix follows the header's page count n (commit slots at 4,096·n and
4,096·n + 12,288, the log at 8,192·n + 24,576), the seals and C0 are under the epoch's K_header derived from the
log key, and the records are §2.5.1's with their chain tag as the chain value. In this step (plan step 2) every
item is in the default group, key id 1; a group's chain starts at the header's epoch.

Module use:

    kc = open_keychain("file.kcf", {"password": "pw"})      # or {"key": bytes(32)}
    kc.items, kc.head, kc.tombstones, kc.remnant, kc.set_aside, kc.undone, kc.repairs, kc.records

    w = WriterV3.create("new.kcf", "pw", iterations=1000, rng=random.Random(1))
    item_id = w.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s"}, b"secret")
    w.update(item_id, {"label": "l"}); w.delete(item_id)
    with w.transaction() as t: ...                          # one commit, or parts and a commit past part_limit

CLI (JSON on stdout, the exit status says how it went; errors as JSON on stderr):

    kcf_reference_v3.py dump FILE (--password P | --key HEX)
        the shape of kcf_reference_v2.py's dump ("formatVersion": 3), plus "page_count", "groups",
        "tombstones" and "records"
    kcf_reference_v3.py make FILE --password P [--iterations N] [--seed N] [--transaction] --items JSON
        JSON: [{"class": "genericPassword" | 1 …, "attributes": {name: value}, "secret": HEX}, …] (bytes-typed
        attributes in hex, dates in ms); each item its own commit (one transaction with --transaction). Prints
        {"file_id", "items": [id HEX, …], "head": {"sequence", "chain"}}.

Exit codes as version 2's: 0 success, 1 I/O or other error, 2 usage, 3 notAKeychain, 4 unsupportedVersion,
5 wrongCredentials, 6 corrupted, 7 unsupportedFeature.

Where §2.10 or §2.5.1 leave a choice open, this module decides as version 2 does and marks it "SPEC-GAP" (listed in
README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from dataclasses import dataclass
from typing import Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import header_v3 as H  # noqa: E402
import kcf_reference as K  # noqa: E402
import kcf_reference_v2 as V2  # noqa: E402
import records_v3 as R  # noqa: E402
import slots_v3 as S  # noqa: E402

from kcf_reference import (Corrupted, KCFError, NotAKeychain, UnsupportedVersion,  # noqa: E402,F401
                           WrongCredentials)
from kcf_reference_v2 import UnsupportedFeature, CorruptedRecord  # noqa: E402,F401

VERSION = 3
DEFAULT_GROUP = 1                        # §2.10 "Items and groups in this step": every item under key id 1


def layout_for(n: int) -> V2.Layout:
    """§2.10's prefix for a header run of n pages: commit slots at 4,096·n and 4,096·n + 12,288, the log's first
    chunk at 8,192·n + 24,576 (n = 1: version 2's 32 KiB)."""
    first = n * H.PAGE
    return V2.Layout(prefix=H.log_start(n), slot_offsets=(first, first + H.SLOT_STRIDE))


class ChainV3(bytes):
    """A record's chain value (its 16-byte chain tag, §2.10), carrying the group chains after that record:
    {key id: (start epoch, group sequence, last page tag)}. It compares and hashes as its 16 bytes, so version 2's
    replay and writer, which thread the chain value from record to record and compare heads with seals, thread
    the group chains with it unchanged."""

    groups: dict

    def __new__(cls, tag: bytes, groups: Optional[dict] = None):
        value = super().__new__(cls, bytes(tag))
        value.groups = dict(groups or {})
        return value


@dataclass
class KeysV3:
    """The keys of the chosen header's epoch (§2.9) and the group keys the credential holds (§2.4)."""
    file_id: bytes
    epoch: int
    k_header: bytes                      # seals, C0 (and the header MAC)
    k_chain: bytes                       # the record chain
    k_heads: bytes                       # the heads segment
    c0: ChainV3                          # the first record's previous chain tag, with no group chain begun
    groups: dict                         # key id -> group key K_g
    names: dict                          # key id -> group name
    log_key: bytes = b""

    def group_chain(self, chain: ChainV3, key_id: int) -> tuple:
        """(start epoch, group sequence, previous page tag) for the next page of key_id after `chain`. A group
        without a page yet starts at the header's epoch (§2.10: a file written whole)."""
        state = chain.groups.get(key_id)
        if state is not None:
            return state
        return self.epoch, 0, R.GroupKeys(self.groups[key_id], self.file_id, key_id).start_value(self.epoch)


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------

class _ScanV3(V2._Scan):
    """Version 2's scan (replay, parity repair, transactions in parts) with §2.5.1's records: the frame from
    records_v3.split, the record opened by records_v3.decode_record under the epoch's chain and heads keys and the
    group chains carried by the previous chain value."""

    def parse_frame(self, buf, offset: int, end: int) -> V2.Frame:
        if offset + 8 > end:
            raise V2._Bad("frame header past the end")
        length = V2.rd32(buf, offset)
        record = bytes(buf[offset:min(end, offset + 8 + length)])
        try:
            f = R.split(record)
        except R.Corrupted as e:
            raise V2._Bad(f"{e.reason} (record byte {e.offset})") from None
        except R.Unsupported as e:
            raise V2._Unsupported(e.reason) from None
        return V2.Frame(offset, f["end"], f["kind"], f["sequence"], f["part"], 0, len(f["segments"]), [])

    def open_record(self, buf, frame: V2.Frame, chain: bytes) -> tuple:
        keys: KeysV3 = self.keys
        if not isinstance(chain, ChainV3):
            chain = ChainV3(chain)
        groups = []
        for key_id, group_key in sorted(keys.groups.items()):
            start, sequence, last = keys.group_chain(chain, key_id)
            g = {"keyID": key_id, "key": group_key.hex(), "startEpoch": start, "sequence": sequence}
            if sequence:
                g["lastTag"] = last.hex()
            groups.append(g)
        spec = {"fileID": keys.file_id.hex(), "epoch": keys.epoch, "chainKey": keys.k_chain.hex(),
                "headsKey": keys.k_heads.hex(), "previousChain": bytes(chain).hex(), "groups": groups}
        try:
            out = R.decode_record(bytes(buf[frame.offset:frame.end]), spec)
        except R.Corrupted as e:
            raise V2._Bad(f"{e.reason} (record byte {e.offset})") from None
        except R.Unsupported as e:
            raise V2._Unsupported(e.reason) from None
        # §2.10 (decided in session 45): a full credential holds every group of the key table, and the table names
        # every group there is, so a segment or a head of a key id it does not hold is corrupted (only a writer
        # with the log key can have put it there) — after the record verified as far as the log key allows.
        for s in out["segments"]:
            if "opaque" in s:
                raise V2._Bad(f"a segment of key id {s['keyID']}, a group the key table does not hold")
        for h in out["heads"] or []:
            if h["keyID"] not in keys.groups:
                raise V2._Bad(f"a head of key id {h['keyID']}, a group the key table does not hold")
        entries = []
        for s in out["segments"]:
            for e in s["entries"]:
                entries.append(_entry(e, self.decrypt))
        after = {g["keyID"]: (g["startEpoch"], g["sequence"], bytes.fromhex(g["lastTag"]))
                 for g in out["groups"] if g["sequence"] > 0}
        return entries, ChainV3(bytes.fromhex(out["chainTag"]), after)


def _entry(e: dict, decrypt: bool) -> V2.Entry:
    """An entry as records_v3 prints it (bytes in hex) -> version 2's Entry with a K.Item."""
    if "put" in e:
        p = e["put"]
        values = {}
        for name, value in p["attributes"].items():
            values[name] = bytes.fromhex(value) if K.ATTRIBUTES_BY_NAME[name].type == K.T_BYTES else value
        item_id = bytes.fromhex(p["id"])
        secret = bytes.fromhex(p["secret"]) if decrypt else None
        return V2.Entry(V2.ENTRY_PUT, item_id, K.Item(item_id, p["class"], values, secret))
    kind, d = (V2.ENTRY_DELETE, e["delete"]) if "delete" in e else (V2.ENTRY_TOMBSTONE, e["tombstone"])
    return V2.Entry(kind, bytes.fromhex(d["id"]), time=d["time"])


def _declares_v3(data: bytes) -> bool:
    """Does run A, or run B at any of its sixteen places, declare a version 3 header (as read or repaired)?"""
    if H.declared_pages(data, 0):
        return True
    return any(n in H.declared_pages(data, H.run_b_offset(n)) for n in range(1, H.MAX_PAGES + 1))


def _tell_version(data: bytes):
    """SPEC-GAP: §2.10 does not say how a version 3 reader answers a file that is not version 3. As version 2's
    §20.4 step 6 answers (version 1's answers): fewer than 16 bytes or another magic is notAKeychain, another
    version unsupportedVersion(v); a file that says version 3 but whose runs do not read is corrupted."""
    if len(data) < 16:
        raise NotAKeychain()
    if _declares_v3(data):
        return
    if data[:8] != V2.MAGIC:
        raise NotAKeychain()
    version = V2.rd16(data, 8)
    if version != VERSION:
        raise UnsupportedVersion(version)
    raise Corrupted(0, "the file says version 3, but neither header run reads")


def open_keychain(path_or_bytes, credential: dict, *, decrypt_secrets: bool = True) -> V2.KeychainV2:
    """Opens a version 3 file as §2.10 says: the header runs (header_v3), then version 2's commit slots, log and
    replay with §2.5.1's records. Returns version 2's KeychainV2 (its `keys` a KeysV3, its `header` the chosen
    header's fields) with `layout`, `page_count` and `groups` added. Raises as version 2's reader does."""
    data = V2._read_source(path_or_bytes)
    V2._check_credential(credential)
    _tell_version(data)
    try:
        opened = H.open_prefix(data, credential)
    except (H.Corrupted, S.Corrupted, UnicodeDecodeError) as e:
        raise Corrupted(0, f"header: {e}") from None
    if opened.get("result") == "wrongCredentials":
        raise WrongCredentials()
    n = opened["pageCount"]
    layout = layout_for(n)
    raw = bytes.fromhex(opened["header"])
    ph = H.parse_header(raw)
    file_id, epoch = ph["fileID"], ph["epoch"]
    header = V2.HeaderV2(raw=raw, length=len(raw), file_id=file_id, epoch=epoch, epoch_salt=ph["salt"],
                         rewrite_end=ph["rewriteEnd"], rewrite_sequence=V2.rd64(raw, 80),
                         rewrite_chain=ph["headChain"], horizon_days=V2.rd32(raw, 104),
                         slots=[s for _, _, s in ph["slots"]], mac=raw[-48:-16], checksum=raw[-16:])
    log_key = bytes.fromhex(opened["logKey"])
    ek = H.epoch_keys(log_key, file_id, epoch, ph["salt"])
    groups = {g["keyID"]: bytes.fromhex(g["key"]) for g in opened["groups"]}
    keys = KeysV3(file_id=file_id, epoch=epoch, k_header=ek["header"], k_chain=ek["chain"], k_heads=ek["heads"],
                  c0=ChainV3(bytes.fromhex(opened["c0"])), groups=groups,
                  names={g["keyID"]: g["name"] for g in opened["groups"]}, log_key=log_key)
    repairs, to_rewrite = [], []
    for name, how in zip(("A", "B"), opened["runs"]):
        if how != "intact":
            to_rewrite.append(name)
            repairs.append(f"header run {name}: " + ("repaired by its pages' parity" if how == "repaired" else
                                                     "does not hold the chosen header (to rewrite)"))
    try:
        kc = V2._replay(data, header, keys, repairs, decrypt_secrets, layout=layout, scan_class=_ScanV3)
    except CorruptedRecord as e:
        e.file_offset = layout.physical(e.offset)
        raise
    kc.slot_used, kc.pages_to_rewrite = opened["slotIndex"], to_rewrite
    kc.layout, kc.page_count = layout, n
    return kc


def to_json(kc: V2.KeychainV2) -> dict:
    """Version 2's dump (kcf_reference_v2.KeychainV2.to_json) key for key, with version 3's slots, plus the page
    count, the groups, the tombstones and the records."""
    def span(t):
        return None if t is None else {"offset": t[0], "byteCount": t[1], **({"reason": t[2]} if len(t) > 2 else {})}

    def slot(s):
        params = {}
        if s["kdf"] == 1:
            params["iterations"] = V2.rd32(s["params"], 0)
        elif s["kdf"] == 3:
            params.update(memoryKiB=V2.rd32(s["params"], 0), passes=V2.rd32(s["params"], 4), lanes=s["params"][8])
        return {"type": s["type"], "kdf": s["kdf"], "slot_id": s["slotID"].hex(), **params, "scope": s["scope"],
                "grants": len(s["grants"])}

    kind_names = {V2.KIND_COMMIT: "commit", V2.KIND_PART: "part"}
    return {
        "formatVersion": VERSION,
        "file_id": kc.header.file_id.hex(),
        "epoch": kc.header.epoch,
        "header_length": kc.header.length,
        "page_count": kc.page_count,
        "slots": [slot(s) for s in kc.header.slots],
        "slot_used": kc.slot_used,
        "groups": [{"keyID": k, "name": kc.keys.names[k]} for k in sorted(kc.keys.groups)],
        "rewrite_end": kc.header.rewrite_end,
        "committed_end": kc.committed_end,
        "written_end": kc.written_end,
        "newest_commit": None if kc.newest is None else {"slot": kc.newest.slot, "counter": kc.newest.counter},
        "head": {"sequence": kc.head[0], "chain": kc.head[1].hex()},
        "remnant": span(kc.remnant),
        "undone_transaction": span(kc.undone),
        "set_aside": span(kc.set_aside),
        "repairs": kc.repairs,
        "header_pages_to_rewrite": kc.pages_to_rewrite,
        "items": [K.item_to_json(kc.items[i]) for i in sorted(kc.items)],
        "tombstones": [{"id": i.hex(), "time": kc.tombstones[i]} for i in sorted(kc.tombstones)],
        "records": [{"offset": r.offset, "length": r.length, "kind": kind_names.get(r.kind, r.kind),
                     "sequence": r.sequence, "part": r.part, "chain": r.chain.hex()} for r in kc.records],
    }


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------

class WriterV3(V2.Writer):
    """Version 2's writer (§26: the record at physical(E_w) with its chunks' parity, then the other commit slot)
    with §2.10's prefix and keys and §2.5.1's records: a batch is one commit — a segment of the default group per
    page (pages of at most 8,192 plaintext bytes, as version 2's) and the heads — or, past part_limit, parts
    without heads and a commit whose heads state every page of the transaction.

    tamper: tests only — a function (record, previous chain tag, KeysV3) -> record applied to each record before it
    is written, its parity computed from what it returns; the chain value carried on is the returned record's tag
    and the group chains those of the pages as sealed (so the heads still claim a page a tamper removed)."""

    tamper: Optional[Callable] = None

    def __init__(self, *, path, data: bytes, kc: V2.KeychainV2, rng, clock, part_limit: int = V2.MAX_BODY):
        if not isinstance(kc.head[1], ChainV3):
            kc.head = (kc.head[0], ChainV3(kc.head[1]))
        self.page_count = kc.page_count
        super().__init__(path=path, data=data, kc=kc, rng=rng, clock=clock, part_limit=part_limit, layout=kc.layout)

    @classmethod
    def create(cls, path, password: str, iterations: int = 600_000, rng: Optional[random.Random] = None, *,
               clock: Optional[Callable] = None, overwrite: bool = False, part_limit: int = V2.MAX_BODY,
               extra_groups: int = 0) -> "WriterV3":
        """A new file (§2.9 "Creating", header_v3's make: one full password slot, the default group as key id 1),
        both runs, and the first seal as version 2's writer makes it: counter 1 in commit slot 1, E_w = E_c = 0,
        head (0, C0). extra_groups: more groups in the key table (named "group-i", holding no items), so that
        tests can make a header of more than one page (about 100 groups per extra page).

        header_v3's make draws the file's keys from a random.Random seeded with a number drawn from rng (or from
        os.urandom): this writer is for tests, not for secrets."""
        seed = rng.getrandbits(64) if rng is not None else int.from_bytes(os.urandom(8), "big")
        prefix, info = H.make_prefix(password, iterations, seed, extra_groups, None)
        n = info["pageCount"]
        layout = layout_for(n)
        run = b"".join(prefix[i * H.PAGE:i * H.PAGE + H.PAGE_DATA] for i in range(n))    # run A's header bytes
        h = H.parse_header(run[:V2.rd32(run, 12)])
        k_header = H.epoch_keys(bytes.fromhex(info["logKey"]), h["fileID"], h["epoch"], h["salt"])["header"]
        buf = bytearray(prefix)
        seal = V2.build_seal(h["epoch"], 1, 0, 0, (0, h["headChain"]), k_header)
        at = layout.slot_offsets[1]
        buf[at:at + V2.SLOT_BYTES] = seal + bytes(V2.CHUNK_PARITY) + seal
        if path is not None:
            K._atomic_create(path, bytes(buf), overwrite)
        kc = open_keychain(bytes(buf), {"password": password})
        return cls(path=path, data=bytes(buf), kc=kc, rng=rng, clock=clock, part_limit=part_limit)

    @classmethod
    def open(cls, path, credential: dict, rng: Optional[random.Random] = None, *, clock=None,
             part_limit: int = V2.MAX_BODY) -> "WriterV3":
        data = V2._read_source(path)
        kc = open_keychain(data, credential)
        return cls(path=path, data=data, kc=kc, rng=rng, clock=clock, part_limit=part_limit)

    def _rewrite_header_pages(self, names: list):
        """A run that does not hold the chosen header, written again from it (n pages, §2.9)."""
        raw, n = self.header.raw, self.page_count
        run = b"".join(V2.build_page(raw[i * H.PAGE_DATA:(i + 1) * H.PAGE_DATA]) for i in range(n))
        for name in names:
            base = 0 if name == "A" else H.run_b_offset(n)
            self.buf[base:base + len(run)] = run

    def _split(self, entries: list) -> list:
        """Cuts a batch into records of at most part_limit body bytes, counting each entry as its own page
        (segment header, page box overhead, page header) and a commit's heads."""
        base = 19 + 16 + R.SEGMENT_HEADER + 28 + R.HEAD_SIZE * len(self.keys.groups)
        groups, current, size = [], [], base
        for e in entries:
            n = R.SEGMENT_HEADER + 28 + 3 + len(V2.entry_bytes(e, bytes(16))) + \
                (28 + len(e.secret) if isinstance(e, K.Put) else 0)
            if current and size + n > self.part_limit:
                groups.append(current)
                current, size = [], base
            current.append(e)
            size += n
        groups.append(current)
        return groups

    def _pages(self, entries: list) -> list:
        """Pages of at most PAGE_LIMIT plaintext bytes, each at least one entry (as version 2's encode_record)."""
        pages, current, size = [], [], 3
        for e in entries:
            n = len(V2.entry_bytes(e, bytes(16)))
            if current and size + n > R.PAGE_LIMIT:
                pages.append(current)
                current, size = [], 3
            current.append(e)
            size += n
        pages.append(current)
        return pages

    def _encode_record(self, entries: list, *, sequence: int, kind: int, part: int, chain: bytes) -> tuple:
        keys: KeysV3 = self.keys
        if not isinstance(chain, ChainV3):
            chain = ChainV3(chain)
        rng = self.rng if self.rng is not None else random.SystemRandom()
        group = R.GroupKeys(keys.groups[DEFAULT_GROUP], keys.file_id, DEFAULT_GROUP)
        states = dict(chain.groups)
        segments = []
        for page in self._pages(entries):
            start, previous_sequence, previous_tag = keys.group_chain(ChainV3(b"", states), DEFAULT_GROUP)
            segment = R.group_segment(group, [_entry_json(e) for e in page], previous_sequence + 1, previous_tag, rng)
            page_end = R.SEGMENT_HEADER + R.rd32(segment, 5)
            states[DEFAULT_GROUP] = (start, previous_sequence + 1, segment[page_end - 16:page_end])
            segments.append(segment)
        if kind == V2.KIND_COMMIT:
            heads = {k: {"startEpoch": s[0], "groupSequence": s[1], "lastTag": s[2]} for k, s in states.items()}
            box = R.seal(keys.k_heads, R.heads_plaintext(heads), R.heads_aad(keys.file_id, keys.epoch, sequence), rng)
            segments.append(R.u8(0) + R.u32(len(box)) + R.u32(len(box)) + box)
        record = R.assemble(kind, sequence, part, segments, bytes(chain), keys.k_chain)
        if self.tamper is not None:
            record = self.tamper(record, bytes(chain), keys)
        if not R.MIN_BODY <= len(record) - 8 <= R.MAX_BODY:
            raise ValueError(f"record body of {len(record) - 8} bytes is outside {R.MIN_BODY} … {R.MAX_BODY}")
        return record, ChainV3(record[-16:], states)


def _entry_json(e) -> dict:
    """A writer's entry (K.Put, K.Delete with .time, V2.Tombstone) in records_v3's form."""
    if isinstance(e, K.Put):
        return {"put": {"id": e.item_id.hex(), "class": e.cls, "attributes": e.attributes, "secret": e.secret.hex()}}
    name = "tombstone" if isinstance(e, V2.Tombstone) else "delete"
    return {name: {"id": e.item_id.hex(), "time": e.time}}


def item_from_json(j: dict) -> tuple:
    """make's item: {"class", "attributes", "secret"} -> (class, attributes, secret); bytes-typed attributes in
    hex, or as version 2's dump prints them ({"type", "value"})."""
    cls = j["class"]
    if isinstance(cls, str):
        cls = K.CLASS_BY_NAME[cls]
    attributes = {}
    for name, value in j.get("attributes", {}).items():
        if isinstance(value, dict) and "value" in value:
            value = value["value"]
        if name not in K.ATTRIBUTES_BY_NAME:
            raise ValueError(f"unknown attribute {name!r}")
        attributes[name] = bytes.fromhex(value) if K.ATTRIBUTES_BY_NAME[name].type == K.T_BYTES else value
    return cls, attributes, bytes.fromhex(j.get("secret", ""))


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------

EXIT_OK, EXIT_OTHER, EXIT_USAGE = 0, 1, 2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="kcf_reference_v3.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command")
    d = sub.add_parser("dump", help="print the live items, the commits, repairs and tails as JSON")
    d.add_argument("file")
    d.add_argument("--password")
    d.add_argument("--key", metavar="HEX")
    m = sub.add_parser("make", help="write a new version 3 file holding the given items")
    m.add_argument("file")
    m.add_argument("--password", required=True)
    m.add_argument("--iterations", type=int, default=1000)
    m.add_argument("--seed", type=int)
    m.add_argument("--transaction", action="store_true", help="all items in one transaction")
    m.add_argument("--items", required=True, metavar="JSON")
    m.add_argument("--overwrite", action="store_true")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    if args.command not in ("dump", "make"):
        ap.print_usage(sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "make":
            items = [item_from_json(j) for j in json.loads(args.items)]
            rng = random.Random(args.seed) if args.seed is not None else None
            w = WriterV3.create(args.file, args.password, args.iterations, rng, overwrite=args.overwrite)
            if args.transaction:
                with w.transaction() as t:
                    ids = [t.add(cls, attributes, secret) for cls, attributes, secret in items]
            else:
                ids = [w.add(cls, attributes, secret) for cls, attributes, secret in items]
            print(json.dumps({"file_id": w.keys.file_id.hex(), "items": [i.hex() for i in ids],
                              "head": {"sequence": w.head[0], "chain": w.head[1].hex()}}))
            return EXIT_OK
        if (args.password is None) == (args.key is None):
            print(json.dumps({"error": "usage", "message": "give exactly one of --password and --key"}),
                  file=sys.stderr)
            return EXIT_USAGE
        cred = {"password": args.password} if args.password is not None else {"key": bytes.fromhex(args.key)}
        kc = open_keychain(args.file, cred)
        json.dump(to_json(kc), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return EXIT_OK
    except KCFError as err:
        out = {"error": type(err).__name__, "message": str(err)}
        if isinstance(err, (Corrupted, UnsupportedFeature)):
            out.update(offset=err.offset, reason=err.reason)
        if isinstance(err, UnsupportedVersion):
            out.update(version=err.version)
        print(json.dumps(out), file=sys.stderr)
        # By isinstance, not by type as version 2's main does: a CorruptedRecord is corrupted (6).
        return next((code for kind, code in V2.EXIT_CODES.items() if isinstance(err, kind)), EXIT_OTHER)
    except FileExistsError as err:
        print(json.dumps({"error": "FileExistsError", "message": f"{err.filename or err} exists: give --overwrite to "
                                                                 f"replace it"}), file=sys.stderr)
        return EXIT_OTHER
    except (OSError, ValueError, TypeError, KeyError) as err:
        print(json.dumps({"error": type(err).__name__, "message": str(err)}), file=sys.stderr)
        return EXIT_OTHER


if __name__ == "__main__":
    sys.exit(main())

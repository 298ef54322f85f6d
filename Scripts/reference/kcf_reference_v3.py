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
log key, and the records are §2.5.1's with their chain tag as the chain value. Items are in their groups (§2.11,
plan step 3): each put, deletion and tombstone is an entry of its group's pages, checked by the reader against the
page's group; a writer adds a group the key table lacks by a rewrite under a new root; a group's chain starts at
its start epoch — the header's chain start entry for it (§2.6, after a scoped rewrite), else the header's epoch.

Every group named (SpecVersion3Draft §35.7, §38.1, session 51): every commit's heads name every group its writer
knows — a group without a page in the file at group sequence 0 with its start value as tag — and every file holds at
least one commit (a new file its creation commit, a rewrite at least one), so that a reader refuses a commit that
leaves out a group it follows (a full holder: every group of its key table) and a header of rewrite head sequence 0:
a holder of K_log alone cannot drop a whole group unnoticed.

Scoped credentials (plan step 4, §2.3, §2.5, §2.6): a credential scoped to access groups opens the file with K_log
and its groups' keys. It verifies every record's frame, chain tag and heads, opens only its groups' pages (checked
against their chains at every commit's heads, and by §2.11's checks), keeps every other group's segments as their
bytes and refuses no segment or head of a key id it does not hold (a full credential still does), checks every other
group's head against what K_log shows of that group (its segments in the file so far, the last one's page tag, its
start epoch), and yields only its groups' items. A writer opened with it appends commits and transactions in parts
with segments of its groups only and heads that carry every other group's head of the last commit unchanged, and
compacts (§2.6 "Scoped rewrite": every other group's segments copied byte for byte into a commit (or parts and a
commit) whose heads follow them, every other group named without a page carried unchanged, their start epochs in
the header's chain starts, its own groups written anew); a write outside its groups
raises MissingEntitlement, and a write to a file whose log does not match its parity (a repair it cannot verify)
ScopedRepairRefused.

Module use:

    kc = open_keychain("file.kcf", {"password": "pw"})      # or {"key": bytes(32)}
    kc.items, kc.head, kc.tombstones, kc.remnant, kc.set_aside, kc.undone, kc.repairs, kc.records

    w = WriterV3.create("new.kcf", "pw", iterations=1000, rng=random.Random(1))
    item_id = w.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s"}, b"secret")
    w.update(item_id, {"label": "l"}); w.delete(item_id)
    with w.transaction() as t: ...                          # one commit, or parts and a commit past part_limit
    w.add(K.GENERIC_PASSWORD, {"account": "a", "accessGroup": "G"}, b"s")   # adds group G first if it is new
    w.update(item_id, {"accessGroup": "G"})                 # a move: the deletion in the old group's page first
    w.compact()                                             # a rewrite into the next epoch, groups in their pages
    kc.item_groups, kc.tombstone_groups                     # item id -> key id; kc.keys.names: key id -> name

    kc = open_keychain("file.kcf", {"password": "scoped"})  # a scoped credential: its groups' items only
    kc.scoped, kc.opaque_segments                           # True; [(record offset, key id, bytes)] of other groups
    w = WriterV3.open("file.kcf", {"password": "scoped"})   # appends in its groups; else MissingEntitlement
    w.compact()                                             # a scoped rewrite: the other groups copied as bytes
    kc.keys.chain_starts                                    # key id -> start epoch of a chain begun earlier

CLI (JSON on stdout, the exit status says how it went; errors as JSON on stderr):

    kcf_reference_v3.py dump FILE (--password P | --key HEX) [--expected-head HEAD]   ("open" is the same command)
        the shape of kcf_reference_v2.py's dump ("formatVersion": 3), plus "page_count", "groups" ([{"keyID",
        "name"}]), "chain_starts" ([{"keyID", "startEpoch"}], §2.6), "tombstones" ([{"id", "time", "keyID"}]) and "records"; each item also has "group" (its group's
        name, "" the default group) and "keyID". With a scoped credential: the same shape, holding only its
        groups' items, tombstones and groups. "headText": the file's head in its text form (SPEC.md §37.5, pins_v3),
        to give as --expected-head HEAD at a later dump: exit 8 (rolledBack, its JSON on stderr with "expected" and
        "found") when the file does not contain it, 2 (usage) when HEAD is malformed (whitespace around it ignored).
    kcf_reference_v3.py append FILE (--password P | --key HEX) [--seed N] [--transaction] --items JSON
        ("append-scoped" is the same command) appends the items (make's JSON) to an existing file, each its own
        commit (one transaction with --transaction), with a full or a scoped credential; an item outside a scoped
        credential's groups: exit 9 (missingEntitlement), nothing written. Prints
        {"file_id", "scoped", "items": [id HEX, …], "head": {"sequence", "chain"}}.
    kcf_reference_v3.py compact FILE (--password P | --key HEX) [--seed N]
        rewrites the file into the next epoch: with a full credential every group anew (no chain starts), with a
        scoped one its groups anew and every other group's segments copied (§2.6). Prints {"file_id", "scoped",
        "epoch", "chain_starts": [{"keyID", "startEpoch"}], "head"}; a file a scoped credential cannot verify: exit 1
        (ScopedRepairRefused), nothing written.
    kcf_reference_v3.py make FILE --password P [--iterations N] [--seed N] [--transaction] --items JSON
        JSON: [{"class": "genericPassword" | 1 …, "attributes": {name: value}, "secret": HEX}, …] (bytes-typed
        attributes in hex, dates in ms; an "accessGroup" the file lacks adds that group first, §2.11); each item
        its own commit (one transaction with --transaction). Prints
        {"file_id", "items": [id HEX, …], "head": {"sequence", "chain"}}.

Exit codes as version 2's: 0 success, 1 I/O or other error, 2 usage, 3 notAKeychain, 4 unsupportedVersion,
5 wrongCredentials, 6 corrupted, 7 unsupportedFeature, 8 rolledBack (a pinned head not contained), 9 missingEntitlement (its JSON
on stderr with "group", null when the writer cannot name it, and "osStatus": -34018).

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
import pins_v3 as P  # noqa: E402
import records_v3 as R  # noqa: E402
import slots_v3 as S  # noqa: E402

from kcf_reference import (Corrupted, KCFError, NotAKeychain, UnsupportedVersion,  # noqa: E402,F401
                           WrongCredentials)
from kcf_reference_v2 import UnsupportedFeature, CorruptedRecord, RolledBack  # noqa: E402,F401
from pins_v3 import InvalidParameter, PinNotContained, PinnedHead, GroupHead  # noqa: E402,F401

VERSION = 3
DEFAULT_GROUP = 1                        # §2.4: a new keychain's table holds the default group ("") as key id 1
# At most this many of a batch's entries (as the caller gave them: a move's deletion goes with its put) in one part,
# as the Swift engine's RecordLogV3.maximumEntriesPerPart: entries alternating between groups start a segment each and
# a move makes two, while a record holds at most 65,535 segments (records_v3.MAX_SEGMENTS), the heads one of them.
MAX_ENTRIES_PER_PART = 8_192


def layout_for(n: int) -> V2.Layout:
    """§2.10's prefix for a header run of n pages: commit slots at 4,096·n and 4,096·n + 12,288, the log's first
    chunk at 8,192·n + 24,576 (n = 1: version 2's 32 KiB)."""
    first = n * H.PAGE
    return V2.Layout(prefix=H.log_start(n), slot_offsets=(first, first + H.SLOT_STRIDE))


class ChainV3(bytes):
    """A record's chain value (its 16-byte chain tag, §2.10), carrying the group chains after that record:
    {key id: (start epoch, group sequence, last page tag)}. It compares and hashes as its 16 bytes, so version 2's
    replay and writer, which thread the chain value from record to record and compare heads with seals, thread
    the group chains with it unchanged.

    `groups` holds the chains of the groups whose keys the reader holds, as their pages verified. `others` (a scoped
    credential only, §2.3) holds the heads of every other group as the last commit at or before this record stated
    them, in the same form: a scoped writer copies them unchanged into its next commit's heads (§2.5 "A writer
    scoped to A updates A's head and copies the others"), since it cannot check or make them.

    `opaque` (a scoped credential only, §2.6 "Decided and built (session 47)") holds, for each key id whose key the
    reader does not hold, what it can see of that group's chain in the file up to this record: (the number of its
    segments, the last one's page tag). Within one file a group's chain is whole (§2.5), so at a commit that group's
    head must name exactly that many pages and that tag. §35.7 (session 51): it also holds, at (0, b""), every such
    key id a commit named without segments, which every later commit must name too ("once named, always named")."""

    groups: dict
    others: dict
    opaque: dict

    def __new__(cls, tag: bytes, groups: Optional[dict] = None, others: Optional[dict] = None,
                opaque: Optional[dict] = None):
        value = super().__new__(cls, bytes(tag))
        value.groups = dict(groups or {})
        value.others = dict(others or {})
        value.opaque = dict(opaque or {})
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
    root: Optional[bytes] = None         # R, for a full credential
    last_assigned: int = 0               # the key table's last key id assigned (§2.4), for a full credential
    chain_starts: dict = None            # key id -> start epoch of a chain begun before this epoch (§2.6)

    @property
    def scoped(self) -> bool:
        """A scoped credential (§2.3): K_log and its groups' keys, no root key and so no key table."""
        return self.root is None

    def key_id_of(self, name: str) -> Optional[int]:
        """The key id of the group named `name` (§2.11: found by name in the key table), or None."""
        return next((k for k, n in self.names.items() if n == name), None)

    def start_epoch(self, key_id: int) -> int:
        """Where key_id's chain in this file begins (§2.6, decided in session 47): the header's chain start entry
        for it, else the header's epoch (every group of a file written whole, every group a rewriter reached)."""
        return (self.chain_starts or {}).get(key_id, self.epoch)

    def group_chain(self, chain: ChainV3, key_id: int) -> tuple:
        """(start epoch, group sequence, previous page tag) for the next page of key_id after `chain`. A group
        without a page yet starts at its start epoch (start_epoch): page 1 follows startValue(k, that epoch)."""
        state = chain.groups.get(key_id)
        if state is not None:
            return state
        start = self.start_epoch(key_id)
        return start, 0, R.GroupKeys(self.groups[key_id], self.file_id, key_id).start_value(start)


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------

class _ScanV3(V2._Scan):
    """Version 2's scan (replay, parity repair, transactions in parts) with §2.5.1's records: the frame from
    records_v3.split, the record opened by records_v3.decode_record under the epoch's chain and heads keys and the
    group chains carried by the previous chain value."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tomb_groups: dict = {}                     # item id -> key id of its last deletion or tombstone
        self.opaque: dict = {}                          # record offset -> [(key id, segment bytes)] (scoped only)
        self.tomb_snapshots: dict = {}                  # commit end -> tomb_groups after that commit

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
        seen = None
        if not keys.scoped:
            # §2.10 (decided in session 45): a full credential holds every group of the key table, and the table
            # names every group there is, so a segment or a head of a key id it does not hold is corrupted (only a
            # writer with the log key can have put it there) — after the record verified as far as the log key
            # allows.
            for s in out["segments"]:
                if "opaque" in s:
                    raise V2._Bad(f"a segment of key id {s['keyID']}, a group the key table does not hold")
            for h in out["heads"] or []:
                if h["keyID"] not in keys.groups:
                    raise V2._Bad(f"a head of key id {h['keyID']}, a group the key table does not hold")
        else:
            # §2.3, §2.5.1 "Every other group's segments are kept as their bytes", §2.10: a scoped credential cannot
            # tell another group's key id from one that does not exist (it has no key table), so it refuses
            # neither a segment nor a head of a key id it does not hold. What it checks of them is what K_log
            # covers, and decode_record did it: the frame, the chain tag (binding each segment's key id, lengths
            # and page tag), the heads box, and that every segment of a commit has a head. Then (§2.6, session 47)
            # every other group's head against what it can see: that group's segments in the file so far and the
            # last one's page tag, and (§35.7, session 51) that a group once named is named by every later commit.
            # Whether those pages authenticate only that group's holders can tell (§2.5).
            self.opaque[frame.offset] = [(s["keyID"], bytes.fromhex(s["opaque"])) for s in out["segments"]
                                         if "opaque" in s]
            seen = _check_other_heads(keys, chain.opaque, self.opaque[frame.offset], out["heads"])
        entries = []
        for s in out["segments"]:
            for e in s.get("entries", ()):                   # an opaque segment (scoped) has none to apply
                entry = _entry(e, self.decrypt)
                entry.key_id = s["keyID"]                    # §2.11: the group of the page that holds it
                entries.append(entry)
        after = {g["keyID"]: (g["startEpoch"], g["sequence"], bytes.fromhex(g["lastTag"]))
                 for g in out["groups"] if g["sequence"] > 0}
        # The heads of the groups this credential does not hold, as the newest commit states them (a part has no
        # heads: those of the commit before it stand). Empty for a full credential, which holds every group.
        if out["heads"] is None:
            others = chain.others
        else:
            others = {h["keyID"]: (h["startEpoch"], h["groupSequence"], bytes.fromhex(h["lastTag"]))
                      for h in out["heads"] if h["keyID"] not in keys.groups}
        return entries, ChainV3(bytes.fromhex(out["chainTag"]), after, others, seen)


    def check_transaction(self, state: K.State, entries: list, end: int):
        """§2.11 "Checked by a reader": in record order (segment after segment, entry after entry, the
        transaction's parts in order), a put whose accessGroup (absent or empty: the default group, "") is not its
        page's group, and a deletion or tombstone of an item live in another group than the page's, are corrupted,
        naming the key id and the item id. Also refused (SPEC-GAP, §2.11 does not list it): a put of an item live in
        another group without its deletion first in that group's page — holders of the two groups would then
        disagree, the reason §2.11 gives for the deletion check. As §8's checks (K._Semantic): corrupted wherever the
        record lies, never set aside, since the page authenticated under its group key (damage cannot make it).

        Keeps each deletion's and tombstone's key id (§2.11 "Tombstones"), per commit end, for the reader's
        tombstones and a rewrite."""
        keys: KeysV3 = self.keys
        overlay: dict = {}                              # item id -> key id it is live in (None: deleted) so far
        tombs = dict(self.tomb_groups)
        for e in entries:
            k, iid = e.key_id, e.item_id
            if iid in overlay:
                live = overlay[iid]
            else:
                item = state.items.get(iid)
                live = None if item is None else keys.key_id_of(group_of(item))
            where = f"key id {k} (group {keys.names[k]!r})"
            if e.kind == V2.ENTRY_PUT:
                name = group_of(e.item)
                if name != keys.names[k]:
                    raise K._Semantic("group", f"{where}: a put of item {iid.hex()} whose accessGroup names group "
                                               f"{name!r}, not its page's")
                if live is not None and live != k:
                    raise K._Semantic("group", f"{where}: a put of item {iid.hex()}, which is live in key id {live} "
                                               f"(a move without its deletion in that group's page)")
                overlay[iid] = k
            else:
                what = "deletion" if e.kind == V2.ENTRY_DELETE else "tombstone"
                if live is not None and live != k:
                    raise K._Semantic("group", f"{where}: a {what} of item {iid.hex()}, which is live in key id {live}")
                if e.kind == V2.ENTRY_DELETE:
                    overlay[iid] = None
                tombs[iid] = k
        self.tomb_groups = tombs
        self.tomb_snapshots[end] = dict(tombs)


def page_tag(segment: bytes) -> bytes:
    """A segment's page tag: the last 16 bytes of its page box (§2.5.1), readable without the group's key."""
    end = R.SEGMENT_HEADER + R.rd32(segment, 5)
    return segment[end - 16:end]


def _check_other_heads(keys: KeysV3, before: dict, segments: list, heads) -> dict:
    """§37.4: a scoped reader's check of the heads of the groups it does not hold. `before`: {key id: (segments so
    far, last page tag)} for those groups up to the record before — every key id that had a segment or that a
    commit of this file's log named, named ones without segments at (0, b""); `segments`: this record's segments of
    those groups, [(key id, bytes)] in order; `heads`: the record's heads (None for a part). Returns the same map
    after the record.

    At a commit, for every key id it does not hold that has segments so far, that an earlier commit named, or that
    this commit names (§35.7 (session 51): "once named, always named" — groups are never removed, so a K_log holder
    cannot drop a whole group unnoticed): the head must exist; its start epoch must be where the header starts that
    group's chain; its group sequence must be the number of the group's segments in the file so far (within one file
    a group's chain is whole, §2.5) and, when that is more than 0, its last tag the last one's page tag (at 0 the tag
    is the group's start value, which only K_g's holders can check: accepted). Otherwise the record does not verify
    (V2._Bad: set aside when it is the newest commit's last write, corrupted when acknowledged, as a head that does
    not match a followed group's chain). It cannot tell that a page authenticates: only K_g's holders can."""
    seen = dict(before)
    for k, segment in segments:
        seen[k] = (seen.get(k, (0, b""))[0] + 1, page_tag(segment))
    if heads is None:
        return seen
    named = {h["keyID"]: h for h in heads if h["keyID"] not in keys.groups}
    for k in sorted(set(named) | set(seen)):
        head, (count, last) = named.get(k), seen.get(k, (0, b""))
        if head is None:
            if count:
                raise V2._Bad(f"group {k} has {count} segments in the file but no head")
            # §35.7 (session 51): named by an earlier commit of this file's log, so named by every later one.
            raise V2._Bad(f"the heads do not name group {k}, which an earlier commit named (a group once named is "
                          f"named by every commit); its pages may have been dropped")
        if count == 0 and head["groupSequence"]:
            raise V2._Bad(f"the heads name {head['groupSequence']} pages of group {k}, which has no segment in the "
                          f"file")
        if head["groupSequence"] != count or (count and bytes.fromhex(head["lastTag"]) != last):
            raise V2._Bad(f"group {k}'s head (group sequence {head['groupSequence']}) is not at its last segment "
                          f"in the file (segment {count} and its page tag)")
        # SPEC-GAP (decided here): the head's start epoch must be where the header says k's chain starts (its chain
        # start entry, else the header's epoch), as a holder of K_g finds it; both are readable with K_log alone.
        if head["startEpoch"] != keys.start_epoch(k):
            raise V2._Bad(f"group {k}'s head starts its chain at epoch {head['startEpoch']}, the header at epoch "
                          f"{keys.start_epoch(k)}")
        seen.setdefault(k, (0, b""))            # named: from now on every commit must name it
    return seen


def group_of(item) -> str:
    """§2.11: an item's group is its accessGroup attribute; absent or empty: the default group (the empty name)."""
    return item.attributes.get("accessGroup") or ""


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


def _declared_length_v3(first: bytes):
    """The length the first 16 bytes declare for a version 3 header (magic, version 3, flags 0, a length in range;
    Swift: FileHeaderV3.declaredLength), else None."""
    if len(first) < 16 or first[:8] != H.MAGIC or first[8:12] != b"\x00\x03\x00\x00":
        return None
    length = V2.rd32(first, 12)
    return length if H.MIN_HEADER <= length <= H.MAX_HEADER else None


def _has_version_2_layout(data: bytes) -> bool:
    """Swift's RecordLogV2.isVersion2 past the first 16 bytes: page B declares a version 2 header, or either
    page's parity yields one (checksum and structure verified)."""
    if len(data) > V2.HEADER_B:
        page_b = data[V2.HEADER_B:V2.HEADER_B + 16]
        if V2.declares_v2(page_b + bytes(16 - len(page_b))):
            return True
    return any(header is not None for _, _, header, _, _ in V2.read_header_copies(data, []))


def _tell_version(data: bytes):
    """Decides from the file alone whether it is version 3, in the Swift engine's order (RecordLogV3.isVersion3,
    §42 D3): the first 16 bytes when they declare a version (3: version 3; 2 or 1: that version's), then run A's
    first page as its parity repairs it, then whether the file has version 2's layout (its page B, or either page's
    parity), and only then a run B at each of the sixteen places — fifteen of which lie in a version 2 file's log,
    whose bytes must not override its own header.

    SPEC-GAP: §2.10 does not say how a version 3 reader answers a file that is not version 3. As version 2's
    §20.4 step 6 answers (version 1's answers): fewer than 16 bytes or another magic is notAKeychain, another
    version unsupportedVersion(v); a file that says version 3 but whose runs do not read is corrupted."""
    if len(data) < 16:
        raise NotAKeychain()
    if _declared_length_v3(data[:16]) is not None:
        return
    if V2.declares_v2(data[:16]):
        raise UnsupportedVersion(2)
    if data[:8] == V2.MAGIC and V2.rd16(data, 8) == 1:
        raise UnsupportedVersion(1)
    if H.declared_pages(data, 0):                                    # run A's first page as its parity repairs it
        return
    if _has_version_2_layout(data):
        raise UnsupportedVersion(2)
    if any(n in H.declared_pages(data, H.run_b_offset(n)) for n in range(1, H.MAX_PAGES + 1)):
        return
    if data[:8] != V2.MAGIC:
        raise NotAKeychain()
    version = V2.rd16(data, 8)
    if version != VERSION:
        raise UnsupportedVersion(version)
    raise Corrupted(0, "the file says version 3, but neither header run reads")


def open_keychain(path_or_bytes, credential: dict, *, decrypt_secrets: bool = True, pin=None) -> V2.KeychainV2:
    """Opens a version 3 file as §2.10 says: the header runs (header_v3), then version 2's commit slots, log and
    replay with §2.5.1's records. Returns version 2's KeychainV2 (its `keys` a KeysV3, its `header` the chosen
    header's fields) with `layout`, `page_count` and `groups` added. Raises as version 2's reader does.

    pin: a pinned head (SPEC.md §15.4, §37.5), as its text form or a pins_v3.PinnedHead. Text that does not spell a
    head any file could have raises InvalidParameter before the file is read; a file that does not contain the pin
    raises PinNotContained (a RolledBack), after the file opened as it would without a pin."""
    if isinstance(pin, str):
        pin = P.parse_head(pin)
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
    header = _header_of(raw)
    if header.rewrite_sequence == 0:
        # §38.1, §38.5 (session 51): every file holds at least one commit — creating a file and every rewrite write
        # one, naming every group — so a header whose rewrite head is sequence 0 (rewrite end 0) is a file whose log
        # holds no commit: its records, and with them every group's heads, were cut away.
        raise Corrupted(80, "header: rewrite head sequence 0: the file's log holds no commit (its records were cut "
                            "away)")
    log_key = bytes.fromhex(opened["logKey"])
    ek = H.epoch_keys(log_key, file_id, epoch, ph["salt"])
    groups = {g["keyID"]: bytes.fromhex(g["key"]) for g in opened["groups"]}
    root = bytes.fromhex(opened["root"]) if opened["root"] else None
    last = H.open_table(ph["table"], root, file_id)[0] if root is not None else 0
    chain_starts = dict(ph["chainStarts"])
    if root is not None:
        # As a segment or head of a key id the table lacks (§2.10): the table names every group there is.
        for k in chain_starts:
            if k not in groups:
                raise Corrupted(109, f"header: a chain start of key id {k}, a group the key table does not hold")
    keys = KeysV3(file_id=file_id, epoch=epoch, k_header=ek["header"], k_chain=ek["chain"], k_heads=ek["heads"],
                  c0=ChainV3(bytes.fromhex(opened["c0"])), groups=groups,
                  names={g["keyID"]: g["name"] for g in opened["groups"]}, log_key=log_key, root=root,
                  last_assigned=last, chain_starts=chain_starts)
    repairs, to_rewrite = [], []
    for name, how in zip(("A", "B"), opened["runs"]):
        if how != "intact":
            to_rewrite.append(name)
            repairs.append(f"header run {name}: " + ("repaired by its pages' parity" if how == "repaired" else
                                                     "does not hold the chosen header (to rewrite)"))
    scans = []

    def scan(*args, **kwargs):
        scans.append(_ScanV3(*args, **kwargs))
        return scans[-1]
    try:
        kc = V2._replay(data, header, keys, repairs, decrypt_secrets, layout=layout, scan_class=scan)
    except CorruptedRecord as e:
        e.file_offset = layout.physical(e.offset)
        raise
    kc.slot_used, kc.pages_to_rewrite = opened["slotIndex"], to_rewrite
    kc.layout, kc.page_count = layout, n
    # §2.2 "Writing it again": the slot the credential opened, as the header holds it, with what re-anchoring it takes.
    own = opened["ownSlot"]
    kc.own_slot = {"bytes": bytes.fromhex(own["bytes"]), "x": bytes.fromhex(own["x"]),
                   "anchorKey": bytes.fromhex(own["anchorKey"]), "keys": S.keyset_from_json(own["keySet"], file_id)}
    # §2.11: each live item's group (checked at its put to be its page's), each tombstone's key id as read.
    kc.item_groups = {iid: keys.key_id_of(group_of(item)) for iid, item in kc.items.items()}
    kept = scans[0].tomb_snapshots.get(kc.committed_end, {})
    kc.tombstone_groups = {iid: kept[iid] for iid in kc.tombstones}
    # §2.3: a scoped credential keeps the segments of the groups it does not hold as their bytes (what a scoped
    # rewrite would copy, §2.6), for the records applied: [(record's log offset, key id, segment bytes)].
    kc.scoped = keys.scoped
    kc.opaque_segments = [(offset, k, b) for offset in sorted(scans[0].opaque) if offset < kc.committed_end
                          for k, b in scans[0].opaque[offset]]
    if pin is not None:
        P.check_contains(kc, pin)
    return kc


def head_text(kc: V2.KeychainV2) -> str:
    """The opened file's own head in its text form (SPEC.md §37.5): `epoch.sequence.chain` after the last commit,
    then `/k.start.sequence.tag` for every group that commit's heads name. Pinning it at the next open
    (open_keychain(..., pin=head_text(kc))) refuses an older copy put back."""
    return P.format_head(P.head_of(kc))


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
        "chain_starts": [{"keyID": k, "startEpoch": e} for k, e in sorted((kc.keys.chain_starts or {}).items())],
        "rewrite_end": kc.header.rewrite_end,
        "committed_end": kc.committed_end,
        "written_end": kc.written_end,
        "newest_commit": None if kc.newest is None else {"slot": kc.newest.slot, "counter": kc.newest.counter},
        "head": {"sequence": kc.head[0], "chain": kc.head[1].hex()},
        "headText": head_text(kc),
        "remnant": span(kc.remnant),
        "undone_transaction": span(kc.undone),
        "set_aside": span(kc.set_aside),
        "repairs": kc.repairs,
        "header_pages_to_rewrite": kc.pages_to_rewrite,
        "items": [{**K.item_to_json(kc.items[i]), "group": kc.keys.names[kc.item_groups[i]],
                   "keyID": kc.item_groups[i]} for i in sorted(kc.items)],
        "tombstones": [{"id": i.hex(), "time": kc.tombstones[i], "keyID": kc.tombstone_groups[i]}
                       for i in sorted(kc.tombstones)],
        "records": [{"offset": r.offset, "length": r.length, "kind": kind_names.get(r.kind, r.kind),
                     "sequence": r.sequence, "part": r.part, "chain": r.chain.hex()} for r in kc.records],
    }


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------

class WriterV3(V2.Writer):
    """Version 2's writer (§26: the record at physical(E_w) with its chunks' parity, then the other commit slot)
    with §2.10's prefix and keys and §2.5.1's records: a batch is one commit — for each run of consecutive entries
    of one group (§2.11), a segment of that group per page (pages of at most 8,192 plaintext bytes, as version 2's),
    then the heads — or, past part_limit, parts without heads and a commit whose heads state every page of the
    transaction.

    tamper: tests only — a function (record, previous chain tag, KeysV3) -> record applied to each record before it
    is written, its parity computed from what it returns; the chain value carried on is the returned record's tag
    and the group chains those of the pages as sealed (so the heads still claim a page a tamper removed)."""

    tamper: Optional[Callable] = None

    def __init__(self, *, path, data: bytes, kc: V2.KeychainV2, rng, clock, part_limit: int = V2.MAX_BODY):
        if not isinstance(kc.head[1], ChainV3):
            kc.head = (kc.head[0], ChainV3(kc.head[1]))
        self.page_count = kc.page_count
        super().__init__(path=path, data=data, kc=kc, rng=rng, clock=clock, part_limit=part_limit, layout=kc.layout)
        # §2.11: the file's tombstones with the key id of the page that held each (a rewrite writes them back there).
        self.tombstones = {iid: (t, kc.tombstone_groups[iid]) for iid, t in kc.tombstones.items()}
        # §2.6: what a scoped writer would have to repair without being able to verify it (None: nothing).
        self._unverifiable = _unverifiable_repair(data, kc) if kc.keys.scoped else None

    @classmethod
    def create(cls, path, password: str, iterations: int = 600_000, rng: Optional[random.Random] = None, *,
               clock: Optional[Callable] = None, overwrite: bool = False, part_limit: int = V2.MAX_BODY,
               extra_groups: int = 0, scoped_password: Optional[str] = None,
               scoped_slots: tuple = ()) -> "WriterV3":
        """A new file (§2.9 "Creating", header_v3's make: one full password slot, the default group as key id 1),
        then (§38.1, session 51) its creation commit: sequence 1 after C0, whose only segment is the heads, naming
        every group of the key table at group sequence 0 with its start value for epoch 1 (every file holds at least
        one commit, so that no group is ever unnamed); its seal counter 1 in commit slot 1; then the header with
        that commit as its rewrite end and head, run A, run B. extra_groups: more groups in the key table (named
        "group-i", holding no items), so that tests can make a header of more than one page (about 100 groups per
        extra page). scoped_password (with extra_groups ≥ 2): a second slot, scoped to key ids 2 and 3 ("group-0",
        "group-1"). scoped_slots: more password slots after it, each (password, [key ids]) scoped to those groups
        (tests of scoped holders).

        header_v3's make draws the file's keys from a random.Random seeded with a number drawn from rng (or from
        os.urandom): this writer is for tests, not for secrets."""
        seed = rng.getrandbits(64) if rng is not None else int.from_bytes(os.urandom(8), "big")
        prefix, info = H.make_prefix(password, iterations, seed, extra_groups, scoped_password, scoped_slots)
        n = info["pageCount"]
        run = b"".join(prefix[i * H.PAGE:i * H.PAGE + H.PAGE_DATA] for i in range(n))    # run A's header bytes
        raw = run[:V2.rd32(run, 12)]
        h = H.parse_header(raw)
        log_key = bytes.fromhex(info["logKey"])
        ek = H.epoch_keys(log_key, h["fileID"], h["epoch"], h["salt"])
        groups = {g["keyID"]: bytes.fromhex(g["key"]) for g in info["groups"]}
        keys = KeysV3(file_id=h["fileID"], epoch=h["epoch"], k_header=ek["header"], k_chain=ek["chain"],
                      k_heads=ek["heads"], c0=ChainV3(h["headChain"]), groups=groups,
                      names={g["keyID"]: g["name"] for g in info["groups"]}, log_key=log_key,
                      root=bytes.fromhex(info["root"]), last_assigned=max(groups), chain_starts={})
        w = cls._blank(keys, raw, rng=rng, clock=clock, part_limit=part_limit, slot_used=0)
        w.append([])                                           # the creation commit: the heads alone
        w._seal_header(H.build_header(h["fileID"], h["epoch"], h["salt"], w.written_end, w.head[0], bytes(w.head[1]),
                                      V2.rd32(raw, 104), h["table"], [b for _, b, _ in h["slots"]], log_key))
        data = bytes(w.buf)
        if path is not None:
            K._atomic_create(path, data, overwrite)
        kc = open_keychain(data, {"password": password})
        return cls(path=path, data=data, kc=kc, rng=rng, clock=clock, part_limit=part_limit)

    @classmethod
    def _blank(cls, keys: KeysV3, header: bytes, *, rng, clock, part_limit: int, slot_used: int) -> "WriterV3":
        """A writer on a file of no records yet: both runs of `header` (rewrite end 0, head (0, C0)), the commit slots
        zero, seal counters from 1 (§23.3). Creating and rewriting append their commits through it, then put the
        header with their rewrite end and head in place (_seal_header). Never a file as it is: every file holds at
        least one commit (§38.1, session 51), and a reader refuses a rewrite head of sequence 0."""
        n = H.page_count(len(header))
        run = H.run_of(header)
        layout = layout_for(n)
        buf = bytearray(run + bytes(2 * H.SLOT_STRIDE) + run)
        c0 = ChainV3(bytes(keys.c0))
        kc = V2.KeychainV2(header=_header_of(header), keys=keys, master_key=b"", slot_used=slot_used, items={},
                           head=(0, c0), records=[], committed_end=0, written_end=0, newest=None, older=None,
                           remnant=None, set_aside=None, undone=None, repairs=[], repaired_log={}, pages_to_rewrite=[],
                           tombstones={}, file_length=len(buf), log=b"")
        kc.layout, kc.page_count, kc.item_groups, kc.tombstone_groups = layout, n, {}, {}
        kc.scoped, kc.opaque_segments = keys.scoped, []
        w = cls(path=None, data=bytes(buf), kc=kc, rng=rng, clock=clock, part_limit=part_limit)
        w.counter = 0                                          # §23.3: an epoch's first seal has counter 1
        return w

    def _seal_header(self, header: bytes):
        """Both runs of `header` — the one _blank wrote, with the rewrite end and head of the records appended since
        — written over the blank header's (the same length)."""
        assert len(header) == self.header.length
        run = H.run_of(header)
        self.buf[0:len(run)] = run
        self.buf[H.run_b_offset(self.page_count):H.run_b_offset(self.page_count) + len(run)] = run
        self.header = self.kc.header = _header_of(header)

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
        """Cuts a batch into records of at most part_limit body bytes (a single unit larger than that alone), with a
        commit's heads, and of at most MAX_ENTRIES_PER_PART of the batch's entries, as the Swift engine cuts them
        (RecordLogV3.partRanges: the parts by bytes, each cut again every MAX_ENTRIES_PER_PART entries from its
        start): a move's deletion, which _place added before its put, is not counted and stays in its put's part. A
        part of 8,192 entries is at most 16,384 sealed entries, so at most 16,385 segments with the heads, whatever
        the groups. Pages are counted as _runs and _pages will cut them and as padded (§2.5.1 "Page"): an entry that
        fits the record's last page (same group, ≤ PAGE_LIMIT bytes) costs what it grows that page's padded size
        by, any other one a new segment (header, page box overhead, its padded page)."""
        heads = len(self.keys.groups) + len(getattr(self.head[1], "others", {}))    # a scoped commit copies the others
        base = 19 + 16 + R.SEGMENT_HEADER + 28 + R.HEAD_SIZE * heads
        units = []                           # the caller's entries, each with the move's deletion before it if any
        for e in entries:
            if units and getattr(units[-1][-1], "move", False):
                units[-1].append(e)
            else:
                units.append([e])

        def cost(unit: list, page) -> tuple:
            """What `unit` adds to a record whose last page is `page` ((key id, U) or None), and the last page after."""
            n = 0
            for e in unit:
                length = len(V2.entry_bytes(e, bytes(16)))
                box = 28 + len(e.secret) if isinstance(e, K.Put) else 0
                if page is not None and page[0] == e.key_id and page[1] + length <= R.PAGE_LIMIT:
                    n += R.padded_page_length(page[1] + length) - R.padded_page_length(page[1]) + box
                    page = (e.key_id, page[1] + length)
                else:
                    n += R.SEGMENT_HEADER + 28 + R.padded_page_length(3 + length) + box
                    page = (e.key_id, 3 + length)
            return n, page

        by_bytes, current, size, page = [], [], base, None   # first by bytes, then each such part by entries (as Swift)
        for unit in units:
            n, grown = cost(unit, page)
            if current and size + n > self.part_limit:
                by_bytes.append(current)
                current, size = [], base
                n, grown = cost(unit, None)
            current.append(unit)
            size += n
            page = grown
        by_bytes.append(current)
        return [[e for unit in part[i:i + MAX_ENTRIES_PER_PART] for e in unit]
                for part in by_bytes for i in range(0, len(part), MAX_ENTRIES_PER_PART)] or [[]]

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

    # -- §2.11: items in their groups ---------------------------------------------------------

    def group_key_id(self, name: str) -> int:
        k = self.keys.key_id_of(name)
        if k is None:
            raise KeyError(f"no group named {name!r} in the key table")
        return k

    def append(self, entries: list, **kwargs) -> list:
        """Version 2's append (one commit, or parts and a commit) with each entry in its group's pages (§2.11):
        a put in the group its accessGroup names, a deletion in the group its item is live in at that point of
        the batch. A put of an item live in another group (a move) gets a deletion in the old group's page just
        before it. A put naming a group the key table lacks first adds the group (add_groups: a rewrite into the
        next epoch under a new root), then appends.

        Tests only: an entry that already carries `key_id` is written into that group's page as it is, with no
        deletion added (how a writer holding the keys could misplace one)."""
        missing = []
        for e in entries:
            if isinstance(e, K.Put) and not hasattr(e, "key_id"):
                name = group_of(e)
                if self.keys.key_id_of(name) is None and name not in missing:
                    missing.append(name)
        if self.keys.scoped:
            self._refuse_unverifiable_repair("append to")
        if missing and self.keys.scoped:
            # §2.8, §2.11: a scoped holder writing outside its groups — a group of the file it does not hold, or
            # one the file lacks (it cannot tell the two apart: it has no key table, and only a full holder adds
            # groups) — gets missingEntitlement, before anything is written.
            raise MissingEntitlement(missing[0], f"a put names access group {missing[0]!r}, which this scoped "
                                                 f"credential does not hold")
        if missing:
            self.add_groups(missing)
        placed = self._place(entries)
        offsets = super().append(placed, **kwargs)
        if kwargs.get("seal", True) and kwargs.get("cut_after") is None:
            for e in placed:
                if isinstance(e, K.Put):
                    pass                      # a put does not clear a tombstone (§24.4); a rewrite drops it
                else:
                    self.tombstones[e.item_id] = (e.time, e.key_id)
        return offsets

    def _place(self, entries: list) -> list:
        """Each entry with the key id of the group whose page holds it. A scoped writer (§2.3, §2.8) places entries
        only in the groups it holds, and raises MissingEntitlement, before anything is written, for an entry it
        would have to place elsewhere: a put naming another group (an add, or a move of its item out of its
        groups), a deletion of an item not live in its groups (SPEC-GAP: it cannot tell another group's item from
        one that does not exist, and answers both alike, so the answer says nothing of other groups).

        SPEC-GAP: a scoped writer cannot see whether a put's item id is live in another group (which full readers
        refuse without a deletion there first, §2.11); new ids are random, and an id given by the caller is
        written as it is."""
        now = self.clock()
        scoped = self.keys.scoped
        live = {iid: self.keys.key_id_of(group_of(item)) for iid, item in self.state.items.items()}
        out = []
        for e in entries:
            if hasattr(e, "key_id"):
                if scoped and e.key_id not in self.keys.groups:
                    raise MissingEntitlement(None, f"an entry placed in key id {e.key_id}, a group this scoped "
                                                   f"credential does not hold")
                out.append(e)
            elif isinstance(e, K.Put):
                k = self.group_key_id(group_of(e))
                old = live.get(e.item_id)
                if old is not None and old != k:                 # a move: the deletion in the old group first
                    d = K.Delete(e.item_id)
                    d.time, d.key_id, d.move = now, old, True   # _split keeps it with its put
                    out.append(d)
                e.key_id = k
                out.append(e)
            elif isinstance(e, V2.Tombstone):
                e.key_id = self.tombstones.get(e.item_id, (0, DEFAULT_GROUP))[1]
                if scoped and e.key_id not in self.keys.groups:
                    raise MissingEntitlement(None, f"a tombstone of item {e.item_id.hex()}, which is not this "
                                                   f"scoped credential's")
                out.append(e)
            elif scoped and live.get(e.item_id) is None:
                raise MissingEntitlement(None, f"a deletion of item {e.item_id.hex()}, which is not live in the "
                                               f"groups this scoped credential holds")
            else:
                # a deletion of an item not live: its group does not matter, version 2's check refuses it
                e.key_id = live.get(e.item_id) or DEFAULT_GROUP
                out.append(e)
            if isinstance(e, K.Put):
                live[e.item_id] = e.key_id
            elif isinstance(e, K.Delete):
                live.pop(e.item_id, None)
        return out

    def _runs(self, entries: list) -> list:
        """§2.11 "Order": consecutive entries of one group, as (key id, entries); a change of group starts a run."""
        runs = []
        for e in entries:
            if runs and runs[-1][0] == e.key_id:
                runs[-1][1].append(e)
            else:
                runs.append((e.key_id, [e]))
        return runs

    def update(self, item_id: bytes, attributes: Optional[dict] = None, secret: Optional[bytes] = None):
        """Version 2's update; a scoped writer gets MissingEntitlement for an item not live in its groups (as for a
        deletion, _place)."""
        if self.keys.scoped and item_id not in self.state.items:
            raise MissingEntitlement(None, f"an update of item {item_id.hex()}, which is not live in the groups this "
                                           f"scoped credential holds")
        super().update(item_id, attributes, secret)

    def transaction(self) -> "BatchV3":
        return BatchV3(self)

    def compact(self):
        """A rewrite into the next epoch with the same keys (§2.6 "Full rewrite", §2.11 "A rewrite")."""
        self.rewrite()

    def add_groups(self, names: list):
        """§2.11 "Adding a group": each name under key id last assigned + 1, a random K_g, and a new root; the whole
        file rewritten into the next epoch with every slot granted its keys anew from the old root."""
        self.rewrite(new_groups=names)

    def rewrite(self, *, new_groups: tuple = ()):
        """The whole file rewritten into epoch e + 1 (SPEC §26.6 with §2.6, §2.7, §2.10, §2.11): a new epoch salt;
        the records: each group's live items (in the order they were added) and then its tombstones younger than
        the horizon (in order of time, then id), in that group's pages, the groups in increasing key id, at most
        4,096 entries per batch, each batch cut into records as an append cuts it (_split), every record a part of
        one transaction (each its own seal, counters from 1), then that transaction's one commit, the heads alone
        (§38.5, session 51, review-s51 F1: no commit before a group's first page names it at group sequence 0, which
        would publish its start value for the new epoch); every group's chain starting at the new epoch; then the
        header with the rewrite end and head, run A, run B. §35.7: the commit's heads name every group of the key
        table, a group that gets no page at group sequence 0 with its start value for the new epoch; with no entry at
        all the rewrite is that commit alone (every file holds at least one commit, §38.1).

        Without new_groups the key table and the slots are copied byte for byte. With them (adding groups, a full
        credential only): key ids last assigned + 1 …, a random K_g each, a new root R; the table sealed under the
        new R; every slot granted (slots_v3.add_grant, from the old root) a full slot K_log and the new R, a scoped
        slot K_log and its scope's group keys, each with the new ρ, then attested under the new R
        (slots_v3.attest). K_log and every existing group key stay. A slot whose attestation does not verify under
        the old root, that holds 32 grants, whose scope names a key id the table lacks, or that would pass 8,192
        bytes stops the rewrite before anything is written (§2.2 "A rotation that cannot reach a slot is refused").

        A scoped writer (§2.6 "Scoped rewrite", decided in session 47): the key table and slots copied byte for
        byte; first every segment of every group it does not hold, byte for byte in log order from page 1 of its
        chain in this file, dead ones included, as the first parts of the rewrite's transaction, whose commit names
        the copied groups at their last copied segments (_append_copied); every other group the old file's last commit named at group sequence 0 carried with that
        head unchanged (§38.7, session 51); the header lists each such group's start epoch, copied or carried (its
        chain start entry, from the last commit's heads); then its own groups' live items and tombstones as above,
        their chains starting at the new epoch (named at group sequence 0 with the new epoch's start value only if
        they get no page), as further parts of that transaction. A file whose log does not match its parity is refused first (ScopedRepairRefused). A full
        rewrite lists no chain starts (c = 0).

        The file at `path` is replaced at once (a temporary file renamed over it); this writer then continues on the
        new file."""
        keys: KeysV3 = self.keys
        if self.kc.set_aside is not None:
            raise V2.SetAsideRefusal("records set aside as possibly acknowledged: a rewrite is refused")
        copied, carried, chain_starts = [], {}, []
        if keys.scoped:
            # §2.6 "Scoped rewrite": the holder's groups anew; every other group's segments copied byte for byte,
            # in log order, dead ones included, from page 1 of its chain in this file (kc.opaque_segments: the
            # whole log of this file, in which each group's chain is whole, §2.5); each copied group's chain keeps
            # the start epoch the last commit's heads give it, and the new header lists it (chain starts).
            if new_groups:
                raise MissingEntitlement(None, "only a full credential adds a group")
            self._refuse_unverifiable_repair("rewrite (compact)")
            copied = [(k, b) for _, k, b in self.kc.opaque_segments]
            others = self.head[1].others
            # §38.7 (session 51): every other group the last commit named without a page (group sequence 0, its tag
            # the start value of its start epoch, which only its holders can make) is carried with that head
            # unchanged, and gets a chain start entry as a copied group does, so that its holders find the same
            # start value; dropping it would leave its holders and full holders without its head (corrupted).
            carried = {k: h for k, h in others.items() if h[1] == 0}
            chain_starts = sorted((k, others[k][0]) for k in {k for k, _ in copied} | set(carried))
        rng = self.rng if self.rng is not None else random.SystemRandom()
        raw = self.header.raw
        file_id, epoch = keys.file_id, keys.epoch + 1
        if epoch >= 1 << 64:
            raise LimitReached("the epoch cannot go past 2^64 - 1")
        table_length = V2.rd16(raw, 110)
        table = raw[H.FIXED:H.FIXED + table_length]
        slots = _slots_of(raw)
        # §2.2 "Writing it again" (SpecVersion3Draft D11): this writer's own slot, while the header holds the very
        # bytes its credential opened and its keys are this file's, is re-anchored — its newest keys sealed in a new
        # anchor, its grants cut — rather than copied with the grants others left, or granted to when groups are
        # added. A slot changed since (granted to after this writer opened it) is copied as it is.
        own = getattr(self.kc, "own_slot", None)
        own_index = None
        if own is not None and own["keys"]["logKey"] == keys.log_key and own["keys"]["root"] == keys.root:
            own_index = next((i for i, b in enumerate(slots) if b == own["bytes"]), None)
        reanchored = None
        if own_index is not None and not new_groups and S.parse_slot(slots[own_index])["grants"]:
            slots[own_index] = S.reanchor(slots[own_index], file_id, own["x"], own["anchorKey"], own["keys"], rng)
            reanchored = {**own, "bytes": slots[own_index]}
        groups, names, last, root = dict(keys.groups), dict(keys.names), keys.last_assigned, keys.root
        if new_groups:
            if root is None:
                raise KCFError("only a full credential adds a group (a scoped one gets missingEntitlement, step 4)")
            for name in new_groups:
                if name in names.values():
                    continue
                if len(name.encode("utf-8")) > 255:
                    raise ValueError(f"group name {name!r} is longer than 255 bytes of UTF-8")
                if last >= 255:
                    raise LimitReached(f"adding group {name!r}: key ids 1 … 255 are all assigned (a file holds at "
                                       f"most 255 groups; key ids are never reused)")
                last += 1
                groups[last], names[last] = V2.random_bytes(self.rng, 32), name
            new_root = V2.random_bytes(self.rng, 32)
            table = H.seal_table(last, [{"keyID": k, "name": names[k], "key": groups[k]} for k in sorted(groups)],
                                 new_root, file_id, rng)
            rho = S.rho_of(new_root, file_id)
            granted = []
            for index, b in enumerate(slots):
                s = S.parse_slot(b)
                name = f"slot {index} (id {s['slotID'].hex()})"
                if not S.is_attested(b, file_id, root):
                    raise RotationRefused(f"{name}: its attestation does not verify under the root key; remove it")
                if index != own_index and len(s["grants"]) >= S.MAX_GRANTS:
                    raise RotationRefused(f"{name} holds {S.MAX_GRANTS} grants: have its credential compact the "
                                          f"keychain once (its holder's rewrite re-anchors it), or remove it")
                if s["scope"]:
                    if any(k not in groups for k in s["scope"]):
                        raise RotationRefused(f"{name}: its scope names a key id the key table does not hold")
                    ks = {"logKey": keys.log_key, "rho": rho, "root": None,
                          "groups": [{"keyID": k, "name": names[k], "key": groups[k]} for k in s["scope"]]}
                else:
                    ks = {"logKey": keys.log_key, "rho": rho, "root": new_root, "groups": []}
                if index == own_index:
                    g = S.attest(S.reanchor(b, file_id, own["x"], own["anchorKey"], ks, rng), file_id, new_root)
                    reanchored = {**own, "keys": ks}
                else:
                    g = S.attest(S.add_grant(b, file_id, ks, root, rng), file_id, new_root)
                if len(g) > S.MAX_LENGTH:
                    raise RotationRefused(f"{name} would pass {S.MAX_LENGTH} bytes: remove it, or have its "
                                          f"credential compact the keychain once")
                if index == own_index:
                    reanchored["bytes"] = g
                granted.append(g)
            slots, root = granted, new_root
        # The entries: per group, in increasing key id, its live items, then its tombstones within the horizon.
        now = self.clock()
        horizon = self.header.horizon_days * 86_400_000
        ids = {n: k for k, n in names.items()}
        per_group: dict = {k: [] for k in groups}
        for item in self.state.items.values():
            k = ids[group_of(item)]
            p = K.Put(item.id, item.cls, dict(item.attributes), item.secret or b"")
            p.key_id = k
            per_group[k].append(p)
        for iid, (t, k) in sorted(self.tombstones.items(), key=lambda kv: (kv[1][0], kv[0])):
            if iid in self.state.items or t < now - horizon:
                continue
            tomb = V2.Tombstone(iid, t)
            tomb.key_id = k
            per_group[k].append(tomb)
        entries = [e for k in sorted(per_group) for e in per_group[k]]
        # The new file: a header of no records first (rewrite end 0, head (0, C0)), the records appended to it as
        # commits (counters from 1), then the header with the rewrite end and head.
        salt = V2.random_bytes(self.rng, 32)
        ek = H.epoch_keys(keys.log_key, file_id, epoch, salt)
        c0 = H.c0(ek["header"], file_id, epoch, salt)
        horizon_days = self.header.horizon_days
        first = H.build_header(file_id, epoch, salt, 0, 0, c0, horizon_days, table, slots, keys.log_key, chain_starts)
        n = H.page_count(len(first))
        if n > H.MAX_PAGES:
            raise LimitReached(f"the header would take {n} pages (at most {H.MAX_PAGES}): remove credentials or groups")
        new_keys = KeysV3(file_id=file_id, epoch=epoch, k_header=ek["header"], k_chain=ek["chain"],
                          k_heads=ek["heads"], c0=ChainV3(c0), groups=groups, names=names, log_key=keys.log_key,
                          root=root, last_assigned=last, chain_starts=dict(chain_starts))
        w = WriterV3._blank(new_keys, first, rng=self.rng, clock=self.clock, part_limit=self.part_limit,
                            slot_used=self.kc.slot_used)
        w.tamper = self.tamper
        # §38.5 (session 51, review-s51 F1): the rewrite's records are one transaction — parts (the copies first, then
        # the entries, in batches of at most 4,096 entries, each cut by _split), then one commit of the heads alone
        # naming every group at its end. A commit before a group's first page would name it at group sequence 0 with
        # its start value for the new epoch, with which a holder of K_log could later write the group as empty.
        # With nothing to write, that commit alone.
        w._rewrite_part = 0
        w._rewrite_chain = w.head[1]
        if copied or carried:
            w._append_copied(copied, carried)
        for at in range(0, len(entries), 4096):
            w._append_rewrite_parts(entries[at:at + 4096])
        w._commit_rewrite()
        w._seal_header(H.build_header(file_id, epoch, salt, w.written_end, w.head[0], bytes(w.head[1]), horizon_days,
                                      table, slots, keys.log_key, chain_starts))
        if self.path is not None:
            K._atomic_create(self.path, bytes(w.buf), True)
        path = self.path
        self.__dict__.update(w.__dict__)
        self.path = path
        self.kc.own_slot = reanchored or own

    def _append_copied(self, copied: list, carried: dict):
        """§2.6 "Scoped rewrite", §38.7, the copied part: the segments [(key id, bytes)] of the groups this writer does
        not hold, byte for byte and in log order, in records of at most part_limit body bytes (and 65,534 segments),
        each a part (kind 3) of the rewrite's one transaction (rewrite; _commit_rewrite writes its commit). The
        transaction's chain carries, as `others`, each copied group at its last segment — its start epoch (the
        header's chain start entry), the number of its segments copied, the last one's page tag, all readable
        without K_g — and each carried group with its head unchanged (`carried`: {key id: (start epoch, 0, start
        value)}, the old file's last commit's heads of other groups that had no page): the commit names them so.

        §38.5 (session 51, review-s51 F1): no commit here. A commit before this writer's own groups' first pages
        would name them at group sequence 0 with the new epoch's start value (every commit names every group,
        §35.7), publishing it to every holder of K_log; parts have no heads. Each record gets its own seal, as a
        rewrite's records do."""
        keys: KeysV3 = self.keys
        heads: dict = dict(carried)                        # key id -> (start epoch, segments copied, last page tag)
        head_count = len({k for k, _ in copied} | set(carried) | set(keys.groups))

        def body(segments: list) -> int:
            return R.FIXED - 8 + sum(len(b) for b in segments) + R.SEGMENT_HEADER + 28 + R.HEAD_SIZE * head_count + 16

        records: list = [[]] if copied else []
        for k, segment in copied:
            if records[-1] and (body(records[-1] + [segment]) > self.part_limit or len(records[-1]) >= 65_534):
                records.append([])
            if body([segment]) > R.MAX_BODY:
                raise LimitReached(f"a copied segment of key id {k} ({len(segment)} bytes) does not fit in a record")
            records[-1].append(segment)
        sequence, chain = self.head[0] + self._rewrite_part, self._rewrite_chain
        for batch in records:
            sequence += 1
            for segment in batch:
                k = segment[0]
                heads[k] = (keys.start_epoch(k), heads.get(k, (0, 0, b""))[1] + 1, page_tag(segment))
            previous = chain
            record = R.assemble(V2.KIND_PART, sequence, self._rewrite_part, list(batch), bytes(previous), keys.k_chain)
            if self.tamper is not None:
                record = self.tamper(record, bytes(previous), keys)
            chain = ChainV3(record[-16:], previous.groups, dict(heads),
                            {k: (h[1], h[2] if h[1] else b"") for k, h in heads.items()})
            start = self.written_end
            self._write_record(record, commit=False, head=(sequence, chain))
            self.kc.opaque_segments.extend((start, b[0], b) for b in batch)
            self._rewrite_part += 1
        if not records:                                    # carried groups alone: named by the commit
            chain = ChainV3(bytes(chain), chain.groups, dict(heads), {k: (h[1], b"") for k, h in heads.items()})
        self._rewrite_chain = chain
        self._flush()

    def _append_rewrite_parts(self, entries: list):
        """A rewrite's batch of entries (each with its key id) as parts of the rewrite's transaction (_split's
        records, each its own seal), the writer's state and tombstones following them."""
        plan = self.state.plan([("put", K.Item(e.item_id, e.cls, e.attributes, e.secret)) for e in entries
                                if isinstance(e, K.Put)])
        sequence, chain = self.head[0] + self._rewrite_part, self._rewrite_chain
        for group in self._split(entries):
            sequence += 1
            record, chain = self._encode_record(group, sequence=sequence, kind=V2.KIND_PART, part=self._rewrite_part,
                                                chain=chain)
            self._write_record(record, commit=False, head=(sequence, chain))
            self._rewrite_part += 1
        self.state.commit(plan)
        for e in entries:
            if isinstance(e, K.Put):
                self.tombstones.pop(e.item_id, None)
            else:
                self.tombstones[e.item_id] = (e.time, e.key_id)
        self._rewrite_chain = chain
        self._flush()

    def _commit_rewrite(self):
        """The rewrite's commit: no group segment, the heads alone, every group at its end (_encode_record: this
        writer's groups as their pages left them, group sequence 0 only for one with no page; every other group as
        _append_copied copied or carried it)."""
        sequence = self.head[0] + self._rewrite_part + 1
        record, chain = self._encode_record([], sequence=sequence, kind=V2.KIND_COMMIT, part=self._rewrite_part,
                                            chain=self._rewrite_chain)
        self._write_record(record, commit=True, head=(sequence, chain))
        self.head = (sequence, chain)
        del self._rewrite_part, self._rewrite_chain
        self._flush()

    def _refuse_unverifiable_repair(self, what: str):
        """§2.6: a scoped holder does not write to a file that needs a repair it cannot verify (the chain covers
        each segment's page tag, not other groups' ciphertext and secret boxes): a log chunk, up to the committed
        end, whose bytes as read do not match their parity (a complete chunk's own, the newest seal's for the last
        one, a last write missing), or bytes that verified only as repaired. Parity computed from such bytes would
        make damage to another group permanent (SPEC §19: parity only from verified data)."""
        if self._unverifiable is not None:
            raise ScopedRepairRefused(f"a scoped credential cannot {what} this file: {self._unverifiable}; a holder "
                                      f"of the whole keychain must open it once, which repairs it, then write again")

    def _encode_record(self, entries: list, *, sequence: int, kind: int, part: int, chain: bytes) -> tuple:
        keys: KeysV3 = self.keys
        if not isinstance(chain, ChainV3):
            chain = ChainV3(chain)
        rng = self.rng if self.rng is not None else random.SystemRandom()
        states = dict(chain.groups)
        segments = []
        for key_id, run in self._runs(entries):
            group = R.GroupKeys(keys.groups[key_id], keys.file_id, key_id)
            for page in self._pages(run):
                start, previous_sequence, previous_tag = keys.group_chain(ChainV3(b"", states), key_id)
                segment = R.group_segment(group, [_entry_json(e) for e in page], previous_sequence + 1, previous_tag,
                                          rng)
                page_end = R.SEGMENT_HEADER + R.rd32(segment, 5)
                states[key_id] = (start, previous_sequence + 1, segment[page_end - 16:page_end])
                segments.append(segment)
        if kind == V2.KIND_COMMIT:
            # §2.5, §2.6 "Scoped append": the heads of the groups this writer holds moved on by its pages; every
            # other group's head (a scoped writer only) copied unchanged from the last commit before this one.
            # §35.7 (session 51): every group this writer holds is named, one without a page in the file at group
            # sequence 0 with its start value (KeysV3.group_chain) — a full writer so names every group of its key
            # table, and a reader finds every group it follows in every commit's heads.
            held = {k: keys.group_chain(ChainV3(b"", states), k) for k in keys.groups}
            heads = {k: {"startEpoch": s[0], "groupSequence": s[1], "lastTag": s[2]}
                     for k, s in {**chain.others, **held}.items()}
            box = R.seal(keys.k_heads, R.heads_plaintext(heads), R.heads_aad(keys.file_id, keys.epoch, sequence), rng)
            segments.append(R.u8(0) + R.u32(len(box)) + R.u32(len(box)) + box)
        record = R.assemble(kind, sequence, part, segments, bytes(chain), keys.k_chain)
        if self.tamper is not None:
            record = self.tamper(record, bytes(chain), keys)
        if not R.MIN_BODY <= len(record) - 8 <= R.MAX_BODY:
            raise ValueError(f"record body of {len(record) - 8} bytes is outside {R.MIN_BODY} … {R.MAX_BODY}")
        return record, ChainV3(record[-16:], states, chain.others, chain.opaque)


class MissingEntitlement(KCFError):
    """§2.8: an operation outside the opened credential's scope (KeychainError.missingEntitlement(group:) in Swift,
    errSecMissingEntitlement −34018 in the SecItem layer). `group` is the access group's name when the writer
    knows it (a put naming it), None when it cannot (an item id not live in its groups)."""

    def __init__(self, group: Optional[str], message: str):
        super().__init__(message)
        self.group = group


class ScopedRepairRefused(KCFError):
    """§2.6: a scoped holder asked to write (append or rewrite) a file that needs a repair it cannot verify; Swift
    throws io (EIO). A holder of the whole keychain opens it once, which repairs it."""


def _unverifiable_repair(data: bytes, kc) -> Optional[str]:
    """Why a scoped writer must not write this file (§2.6), or None: a chunk up to the committed end whose bytes as
    read do not match their parity — a complete chunk's own (complete: the newest seal's written end reaches its
    end), the newest seal's for the chunk it ends in (a last write missing reads short and does not match). Log
    bytes that verified only as repaired are such bytes: parity proposed a change because they did not match it."""
    end, newest = kc.committed_end, kc.newest
    if end == 0 or newest is None:
        return None
    log = V2._Log(data, kc.layout)
    written = newest.written_end
    for c in range(-(-end // V2.CHUNK)):
        lo = c * V2.CHUNK
        if lo + V2.CHUNK <= written:
            hi, stored, whose = lo + V2.CHUNK, log.complete_parity(c), f"log chunk {c}'s parity"
        elif c == written // V2.CHUNK:
            hi, stored, whose = written, newest.parity, f"the newest commit slot's parity (counter {newest.counter})"
        else:
            return f"log chunk {c} has no parity"
        got = bytes(log.bytes[lo:hi])
        if stored is None or len(got) < hi - lo or V2.chunk_parity(got) != stored:
            return f"log bytes {lo} ..< {hi} do not match {whose}"
    return None


class BatchV3(V2.Batch):
    """Version 2's transaction; a scoped writer gets MissingEntitlement (not ItemNotFound) for an update or deletion
    of an item not live in its groups, as Writer.update and a deletion do."""

    def _check(self, item_id: bytes):
        if self.w.keys.scoped and item_id not in self.view:
            raise MissingEntitlement(None, f"item {item_id.hex()} is not live in the groups this scoped credential "
                                           f"holds")

    def update(self, item_id: bytes, attributes: Optional[dict] = None, secret: Optional[bytes] = None):
        self._check(item_id)
        super().update(item_id, attributes, secret)

    def delete(self, item_id: bytes):
        self._check(item_id)
        super().delete(item_id)


class LimitReached(KCFError):
    """A limit of the format (255 groups, 16 header pages, the epoch) would be passed."""


class RotationRefused(KCFError):
    """A renewal of the root (adding a group) that cannot reach a slot: refused, naming it (§2.2)."""


def _slots_of(raw: bytes) -> list:
    """A header's slots, each as its bytes."""
    return [b for _, b, _ in H.parse_header(raw)["slots"]]


def _header_of(raw: bytes) -> V2.HeaderV2:
    """Version 2's HeaderV2 fields of a version 3 header (parsed by header_v3)."""
    ph = H.parse_header(raw)
    return V2.HeaderV2(raw=raw, length=len(raw), file_id=ph["fileID"], epoch=ph["epoch"], epoch_salt=ph["salt"],
                       rewrite_end=ph["rewriteEnd"], rewrite_sequence=V2.rd64(raw, 80),
                       rewrite_chain=ph["headChain"], horizon_days=V2.rd32(raw, 104),
                       slots=[s for _, _, s in ph["slots"]], mac=raw[-48:-16], checksum=raw[-16:])


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
EXIT_MISSING_ENTITLEMENT = 9             # version 2's codes end at 8 (rolledBack)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="kcf_reference_v3.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command")
    d = sub.add_parser("dump", aliases=["open"], help="print the live items (of the credential's groups, for a "
                                                      "scoped one), the commits, repairs and tails as JSON")
    d.add_argument("file")
    d.add_argument("--password")
    d.add_argument("--key", metavar="HEX")
    d.add_argument("--expected-head", metavar="HEAD", help="a pinned head in its text form (SPEC.md §15.4, §37.5; "
                                                           "whitespace around it ignored): exit 8 (rolledBack) when "
                                                           "the file does not contain it, 2 when it is malformed")
    a = sub.add_parser("append", aliases=["append-scoped"],
                       help="append the given items to an existing file, with a full or a scoped credential")
    a.add_argument("file")
    a.add_argument("--password")
    a.add_argument("--key", metavar="HEX")
    a.add_argument("--seed", type=int)
    a.add_argument("--transaction", action="store_true", help="all items in one transaction")
    a.add_argument("--items", required=True, metavar="JSON")
    c = sub.add_parser("compact", help="rewrite the file into the next epoch, with a full or a scoped credential "
                                       "(a scoped one copies the other groups' segments as bytes, §2.6)")
    c.add_argument("file")
    c.add_argument("--password")
    c.add_argument("--key", metavar="HEX")
    c.add_argument("--seed", type=int)
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
    if args.command not in ("dump", "open", "make", "append", "append-scoped", "compact"):
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
        if args.command == "compact":
            w = WriterV3.open(args.file, cred, random.Random(args.seed) if args.seed is not None else None)
            w.compact()
            print(json.dumps({"file_id": w.keys.file_id.hex(), "scoped": w.keys.scoped, "epoch": w.keys.epoch,
                              "chain_starts": [{"keyID": k, "startEpoch": e}
                                               for k, e in sorted(w.keys.chain_starts.items())],
                              "head": {"sequence": w.head[0], "chain": w.head[1].hex()}}))
            return EXIT_OK
        if args.command in ("append", "append-scoped"):
            items = [item_from_json(j) for j in json.loads(args.items)]
            rng = random.Random(args.seed) if args.seed is not None else None
            w = WriterV3.open(args.file, cred, rng)
            for _, attributes, _ in items:       # all checked before the first commit: nothing written on refusal
                name = attributes.get("accessGroup") or ""
                if w.keys.scoped and w.keys.key_id_of(name) is None:
                    raise MissingEntitlement(name, f"an item names access group {name!r}, which this scoped "
                                                   f"credential does not hold")
            if args.transaction:
                with w.transaction() as t:
                    ids = [t.add(cls, attributes, secret) for cls, attributes, secret in items]
            else:
                ids = [w.add(cls, attributes, secret) for cls, attributes, secret in items]
            print(json.dumps({"file_id": w.keys.file_id.hex(), "scoped": w.keys.scoped,
                              "items": [i.hex() for i in ids],
                              "head": {"sequence": w.head[0], "chain": w.head[1].hex()}}))
            return EXIT_OK
        kc = open_keychain(args.file, cred, pin=None if args.expected_head is None else args.expected_head.strip())
        json.dump(to_json(kc), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return EXIT_OK
    except InvalidParameter as err:           # a malformed --expected-head: a usage error, not evidence (§15.4)
        print(json.dumps({"error": "usage", "message": str(err), "part": err.part}), file=sys.stderr)
        return EXIT_USAGE
    except KCFError as err:
        out = {"error": type(err).__name__, "message": str(err)}
        if isinstance(err, PinNotContained):
            out.update(error="RolledBack", expected=err.expected, found=err.found)
        if isinstance(err, (Corrupted, UnsupportedFeature)):
            out.update(offset=err.offset, reason=err.reason)
        if isinstance(err, UnsupportedVersion):
            out.update(version=err.version)
        if isinstance(err, MissingEntitlement):
            out.update(group=err.group, osStatus=-34018)
            print(json.dumps(out), file=sys.stderr)
            return EXIT_MISSING_ENTITLEMENT
        print(json.dumps(out), file=sys.stderr)
        # By isinstance, not by type as version 2's main does: a CorruptedRecord is corrupted (6).
        return next((code for kind, code in V2.EXIT_CODES.items() if isinstance(err, kind)), EXIT_OTHER)
    except FileExistsError as err:
        print(json.dumps({"error": "FileExistsError", "message": f"{err.filename or err} exists: give --overwrite to "
                                                                 f"replace it"}), file=sys.stderr)
        return EXIT_OTHER
    except K._Semantic as err:                   # make: items that break §8 (two with one primary key)
        print(json.dumps({"error": "invalidItems", "message": err.reason}), file=sys.stderr)
        return EXIT_OTHER
    except (OSError, ValueError, TypeError, KeyError) as err:
        print(json.dumps({"error": type(err).__name__, "message": str(err)}), file=sys.stderr)
        return EXIT_OTHER


if __name__ == "__main__":
    sys.exit(main())

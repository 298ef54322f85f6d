#!/usr/bin/env python3
"""KeychainFile merge (SPEC.md §43): an independent reference, written from SPEC.md §43 alone (not from the Swift
sources), to check `kcf merge` against.

    import kcf_reference_v2 as V2, merge_reference as M
    ours, theirs = V2.open_keychain("a.kcf", cred), V2.open_keychain("b.kcf", cred)
    r = M.merge(ours, theirs)                 # or M.merge(ours, theirs, base), M.merge(ours, theirs, importing=True)
    r.items        # id -> K.Item (class, attributes, secret): the live items of the result
    r.tombstones   # id -> time: the result's tombstones (§43.3 rule 1, §43.5, §43.4)
    r.conflicts    # [Conflict(kind, item id, conflict copy id)]
    r.file_tombstones(ours)   # what OURS holds after §43.7 writes the result into it

A copy is anything with `.items` (id -> K.Item with cls, attributes, secret) and `.tombstones` (id -> time), as the
reference readers (kcf_reference_v2 / kcf_reference_v3 `open_keychain`) return them; `Copy(items, tombstones)` makes
one by hand. Without a base, §43.9 looks for the history two copies share: that needs copies opened by `load` (their
header, replay end, stored log bytes and the state at each commit end); a hand-made Copy has none, and is merged by
§43.3.

    M.shared_history(ours, theirs)   # §43.9: D, E_o, E_t, R, A_end and A (`.base`), or None

Where §43 leaves a reading open, the choice made is marked "SPEC-READING".
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import kcf_reference as K  # noqa: E402

DIGEST_LABEL = b"KeychainFile merge version"
COPY_LABEL = b"KeychainFile conflict copy"
MAX_VALUE = 65_535
MAX_ROUNDS = 16

# §43.4: the primary-key attribute a conflict copy's marker is appended to, per class.
MARKED_ATTRIBUTE = {
    K.GENERIC_PASSWORD: "account",
    K.INTERNET_PASSWORD: "account",
    K.CERTIFICATE: "serialNumber",
    K.KEY: "applicationTag",
}

CHANGED_ON_BOTH_SIDES = "changed on both sides"
CHANGED_WHERE_DELETED = "changed where deleted"
PRIMARY_KEY_TAKEN = "primary key taken"


class LimitReached(Exception):
    """§43.4 (a marked attribute over 65,535 bytes) or §43.5 (still colliding after 16 rounds): the merge fails."""


@dataclass
class Copy:
    items: dict
    tombstones: dict


# ---------------------------------------------------------------------------------------------
# §43.2 Versions: time, digest, order
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Version:
    cls: int
    attributes: tuple          # ((name, value), ...) — hashable; see .attrs
    secret: bytes

    @staticmethod
    def of(cls: int, attributes: dict, secret: Optional[bytes]) -> "Version":
        return Version(cls, tuple(sorted(attributes.items())), bytes(secret or b""))

    @property
    def attrs(self) -> dict:
        return dict(self.attributes)

    @property
    def time(self) -> int:
        """§43.2: modificationDate in milliseconds, its creationDate when it has none, else 0."""
        a = self.attrs
        if "modificationDate" in a:
            return a["modificationDate"]
        return a.get("creationDate", 0)

    @property
    def encoded_attributes(self) -> bytes:
        """§43.2 / §7.3: every attribute, in tag order, each `u16 tag ‖ u8 type ‖ u32 length ‖ value`.

        SPEC-READING: "the attributes encoded as a record stores them (§7.3: every attribute, in tag order)" is
        taken as the attribute list alone, without the attributes box's first 20 bytes (encoding version, item id,
        class, count): the class is hashed on its own before, and the item id is not part of a version."""
        fields = []
        for name, value in self.attributes:
            a = K.ATTRIBUTES_BY_NAME[name]
            fields.append((a.tag, a.type, K.encode_value(a, value)))
        fields.sort()
        return b"".join(K.encode_attribute(tag, type_, vb) for tag, type_, vb in fields)

    @property
    def digest(self) -> bytes:
        """§43.2: SHA-256("KeychainFile merge version" ‖ u16 class ‖ u32 n ‖ attributes ‖ u32 s ‖ secret)."""
        attrs = self.encoded_attributes
        return hashlib.sha256(DIGEST_LABEL + K.u16(self.cls) + K.u32(len(attrs)) + attrs
                              + K.u32(len(self.secret)) + self.secret).digest()

    @property
    def order(self) -> tuple:
        """§43.2: versions are ordered by time, then by digest as unsigned bytes; the newer is the greater."""
        return (self.time, self.digest)

    def same(self, other: Optional["Version"]) -> bool:
        """§43.2: two versions are the same when their digests are equal."""
        return other is not None and self.digest == other.digest

    def with_attribute(self, name: str, value) -> "Version":
        a = self.attrs
        a[name] = value
        return Version.of(self.cls, a, self.secret)

    def item(self, item_id: bytes) -> K.Item:
        return K.Item(item_id, self.cls, self.attrs, self.secret)


def same_version(a: Optional[Version], b: Optional[Version]) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.same(b)


@dataclass
class Entry:
    """§43.2: an id's entry in a copy: its live version (or None) and its tombstone time (or None).
    `derived`: the tombstone is a derived one (§43.3)."""
    version: Optional[Version] = None
    tombstone: Optional[int] = None
    derived: bool = False

    @property
    def empty(self) -> bool:
        return self.version is None and self.tombstone is None

    def same(self, other: "Entry") -> bool:
        """§43.2: the same version (or none) and the same tombstone (or none)."""
        return same_version(self.version, other.version) and self.tombstone == other.tombstone


def entries_of(copy) -> dict:
    """§43.2: a copy as a map id -> Entry — both the live version and the tombstone when the copy holds both."""
    out = {}
    for iid, item in copy.items.items():
        out[iid] = Entry(Version.of(item.cls, item.attributes, item.secret))
    for iid, t in copy.tombstones.items():
        out.setdefault(iid, Entry()).tombstone = t
    return out


def _later(*times) -> Optional[int]:
    present = [t for t in times if t is not None]
    return max(present) if present else None


# ---------------------------------------------------------------------------------------------
# §43.4 Conflict copies
# ---------------------------------------------------------------------------------------------

def conflict_copy_id(g: bytes, v: Version) -> bytes:
    """§43.4: SHA-256("KeychainFile conflict copy" ‖ g ‖ digest(v))[0 ..< 16]."""
    return hashlib.sha256(COPY_LABEL + g + v.digest).digest()[:16]


def marker(g: bytes, copy_id: bytes) -> str:
    """§43.4: ` (conflict ` ‖ g as 32 lowercase hex ‖ ` ` ‖ the first 8 hex digits of the copy's id ‖ `)`."""
    return f" (conflict {g.hex()} {copy_id.hex()[:8]})"


def conflict_copy(g: bytes, v: Version) -> tuple:
    """§43.4: (copy id, copy version): v with the marker appended to its marked attribute (a string: the account;
    bytes: the marker's UTF-8 appended). Every other attribute, modificationDate included, and the secret are v's.
    An attribute that would pass 65,535 bytes: LimitReached.

    SPEC-READING: a version without the marked attribute gets it as its type's default ("" or empty bytes) with the
    marker appended (§8.3: an attribute the item does not have compares as its default)."""
    cid = conflict_copy_id(g, v)
    name = MARKED_ATTRIBUTE[v.cls]
    a = K.ATTRIBUTES_BY_NAME[name]
    current = v.attrs.get(name, K.TYPE_DEFAULTS[a.type])
    m = marker(g, cid)
    if a.type == K.T_STRING:
        value = current + m
        size = len(value.encode("utf-8"))
    else:
        value = bytes(current) + m.encode("utf-8")
        size = len(value)
    if size > MAX_VALUE:
        raise LimitReached(f"conflict copy of {g.hex()}: {name} of {size} bytes")
    return cid, v.with_attribute(name, value)


_HEX = set(b"0123456789abcdef")


def untouched_conflict_copy(copy_id: bytes, c: Version) -> Optional[tuple]:
    """§43.4: (g, v) when live version c at copy_id is an untouched conflict copy of item g — its marked attribute
    ends with ` (conflict ` + 32 lowercase hex + ` ` + the first 8 hex digits of copy_id + `)` and, with the marker
    taken off (version v, id g), the conflict copy of v is c exactly (same id and digest). Else None."""
    name = MARKED_ATTRIBUTE.get(c.cls)
    if name is None or name not in c.attrs:
        return None
    value = c.attrs[name]
    raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    suffix = b" " + copy_id.hex()[:8].encode() + b")"
    head = b" (conflict "
    n = len(head) + 32 + len(suffix)
    if len(raw) < n or not raw.endswith(suffix) or raw[-n:-n + len(head)] != head:
        return None
    g_hex = raw[-n + len(head):-len(suffix)]
    if len(g_hex) != 32 or not set(g_hex) <= _HEX:
        return None
    before = raw[:-n]
    if isinstance(value, str):
        try:
            before_value = before.decode("utf-8")   # "what comes before the marker must be valid UTF-8"
        except UnicodeDecodeError:
            return None
    else:
        before_value = before
    g = bytes.fromhex(g_hex.decode())
    v = c.with_attribute(name, before_value)
    try:
        cid, again = conflict_copy(g, v)
    except LimitReached:
        return None
    if cid != copy_id or again.digest != c.digest:
        return None
    return g, v


def is_untouched(copy_id: bytes, c: Optional[Version]) -> bool:
    return c is not None and untouched_conflict_copy(copy_id, c) is not None


# ---------------------------------------------------------------------------------------------
# The merge
# ---------------------------------------------------------------------------------------------

@dataclass
class Conflict:
    kind: str
    item_id: bytes
    copy_id: Optional[bytes]


@dataclass
class MergeResult:
    entries: dict                          # id -> Entry (the result, every id either copy held, plus copies)
    conflicts: list = field(default_factory=list)
    events: list = field(default_factory=list)   # which rules fired (for tests' coverage counts), as strings
    shared: Optional[object] = None        # §43.9: the SharedHistory found; None if condition 1 failed

    @property
    def items(self) -> dict:
        return {iid: e.version.item(iid) for iid, e in self.entries.items() if e.version is not None}

    @property
    def tombstones(self) -> dict:
        return {iid: e.tombstone for iid, e in self.entries.items() if e.tombstone is not None}

    def file_tombstones(self, ours) -> dict:
        """§43.7: OURS after the merge wrote into it — its tombstones, with a tombstone entry (or a deletion) at
        each id whose result tombstone differs (a put never clears one, §24.4)."""
        out = dict(ours.tombstones)
        out.update(self.tombstones)
        return out


def _rule3(iid: bytes, a: Optional[Version], b: Optional[Version], kind: str, pending: list, conflicts: list,
           events: list):
    """§43.3 rules 3 and 4 for the survivors a and b (None: not a survivor). Returns the id's version; a conflict
    copy to make goes to `pending` as (item id, version)."""
    if a is not None and b is not None:
        if a.same(b):
            events.append("rule 3: the same version")
            return a                                              # rule 3: the same: it
        ua, ub = is_untouched(iid, a), is_untouched(iid, b)
        if ua != ub:
            events.append("rule 3: the change of an untouched conflict copy")
            return b if ua else a                                 # rule 3: exactly one untouched copy: the other
        newer, older = (a, b) if a.order > b.order else (b, a)    # rule 3: the newer; the older as a conflict copy
        events.append("rule 3: conflict copy" + (" (tie of time)" if a.time == b.time else ""))
        pending.append((iid, older))
        conflicts.append(Conflict(kind, iid, conflict_copy_id(iid, older)))
        return newer
    return a if a is not None else b                              # rule 4


def _derived_tombstones(this: dict, other: dict) -> dict:
    """§43.3: where `other` holds an untouched conflict copy c (id cid) of g, `this` holds nothing at cid, and
    this copy's tombstone of g is later than the time t of c's version: a tombstone of cid at t + 1."""
    out = {}
    for cid, e in other.items():
        if e.version is None:
            continue
        u = untouched_conflict_copy(cid, e.version)
        if u is None:
            continue
        g, _ = u
        mine = this.get(cid)
        if mine is not None and not mine.empty:
            continue
        t = e.version.time
        tomb_g = this.get(g).tombstone if g in this else None
        if tomb_g is not None and tomb_g > t:
            out[cid] = Entry(None, t + 1, derived=True)
    return out


def _merge_without_base(o_map: dict, t_map: dict, pending: list, conflicts: list, events: list,
                        a_map: Optional[dict] = None) -> dict:
    """§43.3; with `a_map` (§43.9's shared state A, as entries), §43.3 with rule 0 first."""
    # §43.3 derived tombstones, both computed from the copies as they are, then added.
    # SPEC-READING: §43.9 gives the copies their derived tombstones and none to A ("Each copy is given its derived
    # tombstones"); A is a state, not a copy.
    d_o, d_t = _derived_tombstones(o_map, t_map), _derived_tombstones(t_map, o_map)
    events.extend(["derived tombstone"] * (len(d_o) + len(d_t)))
    o_map, t_map = {**o_map, **d_o}, {**t_map, **d_t}
    result = {}
    for iid in set(o_map) | set(t_map):
        o, t = o_map.get(iid, Entry()), t_map.get(iid, Entry())
        if a_map is not None:
            # §43.9 rule 0: o the same as a: t; otherwise t the same as a: o (the entry as that side holds it).
            # SPEC-READING: o and t are compared with A as "given its derived tombstones" (the order §43.9 states:
            # derived tombstones, "Then, for each id ... with o, t and a the entries"), so an id where a side was
            # given a derived tombstone is not "the same as a" on that side and goes on to §43.3's rules, which is
            # where a derived tombstone acts. (A side holds nothing at a derived tombstone's id, and A is a state
            # both copies' logs came through, so A holds nothing there either: the derived tombstone alone makes
            # the difference.) The derived flag is not part of sameness (§43.2: version and tombstone time).
            a = a_map.get(iid, Entry())
            if o.same(a):
                events.append("43.9 rule 0: " + ("unchanged on both sides" if t.same(a) else "theirs changed"))
                result[iid] = Entry(t.version, t.tombstone)
                continue
            if t.same(a):
                events.append("43.9 rule 0: ours changed")
                result[iid] = Entry(o.version, o.tombstone)
                continue
            events.append("43.9: both changed, §43.3")
        # Rule 2: a copy's live version survives unless the other's tombstone is later than it and the other
        # copy does not hold the same version.
        def survives(mine: Entry, other: Entry) -> Optional[Version]:
            v = mine.version
            if v is None:
                return None
            if other.tombstone is not None and other.tombstone > v.time and not v.same(other.version):
                return None
            return v
        so, st = survives(o, t), survives(t, o)
        if (so is None and o.version is not None) or (st is None and t.version is not None):
            events.append("rule 2: a version removed by a later deletion")
        # Rules 3 and 4.
        version = _rule3(iid, so, st, CHANGED_ON_BOTH_SIDES, pending, conflicts, events)
        # Rule 1: the later tombstone; a derived one kept only where the id ends with no live version.
        # SPEC-READING: "ends" is taken as the end of this rule (the later steps only remove live versions, and a
        # derived tombstone is never under a live version here), with the other copy's real tombstone then kept.
        if version is not None:
            tomb = _later(*(e.tombstone for e in (o, t) if not e.derived))
        else:
            tomb = _later(o.tombstone, t.tombstone)
        result[iid] = Entry(version, tomb)
    return result


def _read_against_base(s: Entry, b: Entry) -> Entry:
    """§43.6: a side without a tombstone keeps the base's; a side without a tombstone and without a version where
    the base holds one deleted it, at the later of the base version's time + 1 and the base's tombstone."""
    if s.tombstone is not None:
        return s
    if s.version is None and b.version is not None:
        return Entry(None, _later(b.version.time + 1, b.tombstone))
    return Entry(s.version, b.tombstone)


def _merge_with_base(o_map: dict, t_map: dict, b_map: dict, pending: list, conflicts: list, events: list) -> dict:
    result = {}
    # SPEC-READING: the ids are those either side holds (§43.3 "for each id either copy holds"); an id only the base
    # holds (both sides dropped its tombstone at a rewrite) is left out.
    for iid in set(o_map) | set(t_map):
        b = b_map.get(iid, Entry())
        o = _read_against_base(o_map.get(iid, Entry()), b)
        t = _read_against_base(t_map.get(iid, Entry()), b)
        if o.same(t):                                             # 1. the sides' entries the same
            events.append("base 1: the same")
            result[iid] = Entry(o.version, o.tombstone)
        elif o.same(b):                                           # 2. one side's entry the base's: the other's
            events.append("base 2: one side changed")
            result[iid] = Entry(t.version, t.tombstone)
        elif t.same(b):
            events.append("base 2: one side changed")
            result[iid] = Entry(o.version, o.tombstone)
        else:
            # 3. both changed: §43.3 rules 1 and 3, every live version surviving whatever the other's tombstone.
            kind = CHANGED_ON_BOTH_SIDES
            if (o.version is None) != (t.version is None):
                kind = CHANGED_WHERE_DELETED
                conflicts.append(Conflict(kind, iid, None))
            events.append("base 3: " + kind)
            version = _rule3(iid, o.version, t.version, kind, pending, conflicts, events)
            result[iid] = Entry(version, _later(o.tombstone, t.tombstone))
    return result


def _add_copies(result: dict, pending: list, events: list):
    """§43.4: a conflict copy is added only when its id holds nothing after the rules above (a tombstone there: it
    was dismissed; a live version: it is there)."""
    for g, v in pending:
        cid, c = conflict_copy(g, v)
        e = result.get(cid)
        if e is not None and not e.empty:
            events.append("copy not added: " + ("it is there" if e.version is not None else "dismissed"))
            continue
        events.append("copy added")
        result[cid] = Entry(c, None)


# ---------------------------------------------------------------------------------------------
# §43.9 The history two copies share
# ---------------------------------------------------------------------------------------------

@dataclass
class SharedHistory:
    """§43.9: where two copies' logs part. `base` is A, the state ours's replay leaves at `a_end`."""
    d: int                     # the first logical log offset below min(E_o, E_t) where the stored bytes differ
    e_ours: int                # E_o: the end of the last commit ours's replay applied
    e_theirs: int              # E_t
    rewrite_end: int           # R, the same in both
    a_end: Optional[int]       # the greatest commit end e of ours's log with 0 < e <= D and e >= R; None: no A
    base: Optional[Copy]       # A (items and tombstones), or None


def format_version(copy) -> Optional[int]:
    """2 or 3 for a copy `load` opened (the reference readers), None for anything else (a hand-made Copy)."""
    return getattr(copy, "format_version", None)


def first_difference(a: bytes, b: bytes, end: int) -> int:
    """§43.9 condition 2: the first offset below `end` at which a and b differ, or `end` when none does. A byte one
    of them does not hold (the file is shorter: a record §25.5 rebuilds from parity) cannot be read and counts as
    different.

    SPEC-READING: "a byte that cannot be read" is taken as a byte past what the file holds (its logical length by
    the chunk map); a reference reading a file from memory sees no I/O error."""
    n = min(end, len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n                       # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def shared_history(ours, theirs, importing: bool = False) -> Optional[SharedHistory]:
    """§43.9: the history ours and theirs share. None when condition 1 fails (an import, another format version,
    file id, epoch or rewrite end, or a copy that is no file the reference readers opened); otherwise a
    SharedHistory whose `base` is A, or None when condition 3 finds no commit end (§43.3 then applies)."""
    # Condition 1.
    if importing:
        return None
    v_o, v_t = format_version(ours), format_version(theirs)
    # SPEC-READING: "both format version 2, or both 3" — a version 1 THEIRS (read by no reader here, §43: `theirs`
    # may be any version) has no shared history with a version 2 or 3 OURS: upgrading it is a rewrite (§26.7).
    if v_o not in (2, 3) or v_o != v_t:
        return None
    h_o, h_t = ours.header, theirs.header
    # SPEC-READING: the header fields are those of the copy each open chose (§20.3 step 7, §31.4), the only header
    # a reader goes by; the other copy of the header (page or run B, possibly of another epoch) is not compared.
    if (h_o.file_id, h_o.epoch, h_o.rewrite_end) != (h_t.file_id, h_t.epoch, h_t.rewrite_end):
        return None
    r = h_o.rewrite_end
    # Condition 4: each file still holds, as the last 16 bytes before its E, the chain value its replay verified there
    # (the record's last page tag, version 2; its chain tag, version 3): a file changed since it was read, or whose last
    # record's tag is damaged as stored, shares no history.
    for kc in (ours, theirs):
        e = kc.committed_end
        if e > 0 and bytes(kc.stored_log[e - 16:e]) != bytes(kc.head[1]):
            return None
    # Condition 2. E is the end of the last commit the replay applied: `committed_end` in the readers, which is the
    # commit boundary before records set aside (§25.4 rule 2) when the replay stopped there.
    # SPEC-READING: records set aside, an undone transaction and a remnant lie past E and are not compared (D <=
    # min(E_o, E_t)); a copy whose newest records are set aside shares only what lies before them.
    e_o, e_t = ours.committed_end, theirs.committed_end
    # SPEC-READING: "the two logs' bytes, as each file stores them" — each file's logical bytes through its own
    # chunk map (§18.2; version 3: the prefix of its own header run, §30.2), with no repair taken (a byte the reader
    # repaired through parity differs from the other copy's as it is stored, §43.9's damage bullet).
    d = first_difference(ours.stored_log, theirs.stored_log, min(e_o, e_t))
    # Condition 3: commit ends of ours's log — those its replay (§25.2 step 4, §37.2) reached, commit ends of the
    # rewrite's records below R included, which `e >= R` then excludes.
    # SPEC-READING: only OURS's commit ends are looked at, as condition 3 says; that THEIRS's log holds a commit
    # ending at A_end too is what §43.9 derives from the bytes below D being equal, and is not checked (or used).
    ends = [e for e in ours.commit_states if 0 < e <= d and e >= r]
    if not ends:
        return SharedHistory(d, e_o, e_t, r, None, None)
    a_end = max(ends)
    # A: the items and tombstones ours's replay leaves when it stops at A_end (every group followed: the reference
    # readers open version 3 with a full credential and follow every group of the key table).
    state, _records, _head, tombstones = ours.commit_states[a_end]
    return SharedHistory(d, e_o, e_t, r, a_end, Copy(dict(state.items), dict(tombstones)))


def merge(ours, theirs, base=None, importing: bool = False) -> MergeResult:
    """SPEC.md §43: the result of merging `theirs` into `ours` (with `base`, the copy both came from, when known).

    Without a base (and not importing), §43.9: the shared state A at the last commit both copies' logs share
    (`shared_history`), when there is one, settles each id one side has not changed since (rule 0) and §43.3 the
    rest; without A, §43.3 alone. `importing`: §43.1's import (different file ids allowed; never a shared
    history)."""
    shared = None
    if base is None and not importing:
        # §43.9: with A, §43.3's rules with rule 0 first (not §43.6: "with a base given, §43.6's").
        # SPEC-READING: §43.1's carrying of key slots goes "with a base"; A is no base given and holds no slots, so
        # none is carried, as without a base (copies of one epoch hold one header's slots anyway). Not modelled here:
        # the reference compares items and tombstones only. A copy that is no file opened by `load` (a hand-made
        # Copy) has no log to compare: §43.3.
        shared = shared_history(ours, theirs)
    o_map, t_map = entries_of(ours), entries_of(theirs)
    pending: list = []
    conflicts: list = []
    events: list = []
    if shared is not None and shared.base is not None:
        events.append("43.9: a shared history" + (" (A = ours)" if shared.a_end == shared.e_ours else "")
                      + (" (A = theirs)" if shared.a_end == shared.e_theirs else ""))
    elif base is None:
        events.append("43.9: no shared history" if shared is None else "43.9: no commit end below D")
    if shared is not None and shared.base is not None:
        result = _merge_without_base(o_map, t_map, pending, conflicts, events,
                                     entries_of(shared.base))                                  # §43.9
    elif base is None:
        result = _merge_without_base(o_map, t_map, pending, conflicts, events)                  # §43.3
    else:
        result = _merge_with_base(o_map, t_map, entries_of(base), pending, conflicts, events)   # §43.6
    _add_copies(result, pending, events)                                                         # §43.4

    # §43.5: live versions of different ids with one primary key: the newest keeps its id; each other one becomes no
    # live version and a tombstone at the later of its time and the tombstone there, and its conflict copy is made.
    # Repeated while any two share a key; still colliding after 16 rounds: limitReached.
    rounds = 0
    while True:
        by_key: dict = {}
        for iid, e in result.items():
            if e.version is not None:
                by_key.setdefault(K.uniqueness_key(e.version.cls, e.version.attrs), []).append(iid)
        groups = [ids for ids in by_key.values() if len(ids) > 1]
        if not groups:
            break
        if rounds == MAX_ROUNDS:
            raise LimitReached("primary keys still collide after 16 rounds")
        rounds += 1
        events.append(f"43.5 round {rounds}")
        pending = []
        for ids in groups:
            # SPEC-READING: two different ids holding the very same version (equal time and digest) are ordered by
            # id, so that the order stays total.
            ids.sort(key=lambda i: (result[i].version.order, i))
            for iid in ids[:-1]:
                v = result[iid].version
                result[iid] = Entry(None, _later(v.time, result[iid].tombstone))
                pending.append((iid, v))
                conflicts.append(Conflict(PRIMARY_KEY_TAKEN, iid, conflict_copy_id(iid, v)))
        _add_copies(result, pending, events)

    # §43.4: after §43.5, an untouched conflict copy whose version is its item's live version again is removed (a
    # tombstone at the version's time + 1).
    # SPEC-READING: "a tombstone at the version's time + 1" is taken as the later of that and a tombstone already
    # there (a tombstone never moves back elsewhere in §43: rule 1, §43.5).
    for cid in list(result):
        e = result[cid]
        if e.version is None:
            continue
        u = untouched_conflict_copy(cid, e.version)
        if u is None:
            continue
        g, v = u
        live = result.get(g)
        if live is not None and live.version is not None and live.version.same(v):
            events.append("untouched copy removed" + (" (over a tombstone)" if e.tombstone is not None else ""))
            result[cid] = Entry(None, _later(v.time + 1, e.tombstone))
    return MergeResult(result, conflicts, events, shared)


def load(path, credential: dict):
    """Opens a version 2 or 3 file with the reference reader that fits."""
    import kcf_reference_v2 as V2
    import kcf_reference_v3 as V3
    try:
        kc = V2.open_keychain(path, credential)
        kc.format_version = 2
    except K.UnsupportedVersion:
        kc = V3.open_keychain(path, credential)
        kc.format_version = 3
    return kc


def main(argv=None) -> int:
    import argparse
    import json
    p = argparse.ArgumentParser(description="SPEC.md §43 merge, reference: prints the result as JSON")
    p.add_argument("ours")
    p.add_argument("theirs")
    p.add_argument("--base")
    p.add_argument("--import", dest="importing", action="store_true")
    p.add_argument("--password", required=True)
    a = p.parse_args(argv)
    cred = {"password": a.password}
    ours, theirs = load(a.ours, cred), load(a.theirs, cred)
    base = load(a.base, cred) if a.base else None
    r = merge(ours, theirs, base, importing=a.importing)
    sh = r.shared
    print(json.dumps({
        "sharedHistory": None if sh is None else {"D": sh.d, "E_ours": sh.e_ours, "E_theirs": sh.e_theirs,
                                                  "R": sh.rewrite_end, "A_end": sh.a_end},
        "items": [K.item_to_json(r.items[i]) for i in sorted(r.items)],
        "tombstones": {i.hex(): t for i, t in sorted(r.tombstones.items())},
        "conflicts": [{"kind": c.kind, "id": c.item_id.hex(), "copy": c.copy_id.hex() if c.copy_id else None}
                      for c in r.conflicts],
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Pinned heads of format version 3 (SPEC.md §15.4, §37.5), written from SPEC.md's text alone.

A version 3 head is (epoch, sequence, chain tag) after the file's last commit and, for every group that commit's
heads name, (key id, start epoch, group sequence, last tag) as that commit states it. Its text form (§37.5, an API
matter) is §15.4's `epoch.sequence.chain` followed by `/k.start.sequence.tag` per group in increasing key id:
decimal numbers, the chain and each tag as 32 hexadecimal digits. A head that names no group is a version 1 or 2
head (or one made by hand) and is checked by §15.4's rule alone.

    pin = parse_head("3.7.00ff…/1.3.2.ab…/2.1.5.cd…")   # InvalidParameter when the text is malformed
    head_of(kc)                                          # the file's own head (kc: kcf_reference_v3.open_keychain's)
    format_head(head_of(kc))                             # its text form
    check_contains(kc, pin)                              # PinNotContained (a kcf_reference_v2.RolledBack) or None

The functions here read only what an opened keychain (kcf_reference_v3.open_keychain) already holds: its header's
epoch, its head, its applied records and the log as read. The page tags of every group's chain and every commit's
heads are readable with K_log alone (§35.2, §35.7), so a scoped opener checks the groups it does not hold as far
as those show (§37.5 step 3, within step 2's limit).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import kcf_reference_v2 as V2  # noqa: E402
import records_v3 as R  # noqa: E402
from kcf_reference import KCFError  # noqa: E402

U64_MAX = (1 << 64) - 1
TAG_BYTES = 16
_DECIMAL = re.compile(r"[0-9]+")
_HEX_TAG = re.compile(r"[0-9a-fA-F]{32}")


class InvalidParameter(KCFError):
    """A pin no file could have as its head, or text that does not spell one (SPEC.md §15.4: `invalidParameter`,
    naming the part, refused before the file is read — a mistake of the caller, not evidence against the file).
    `part` names the part of the text that is wrong."""

    def __init__(self, part: str, message: str):
        super().__init__(f"invalid pinned head: {part}: {message}")
        self.part = part


class PinNotContained(V2.RolledBack):
    """The file does not contain the pinned head (SPEC.md §15.4, §37.5): `rolledBack`. `expected` is the pin's text,
    `found` the file's own head's text, `reason` which rule refused (the SPEC does not require it to be said)."""

    def __init__(self, expected: str, found: str, reason: str):
        KCFError.__init__(self, f"rolled back: the file does not contain the pinned head ({reason}); pinned "
                                f"{expected}, the file's head is {found}")
        self.expected = expected
        self.found = found
        self.reason = reason


@dataclass(frozen=True)
class GroupHead:
    """One group's part of a version 3 head: its key id, the start epoch of its chain, the group sequence of its last
    page (0: no page in the file) and that page's tag (for group sequence 0 the group's start value)."""
    key_id: int
    start_epoch: int
    group_sequence: int
    last_tag: bytes


@dataclass(frozen=True)
class PinnedHead:
    """(epoch, sequence, chain value) after the last commit, and every group that commit names, in increasing key
    id (empty for a version 1 or 2 head)."""
    epoch: int
    sequence: int
    chain: bytes
    groups: tuple = ()

    def group(self, key_id: int):
        """This head's part for key_id, or None."""
        return next((g for g in self.groups if g.key_id == key_id), None)


# ---------------------------------------------------------------------------------------------
# The text form
# ---------------------------------------------------------------------------------------------

def _decimal(text: str, part: str) -> int:
    """A decimal number of ASCII digits only (no sign, no spaces, no underscores) that fits a u64; else
    InvalidParameter naming `part`. SPEC-GAP: leading zeros are accepted (the SPEC says only "decimal numbers")."""
    if not _DECIMAL.fullmatch(text):
        raise InvalidParameter(part, f"{text!r} is not a decimal number")
    value = int(text)
    if value > U64_MAX:
        raise InvalidParameter(part, f"{text} does not fit 64 bits")
    return value


def _tag(text: str, part: str) -> bytes:
    """16 bytes written as exactly 32 hexadecimal digits (either case, SPEC-GAP); else InvalidParameter naming
    `part` (§15.4: a chain value or a group's tag that is not 16 bytes)."""
    if not _HEX_TAG.fullmatch(text):
        raise InvalidParameter(part, f"{text!r} is not {2 * TAG_BYTES} hexadecimal digits ({TAG_BYTES} bytes)")
    return bytes.fromhex(text)


def _fields(text: str, count: int, part: str) -> list:
    """text split at '.' into exactly `count` fields; else InvalidParameter naming `part`."""
    fields = text.split(".")
    if len(fields) != count:
        raise InvalidParameter(part, f"{text!r} has {len(fields)} dot-separated fields, not {count}")
    return fields


def _group_head(text: str, index: int, previous_key_id: int) -> GroupHead:
    """One `k.start.sequence.tag` part (the index-th, from 1), its key id in 1 … 255 and above previous_key_id."""
    key_id, start, sequence, tag = _fields(text, 4, f"group {index}")
    k = _decimal(key_id, f"group {index} key id")
    if not 1 <= k <= 255:
        raise InvalidParameter(f"group {index} key id", f"{k} is not in 1 … 255")
    if k <= previous_key_id:
        raise InvalidParameter(f"group {index} key id", f"{k} does not follow key id {previous_key_id} in increasing "
                                                         f"order")
    return GroupHead(k, _decimal(start, f"group {index} start epoch"),
                     _decimal(sequence, f"group {index} group sequence"), _tag(tag, f"group {index} tag"))


def parse_head(text: str) -> PinnedHead:
    """The text form `epoch.sequence.chain` then `/k.start.sequence.tag` per group (§15.4, §37.5), read strictly:
    exactly those separators, decimal u64 numbers, 32 hexadecimal digits per chain value and tag, key ids 1 … 255
    strictly increasing. Nothing else is refused: SPEC-GAP, a pin whose start epochs lie after its epoch, or of epoch
    0, is taken as given (§15.4 names only the lengths and the key ids as heads no file could have), and the file
    then does not contain it or does, as the rules say. Raises InvalidParameter naming the wrong part."""
    if not isinstance(text, str) or text == "":
        raise InvalidParameter("head", "empty")
    parts = text.split("/")
    epoch, sequence, chain = _fields(parts[0], 3, "head")
    groups, previous = [], 0
    for index, part in enumerate(parts[1:], start=1):
        group = _group_head(part, index, previous)
        groups.append(group)
        previous = group.key_id
    return PinnedHead(_decimal(epoch, "epoch"), _decimal(sequence, "sequence"), _tag(chain, "chain"),
                      tuple(groups))


def format_head(head: PinnedHead) -> str:
    """The text form of `head` (decimal numbers without leading zeros, lowercase hexadecimal); parse_head reads it
    back as the same head."""
    text = f"{head.epoch}.{head.sequence}.{head.chain.hex()}"
    return text + "".join(f"/{g.key_id}.{g.start_epoch}.{g.group_sequence}.{g.last_tag.hex()}" for g in head.groups)


# ---------------------------------------------------------------------------------------------
# What the opened file shows
# ---------------------------------------------------------------------------------------------

def _record_bytes(kc, info) -> bytes:
    """An applied record's bytes in the log as read (repairs applied)."""
    return bytes(kc.log[info.offset:info.offset + info.length])


def last_commit_heads(kc) -> dict:
    """{key id: GroupHead} as the heads segment of the file's last applied commit states them (§35.7), opened under
    K_heads (every holder of K_log, full or scoped, reads them). Empty when no commit was applied. SPEC-GAP (README
    "Pinned heads" 5): "the file's last commit" is the last applied one; a newest commit set aside does not count."""
    info = next((r for r in reversed(kc.records) if r.kind == V2.KIND_COMMIT), None)
    if info is None:
        return {}
    record = _record_bytes(kc, info)
    heads_segment = R.split(record)["segments"][-1]
    box = record[heads_segment["page"][0]:heads_segment["page"][1]]
    heads = R.open_heads(box, info.offset, kc.keys.k_heads, kc.header.file_id, kc.header.epoch, info.sequence)
    return {k: GroupHead(k, h["startEpoch"], h["groupSequence"], h["lastTag"]) for k, h in heads.items()}


def page_tags_by_group(kc) -> dict:
    """{key id: [page tag of page 1, page 2, …]}: every group segment of the applied records from log offset 0, in
    log order (within one file a group's chain is whole, §35.5, so the j-th segment of k is page j of k's chain).
    A page tag is the last 16 bytes of the segment's page box, readable without the group's key (§35.2)."""
    tags: dict = {}
    for info in kc.records:
        record = _record_bytes(kc, info)
        for segment in R.split(record)["segments"]:
            if segment["keyID"] != 0:
                tags.setdefault(segment["keyID"], []).append(record[segment["page"][1] - TAG_BYTES:segment["page"][1]])
    return tags


def head_of(kc) -> PinnedHead:
    """The file's own head: its epoch, the (sequence, chain value) after its last applied commit, and every group
    that commit's heads name (§37.5). What a caller stores and pins at the next open."""
    heads = last_commit_heads(kc)
    return PinnedHead(kc.header.epoch, kc.head[0], bytes(kc.head[1]), tuple(heads[k] for k in sorted(heads)))


# ---------------------------------------------------------------------------------------------
# The rules
# ---------------------------------------------------------------------------------------------

def _version_2_rule(kc, pin: PinnedHead):
    """§15.4: why the file does not contain the pin's (epoch, sequence, chain value), or None when it does — a later
    epoch; or the same epoch, and replay reached a record of the pin's sequence (sequence 0: before any record)
    whose chain value (C0) is the pin's."""
    epoch = kc.header.epoch
    if epoch > pin.epoch:
        return None
    if epoch < pin.epoch:
        return f"the file's epoch {epoch} is before the pinned epoch {pin.epoch}"
    if pin.sequence == 0:
        return None if bytes(kc.keys.c0) == pin.chain else "the pinned chain value at sequence 0 is not the file's C0"
    # SPEC-GAP (README "Pinned heads" 4): "replay reaches a record" — an applied record, a part of a committed
    # transaction included; a record set aside, a remnant or an undone transaction is not reached.
    reached = next((r for r in kc.records if r.sequence == pin.sequence), None)
    if reached is None:
        return f"replay does not reach a record of sequence {pin.sequence}"
    if bytes(reached.chain) != pin.chain:
        return f"the chain value after record {pin.sequence} is not the pinned one (another record there: a fork)"
    return None


def _group_rule(pinned: GroupHead, head, page_tags: list, pin_epoch: int):
    """§37.5 steps 1 – 3 for one group the pin names, in a file of a later epoch: why the file does not contain it,
    or None. `head`: the file's last commit's head for the group (None: not named); `page_tags`: the page tags of
    the group's chain in the file, page 1 first."""
    k = pinned.key_id
    if head is None:
        return f"the last commit names no head for group {k} (the group dropped, or an older key table put back)"
    if head.start_epoch > pin_epoch:
        return None                                              # step 2: the chain began anew after the pin
    if head.start_epoch != pinned.start_epoch:
        return f"group {k}'s chain starts at epoch {head.start_epoch}, the pin's at {pinned.start_epoch}"
    if head.group_sequence < pinned.group_sequence:
        return f"group {k} has {head.group_sequence} pages, fewer than the pinned {pinned.group_sequence}"
    if pinned.group_sequence == 0:
        # SPEC-GAP (README "Pinned heads" 7): the pin's 0 and the file's above 0 compares nothing more.
        if head.group_sequence == 0 and head.last_tag != pinned.last_tag:
            return f"group {k}'s start value is not the pinned one"
        return None
    if len(page_tags) < pinned.group_sequence or page_tags[pinned.group_sequence - 1] != pinned.last_tag:
        return f"group {k}'s page {pinned.group_sequence} does not have the pinned tag"
    return None


def why_not_contained(kc, pin: PinnedHead):
    """Why the opened file does not contain the pin (§15.4, and §37.5 when the file's epoch is later than the pin's
    and the pin names groups), or None when it does."""
    reason = _version_2_rule(kc, pin)
    # §37.5: the groups only "if the file's epoch is greater than P.epoch" (README "Pinned heads" 6: in the same
    # epoch the chain value binds every page tag).
    if reason is not None or kc.header.epoch == pin.epoch or not pin.groups:
        return reason
    heads = last_commit_heads(kc)
    tags = page_tags_by_group(kc)
    for pinned in pin.groups:
        reason = _group_rule(pinned, heads.get(pinned.key_id), tags.get(pinned.key_id, []), pin.epoch)
        if reason is not None:
            return reason
    return None


def check_contains(kc, pin: PinnedHead):
    """Raises PinNotContained (`rolledBack`) when the opened file does not contain the pin; returns None when it
    does."""
    reason = why_not_contained(kc, pin)
    if reason is not None:
        raise PinNotContained(format_head(pin), format_head(head_of(kc)), reason)

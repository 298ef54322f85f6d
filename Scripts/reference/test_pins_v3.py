"""Pinned heads of format version 3 (SPEC.md §15.4, §37.5) in the reference reader: the text form, the file's own
head, and open_keychain(..., pin=) against files the reference writer made — later legitimate writes and rewrites keep
the pin; older copies put back, compacted past the pinned epoch by a scoped holder, or with an older key table, are
refused (rolledBack); malformed pins are a caller's mistake (InvalidParameter), refused before the file is read.

    cd Scripts/reference && python3 -m pytest -q test_pins_v3.py
"""

import itertools
import json
import os
import random
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import header_v3 as H  # noqa: E402
import kcf_reference as K  # noqa: E402
import kcf_reference_v2 as V2  # noqa: E402
import kcf_reference_v3 as V3  # noqa: E402
import pins_v3 as P  # noqa: E402
import records_v3 as R  # noqa: E402

FULL = {"password": "correct horse battery staple"}
HOLDER_A = {"password": "holder of A"}          # scoped to key id 2 (GA)
HOLDER_B = {"password": "holder of B"}          # scoped to key id 3 (GB)
HOLDER_DA = {"password": "holder of the default group and A"}    # scoped to key ids 1 and 2
HOLDER_ALL = {"password": "holder of every group, without the root"}   # scoped to key ids 1, 2 and 3
GA, GB = "group-0", "group-1"
EVERYONE = (FULL, HOLDER_A, HOLDER_B)


def clock():
    values = iter(range(1_700_000_000_000, 1_800_000_000_000, 1000))
    return lambda: next(values)


def new_file(seed: int = 21) -> V3.WriterV3:
    """A file of the default group (key id 1), A (2) and B (3), a full password, one scoped to each of A and B, one to
    the default group and A, one to all three (no root: it cannot add a group), an item in each group: the full
    holder's writer."""
    w = V3.WriterV3.create(None, FULL["password"], iterations=1000, rng=random.Random(seed), clock=clock(),
                           extra_groups=2, scoped_slots=[(HOLDER_A["password"], [2]), (HOLDER_B["password"], [3]),
                                                         (HOLDER_DA["password"], [1, 2]),
                                                         (HOLDER_ALL["password"], [1, 2, 3])])
    for n, group in enumerate(("", GA, GB)):
        put(w, f"first {n}", group)
    return w


SEEDS = itertools.count(1000)


def holder(data: bytes, credential: dict, seed=None) -> V3.WriterV3:
    """A writer opened on `data` (in memory) with a full or a scoped credential; each writer its own seed unless one
    is given, so that no two writers draw the same item ids."""
    seed = next(SEEDS) if seed is None else seed
    w = V3.WriterV3.open(bytes(data), credential, rng=random.Random(seed), clock=clock())
    w.path = None
    return w


def put(w: V3.WriterV3, account: str, group: str = "") -> bytes:
    """One commit adding one item in `group`."""
    return w.add(K.GENERIC_PASSWORD, {"account": account, "service": "s", "accessGroup": group}, account.encode())


def pin_of(data: bytes, credential: dict = FULL) -> str:
    """The file's own head text, as an application stores it after its writes."""
    return V3.head_text(V3.open_keychain(bytes(data), credential))


def outcome(data: bytes, credential: dict, pin: str) -> str:
    """"opens" or "rolledBack" (any other error propagates)."""
    try:
        V3.open_keychain(bytes(data), credential, pin=pin)
        return "opens"
    except V2.RolledBack:
        return "rolledBack"


def outcomes(data: bytes, pin: str, credentials=EVERYONE) -> list:
    return [outcome(data, c, pin) for c in credentials]


def compacted(data: bytes, credential: dict, times: int = 1) -> bytes:
    """data rewritten `times` times by the holder of `credential` (a full or a scoped compaction)."""
    for _ in range(times):
        w = holder(data, credential)
        w.compact()
        data = w.data
    return data


def without_groups(pin: str) -> str:
    """A version 2 style pin: the text before the first group part."""
    return pin.split("/")[0]


# ---------------------------------------------------------------------------------------------
# The text form and the file's own head
# ---------------------------------------------------------------------------------------------

def test_head_text_names_every_group_the_last_commit_names_and_reads_back():
    w = new_file()
    kc = V3.open_keychain(w.data, FULL)
    text = V3.head_text(kc)
    head = P.parse_head(text)
    assert P.format_head(head) == text
    assert (head.epoch, head.sequence, head.chain) == (1, kc.head[0], bytes(kc.head[1]))
    assert [g.key_id for g in head.groups] == [1, 2, 3]
    assert all(g.start_epoch == 1 and g.group_sequence == 1 for g in head.groups)
    assert text.count("/") == 3 and text.split("/")[0] == f"1.{kc.head[0]}.{bytes(kc.head[1]).hex()}"


def test_every_credential_sees_the_same_head_text():
    """§37.5: the same for a full and a scoped holder."""
    w = new_file()
    assert pin_of(w.data, FULL) == pin_of(w.data, HOLDER_A) == pin_of(w.data, HOLDER_B)


def test_a_group_without_a_page_is_named_at_group_sequence_0_with_its_start_value():
    """A (key id 2) never gets a page; B's holder compacts, carrying A's head (start epoch 1, group sequence 0, its
    start value) into epoch 2. §37.5 step 3: the pin's group sequence 0 and the file's 0, so the tags must be equal —
    a pin with another tag for A is refused, the true one opens."""
    w = V3.WriterV3.create(None, FULL["password"], iterations=1000, rng=random.Random(3), clock=clock(),
                           extra_groups=2, scoped_slots=[(HOLDER_A["password"], [2]), (HOLDER_B["password"], [3])])
    put(w, "default", "")
    put(w, "B", GB)
    head = P.parse_head(pin_of(w.data))
    assert [(g.key_id, g.start_epoch, g.group_sequence) for g in head.groups] == [(1, 1, 1), (2, 1, 0), (3, 1, 1)]
    other_tag = P.format_head(P.PinnedHead(head.epoch, head.sequence, head.chain,
                                           (head.groups[0], P.GroupHead(2, 1, 0, bytes(16)), head.groups[2])))
    rewritten = compacted(w.data, HOLDER_B)
    assert P.parse_head(pin_of(rewritten)).group(2) == head.group(2)            # carried unchanged
    assert outcomes(rewritten, P.format_head(head)) == ["opens"] * 3
    assert outcomes(rewritten, other_tag) == ["rolledBack"] * 3
    assert outcomes(w.data, other_tag) == ["opens"] * 3          # the same epoch: §15.4's rule alone


C0_LENGTH_TEXT = "0" * 32
MALFORMED = {
    "empty": "",
    "two fields": "1.2",
    "four fields": "1.2.3." + C0_LENGTH_TEXT,
    "chain short": "1.2." + "0" * 31,
    "chain long": "1.2." + "0" * 33,
    "chain not hex": "1.2." + "g" * 32,
    "sign": "+1.2." + C0_LENGTH_TEXT,
    "negative": "-1.2." + C0_LENGTH_TEXT,
    "space inside": "1. 2." + C0_LENGTH_TEXT,
    "underscore": "1_0.2." + C0_LENGTH_TEXT,
    "not ascii digits": "\u0661.2." + C0_LENGTH_TEXT,
    "epoch past u64": f"{1 << 64}.2." + C0_LENGTH_TEXT,
    "empty group": "1.2." + C0_LENGTH_TEXT + "/",
    "group of three fields": "1.2." + C0_LENGTH_TEXT + "/1.1.1",
    "group key id 0": "1.2." + C0_LENGTH_TEXT + "/0.1.1." + C0_LENGTH_TEXT,
    "group key id 256": "1.2." + C0_LENGTH_TEXT + "/256.1.1." + C0_LENGTH_TEXT,
    "key ids repeated": "1.2." + C0_LENGTH_TEXT + "/1.1.1." + C0_LENGTH_TEXT + "/1.1.1." + C0_LENGTH_TEXT,
    "key ids decreasing": "1.2." + C0_LENGTH_TEXT + "/2.1.1." + C0_LENGTH_TEXT + "/1.1.1." + C0_LENGTH_TEXT,
    "group tag short": "1.2." + C0_LENGTH_TEXT + "/1.1.1." + "0" * 30,
    "group sequence past u64": "1.2." + C0_LENGTH_TEXT + f"/1.1.{1 << 64}." + C0_LENGTH_TEXT,
    "other separator": "1.2." + C0_LENGTH_TEXT + ";1.1.1." + C0_LENGTH_TEXT,
}


@pytest.mark.parametrize("text", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_pin_is_an_invalid_parameter_before_the_file_is_read(tmp_path, text):
    """§15.4: a pin no file could have as its head is a mistake of the caller: invalidParameter, not rolledBack,
    and refused before the file is read (here: a path that does not exist)."""
    with pytest.raises(P.InvalidParameter):
        V3.open_keychain(str(tmp_path / "no such file.kcf"), FULL, pin=text)


def test_well_formed_pins_parse():
    """Uppercase hexadecimal, leading zeros, 255 groups, and numbers up to 2⁶⁴ − 1 spell heads (SPEC-GAP choices)."""
    top = (1 << 64) - 1
    assert P.parse_head(f"{top}.{top}." + "AB" * 16).chain == bytes([0xAB]) * 16
    assert P.parse_head("007.0." + C0_LENGTH_TEXT).epoch == 7
    many = "1.2." + C0_LENGTH_TEXT + "".join(f"/{k}.1.0." + C0_LENGTH_TEXT for k in range(1, 256))
    assert len(P.parse_head(many).groups) == 255


# ---------------------------------------------------------------------------------------------
# Legitimate writes and rewrites keep the pin
# ---------------------------------------------------------------------------------------------

def test_the_pin_opens_its_own_file_and_every_later_append():
    w = new_file()
    pin = pin_of(w.data)
    assert outcomes(w.data, pin) == ["opens"] * 3
    put(w, "later, full", GB)
    a = holder(w.data, HOLDER_A)
    put(a, "later, by A", GA)
    b = holder(a.data, HOLDER_B)
    with b.transaction() as t:
        for n in range(3):
            t.add(K.GENERIC_PASSWORD, {"account": f"t{n}", "service": "s", "accessGroup": GB}, b"t")
    assert outcomes(b.data, pin) == ["opens"] * 3


def test_legitimate_rewrites_keep_an_old_pin():
    """Full compaction, scoped compactions by each group's holder and appends between them: every pin taken along
    the way still opens the newest file, for every credential."""
    w = new_file()
    pins, data = [pin_of(w.data)], w.data
    for n, (credential, group) in enumerate(((HOLDER_A, GA), (FULL, ""), (HOLDER_B, GB), (HOLDER_A, GA),
                                             (FULL, GB))):
        data = compacted(data, credential)
        pins.append(pin_of(data, credential))
        h = holder(data, credential)
        put(h, f"after compaction {n}", group)
        data = h.data
        pins.append(pin_of(data, HOLDER_B))
    assert P.parse_head(pins[-1]).epoch == 6
    for pin in pins:
        assert outcomes(data, pin) == ["opens"] * 3, pin


def test_a_pin_from_before_a_group_was_added_still_opens():
    w = new_file()
    pin = pin_of(w.data)
    put(w, "in a new group", "com.example.new")              # adds key id 4 by a rewrite (epoch 2)
    assert [g.key_id for g in P.parse_head(pin_of(w.data)).groups] == [1, 2, 3, 4]
    assert outcomes(w.data, pin) == ["opens"] * 3


# ---------------------------------------------------------------------------------------------
# Older copies put back
# ---------------------------------------------------------------------------------------------

def test_an_older_copy_put_back_is_refused():
    w = new_file()
    older = w.data
    put(w, "newer", GA)
    pin = pin_of(w.data)
    assert outcomes(older, pin) == ["rolledBack"] * 3                   # same epoch, fewer records
    compacted_once = compacted(w.data, FULL)
    pin_after = pin_of(compacted_once)
    assert outcomes(w.data, pin_after) == ["rolledBack"] * 3            # an earlier epoch
    assert outcomes(older, pin_after) == ["rolledBack"] * 3
    assert outcomes(w.data, without_groups(pin_after)) == ["rolledBack"] * 3     # §15.4 alone: an earlier epoch


def test_a_fork_at_the_pinned_sequence_is_refused():
    w = new_file()
    older = w.data
    put(w, "the pinned write", GA)
    pin = pin_of(w.data)
    fork = holder(older, FULL, seed=77)
    put(fork, "another write at the same sequence", GA)
    assert P.parse_head(pin_of(fork.data)).sequence == P.parse_head(pin).sequence
    assert outcomes(fork.data, pin) == ["rolledBack"] * 3


def test_a_pin_at_sequence_0_is_c0():
    w = new_file()
    kc = V3.open_keychain(w.data, FULL)
    assert outcome(w.data, FULL, f"1.0.{bytes(kc.keys.c0).hex()}") == "opens"
    assert outcome(w.data, FULL, f"1.0.{bytes(16).hex()}") == "rolledBack"


def scoped_rollback(changes_after_the_copy: str):
    """The older copy (before the pin) put back and compacted by A's holder past the pinned epoch. Between the copy
    and the pin, `changes_after_the_copy` ("B" or "A") added pages to that group. Returns (pin, the rolled-back
    file)."""
    w = new_file()
    older = w.data
    if changes_after_the_copy == "B":
        b = holder(w.data, HOLDER_B)
        put(b, "B's page after the copy", GB)
        data = b.data
    else:
        a = holder(w.data, HOLDER_A)
        put(a, "A's page after the copy", GA)
        data = a.data
    pin = pin_of(data)
    return pin, compacted(older, HOLDER_A)


def test_an_older_copy_compacted_past_the_pinned_epoch_by_a_scoped_holder_is_refused():
    """§37.5: the epoch passes §15.4's rule, but B's chain (start epoch 1, carried) has fewer pages than the pin's:
    step 3 refuses, for the full holder, B's holder, and A's holder too (it compares B's page tags, readable without
    K_B). Without the groups (a version 2 pin) the rollback passes."""
    pin, rolled_back = scoped_rollback("B")
    assert P.parse_head(pin_of(rolled_back, HOLDER_A)).epoch == P.parse_head(pin).epoch + 1
    assert outcomes(rolled_back, pin) == ["rolledBack"] * 3
    assert outcomes(rolled_back, without_groups(pin)) == ["opens"] * 3


def test_a_group_rolled_back_by_its_own_holder_passes_step_2():
    """§37.5 step 2 and "what a pin still does not catch": A's holder compacting an older copy begins A's chain
    anew after the pin (a true start value, made with K_A), so A's own rollback passes every pin — the full
    holder's, A's, B's."""
    pin, rolled_back = scoped_rollback("A")
    assert outcomes(rolled_back, pin) == ["opens"] * 3


def test_an_older_copy_compacted_into_the_pinned_epoch_is_refused_by_the_version_2_rule():
    """The rolled-back file reaches the pin's epoch, not past it: §15.4 (the same epoch) asks for the pinned record,
    which the rewrite does not hold."""
    w = new_file()
    older = w.data
    data = compacted(w.data, FULL)
    b = holder(data, HOLDER_B)
    put(b, "B after the compaction", GB)
    pin = pin_of(b.data)
    rolled_back = compacted(older, HOLDER_A)                          # epoch 2, as the pin
    assert P.parse_head(pin_of(rolled_back)).epoch == P.parse_head(pin).epoch
    assert outcomes(rolled_back, pin) == ["rolledBack"] * 3


def test_a_rollback_of_a_carried_chain_past_two_epochs_is_refused():
    """B's chain is carried by A's compactions (start epoch 1 in the header's chain starts); an older copy compacted
    twice by A lies two epochs past an old pin and one past a newer one: both refuse for B's missing page."""
    w = new_file()
    data = compacted(w.data, HOLDER_A)                                 # B carried, start epoch 1
    older = data
    b = holder(data, HOLDER_B)
    put(b, "B's page after the copy", GB)
    pin = pin_of(b.data)
    rolled_back = compacted(older, HOLDER_A, times=2)
    assert P.parse_head(pin_of(rolled_back)).epoch == P.parse_head(pin).epoch + 2
    assert outcomes(rolled_back, pin) == ["rolledBack"] * 3


def test_a_fork_of_a_group_compacted_past_the_pinned_epoch_is_refused():
    """The pin is taken after B's page n + 1. A fork of the older copy holds another page n + 1 of B (written by a
    holder of K_B); A's holder compacts the fork into epoch 2, carrying B's chain from epoch 1 with as many pages as
    the pin's: §37.5 step 3 refuses for the page tag at the pin's group sequence."""
    w = new_file()
    older = w.data
    put(w, "B's pinned page", GB)
    pin = pin_of(w.data)
    fork = holder(older, HOLDER_B)
    put(fork, "B's other page", GB)
    rolled_back = compacted(fork.data, HOLDER_A)
    assert P.parse_head(pin_of(rolled_back)).group(3).group_sequence == P.parse_head(pin).group(3).group_sequence
    assert outcomes(rolled_back, pin) == ["rolledBack"] * 3
    assert outcomes(compacted(w.data, HOLDER_A), pin) == ["opens"] * 3


def test_a_group_emptied_and_its_older_chain_put_back_is_refused():
    """B's items are deleted and the full holder compacts past the tombstones' horizon (epoch 2): the pin names B at (2, 0, its start value). The
    older copy, where B had pages in a chain begun at epoch 1, compacted twice by A's holder (epoch 3), carries B
    from epoch 1: §37.5 step 3 refuses the start epoch (1, not the pin's 2). The rollback is compacted by the holder
    of the default group and A, so that B is the only group carried (the others begin anew: step 2)."""
    w = new_file()
    older = w.data
    for item_id, item in sorted(V3.open_keychain(w.data, FULL).items.items()):
        if item.attributes.get("accessGroup") == GB:
            w.delete(item_id)
    later = V3.WriterV3.open(w.data, FULL, rng=random.Random(31), clock=lambda: 1_700_000_000_000 + 100 * 86_400_000)
    later.path = None
    later.compact()                                        # 100 days on: past the horizon, no tombstone kept
    pin = pin_of(later.data)
    assert P.parse_head(pin).group(3).start_epoch == 2 and P.parse_head(pin).group(3).group_sequence == 0
    rolled_back = compacted(older, HOLDER_DA, times=2)
    assert P.parse_head(pin_of(rolled_back)).group(3).start_epoch == 1
    assert outcomes(rolled_back, pin) == ["rolledBack"] * 3


def test_a_group_dropped_by_putting_back_an_older_key_table_is_refused():
    """§37.5 step 1: the pin names key id 4, added by a rewrite (epoch 2). A's holder puts back the older file (its
    older key table and slots, K_log unchanged) and compacts it twice (epoch 3): the last commit names no head for
    key id 4. Refused for the full holder and for A's and B's holders; the pin from before the group still opens. The
    same when the holder of every group of the older table (but not the root) compacts it."""
    w = new_file()
    older = w.data
    pin_before = pin_of(w.data)
    put(w, "in a new group", "com.example.new")
    pin = pin_of(w.data)
    for compactor in (HOLDER_A, HOLDER_ALL):     # HOLDER_ALL: every other group begins anew, step 1 alone refuses
        rolled_back = compacted(older, compactor, times=2)
        assert P.parse_head(pin_of(rolled_back)).epoch == 3
        assert 4 not in [g.key_id for g in P.parse_head(pin_of(rolled_back)).groups]
        assert outcomes(rolled_back, pin) == ["rolledBack"] * 3
        assert outcomes(rolled_back, pin_before) == ["opens"] * 3


def false_new_start_of_b(head_of_b: tuple):
    """A tamper for a scoped rewrite by a holder without K_B (it holds K_log, so K_chain and K_heads): the rewrite's
    commit names B (key id 3) at head_of_b = (start epoch, group sequence, tag) instead of what it carried."""
    def tamper(record: bytes, previous: bytes, keys) -> bytes:
        frame = R.split(record)
        if frame["kind"] != V2.KIND_COMMIT:
            return record
        segments = [record[x["start"]:x["secrets"][1]] for x in frame["segments"]]
        heads_box = segments[-1][R.SEGMENT_HEADER:]
        heads = R.open_heads(heads_box, 0, keys.k_heads, keys.file_id, keys.epoch, frame["sequence"])
        heads[3] = {"startEpoch": head_of_b[0], "groupSequence": head_of_b[1], "lastTag": head_of_b[2]}
        aad = R.heads_aad(keys.file_id, keys.epoch, frame["sequence"])
        box = R.seal(keys.k_heads, R.heads_plaintext(heads), aad, random.Random(1))
        segments[-1] = R.u8(0) + R.u32(len(box)) + R.u32(len(box)) + box
        return R.assemble(frame["kind"], frame["sequence"], frame["part"], segments, previous, keys.k_chain)
    return tamper


def without_chain_start_of_b(w: V3.WriterV3) -> bytes:
    """w's file with both header runs made again without B's chain start entry (MAC under K_header, from K_log), so
    that the header starts B's chain at its own epoch."""
    raw = w.header.raw
    ph = H.parse_header(raw)
    header = H.build_header(ph["fileID"], ph["epoch"], ph["salt"], ph["rewriteEnd"], R.rd64(raw, 80), ph["headChain"],
                            R.rd32(raw, 104), ph["table"], [b for _, b, _ in ph["slots"]], w.keys.log_key,
                            tuple((k, e) for k, e in ph["chainStarts"] if k != 3))
    run = H.run_of(header)
    assert H.page_count(len(header)) == H.page_count(len(raw))
    data = bytearray(w.data)
    data[0:len(run)] = run
    b_at = H.run_b_offset(H.page_count(len(header)))
    data[b_at:b_at + len(run)] = run
    return bytes(data)


def test_a_scoped_readers_pin_does_not_see_a_false_new_start_of_a_group_it_does_not_hold():
    """§37.5 step 2's limit, §40: B has no page in the older copy; B's holder adds one and the head is pinned. A's
    holder (K_log and K_A) puts the copy back and compacts it, writing B's head as a chain begun anew in epoch 2 (a
    false start value) and no chain start entry for B. A's own pin passes (step 2: it cannot tell the start value);
    holders of K_B refuse the file itself (corrupted: B's head is not its start value). The honest compaction of the
    copy (B carried from epoch 1 at group sequence 0) is refused for every credential (step 3)."""
    w = V3.WriterV3.create(None, FULL["password"], iterations=1000, rng=random.Random(8), clock=clock(),
                           extra_groups=2, scoped_slots=[(HOLDER_A["password"], [2]), (HOLDER_B["password"], [3])])
    put(w, "default", "")
    put(w, "A", GA)
    older = w.data
    b = holder(w.data, HOLDER_B)
    put(b, "B's first page", GB)
    pin = pin_of(b.data)
    assert outcomes(compacted(older, HOLDER_A), pin) == ["rolledBack"] * 3
    a = holder(older, HOLDER_A)
    a.tamper = false_new_start_of_b((2, 0, bytes(range(16))))
    a.compact()
    forged = without_chain_start_of_b(a)
    assert P.parse_head(pin_of(forged, HOLDER_A)).group(3) == P.GroupHead(3, 2, 0, bytes(range(16)))
    assert outcome(forged, HOLDER_A, pin) == "opens"
    for credential in (FULL, HOLDER_B):
        with pytest.raises(K.Corrupted):
            V3.open_keychain(forged, credential, pin=pin)


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------

def run(*args):
    return subprocess.run([sys.executable, os.path.join(HERE, "kcf_reference_v3.py"), *args],
                          capture_output=True, text=True)


def test_cli_dump_expected_head(tmp_path):
    w = new_file()
    older, path = tmp_path / "older.kcf", tmp_path / "f.kcf"
    older.write_bytes(w.data)
    put(w, "newer", GB)
    path.write_bytes(w.data)
    dumped = run("dump", str(path), "--password", HOLDER_A["password"])
    assert dumped.returncode == 0, dumped.stderr
    head = json.loads(dumped.stdout)["headText"]
    assert head == pin_of(w.data)
    again = run("dump", str(path), "--password", FULL["password"], "--expected-head", f"  {head}\n")
    assert again.returncode == 0 and json.loads(again.stdout)["headText"] == head
    refused = run("dump", str(older), "--password", FULL["password"], "--expected-head", head)
    assert refused.returncode == 8
    assert json.loads(refused.stderr)["error"] == "RolledBack" and json.loads(refused.stderr)["expected"] == head
    malformed = run("dump", str(path), "--password", FULL["password"], "--expected-head", head + "/")
    assert malformed.returncode == 2 and json.loads(malformed.stderr)["error"] == "usage"

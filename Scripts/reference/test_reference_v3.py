"""Tests of the version 3 whole-file reference reader and writer (kcf_reference_v3.py).

    cd Scripts/reference && python3 -m pytest -q test_reference_v3.py
"""

import hashlib
import hmac
import json
import os
import random
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import header_v3 as H  # noqa: E402
import kcf_reference as K  # noqa: E402
import kcf_reference_v2 as V2  # noqa: E402
import kcf_reference_v3 as V3  # noqa: E402
import records_v3 as R  # noqa: E402
import slots_v3 as S  # noqa: E402

PASSWORD = "correct horse battery staple"
PW = {"password": PASSWORD}
GROUPS_FOR_PAGES = {1: 0, 2: 100}       # extra key-table groups that make a header run of n pages


def clock():
    values = iter(range(1_700_000_000_000, 1_800_000_000_000, 1000))
    return lambda: next(values)


def writer(seed=7, items=3, pages=1, part_limit=V2.MAX_BODY):
    w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=random.Random(seed), clock=clock(),
                           part_limit=part_limit, extra_groups=GROUPS_FOR_PAGES[pages])
    ids = [w.add(K.GENERIC_PASSWORD, {"account": f"a{n}", "service": "s"}, b"secret %d" % n) for n in range(items)]
    return w, ids


def reopen(data, credential=PW):
    return V3.open_keychain(bytes(data), credential)


def start_value(group_key: bytes, file_id: bytes, key_id: int, epoch: int) -> bytes:
    """§35.4's start value of group key_id's chain begun in `epoch`, computed here from the draft's words (not by
    records_v3): HMAC-SHA256(start key, u64 epoch)[0 ..< 16], the start key HKDF-SHA256(K_g, empty salt,
    "KCF3 group start" ‖ file id ‖ u8 key id)."""
    start_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                     info=b"KCF3 group start" + file_id + bytes([key_id])).derive(group_key)
    return hmac.new(start_key, epoch.to_bytes(8, "big"), hashlib.sha256).digest()[:16]


def tampering(w, change):
    """Makes w's next record go through change(record, previous chain tag, keys) (an attacker holding K_log)."""
    def once(record, previous, keys):
        w.tamper = None
        return change(record, previous, keys)
    w.tamper = once


# ------------------------------------------------------------------------------------------------
# Round trip
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pages", [1, 2])
def test_writer_to_reader_round_trip(pages):
    w, ids = writer(pages=pages)
    inet = w.add(K.INTERNET_PASSWORD, {"account": "bob", "server": "example.com", "port": 443, "path": "/x"}, b"web")
    key = w.add(K.KEY, {"label": "k", "keyClass": 1, "applicationLabel": b"\x01" * 20}, b"\x02" * 64)
    w.update(ids[0], {"label": "renamed"}, b"changed")
    w.delete(ids[1])
    with w.transaction() as t:
        new = t.add(K.GENERIC_PASSWORD, {"account": "t", "service": "s"}, b"")
        t.delete(ids[2])
    data = w.data
    kc = reopen(data)
    assert set(kc.items) == {ids[0], inet, key, new}
    assert kc.items[ids[0]].secret == b"changed" and kc.items[ids[0]].attributes["label"] == "renamed"
    assert kc.items[key].attributes["applicationLabel"] == b"\x01" * 20 and kc.items[key].cls == K.KEY
    assert kc.items[new].secret == b"" and kc.items[inet].attributes["port"] == 443
    assert set(kc.tombstones) == {ids[1], ids[2]}
    assert kc.head[0] == len(kc.records) == 9 and kc.repairs == [] and kc.remnant is None   # the creation commit too
    # §2.10's prefix, checked from the bytes rather than through the writer's layout.
    n = kc.page_count
    assert n == pages and data[:8] == V2.MAGIC and data[8:10] == b"\x00\x03"
    assert data[:n * H.PAGE] == data[H.run_b_offset(n):H.run_b_offset(n) + n * H.PAGE]
    start = 8192 * n + 24576
    assert len(data) == start + kc.written_end                     # one partial chunk
    assert data[start + 8] == 1 and V2.rd64(data, start + 9) == 1  # the first record: a commit, sequence 1
    assert kc.header.rewrite_end == kc.records[0].length and kc.records[0].entries == []   # the creation commit
    # The newest seal lies at 4,096·n (counter even) or 12,288 further, under K_header of header_v3's keys.
    opened = H.open_prefix(data, PW)
    at = 4096 * n + (kc.newest.counter % 2) * 12288
    k_header = H.epoch_keys(bytes.fromhex(opened["logKey"]), kc.file_id, kc.epoch, kc.header.epoch_salt)["header"]
    fields, _ = V2.read_seal_copy(data[at:at + V2.SEAL], k_header, kc.epoch)
    assert fields is not None and fields[3] == kc.committed_end and fields[5] == kc.head[1]
    # The first record decodes on its own (records_v3) with C0 as its previous chain: the creation commit, the heads
    # alone, naming every group of the key table at group sequence 0 with its start value for epoch 1 (§35.7,
    # session 51). The second, group 1's page 1 chained from that start value.
    key_1 = bytes.fromhex(opened["groups"][0]["key"])
    group_1 = {"keyID": 1, "key": key_1.hex(), "startEpoch": 1}
    first = R.decode_record(data[start:start + kc.records[0].length], {
        "fileID": kc.file_id.hex(), "epoch": kc.epoch, "chainKey": opened["chainKey"], "headsKey": opened["headsKey"],
        "previousChain": opened["c0"], "groups": [group_1]})
    assert first["segments"] == [] and len(first["heads"]) == 1 + GROUPS_FOR_PAGES[pages]
    assert first["heads"][0] == {"keyID": 1, "startEpoch": 1, "groupSequence": 0,
                                 "lastTag": start_value(key_1, kc.file_id, 1, 1).hex()}
    assert all(h["groupSequence"] == 0 and h["startEpoch"] == 1 for h in first["heads"])
    at = start + kc.records[0].length
    second = R.decode_record(data[at:at + kc.records[1].length], {
        "fileID": kc.file_id.hex(), "epoch": kc.epoch, "chainKey": opened["chainKey"], "headsKey": opened["headsKey"],
        "previousChain": first["chainTag"], "groups": [group_1]})
    assert second["heads"][0] == {"keyID": 1, "startEpoch": kc.epoch, "groupSequence": 1,
                                  "lastTag": second["groups"][0]["lastTag"]}
    # A second writer carries the group chain on.
    w2 = V3.WriterV3.open(data, PW, rng=random.Random(3), clock=clock())
    w2.path = None
    later = w2.add(K.GENERIC_PASSWORD, {"account": "later", "service": "s"}, b"l")
    after = reopen(w2.data)
    assert set(after.items) == set(kc.items) | {later} and after.head[0] == 10


def test_transaction_in_parts_and_pages():
    w, _ = writer(part_limit=900)
    with w.transaction() as t:
        for n in range(6):
            t.add(K.GENERIC_PASSWORD, {"account": f"p{n}", "service": "s"}, b"y" * 150)
    w.part_limit = V2.MAX_BODY
    two_page_commit(w)
    data = w.data
    kc = reopen(data)
    transaction, last = kc.records[4:-1], kc.records[-1]              # after the creation commit and 3 adds
    assert len(transaction) >= 3 and [(r.kind, r.part) for r in transaction] == \
        [(3, p) for p in range(len(transaction) - 1)] + [(1, len(transaction) - 1)]
    assert [r.sequence for r in kc.records] == list(range(1, len(kc.records) + 1))
    layout = V3.layout_for(1)
    frame = R.split(data[layout.physical(last.offset):layout.physical(last.offset + last.length)])
    assert [s["keyID"] for s in frame["segments"]] == [1, 1, 0]            # two pages of group 1, the heads
    assert len(kc.items) == 11 and {i.attributes.get("label") for i in kc.items.values()} >= {"x" * 5000, "y" * 5000}


def test_a_transaction_without_its_commit_is_undone():
    w, _ = writer(part_limit=900)
    entries = [w.make_put(K.GENERIC_PASSWORD, {"account": f"p{n}", "service": "s"}, b"y" * 150) for n in range(6)]
    w.append(entries, cut_after=2)
    kc = reopen(w.data)
    assert len(kc.items) == 3 and kc.undone is not None and kc.undone[0] == kc.committed_end


def test_versions_refuse_each_other_and_wrong_password():
    w, _ = writer()
    with pytest.raises(K.UnsupportedVersion) as e:
        V2.open_keychain(w.data, PW)
    assert e.value.version == 3
    v2 = V2.Writer.create(None, [PW], iterations=1000, rng=random.Random(1))
    with pytest.raises(K.UnsupportedVersion) as e:
        reopen(v2.data)
    assert e.value.version == 2
    with pytest.raises(K.WrongCredentials):
        reopen(w.data, {"password": "wrong"})
    with pytest.raises(K.NotAKeychain):
        reopen(b"not a keychain at all")


# ------------------------------------------------------------------------------------------------
# Damage repaired
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pages", [1, 2])
def test_a_flipped_bit_in_a_record_is_repaired_by_parity(pages):
    w, ids = writer(pages=pages)
    data = w.data
    kc = reopen(data)
    record = kc.records[1]
    layout = V3.layout_for(pages)
    # Frame, segment headers, page box, secret box, heads and chain tag: every 7th byte (every 17th for a header of
    # two pages, whose every open decodes more parity) and the last 16.
    places = sorted(set(range(record.offset, record.offset + record.length, 7 if pages == 1 else 17))
                    | set(range(record.offset + record.length - 16, record.offset + record.length)))
    for logical in places:
        damaged = bytearray(data)
        damaged[layout.physical(logical)] ^= 0x10
        after = reopen(damaged)
        assert after.items == kc.items and after.head == kc.head, logical
        assert after.repaired_log == {logical: data[layout.physical(logical)]}, logical
        assert any("repaired by parity" in r for r in after.repairs)
    # The next writer writes the repaired byte back.
    damaged = bytearray(data)
    damaged[layout.physical(record.offset + 40)] ^= 0x10
    w2 = V3.WriterV3(path=None, data=bytes(damaged), kc=reopen(damaged), rng=random.Random(1), clock=clock())
    w2.add(K.GENERIC_PASSWORD, {"account": "n", "service": "s"}, b"n")
    assert reopen(w2.data).repairs == []


@pytest.mark.parametrize("pages", [1, 2])
def test_a_flipped_bit_in_run_a_is_repaired_from_parity_or_run_b(pages):
    w, _ = writer(pages=pages)
    data = w.data
    kc = reopen(data)
    for at in (20, 45, 300, (pages - 1) * H.PAGE + 100):          # file id, epoch salt, a slot, the last page
        flipped = bytearray(data)
        flipped[at] ^= 0x04
        after = reopen(flipped)
        assert after.items == kc.items and after.head == kc.head, at
        assert after.pages_to_rewrite == ["A"] and any("run A" in r for r in after.repairs), at
    zeroed = bytearray(data)                                       # beyond its parity: run B
    zeroed[0:pages * H.PAGE] = bytes(pages * H.PAGE)
    after = reopen(zeroed)
    assert after.items == kc.items and after.pages_to_rewrite == ["A"]
    w2 = V3.WriterV3(path=None, data=bytes(zeroed), kc=after, rng=random.Random(1), clock=clock())
    w2.add(K.GENERIC_PASSWORD, {"account": "n", "service": "s"}, b"n")
    again = reopen(w2.data)
    assert again.repairs == [] and w2.data[:pages * H.PAGE] == data[:pages * H.PAGE]
    both = bytearray(data)
    both[0:pages * H.PAGE] = bytes(pages * H.PAGE)
    rb = H.run_b_offset(pages)
    both[rb:rb + pages * H.PAGE] = bytes(pages * H.PAGE)
    with pytest.raises(K.NotAKeychain):
        reopen(both)


@pytest.mark.parametrize("pages", [1, 2])
def test_a_dropped_commit_slot(pages):
    w, _ = writer(pages=pages)
    data = w.data
    kc = reopen(data)
    assert kc.repairs == []
    # §2.10: commit slot 0 at 4,096·n, slot 1 12,288 bytes later (from the document, not the module's layout).
    newest, older = 4096 * pages + 12288 * kc.newest.slot, 4096 * pages + 12288 * (1 - kc.newest.slot)
    dropped = bytearray(data)                                      # the older seal: nothing changes
    dropped[older:older + V2.SLOT_BYTES] = bytes(V2.SLOT_BYTES)
    after = reopen(dropped)
    assert after.items == kc.items and after.head == kc.head and after.newest.counter == kc.newest.counter
    dropped = bytearray(data)                                      # the newest: as version 2, the older seal is
    dropped[newest:newest + V2.SLOT_BYTES] = bytes(V2.SLOT_BYTES)  # the newest, the last commit a remnant
    after = reopen(dropped)
    assert after.newest.counter == kc.newest.counter - 1 and len(after.items) == len(kc.items) - 1
    assert after.remnant == (kc.records[-1].offset, kc.records[-1].length)
    one_copy = bytearray(data)                                     # one of the newest seal's two copies
    one_copy[newest:newest + V2.SEAL] = bytes(V2.SEAL)
    after = reopen(one_copy)
    assert after.items == kc.items and any("seal copy 1 damaged" in r for r in after.repairs)


# ------------------------------------------------------------------------------------------------
# Alterations refused
# ------------------------------------------------------------------------------------------------

def test_an_altered_chain_tag_is_refused():
    w, ids = writer()
    offset = w.written_end
    tampering(w, lambda record, previous, keys: record[:-16] + bytes(b ^ 0x01 for b in record[-16:]))
    w.add(K.GENERIC_PASSWORD, {"account": "x", "service": "s"}, b"x")      # parity made from the altered bytes
    w.add(K.GENERIC_PASSWORD, {"account": "y", "service": "s"}, b"y")      # chains to it: the alteration is acknowledged
    with pytest.raises(V3.CorruptedRecord) as e:
        reopen(w.data)
    assert "chain tag does not match" in e.value.reason and e.value.offset == offset, e.value.reason


def drop_group_segment(index):
    """A tamper that removes the index-th segment of group 1 from a record, its heads left as they were, and makes
    the frame check and chain tag right (as a writer holding K_log can)."""
    def change(record, previous, keys):
        frame = R.split(record)
        segments = [record[s["start"]:s["secrets"][1]] for s in frame["segments"]]
        of_group = [i for i, s in enumerate(frame["segments"]) if s["keyID"] == 1]
        del segments[of_group[index]]
        return R.assemble(frame["kind"], frame["sequence"], frame["part"], segments, previous, keys.k_chain)
    return change


def two_page_commit(w):
    """A commit of two items that do not fit one 8,192-byte page: two segments of group 1."""
    with w.transaction() as t:
        t.add(K.GENERIC_PASSWORD, {"account": "page1", "service": "s", "label": "x" * 5000}, b"1")
        t.add(K.GENERIC_PASSWORD, {"account": "page2", "service": "s", "label": "y" * 5000}, b"2")


@pytest.mark.parametrize("index, reason", [(-1, "group 1's chain does not end at its head"),
                                           (0, "group 1's page does not authenticate as page 4")])
def test_a_page_of_the_group_removed_with_its_heads_left_is_refused(index, reason):
    w, ids = writer()
    offset = w.written_end
    tampering(w, drop_group_segment(index))
    two_page_commit(w)
    w.add(K.GENERIC_PASSWORD, {"account": "after", "service": "s"}, b"a")  # acknowledges the altered commit
    with pytest.raises(V3.CorruptedRecord) as e:
        reopen(w.data)
    assert reason in e.value.reason and e.value.offset == offset, e.value.reason
    untouched, _ = writer()
    two_page_commit(untouched)
    assert len(reopen(untouched.data).items) == 5                          # the same commit, whole, opens


# ------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------

def run(*args):
    return subprocess.run([sys.executable, os.path.join(HERE, "kcf_reference_v3.py"), *args],
                          capture_output=True, text=True)


def test_cli_make_then_dump_has_version_2s_shape(tmp_path):
    path = tmp_path / "f.kcf"
    items = [{"class": "genericPassword", "attributes": {"account": "a", "service": "s"}, "secret": "736563"},
             {"class": "key", "attributes": {"label": "k", "applicationLabel": "0102"}, "secret": ""}]
    made = run("make", str(path), "--password", PASSWORD, "--iterations", "1000", "--seed", "5",
               "--items", json.dumps(items))
    assert made.returncode == 0, made.stderr
    made = json.loads(made.stdout)
    dumped = run("dump", str(path), "--password", PASSWORD)
    assert dumped.returncode == 0, dumped.stderr
    out = json.loads(dumped.stdout)
    assert out["formatVersion"] == 3 and out["head"] == made["head"] and out["file_id"] == made["file_id"]
    assert sorted(i["id"] for i in out["items"]) == sorted(made["items"])
    by_class = {i["class"]: i for i in out["items"]}
    assert by_class["genericPassword"]["secret_hex"] == "736563"
    assert by_class["key"]["attributes"]["applicationLabel"] == {"type": "bytes", "value": "0102"}
    v2 = V2.Writer.create(None, [PW], iterations=1000, rng=random.Random(1))
    v2.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s"}, b"sec")
    v2_json = V2.open_keychain(v2.data, PW).to_json()
    assert set(v2_json) <= set(out)
    assert set(v2_json["items"][0]) | {"group", "keyID"} == set(out["items"][0])   # §2.11: each item's group
    assert set(v2_json["slots"][0]) <= set(out["slots"][0])
    assert all(i["group"] == "" and i["keyID"] == 1 for i in out["items"])
    assert out["groups"] == [{"keyID": 1, "name": ""}]
    assert run("dump", str(path), "--password", "wrong").returncode == 5
    path.write_bytes(path.read_bytes()[:32768])                             # cut below an acknowledged commit
    cut = run("dump", str(path), "--password", PASSWORD)
    assert cut.returncode == 6 and json.loads(cut.stderr)["error"] == "Corrupted"
    assert run("dump", str(path)).returncode == 2
    w, _ = writer()                                                          # damage in the log: corrupted too
    tampering(w, lambda record, previous, keys: record[:-1] + bytes([record[-1] ^ 1]))
    w.add(K.GENERIC_PASSWORD, {"account": "x", "service": "s"}, b"x")
    w.add(K.GENERIC_PASSWORD, {"account": "y", "service": "s"}, b"y")
    path.write_bytes(w.data)
    altered = run("dump", str(path), "--password", PASSWORD)
    assert altered.returncode == 6 and "chain tag" in json.loads(altered.stderr)["reason"]
    assert run("dump", str(tmp_path / "missing.kcf"), "--password", "p").returncode == 1


def test_damaged_files_raise_only_typed_errors():
    """Untrusted bytes never crash: random damage to the log, the commit slots or the runs either opens or raises
    one of the reader's typed errors."""
    w, _ = writer(seed=11)
    data = w.data
    r = random.Random(5)
    outcomes = set()
    for _ in range(30):
        damaged = bytearray(data)
        at = r.choice([0, 4096, 16384, 28672, 32768]) + r.randrange(4096)
        at = min(at, len(damaged) - 1)
        count = r.randrange(1, 600)
        damaged[at:at + count] = bytes(r.randrange(256) for _ in range(count))
        if r.random() < 0.3:
            damaged = damaged[:r.randrange(len(damaged))]
        try:
            reopen(damaged)
            outcomes.add("opened")
        except K.KCFError as e:
            outcomes.add(type(e).__name__)
    assert "opened" in outcomes and outcomes - {"opened"}


# ------------------------------------------------------------------------------------------------
# Items in their groups (Docs/FormatVersion3.md §2.11)
# ------------------------------------------------------------------------------------------------

import slots_v3 as S  # noqa: E402

SCOPED = {"password": "scoped password"}


def put(w, account, group=None, secret=b"s"):
    attributes = {"account": account, "service": "s"}
    if group is not None:
        attributes["accessGroup"] = group
    return w.add(K.GENERIC_PASSWORD, attributes, secret)


def record_segments(kc, index):
    """The index-th record of kc's epoch decoded on its own by records_v3 with every key of the table: [(key id,
    entries)] for its group segments, in order. The group chains before it are the previous record's (its chain
    value carries them), or each group's start value at the header's epoch for the epoch's first record."""
    previous = kc.records[index - 1].chain if index else kc.keys.c0
    groups = []
    for k, key in sorted(kc.keys.groups.items()):
        state = previous.groups.get(k)
        g = {"keyID": k, "key": key.hex(), "startEpoch": state[0] if state else kc.epoch,
             "sequence": state[1] if state else 0}
        if state:
            g["lastTag"] = state[2].hex()
        groups.append(g)
    r = kc.records[index]
    out = R.decode_record(kc.log[r.offset:r.offset + r.length], {
        "fileID": kc.file_id.hex(), "epoch": kc.epoch, "chainKey": kc.keys.k_chain.hex(),
        "headsKey": kc.keys.k_heads.hex(), "previousChain": bytes(previous).hex(), "groups": groups})
    return [(s["keyID"], [(next(iter(e)), next(iter(e.values()))["id"]) for e in s["entries"]])
            for s in out["segments"]]


def test_items_in_three_groups_read_back_with_their_groups(tmp_path):
    w, _ = writer(items=0)
    a0 = put(w, "d0")
    a1 = put(w, "a1", "A")                                   # adds group A (key id 2), then appends
    a2 = put(w, "b1", "B")                                   # adds group B (key id 3)
    with w.transaction() as t:                               # one batch: default, A, default, B, B
        d1 = t.add(K.GENERIC_PASSWORD, {"account": "d1", "service": "s", "accessGroup": ""}, b"x")
        b2 = t.add(K.GENERIC_PASSWORD, {"account": "a2", "service": "s", "accessGroup": "A"}, b"y")
        d2 = t.add(K.GENERIC_PASSWORD, {"account": "d2", "service": "s"}, b"z")
        t.add(K.GENERIC_PASSWORD, {"account": "b2", "service": "s", "accessGroup": "B"}, b"v")
        t.delete(a2)
    kc = reopen(w.data)
    assert kc.epoch == 3 and {k: kc.keys.names[k] for k in kc.keys.groups} == {1: "", 2: "A", 3: "B"}
    want = {a0: 1, a1: 2, d1: 1, b2: 2, d2: 1}
    assert {i: kc.item_groups[i] for i in kc.items if i in want} == want and len(kc.items) == 6
    assert [kc.item_groups[i] for i in kc.items if i not in want] == [3]
    assert kc.items[b2].secret == b"y" and kc.tombstone_groups == {a2: 3}
    # §2.11 "Order": the batch keeps its order, a change of group starts a segment; the heads last.
    assert [(k, [kind for kind, _ in entries]) for k, entries in record_segments(kc, len(kc.records) - 1)] == \
        [(1, ["put"]), (2, ["put"]), (1, ["put"]), (3, ["put", "delete"])]
    # The CLI: make a file of three groups, dump it.
    path = tmp_path / "groups.kcf"
    items = [{"class": "genericPassword", "attributes": {"account": f"x{n}", "service": "s", "accessGroup": g},
              "secret": "00"} for n, g in enumerate(("", "A", "B", "A"))]
    made = run("make", str(path), "--password", PASSWORD, "--iterations", "1000", "--seed", "5",
               "--items", json.dumps(items))
    assert made.returncode == 0, made.stderr
    out = json.loads(run("dump", str(path), "--password", PASSWORD).stdout)
    assert out["groups"] == [{"keyID": 1, "name": ""}, {"keyID": 2, "name": "A"}, {"keyID": 3, "name": "B"}]
    shown = {i["id"]: (i["group"], i["keyID"], i["attributes"].get("accessGroup", {}).get("value", ""))
             for i in out["items"]}
    ids = json.loads(made.stdout)["items"]
    assert [shown[i] for i in ids] == [("", 1, ""), ("A", 2, "A"), ("B", 3, "B"), ("A", 2, "A")]


def test_adding_a_group_renews_the_root_and_keeps_the_other_keys():
    w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=random.Random(9), clock=clock(), extra_groups=2,
                           scoped_password=SCOPED["password"])
    before_items = [put(w, "d"), put(w, "g0", "group-0")]
    old = H.open_prefix(w.data, PW)
    old_scoped = H.open_prefix(w.data, SCOPED)
    assert old["epoch"] == 1 and [g["keyID"] for g in old_scoped["groups"]] == [2, 3]
    added = put(w, "n", "new group")
    new = H.open_prefix(w.data, PW)
    file_id = bytes.fromhex(new["fileID"])
    assert new["epoch"] == 2 and new["fileID"] == old["fileID"]
    assert new["root"] != old["root"] and new["logKey"] == old["logKey"]
    table = H.parse_header(bytes.fromhex(new["header"]))["table"]
    with pytest.raises(H.Corrupted):                               # the old R no longer opens the table
        H.open_table(table, bytes.fromhex(old["root"]), file_id)
    last, groups = H.open_table(table, bytes.fromhex(new["root"]), file_id)
    assert last == 4 and [(g["keyID"], g["name"]) for g in groups] == \
        [(1, ""), (2, "group-0"), (3, "group-1"), (4, "new group")]
    assert [g["key"].hex() for g in groups[:3]] == [g["key"] for g in old["groups"]]   # group keys unchanged
    # Every slot attested under the new root (not the old). The adder's own slot re-anchored on the new keys, no
    # grant (§2.2 "Writing it again", D11); the other granted from the old root. The scoped slot keeps K_log and its
    # groups' keys and now trusts the new ρ.
    slots = [b for _, b, _ in H.parse_header(bytes.fromhex(new["header"]))["slots"]]
    assert len(slots) == 2
    assert [len(S.parse_slot(b)["grants"]) for b in slots] == [0, 1]
    for b in slots:
        assert S.is_attested(b, file_id, bytes.fromhex(new["root"]))
        assert not S.is_attested(b, file_id, bytes.fromhex(old["root"]))
    assert S.open_slot(slots[0], file_id, PW)[0]["root"].hex() == new["root"]
    keys, grants = S.open_slot(slots[1], file_id, SCOPED)
    assert grants == 1 and keys["root"] is None and keys["logKey"].hex() == old["logKey"]
    assert [(g["keyID"], g["key"].hex()) for g in keys["groups"]] == \
        [(g["keyID"], g["key"]) for g in old_scoped["groups"]]
    assert keys["rho"] == S.rho_of(bytes.fromhex(new["root"]), file_id)
    # The items: the old ones carried into the new epoch, the new group's item appended after the rewrite, the
    # new group's chain begun at the new epoch.
    kc = reopen(w.data)
    assert set(kc.items) == set(before_items) | {added} and kc.item_groups[added] == 4
    assert kc.header.rewrite_end > 0 and kc.records[-1].offset == kc.header.rewrite_end
    assert kc.head[1].groups[4][:2] == (2, 1)
    assert [k for k, _ in record_segments(kc, len(kc.records) - 1)] == [4]
    # A second writer (through its grant) and the scoped credential's header both open the new file.
    w2 = V3.WriterV3.open(w.data, PW, rng=random.Random(2), clock=clock())
    w2.path = None
    later = put(w2, "later", "new group")
    assert reopen(w2.data).item_groups[later] == 4 and H.open_prefix(w2.data, SCOPED)["epoch"] == 2


def test_a_move_between_groups_deletes_in_the_old_groups_page_first():
    w, _ = writer(items=0)
    moved = put(w, "m", "A")
    put(w, "other", "B")
    w.update(moved, {"accessGroup": "B"}, b"moved")
    kc = reopen(w.data)
    # The deletion in the old group's page records the move's time among the tombstones, and the put does not clear
    # it (§24.4: a put keeps an id's tombstone until the next rewrite, which drops tombstones of live ids).
    assert kc.item_groups[moved] == 3 and kc.items[moved].secret == b"moved" and moved in kc.tombstones
    # The update's commit: A's page deletes the item, then B's page puts it (the same item id).
    assert record_segments(kc, len(kc.records) - 1) == [(2, [("delete", moved.hex())]), (3, [("put", moved.hex())])]
    # Moved back in a transaction, with another item of the old group after it: three segments.
    with w.transaction() as t:
        t.update(moved, {"accessGroup": ""})
        t.add(K.GENERIC_PASSWORD, {"account": "n", "service": "s", "accessGroup": "B"}, b"n")
    kc = reopen(w.data)
    assert kc.item_groups[moved] == 1
    assert record_segments(kc, len(kc.records) - 1) == \
        [(3, [("delete", moved.hex())]), (1, [("put", moved.hex())]), (3, [("put", kc.records[-1].entries[2][1].hex())])]


def forge(w, entry, key_id):
    """Appends entry in key id's page as a writer holding every key could (sealed properly under that group's key),
    then an honest commit after it (so that the forged one is acknowledged)."""
    entry.key_id = key_id
    if isinstance(entry, K.Delete):
        entry.time = 1
    offset = w.written_end
    w.append([entry], check=False)
    put(w, f"after {w.written_end}")
    return offset


@pytest.mark.parametrize("case", ["put in A names B", "put in default names A", "put in A without the default's deletion"])
def test_a_put_in_another_groups_page_is_refused(case):
    w, ids = writer(items=1)
    put(w, "a", "A")
    put(w, "b", "B")
    if case == "put in A names B":
        entry, key_id, item = w.make_put(K.GENERIC_PASSWORD, {"account": "f", "service": "s", "accessGroup": "B"}), 2, None
    elif case == "put in default names A":
        entry, key_id, item = w.make_put(K.GENERIC_PASSWORD, {"account": "f", "service": "s", "accessGroup": "A"}), 1, None
    else:                                                      # ids[0] is live in the default group
        base = w.state.items[ids[0]]
        entry, key_id, item = w.make_put(base.cls, {"accessGroup": "A"}, b"m", base=base), 2, ids[0]
    offset = forge(w, entry, key_id)
    with pytest.raises(V3.CorruptedRecord) as e:
        reopen(w.data)
    assert e.value.offset == offset and f"key id {key_id}" in e.value.reason, e.value.reason
    assert entry.item_id.hex() in e.value.reason, e.value.reason
    assert reopen(honest_copy(case)).items                     # the same writes made honestly open


def honest_copy(case):
    w, ids = writer(items=1)
    put(w, "a", "A")
    put(w, "b", "B")
    if case == "put in A without the default's deletion":
        w.update(ids[0], {"accessGroup": "A"}, b"m")
    else:
        put(w, "f", "B" if case == "put in A names B" else "A")
    put(w, "after")
    return w.data


@pytest.mark.parametrize("kind", ["deletion", "tombstone"])
def test_a_deletion_in_the_wrong_groups_page_is_refused(kind):
    w, _ = writer(items=0)
    a = put(w, "a", "A")
    put(w, "b", "B")
    entry = K.Delete(a) if kind == "deletion" else V2.Tombstone(a, 1)
    offset = forge(w, entry, 3)                                 # a is live in A (key id 2), deleted in B's page
    with pytest.raises(V3.CorruptedRecord) as e:
        reopen(w.data)
    assert e.value.offset == offset and "key id 3" in e.value.reason and a.hex() in e.value.reason, e.value.reason
    assert "live in key id 2" in e.value.reason, e.value.reason
    # In its own group's page the same entry is accepted (a tombstone of a live item changes nothing).
    w, _ = writer(items=0)
    a = put(w, "a", "A")
    put(w, "b", "B")
    forge(w, K.Delete(a) if kind == "deletion" else V2.Tombstone(a, 1), 2)
    assert (a in reopen(w.data).items) == (kind == "tombstone")


def test_a_forged_page_is_refused_even_as_the_newest_commit():
    """The group checks are corrupted wherever the record lies (as §8's): the page authenticated under its group's
    key, so damage cannot have made it, and a possibly acknowledged newest commit is not set aside for it."""
    w, _ = writer(items=0)
    put(w, "a", "A")
    entry = w.make_put(K.GENERIC_PASSWORD, {"account": "f", "service": "s", "accessGroup": "A"})
    entry.key_id = 1
    offset = w.written_end
    w.append([entry], check=False)
    with pytest.raises(V3.CorruptedRecord) as e:
        reopen(w.data)
    assert e.value.offset == offset and "key id 1" in e.value.reason


def test_tombstones_stay_in_their_group_across_a_compaction():
    w, ids = writer(items=2)
    a = [put(w, f"a{n}", "A") for n in range(3)]
    b = [put(w, f"b{n}", "B") for n in range(2)]
    w.delete(a[1])
    w.delete(b[0])
    w.delete(ids[1])
    before = reopen(w.data)
    assert before.tombstone_groups == {a[1]: 2, b[0]: 3, ids[1]: 1}
    epoch = before.epoch
    w.compact()
    kc = reopen(w.data)
    assert kc.epoch == epoch + 1 and kc.items.keys() == before.items.keys()
    assert kc.item_groups == before.item_groups
    assert kc.tombstones == before.tombstones and kc.tombstone_groups == before.tombstone_groups
    # The rewrite's records hold each group's live items then its tombstones, the groups in increasing key id.
    segments = [s for i in range(len(kc.records)) for s in record_segments(kc, i)]
    flat = [(k, kind, iid) for k, entries in segments for kind, iid in entries]
    assert [k for k, _, _ in flat] == sorted(k for k, _, _ in flat)
    assert ("tombstone", a[1].hex()) in [(kind, iid) for k, kind, iid in flat if k == 2]
    assert ("tombstone", b[0].hex()) in [(kind, iid) for k, kind, iid in flat if k == 3]
    assert ("tombstone", ids[1].hex()) in [(kind, iid) for k, kind, iid in flat if k == 1]
    assert [kind for k, kind, _ in flat if k == 2] == ["put", "put", "tombstone"]
    # Across a second compaction too, and a later write into a group keeps them.
    w.compact()
    put(w, "a9", "A")
    again = reopen(w.data)
    assert again.epoch == epoch + 2 and again.tombstone_groups == before.tombstone_groups


def three_group_commit(w):
    with w.transaction() as t:
        for g in ("", "A", "B"):
            t.add(K.GENERIC_PASSWORD, {"account": f"t{g}", "service": "s", "accessGroup": g}, b"t")


def groups_writer():
    w, _ = writer(items=1)
    put(w, "a", "A")
    put(w, "b", "B")
    return w


def test_a_page_of_another_group_dropped_is_refused_naming_its_group():
    w = groups_writer()
    offset = w.written_end

    def drop_group_2(record, previous, keys):
        frame = R.split(record)
        kept = [record[s["start"]:s["secrets"][1]] for s in frame["segments"] if s["keyID"] != 2]
        return R.assemble(frame["kind"], frame["sequence"], frame["part"], kept, previous, keys.k_chain)
    tampering(w, drop_group_2)
    three_group_commit(w)
    put(w, "after")
    with pytest.raises(V3.CorruptedRecord) as e:
        reopen(w.data)
    assert e.value.offset == offset and "group 2's chain does not end at its head" in e.value.reason, e.value.reason
    honest = groups_writer()
    three_group_commit(honest)
    assert len(reopen(honest.data).items) == 6


@pytest.mark.parametrize("segment", [True, False])
def test_a_segment_of_a_key_id_the_table_lacks_is_refused(segment):
    """§2.10: a full holder meeting a segment (with its head), or a head alone, of a key id its key table does not
    hold: corrupted."""
    w = groups_writer()
    offset = w.written_end

    def add_key_id_9(record, previous, keys):
        frame = R.split(record)
        segments = [record[s["start"]:s["secrets"][1]] for s in frame["segments"]]
        heads_box = segments[-1][R.SEGMENT_HEADER:]
        heads = R.open_heads(heads_box, 0, keys.k_heads, keys.file_id, keys.epoch, frame["sequence"])
        heads[9] = {"startEpoch": keys.epoch, "groupSequence": 1, "lastTag": bytes(16)}
        box = R.seal(keys.k_heads, R.heads_plaintext(heads), R.heads_aad(keys.file_id, keys.epoch, frame["sequence"]),
                     random.Random(1))
        copy = [bytes([9]) + segments[0][1:]] if segment else []
        segments = segments[:-1] + copy + [R.u8(0) + R.u32(len(box)) + R.u32(len(box)) + box]
        return R.assemble(frame["kind"], frame["sequence"], frame["part"], segments, previous, keys.k_chain)
    tampering(w, add_key_id_9)
    put(w, "x", "A")
    put(w, "after")
    with pytest.raises(V3.CorruptedRecord) as e:
        reopen(w.data)
    what = "a segment of key id 9" if segment else "a head of key id 9"
    assert e.value.offset == offset and what in e.value.reason, e.value.reason


# ------------------------------------------------------------------------------------------------
# Scoped credentials (Docs/FormatVersion3.md §2.3, §2.5, §2.5.1, §2.6 "Scoped append", plan step 4)
# ------------------------------------------------------------------------------------------------

HOLDER_A = {"password": "holder of A"}          # scoped to key id 2 ("group-0")
HOLDER_B = {"password": "holder of B"}          # scoped to key id 3 ("group-1")
GA, GB = "group-0", "group-1"


def scoped_file(seed=11, part_limit=V2.MAX_BODY):
    """A file of three groups (the default, A = key id 2, B = key id 3) with a full slot and one slot scoped to A, one
    to B; items in each group, a transaction across the three, a deletion in B. Returns (full writer, {id: group})."""
    w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=random.Random(seed), clock=clock(),
                           part_limit=part_limit, extra_groups=2,
                           scoped_slots=[(HOLDER_A["password"], [2]), (HOLDER_B["password"], [3])])
    items = {}
    for n, g in enumerate(["", GA, GB, GA, "", GB, GB]):
        items[put(w, f"i{n}", g, secret=b"secret %d of %s" % (n, g.encode()))] = g
    with w.transaction() as t:
        for g in (GB, "", GA):
            items[t.add(K.GENERIC_PASSWORD, {"account": f"t{g}", "service": "s", "accessGroup": g}, b"t" + g.encode())] = g
    gone = next(i for i, g in items.items() if g == GB)
    w.delete(gone)
    del items[gone]
    return w, items


def commit_in_three_groups(w, tag):
    with w.transaction() as t:
        for g in ("", GA, GB):
            t.add(K.GENERIC_PASSWORD, {"account": f"{tag}{g}", "service": "s", "accessGroup": g}, tag.encode())


def scoped_writer(data, credential, seed=3, part_limit=V2.MAX_BODY):
    w = V3.WriterV3.open(bytes(data), credential, rng=random.Random(seed), clock=clock(), part_limit=part_limit)
    w.path = None
    return w


def last_heads(kc):
    """The newest commit's heads, read from its bytes with the heads key (K_log's): {key id: (start, seq, tag)}."""
    r = next(r for r in reversed(kc.records) if r.kind == V2.KIND_COMMIT)
    record = kc.log[r.offset:r.offset + r.length]
    box = R.split(record)["segments"][-1]
    heads = R.open_heads(record[box["page"][0]:box["page"][1]], 0, kc.keys.k_heads, kc.file_id, kc.epoch, r.sequence)
    return {k: (h["startEpoch"], h["groupSequence"], h["lastTag"]) for k, h in heads.items()}


def segment_key_ids(kc, record):
    """The key ids of a record's segments, from its bytes (0: the heads)."""
    return [s["keyID"] for s in R.split(kc.log[record.offset:record.offset + record.length])["segments"]]


def same_items(a, b, ids):
    return all(a[i].cls == b[i].cls and a[i].attributes == b[i].attributes and a[i].secret == b[i].secret for i in ids)


def test_a_scoped_credential_opens_only_its_groups():
    w, items = scoped_file()
    full = reopen(w.data)
    assert not full.scoped and set(full.items) == set(items) and full.opaque_segments == []
    for credential, key_id, name in ((HOLDER_A, 2, GA), (HOLDER_B, 3, GB)):
        kc = reopen(w.data, credential)
        mine = {i for i, g in items.items() if g == name}
        # Exactly its group's items, as the full holder reads them; nothing of the others (B's holder: nothing of
        # A's, A's: nothing of B's — the wrong group's key opens nothing else).
        assert kc.scoped and set(kc.items) == mine and same_items(kc.items, full.items, mine)
        assert set(kc.item_groups.values()) == {key_id} and kc.keys.groups.keys() == {key_id}
        assert kc.keys.names == {key_id: name}
        assert set(kc.tombstones) == {i for i in full.tombstones if full.tombstone_groups[i] == key_id}
        # The whole log verified (K_log): the same records and head as the full holder's.
        assert [(r.offset, r.chain) for r in kc.records] == [(r.offset, r.chain) for r in full.records]
        assert kc.head == full.head and kc.head[1].groups == {key_id: full.head[1].groups[key_id]}
        # Every other group's segment kept as its bytes, as they lie in the log (read here with records_v3.split).
        expected = []
        for r in full.records:
            record = full.log[r.offset:r.offset + r.length]
            for s in R.split(record)["segments"]:
                if s["keyID"] not in (0, key_id):
                    expected.append((r.offset, s["keyID"], record[s["start"]:s["secrets"][1]]))
        assert kc.opaque_segments == expected and {k for _, k, _ in expected} == {1, 2, 3} - {key_id}
        # The other groups' heads as the newest commit states them, carried for a scoped writer.
        assert kc.head[1].others == {k: h for k, h in last_heads(full).items() if k != key_id}
        out = V3.to_json(kc)
        assert out["groups"] == [{"keyID": key_id, "name": name}] and len(out["items"]) == len(mine)


@pytest.mark.parametrize("damage", ["A's page dropped", "a put in A's page naming B"])
def test_a_scoped_holder_checks_its_own_groups_pages(damage):
    """A scoped holder checks its own group's chain against each commit's heads and §2.11's checks on its pages.
    B's holder, which cannot open A's pages, opens the file with the forged put (§2.5: only K_A's holders can
    tell), but refuses the one with A's page dropped: A's head then names more pages than A has segments in the file
    (§2.6, "Decided and built (session 47)")."""
    w, _ = scoped_file()
    offset = w.written_end
    if damage == "A's page dropped":
        def drop_group_2(record, previous, keys):
            frame = R.split(record)
            kept = [record[s["start"]:s["secrets"][1]] for s in frame["segments"] if s["keyID"] != 2]
            return R.assemble(frame["kind"], frame["sequence"], frame["part"], kept, previous, keys.k_chain)
        tampering(w, drop_group_2)
        commit_in_three_groups(w, "c")
        reason = "group 2's chain does not end at its head"
    else:
        entry = w.make_put(K.GENERIC_PASSWORD, {"account": "f", "service": "s", "accessGroup": GB})
        entry.key_id = 2
        w.append([entry], check=False)
        reason = "key id 2"
    put(w, "after")
    for credential in (HOLDER_A, PW):
        with pytest.raises(V3.CorruptedRecord) as e:
            reopen(w.data, credential)
        assert e.value.offset == offset and reason in e.value.reason, e.value.reason
    if damage == "A's page dropped":
        with pytest.raises(V3.CorruptedRecord) as e:
            reopen(w.data, HOLDER_B)
        assert e.value.offset == offset and "group 2's head" in e.value.reason, e.value.reason
    else:
        assert reopen(w.data, HOLDER_B).items


def test_a_scoped_append_then_a_full_open_sees_every_group_intact():
    w, items = scoped_file()
    before = reopen(w.data)
    heads_before = last_heads(before)
    sw = scoped_writer(w.data, HOLDER_A)
    mine = [i for i, g in items.items() if g == GA]
    added = sw.add(K.GENERIC_PASSWORD, {"account": "new", "service": "s", "accessGroup": GA}, b"new secret")
    sw.update(mine[0], {"label": "changed"}, b"changed secret")
    sw.delete(mine[1])
    kc = reopen(sw.data)
    # Every other group's items as they were; A's changed as the scoped holder wrote them.
    others = [i for i, g in items.items() if g != GA]
    assert same_items(kc.items, before.items, others) and len(others) == 6
    assert set(kc.items) == set(others) | {added} | set(mine) - {mine[1]}
    assert kc.items[mine[0]].secret == b"changed secret" and kc.items[mine[0]].attributes["label"] == "changed"
    assert kc.items[added].secret == b"new secret" and kc.item_groups[added] == 2 and kc.tombstone_groups[mine[1]] == 2
    # The scoped commits hold A's segments and the heads alone; the other groups' heads are copied unchanged in
    # each, A's moved on; every chain the full holder checked ends at the newest heads (it opened), as read here.
    new_records = [r for r in kc.records if r.offset >= before.committed_end]
    assert len(new_records) == 3 and all(segment_key_ids(kc, r) == [2, 0] for r in new_records)
    heads = last_heads(kc)
    assert {k: h for k, h in heads.items() if k != 2} == {k: h for k, h in heads_before.items() if k != 2}
    assert heads[2][:2] == (heads_before[2][0], heads_before[2][1] + 3) and heads[2][2] != heads_before[2][2]
    assert kc.head[1].groups == heads


def test_a_holder_of_a_appends_then_b_and_the_full_holder_open():
    w, items = scoped_file()
    a = scoped_writer(w.data, HOLDER_A)
    from_a = a.add(K.GENERIC_PASSWORD, {"account": "from A", "service": "s", "accessGroup": GA}, b"a")
    b_view = reopen(a.data, HOLDER_B)
    assert set(b_view.items) == {i for i, g in items.items() if g == GB}
    b = scoped_writer(a.data, HOLDER_B, seed=4)
    from_b = b.add(K.GENERIC_PASSWORD, {"account": "from B", "service": "s", "accessGroup": GB}, b"b")
    full = reopen(b.data)
    assert set(full.items) == set(items) | {from_a, from_b}
    assert full.item_groups[from_a] == 2 and full.item_groups[from_b] == 3
    assert set(reopen(b.data, HOLDER_A).items) == {i for i, g in items.items() if g == GA} | {from_a}
    # The full holder appends after them, and both scoped holders follow.
    fw = V3.WriterV3.open(b.data, PW, rng=random.Random(5), clock=clock())
    fw.path = None
    commit_in_three_groups(fw, "c")
    assert len(reopen(fw.data).items) == len(items) + 5
    assert len(reopen(fw.data, HOLDER_A).items) == len(reopen(b.data, HOLDER_A).items) + 1
    assert len(reopen(fw.data, HOLDER_B).items) == len(b_view.items) + 2


def forge_heads(change):
    """A tamper for a scoped writer (it holds K_log, hence K_heads): its commit's heads re-sealed after change(heads),
    the chain tag made right."""
    def tamper(record, previous, keys):
        frame = R.split(record)
        segments = [record[s["start"]:s["secrets"][1]] for s in frame["segments"]]
        heads = R.open_heads(segments[-1][R.SEGMENT_HEADER:], 0, keys.k_heads, keys.file_id, keys.epoch,
                             frame["sequence"])
        change(heads)
        box = R.seal(keys.k_heads, R.heads_plaintext(heads), R.heads_aad(keys.file_id, keys.epoch, frame["sequence"]),
                     random.Random(1))
        segments[-1] = R.u8(0) + R.u32(len(box)) + R.u32(len(box)) + box
        return R.assemble(frame["kind"], frame["sequence"], frame["part"], segments, previous, keys.k_chain)
    return tamper


def omit(heads):
    del heads[3]


def step_back(heads):
    assert heads[3]["groupSequence"] >= 2
    heads[3]["groupSequence"] -= 1


def change_tag(heads):
    heads[3]["lastTag"] = bytes([heads[3]["lastTag"][0] ^ 1]) + heads[3]["lastTag"][1:]


@pytest.mark.parametrize("change", [omit, step_back, change_tag])
def test_a_scoped_append_that_forges_another_groups_head_is_refused_by_its_holders(change):
    w, items = scoped_file()
    a = scoped_writer(w.data, HOLDER_A)
    offset = a.written_end
    tampering(a, forge_heads(change))
    a.add(K.GENERIC_PASSWORD, {"account": "forged", "service": "s", "accessGroup": GA}, b"f")
    a.add(K.GENERIC_PASSWORD, {"account": "after", "service": "s", "accessGroup": GA}, b"g")   # acknowledges it
    reason = "the heads do not name group 3; its pages may have been dropped" if change is omit else \
        "group 3's chain does not end at its head"
    for credential in (HOLDER_B, PW):
        with pytest.raises(V3.CorruptedRecord) as e:
            reopen(a.data, credential)
        assert e.value.offset == offset and reason in e.value.reason, e.value.reason
    # A's holder, which holds no K_B, catches them too (§2.6, "Decided and built (session 47)"): B's head must name
    # as many pages as B has segments in the file so far, and the last one's page tag, both readable with K_log.
    with pytest.raises(V3.CorruptedRecord) as e:
        reopen(a.data, HOLDER_A)
    count = last_heads(reopen(w.data))[3][1]                    # B's segments in the file, all before the forgery
    reason = f"group 3 has {count} segments in the file but no head" if change is omit else \
        f"group 3's head (group sequence {count - (change is step_back)}) is not at its last segment in the file " \
        f"(segment {count} and its page tag)"
    assert e.value.offset == offset and reason in e.value.reason, e.value.reason
    # As the newest commit (nothing acknowledges it), the forged record is set aside for A's holder, as for B's.
    newest = scoped_writer(w.data, HOLDER_A)
    tampering(newest, forge_heads(change))
    newest.add(K.GENERIC_PASSWORD, {"account": "forged", "service": "s", "accessGroup": GA}, b"f")
    for credential in (HOLDER_A, HOLDER_B):
        kc = reopen(newest.data, credential)
        assert kc.set_aside is not None and kc.set_aside[0] == offset and kc.committed_end == offset
    # The same appends made honestly open for everyone.
    honest = scoped_writer(w.data, HOLDER_A)
    honest.add(K.GENERIC_PASSWORD, {"account": "forged", "service": "s", "accessGroup": GA}, b"f")
    honest.add(K.GENERIC_PASSWORD, {"account": "after", "service": "s", "accessGroup": GA}, b"g")
    assert len(reopen(honest.data, HOLDER_B).items) and len(reopen(honest.data).items) == len(items) + 2


def test_a_scoped_transaction_in_parts_then_a_full_open():
    w, items = scoped_file()
    before = reopen(w.data)
    a = scoped_writer(w.data, HOLDER_A, part_limit=700)
    with a.transaction() as t:
        new = [t.add(K.GENERIC_PASSWORD, {"account": f"p{n}", "service": "s", "accessGroup": GA}, bytes([n]) * 300)
               for n in range(4)]
    kc = reopen(a.data)
    records = [r for r in kc.records if r.offset >= before.committed_end]
    assert [r.kind for r in records] == [V2.KIND_PART] * (len(records) - 1) + [V2.KIND_COMMIT] and len(records) >= 3
    assert all(segment_key_ids(kc, r) == [2] for r in records[:-1]) and segment_key_ids(kc, records[-1])[-1] == 0
    assert set(kc.items) == set(items) | set(new) and kc.items[new[3]].secret == bytes([3]) * 300
    assert {k: h for k, h in last_heads(kc).items() if k != 2} == \
        {k: h for k, h in last_heads(before).items() if k != 2}
    assert len(reopen(a.data, HOLDER_B).items) == len([g for g in items.values() if g == GB])
    assert set(new) <= set(reopen(a.data, HOLDER_A).items)


def test_a_scoped_writer_gets_missing_entitlement_outside_its_groups():
    w, items = scoped_file()
    a = scoped_writer(w.data, HOLDER_A)
    data = a.data
    mine = next(i for i, g in items.items() if g == GA)
    theirs = next(i for i, g in items.items() if g == GB)
    for group in (GB, "", "a group the file lacks"):                       # an add outside its scope
        with pytest.raises(V3.MissingEntitlement) as e:
            a.add(K.GENERIC_PASSWORD, {"account": "x", "service": "s", "accessGroup": group}, b"x")
        assert e.value.group == group
    with pytest.raises(V3.MissingEntitlement) as e:                         # a move of its item into B
        a.update(mine, {"accessGroup": GB})
    assert e.value.group == GB
    with pytest.raises(V3.MissingEntitlement):                              # B's item: deleted, updated
        a.delete(theirs)
    with pytest.raises(V3.MissingEntitlement):
        a.update(theirs, {"label": "x"}, b"x")
    with pytest.raises(V3.MissingEntitlement):                              # the same in a transaction
        with a.transaction() as t:
            t.add(K.GENERIC_PASSWORD, {"account": "ok", "service": "s", "accessGroup": GA}, b"x")
            t.add(K.GENERIC_PASSWORD, {"account": "x", "service": "s", "accessGroup": GB}, b"x")
    with pytest.raises(V3.MissingEntitlement):
        with a.transaction() as t:
            t.delete(theirs)
    assert a.data == data                                                   # nothing written
    assert set(reopen(a.data).items) == set(items)
    a.update(mine, {"label": "inside"})                                      # its own group still writes
    assert reopen(a.data).items[mine].attributes["label"] == "inside"


def test_cli_open_and_append_with_a_scoped_password(tmp_path):
    w, items = scoped_file()
    path = tmp_path / "scoped.kcf"
    path.write_bytes(w.data)
    full = json.loads(run("dump", str(path), "--password", PASSWORD).stdout)
    for command in ("dump", "open"):
        out = run(command, str(path), "--password", HOLDER_A["password"])
        assert out.returncode == 0, out.stderr
        scoped = json.loads(out.stdout)
        assert set(scoped) == set(full) and scoped["groups"] == [{"keyID": 2, "name": GA}]
        assert sorted(i["id"] for i in scoped["items"]) == sorted(i.hex() for i, g in items.items() if g == GA)
        assert [i for i in full["items"] if i["group"] == GA] == scoped["items"]
    new = [{"class": "genericPassword", "attributes": {"account": "cli", "service": "s", "accessGroup": GA},
            "secret": "636c69"}]
    appended = run("append-scoped", str(path), "--password", HOLDER_A["password"], "--items", json.dumps(new))
    assert appended.returncode == 0, appended.stderr
    made = json.loads(appended.stdout)
    assert made["scoped"] is True and len(made["items"]) == 1
    after = json.loads(run("dump", str(path), "--password", PASSWORD).stdout)
    assert after["head"] == made["head"] and len(after["items"]) == len(items) + 1
    added = next(i for i in after["items"] if i["id"] == made["items"][0])
    assert added["group"] == GA and added["secret_hex"] == "636c69"
    # Outside its scope: exit 9, the group named, nothing written (the first item, inside, neither).
    before = path.read_bytes()
    outside = [new[0], {"class": "genericPassword", "attributes": {"account": "x", "accessGroup": GB}, "secret": ""}]
    refused = run("append", str(path), "--password", HOLDER_A["password"], "--items", json.dumps(outside))
    assert refused.returncode == 9 and json.loads(refused.stderr)["group"] == GB, refused.stderr
    assert json.loads(refused.stderr)["error"] == "MissingEntitlement" and path.read_bytes() == before


def _with_head_of_key_id_9(record, keys):
    """A commit's frame, its segments, and its heads segment sealed again with a head for key id 9 as far as K_log
    shows it — one segment, whose page tag is the record's first segment's (a scoped reader's check, §2.6): what a
    writer holding K_log alone can make."""
    frame = R.split(record)
    segments = [record[s["start"]:s["secrets"][1]] for s in frame["segments"]]
    heads = R.open_heads(segments[-1][R.SEGMENT_HEADER:], 0, keys.k_heads, keys.file_id, keys.epoch, frame["sequence"])
    heads[9] = {"startEpoch": keys.epoch, "groupSequence": 1, "lastTag": V3.page_tag(segments[0])}
    box = R.seal(keys.k_heads, R.heads_plaintext(heads), R.heads_aad(keys.file_id, keys.epoch, frame["sequence"]),
                 random.Random(1))
    return frame, segments, R.u8(0) + R.u32(len(box)) + R.u32(len(box)) + box


def test_a_segment_and_head_of_an_unknown_key_id_refused_by_a_full_holder_kept_by_a_scoped_one():
    """§2.10: a full holder refuses a segment or head of a key id its key table lacks; a scoped holder, which has no
    key table and cannot tell another group from none, keeps it as bytes and opens (§2.5.1)."""
    w, items = scoped_file()
    offset = w.written_end

    def add_key_id_9(record, previous, keys):
        frame, segments, heads = _with_head_of_key_id_9(record, keys)
        segments = segments[:-1] + [bytes([9]) + segments[0][1:], heads]
        return R.assemble(frame["kind"], frame["sequence"], frame["part"], segments, previous, keys.k_chain)
    tampering(w, add_key_id_9)
    put(w, "x", GA)
    # acknowledged by A's holder, whose commit carries key id 9's head on (a full writer's would drop it)
    a = scoped_writer(w.data, HOLDER_A)
    a.add(K.GENERIC_PASSWORD, {"account": "after", "service": "s", "accessGroup": GA}, b"s")
    with pytest.raises(V3.CorruptedRecord) as e:
        reopen(a.data)
    assert e.value.offset == offset and "key id 9" in e.value.reason, e.value.reason
    kc = reopen(a.data, HOLDER_A)
    assert len(kc.items) == len([g for g in items.values() if g == GA]) + 2
    forged = next(r for r in kc.records if r.offset == offset)
    assert [k for o, k, _ in kc.opaque_segments if o == offset] == [9] and 9 in forged.chain.others


def test_damaged_files_raise_only_typed_errors_to_a_scoped_holder():
    """As test_damaged_files_raise_only_typed_errors, opened by a scoped credential and a scoped writer."""
    w, _ = scoped_file(seed=12)
    data = w.data
    start = H.log_start(1)
    r = random.Random(6)
    outcomes = set()
    for n in range(30):
        damaged = bytearray(data)
        at = min(r.choice([0, 4096, 16384, start, start + 200, start + 900]) + r.randrange(1024), len(damaged) - 1)
        count = r.randrange(1, 300)
        damaged[at:at + count] = bytes(r.randrange(256) for _ in range(count))
        if r.random() < 0.3:
            damaged = damaged[:r.randrange(len(damaged))]
        try:
            if n % 3:
                reopen(damaged, HOLDER_A)
            else:
                scoped_writer(damaged, HOLDER_A).add(K.GENERIC_PASSWORD, {"account": "z", "accessGroup": GA}, b"z")
            outcomes.add("opened")
        except K.KCFError as e:
            outcomes.add(type(e).__name__)
    assert "opened" in outcomes and outcomes - {"opened"}, outcomes


# ------------------------------------------------------------------------------------------------
# Scoped rewrite (Docs/FormatVersion3.md §2.6 "Scoped rewrite", decided in session 47): chain starts in the header
# ------------------------------------------------------------------------------------------------

def segments_of(kc, key_id):
    """Every segment of key_id in kc's log, in log order, as bytes (read with records_v3.split)."""
    out = []
    for r in kc.records:
        record = kc.log[r.offset:r.offset + r.length]
        out += [record[s["start"]:s["secrets"][1]] for s in R.split(record)["segments"] if s["keyID"] == key_id]
    return out


def chain_starts_of(data):
    """(count at offset 109, [(key id, start epoch)]) of run A's header, read from its bytes (§2.6)."""
    raw = data[:V2.rd32(data, 12)]
    at = H.FIXED + V2.rd16(raw, 110)
    return raw[109], [(raw[at + 9 * i], V2.rd64(raw, at + 9 * i + 1)) for i in range(raw[109])]


def a_compacted():
    """scoped_file, then A's holder deletes two of A's items (each added by its own commit) and compacts."""
    w, items = scoped_file()
    before = reopen(w.data)
    a = scoped_writer(w.data, HOLDER_A)
    gone = [i for i, g in items.items() if g == GA][:2]
    for i in gone:
        a.delete(i)
    old = a.data
    a.compact()
    return w, items, gone, old, a


def test_a_scoped_compaction_copies_the_other_groups_and_rewrites_its_own():
    w, items, gone, old, a = a_compacted()
    old_full, new_full = reopen(old), reopen(a.data)
    # The header: epoch 2, two chain starts (the default group and B, which began at epoch 1), A not listed.
    assert new_full.epoch == 2 and chain_starts_of(a.data) == (2, [(1, 1), (3, 1)])
    assert H.parse_header(new_full.header.raw)["chainStarts"] == [(1, 1), (3, 1)]
    # The slots and the sealed key table byte for byte, the header MAC under the new epoch's K_header (it opened).
    old_raw, new_raw = old_full.header.raw, new_full.header.raw
    table = V2.rd16(old_raw, 110)
    assert new_raw[H.FIXED:H.FIXED + table] == old_raw[H.FIXED:H.FIXED + table]
    assert V3._slots_of(new_raw) == V3._slots_of(old_raw) and new_full.header.epoch_salt != old_full.header.epoch_salt
    # Every item as before, A's deleted ones gone; B's and the default group's segments byte for byte, in order,
    # dead ones included (B's deleted item's put and its deletion), and their heads where the old file had them.
    rest = set(items) - set(gone)
    assert set(new_full.items) == rest and same_items(new_full.items, old_full.items, rest)
    for k in (1, 3):
        assert segments_of(new_full, k) == segments_of(old_full, k) and len(segments_of(new_full, k)) >= 3
        assert last_heads(new_full)[k] == last_heads(old_full)[k]
    b = reopen(a.data, HOLDER_B)
    assert set(b.items) == {i for i, g in items.items() if g == GB} and same_items(b.items, old_full.items, b.items)
    assert set(reopen(a.data, HOLDER_A).items) == {i for i, g in items.items() if g == GA} - set(gone)
    # A's chain begins anew at epoch 2: its live items, then its tombstones (the two deletions), in key id 2's pages.
    assert last_heads(new_full)[2][0] == 2 and set(new_full.tombstones) >= set(gone)
    assert all(new_full.tombstone_groups[i] == 2 for i in gone)
    # Smaller by at least what A's deleted items took: their puts' records and the two deletions' records.
    took = sum(r.length for r in old_full.records if any(("put", i) in r.entries for i in gone) and
               segment_key_ids(old_full, r) == [2, 0])
    took += sum(r.length for r in old_full.records if any(("delete", i) in r.entries for i in gone))
    assert took > 0 and len(old) - len(a.data) >= took, (len(old), len(a.data), took)
    # The compacting writer goes on appending, and every holder follows.
    a.add(K.GENERIC_PASSWORD, {"account": "after", "service": "s", "accessGroup": GA}, b"after")
    assert len(reopen(a.data).items) == len(rest) + 1 and len(reopen(a.data, HOLDER_B).items) == len(b.items)


def test_a_second_scoped_compaction_by_b_then_a_full_one():
    w, items, gone, old, a = a_compacted()
    after_a = reopen(a.data)
    b = scoped_writer(a.data, HOLDER_B, seed=8)
    b.delete(next(i for i, g in items.items() if g == GB))
    b.compact()
    # Epoch 3: A's group is now a copied one, with its older start epoch 2; the default group still from epoch 1.
    assert chain_starts_of(b.data) == (2, [(1, 1), (2, 2)])
    after_b = reopen(b.data)
    assert segments_of(after_b, 2) == segments_of(after_a, 2) and segments_of(after_b, 1) == segments_of(after_a, 1)
    assert last_heads(after_b)[2] == last_heads(after_a)[2] and last_heads(after_b)[3][0] == 3
    assert set(after_b.items) == set(after_a.items) - set(b.tombstones)
    assert set(reopen(b.data, HOLDER_A).items) == {i for i in after_a.items if after_a.item_groups[i] == 2}
    # A full compaction afterwards writes every group anew: c = 0, every chain starting at epoch 4.
    fw = V3.WriterV3.open(b.data, PW, rng=random.Random(5), clock=clock())
    fw.path = None
    fw.compact()
    assert chain_starts_of(fw.data) == (0, []) and reopen(fw.data).epoch == 4
    assert {h[0] for h in last_heads(reopen(fw.data)).values()} == {4}
    assert set(reopen(fw.data).items) == set(after_b.items)
    assert len(reopen(fw.data, HOLDER_A).items) == len(reopen(b.data, HOLDER_A).items)


def with_header(data, change_starts=lambda starts: starts, extra_slots=()):
    """data with both runs' header rebuilt by a K_log holder: its chain starts replaced by change_starts(starts) and
    the slots `extra_slots` after its own (their bytes as given: never derived), the MAC and checksum made right
    (header_v3.build_header, which checks nothing)."""
    kc = reopen(data)
    raw = kc.header.raw
    ph = H.parse_header(raw)
    header = H.build_header(ph["fileID"], ph["epoch"], ph["salt"], ph["rewriteEnd"], V2.rd64(raw, 80),
                            ph["headChain"], V2.rd32(raw, 104), ph["table"],
                            [b for _, b, _ in ph["slots"]] + list(extra_slots), kc.keys.log_key,
                            change_starts(list(ph["chainStarts"])))
    assert H.page_count(len(header)) == H.page_count(len(raw))
    run = H.run_of(header)
    out = bytearray(data)
    out[0:len(run)] = run
    out[H.run_b_offset(1):H.run_b_offset(1) + len(run)] = run
    return bytes(out)


def test_a_chain_start_naming_a_wrong_epoch():
    w, items, gone, old, a = a_compacted()
    # Header only: B's start epoch 1 -> 0 (still before the header's epoch 2). B's page 1 no longer authenticates
    # for B's holders and the full holder (corrupted at the first record, naming key id 3).
    forged = with_header(a.data, lambda starts: [(k, 0 if k == 3 else e) for k, e in starts])
    for credential in (HOLDER_B, PW):
        with pytest.raises(V3.CorruptedRecord) as e:
            reopen(forged, credential)
        assert e.value.offset == 0 and "group 3's page does not authenticate as page 1" in e.value.reason, \
            e.value.reason
    # A's holder cannot open B's pages, but it reads the heads: they start B's chain at epoch 1, the header at 0.
    with pytest.raises(V3.CorruptedRecord) as e:
        reopen(forged, HOLDER_A)
    assert e.value.offset == 0 and "group 3's head starts its chain at epoch 1, the header at epoch 0" in \
        e.value.reason, e.value.reason
    # Header and heads forged alike (a scoped rewrite by a K_log holder that lies about B's start): A's holder
    # opens — nothing it can read disagrees; only K_B tells a start value — while B's holder and the full one refuse.
    w2, _ = scoped_file()
    liar = scoped_writer(w2.data, HOLDER_A)
    for i in gone:
        liar.delete(i)
    liar.head[1].others[3] = (0,) + liar.head[1].others[3][1:]
    liar.compact()
    assert chain_starts_of(liar.data) == (2, [(1, 1), (3, 0)])
    assert set(reopen(liar.data, HOLDER_A).items) == set(reopen(a.data, HOLDER_A).items)
    for credential in (HOLDER_B, PW):
        with pytest.raises(V3.CorruptedRecord) as e:
            reopen(liar.data, credential)
        assert "group 3's page does not authenticate as page 1" in e.value.reason, e.value.reason


@pytest.mark.parametrize("starts", [[(3, 1), (1, 1)], [(1, 1), (1, 1)], [(0, 1), (3, 1)], [(1, 1), (3, 2)],
                                    [(1, 2), (3, 1)], [(1, 1), (3, 1 << 40)]])
def test_chain_starts_out_of_order_or_not_before_the_epoch_are_corrupted(starts):
    w, items, gone, old, a = a_compacted()
    forged = with_header(a.data, lambda _: starts)
    for credential in (PW, HOLDER_A, HOLDER_B):
        with pytest.raises(K.Corrupted) as e:
            reopen(forged, credential)
        assert e.value.offset == 0 and "chain start of key id" in e.value.reason, e.value.reason
    assert reopen(with_header(a.data, lambda s: s), HOLDER_B).items     # the same header rebuilt as it was opens


def test_a_full_holder_refuses_a_chain_start_of_a_key_id_the_table_lacks():
    w, items, gone, old, a = a_compacted()
    forged = with_header(a.data, lambda s: s + [(9, 1)])
    with pytest.raises(K.Corrupted) as e:
        reopen(forged)
    assert "a chain start of key id 9" in e.value.reason, e.value.reason
    assert set(reopen(forged, HOLDER_B).items) == set(reopen(a.data, HOLDER_B).items)   # it cannot tell


def test_a_scoped_compaction_refuses_a_file_it_cannot_verify(tmp_path):
    w, items = scoped_file()
    kc = reopen(w.data)
    # B's last page, in the newest commit: one byte of its ciphertext flipped (its tag, which the chain covers, left).
    r = kc.records[-1]
    record = kc.log[r.offset:r.offset + r.length]
    seg = next(s for s in R.split(record)["segments"] if s["keyID"] == 3)
    damaged = bytearray(w.data)
    damaged[kc.layout.physical(r.offset + seg["page"][0] + 14)] ^= 0x40
    damaged = bytes(damaged)
    path = tmp_path / "damaged.kcf"
    path.write_bytes(damaged)
    a = V3.WriterV3.open(str(path), HOLDER_A, rng=random.Random(3), clock=clock())   # it cannot see B's ciphertext
    assert set(a.state.items) == {i for i, g in items.items() if g == GA}
    with pytest.raises(V3.ScopedRepairRefused) as e:
        a.compact()
    assert "do not match the newest commit slot's parity" in str(e.value) and path.read_bytes() == damaged
    with pytest.raises(V3.ScopedRepairRefused):       # nor does it append
        a.add(K.GENERIC_PASSWORD, {"account": "x", "service": "s", "accessGroup": GA}, b"x")
    assert path.read_bytes() == damaged
    # A full holder repairs it (parity, then B's page verifies) and writes; then A compacts.
    fw = V3.WriterV3.open(damaged, PW, rng=random.Random(5), clock=clock())
    fw.path = None
    fw.add(K.GENERIC_PASSWORD, {"account": "y", "service": "s"}, b"y")
    a = scoped_writer(fw.data, HOLDER_A)
    a.compact()
    assert len(reopen(a.data).items) == len(items) + 1
    # A newest commit cut short (a torn tail that may hold acknowledged data) is refused too.
    outcomes = []
    for cut in (1, 40, r.length - 1):                 # within the newest commit: its last write
        try:
            scoped_writer(w.data[:-cut], HOLDER_A).compact()
            outcomes.append("compacted")
        except (V2.SetAsideRefusal, V3.ScopedRepairRefused) as e:
            outcomes.append(type(e).__name__)
    # Each cut is rebuilt from the newest seal's parity (the bytes missing are erasures), which A cannot verify for
    # B's ciphertext: refused (a cut past what parity rebuilds is set aside, which every writer refuses).
    assert outcomes == ["ScopedRepairRefused"] * 3, outcomes


def test_cli_compact_with_a_scoped_then_a_full_password(tmp_path):
    w, items = scoped_file()
    path = tmp_path / "compact.kcf"
    path.write_bytes(w.data)
    before = json.loads(run("dump", str(path), "--password", PASSWORD).stdout)
    out = run("compact", str(path), "--password", HOLDER_A["password"], "--seed", "4")
    assert out.returncode == 0, out.stderr
    made = json.loads(out.stdout)
    assert made["scoped"] is True and made["epoch"] == 2
    assert made["chain_starts"] == [{"keyID": 1, "startEpoch": 1}, {"keyID": 3, "startEpoch": 1}]
    after = json.loads(run("dump", str(path), "--password", PASSWORD).stdout)
    assert after["chain_starts"] == made["chain_starts"] and after["head"] == made["head"]
    assert after["items"] == before["items"] and after["epoch"] == 2
    out = run("compact", str(path), "--password", PASSWORD)
    assert out.returncode == 0 and json.loads(out.stdout)["chain_starts"] == [], out.stderr
    assert json.loads(run("dump", str(path), "--password", PASSWORD).stdout)["items"] == before["items"]


def test_a_scoped_holder_refuses_a_head_of_a_group_without_segments():
    """§2.6's check of other groups' heads: a head naming pages of a key id that has no segment in the file (added by
    a K_log holder, the chain tag made right) is refused by A's holder, which cannot tell key id 9 from another
    group but can count its segments: none. (The full holder refuses it as a key id its table lacks.)"""
    w, items = scoped_file()
    offset = w.written_end

    def head_of_9(record, previous, keys):
        frame, segments, heads = _with_head_of_key_id_9(record, keys)
        segments[-1] = heads
        return R.assemble(frame["kind"], frame["sequence"], frame["part"], segments, previous, keys.k_chain)
    a = scoped_writer(w.data, HOLDER_A)
    tampering(a, head_of_9)
    a.add(K.GENERIC_PASSWORD, {"account": "x", "service": "s", "accessGroup": GA}, b"x")
    a.add(K.GENERIC_PASSWORD, {"account": "after", "service": "s", "accessGroup": GA}, b"y")
    for credential, reason in ((HOLDER_A, "the heads name 1 pages of group 9, which has no segment in the file"),
                               (PW, "a head of key id 9")):
        with pytest.raises(V3.CorruptedRecord) as e:
            reopen(a.data, credential)
        assert e.value.offset == offset and reason in e.value.reason, e.value.reason


# ------------------------------------------------------------------------------------------------
# Every group named in every commit (Docs/SpecVersion3Draft.md §35.7, §37.4, §38.1, §38.5, §38.7, §40 "drop all of B";
# session 51): a holder of A's credential must not be able to drop the whole of group B unnoticed
# ------------------------------------------------------------------------------------------------

HOLDER_C = {"password": "holder of the default group"}      # scoped to key id 1 (""): holds neither A nor B


def three_holders_file(b_items=True, seed=13):
    """A file of three groups (the default = key id 1, A = 2, B = 3) with a full slot and slots scoped to A, to B and
    to the default group (C); items in the default group and A, and (b_items) one in B. Returns (writer, {id: group})."""
    w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=random.Random(seed), clock=clock(), extra_groups=2,
                           scoped_slots=[(HOLDER_A["password"], [2]), (HOLDER_B["password"], [3]),
                                         (HOLDER_C["password"], [1])])
    items = {}
    for n, g in enumerate(["", GA, GB, GA, ""] if b_items else ["", GA, GA, ""]):
        items[put(w, f"i{n}", g)] = g
    return w, items


def heads_of_commits(kc):
    """Every commit's heads in kc's log, read from its bytes with K_heads: [{key id: (start, seq, tag)}]."""
    out = []
    for r in kc.records:
        if r.kind == V2.KIND_COMMIT:
            record = kc.log[r.offset:r.offset + r.length]
            box = R.split(record)["segments"][-1]
            heads = R.open_heads(record[box["page"][0]:box["page"][1]], 0, kc.keys.k_heads, kc.file_id, kc.epoch,
                                 r.sequence)
            out.append({k: (h["startEpoch"], h["groupSequence"], h["lastTag"]) for k, h in heads.items()})
    return out


def group_key(data, key_id):
    """K_g of key_id, as the full password's slot and the key table give it (header_v3)."""
    return bytes.fromhex(next(g["key"] for g in H.open_prefix(bytes(data), PW)["groups"] if g["keyID"] == key_id))


def drop_b(heads):
    heads.pop(3, None)


@pytest.mark.parametrize("how", ["scoped rewrite", "append, B has pages", "append, B has no pages"])
def test_a_scoped_holder_that_drops_all_of_b_is_caught_by_bs_holders_and_the_full_one(how):
    """§40 "drop all of B" (session 51): A's holder (K_log and K_A only) leaves no segment and no head of B. Every
    commit names every group (a group without a page at group sequence 0 with its start value), and a reader that
    follows B (B's holder, the full holder, whose key table names B) refuses a commit that does not name it.
    The rewrite: A's scoped compaction with B's segments and head left out (no chain start entry for B either);
    the file then shows nothing of B, so A's own holder and other scoped ones cannot tell (only B's key and the key
    table know B exists). The appends: A's commit whose heads leave B out, acknowledged by a later one."""
    w, items = three_holders_file(b_items=how != "append, B has no pages")
    assert 3 in last_heads(reopen(w.data)), "B is named before anything is dropped"
    a = scoped_writer(w.data, HOLDER_A)
    if how == "scoped rewrite":
        a.kc.opaque_segments = [s for s in a.kc.opaque_segments if s[1] != 3]      # what A's rewrite would copy
        del a.head[1].others[3]                                                    # and carry of B's head
        a.compact()
        offset = 0
        seen = reopen(a.data, HOLDER_A)                                            # the forgery, as A reads it:
        assert segments_of(seen, 3) == [] and all(3 not in h for h in heads_of_commits(seen))
        assert 3 not in [k for k, _ in chain_starts_of(a.data)[1]]                 # nothing of B left
    else:
        offset = a.written_end
        tampering(a, forge_heads(drop_b))
        a.add(K.GENERIC_PASSWORD, {"account": "forged", "service": "s", "accessGroup": GA}, b"f")
        a.add(K.GENERIC_PASSWORD, {"account": "after", "service": "s", "accessGroup": GA}, b"g")   # acknowledges it
    for credential in (HOLDER_B, PW):
        with pytest.raises(V3.CorruptedRecord) as e:
            reopen(a.data, credential)
        assert e.value.offset == offset and "the heads do not name group 3" in e.value.reason, e.value.reason
    # The same writes made honestly open for every holder.
    honest = scoped_writer(w.data, HOLDER_A)
    if how == "scoped rewrite":
        honest.compact()
    else:
        honest.add(K.GENERIC_PASSWORD, {"account": "forged", "service": "s", "accessGroup": GA}, b"f")
    for credential in (PW, HOLDER_A, HOLDER_B, HOLDER_C):
        assert reopen(honest.data, credential).committed_end > 0
    assert len(reopen(honest.data, HOLDER_B).items) == len([g for g in items.values() if g == GB])


def test_once_named_always_named_for_a_scoped_holder_of_a_third_group():
    """§37.4 (session 51): C's holder (the default group) holds neither A's key nor B's. B has no page, so K_log shows
    no segment of it; but the creation commit and every commit after it named B (group sequence 0), and a group once
    named is named by every commit: A's commit that leaves B out is refused by C's holder (and A's own), corrupted
    when acknowledged, set aside as the newest commit — as a head that does not match."""
    w, items = three_holders_file(b_items=False)
    before = reopen(w.data)
    assert segments_of(before, 3) == [] and all(h[3][1] == 0 for h in heads_of_commits(before))
    a = scoped_writer(w.data, HOLDER_A)
    offset = a.written_end
    tampering(a, forge_heads(drop_b))
    a.add(K.GENERIC_PASSWORD, {"account": "forged", "service": "s", "accessGroup": GA}, b"f")
    newest = a.data                                                  # the forged commit, not yet acknowledged
    a.add(K.GENERIC_PASSWORD, {"account": "after", "service": "s", "accessGroup": GA}, b"g")
    for credential in (HOLDER_C, HOLDER_A):
        with pytest.raises(V3.CorruptedRecord) as e:
            reopen(a.data, credential)
        assert e.value.offset == offset and "the heads do not name group 3, which an earlier commit named" in \
            e.value.reason, e.value.reason
        kc = reopen(newest, credential)
        assert kc.set_aside is not None and kc.set_aside[0] == offset and kc.committed_end == offset
    # Honestly, C's holder reads every commit (B named at group sequence 0 in each).
    honest = scoped_writer(w.data, HOLDER_A)
    honest.add(K.GENERIC_PASSWORD, {"account": "forged", "service": "s", "accessGroup": GA}, b"f")
    assert set(reopen(honest.data, HOLDER_C).items) == {i for i, g in items.items() if g == ""}


def test_a_new_file_holds_its_creation_commit_naming_the_default_group_at_sequence_0(tmp_path):
    """§38.1 (session 51): a new file holds one commit (sequence 1, after C0), its only segment the heads, which name
    the default group at group sequence 0 with its start value for epoch 1 (computed here from §35.4); the header's
    rewrite end and head are that commit's. The first item's page is group 1's page 1, sealed after that start
    value (opened here with AES-GCM from §35.4/§35.5's words)."""
    w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=random.Random(3), clock=clock())
    kc = reopen(w.data)
    assert [(r.kind, r.sequence, r.part, r.entries) for r in kc.records] == [(V2.KIND_COMMIT, 1, 0, [])]
    assert kc.head == (1, kc.records[0].chain) and kc.items == {} and kc.committed_end == kc.records[0].length
    assert (kc.header.rewrite_end, kc.header.rewrite_sequence, kc.header.rewrite_chain) == \
        (kc.records[0].length, 1, bytes(kc.records[0].chain))
    assert segment_key_ids(kc, kc.records[0]) == [0]
    k1 = group_key(w.data, 1)
    start = start_value(k1, kc.file_id, 1, 1)
    assert last_heads(kc) == {1: (1, 0, start)}
    added = put(w, "first")
    kc = reopen(w.data)
    assert set(kc.items) == {added} and kc.head[0] == 2
    r = kc.records[1]
    record = kc.log[r.offset:r.offset + r.length]
    seg = R.split(record)["segments"][0]
    page_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                    info=b"KCF3 group page" + kc.file_id + bytes([1])).derive(k1)
    aad = b"KCF3 page" + kc.file_id + bytes([1]) + (1).to_bytes(8, "big") + start
    box = record[seg["page"][0]:seg["page"][1]]
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    AESGCM(page_key).decrypt(box[:12], box[12:], aad)                  # raises unless chained from the start value
    assert last_heads(kc) == {1: (1, 1, box[-16:])}
    # The CLI: a file made with no items holds its creation commit.
    path = tmp_path / "empty.kcf"
    made = run("make", str(path), "--password", PASSWORD, "--iterations", "1000", "--seed", "2", "--items", "[]")
    assert made.returncode == 0 and json.loads(made.stdout)["head"]["sequence"] == 1, made.stderr
    out = json.loads(run("dump", str(path), "--password", PASSWORD).stdout)
    assert out["items"] == [] and [(r["kind"], r["sequence"]) for r in out["records"]] == [("commit", 1)]


def test_a_header_whose_rewrite_head_is_sequence_0_is_corrupted():
    """§38.1 (session 51): every file holds at least one commit, so a header of rewrite end 0 and rewrite head
    (0, C0) — a file whose log holds no commit, as a K_log holder can write it (header MAC and seal under K_header)
    — is corrupted for every holder: its records, and every group's heads with them, were cut away."""
    w, _ = three_holders_file(b_items=False)
    opened = H.open_prefix(w.data, PW)
    kc = reopen(w.data)
    raw = kc.header.raw
    ph = H.parse_header(raw)
    log_key, c0 = bytes.fromhex(opened["logKey"]), bytes.fromhex(opened["c0"])
    header = H.build_header(ph["fileID"], ph["epoch"], ph["salt"], 0, 0, c0, V2.rd32(raw, 104), ph["table"],
                            [b for _, b, _ in ph["slots"]], log_key)
    run_bytes = H.run_of(header)
    forged = bytearray(run_bytes + bytes(2 * H.SLOT_STRIDE) + run_bytes)      # n = 1: the prefix, no log
    k_header = H.epoch_keys(log_key, ph["fileID"], ph["epoch"], ph["salt"])["header"]
    seal = V2.build_seal(ph["epoch"], 1, 0, 0, (0, c0), k_header)          # counter 1 in slot 1, E_w = E_c = 0
    forged[4096 + 12288:4096 + 12288 + V2.SLOT_BYTES] = seal + bytes(V2.CHUNK_PARITY) + seal
    assert len(forged) == 8192 + 24576 and H.open_prefix(bytes(forged), PW)["epoch"] == 1   # the header verifies
    for credential in (PW, HOLDER_A, HOLDER_B):
        with pytest.raises(K.Corrupted) as e:
            reopen(forged, credential)
        assert "rewrite head sequence 0" in e.value.reason, e.value.reason


def test_a_full_compaction_keeps_a_group_without_pages_named_at_sequence_0():
    """§38.5 (session 51): B's one item deleted, its tombstone past the horizon at compaction: B gets no page in the
    new epoch, yet every commit of the new file names it at group sequence 0 with its start value for the new epoch
    (no chain start entry). B's holder opens it (no item) and adds, its page 1 chained from there."""
    w, items = three_holders_file()
    gone = next(i for i, g in items.items() if g == GB)
    w.delete(gone)
    w.clock = clock_from(1_700_000_000_000 + 100 * 86_400_000)      # 100 days later: the tombstone is dropped
    w.compact()
    kc = reopen(w.data)
    assert kc.epoch == 2 and chain_starts_of(w.data) == (0, []) and segments_of(kc, 3) == [] and not kc.tombstones
    sv = start_value(group_key(w.data, 3), kc.file_id, 3, 2)
    assert all(h[3] == (2, 0, sv) for h in heads_of_commits(kc)) and heads_of_commits(kc)
    b = reopen(w.data, HOLDER_B)
    assert b.items == {} and b.scoped
    bw = scoped_writer(w.data, HOLDER_B)
    added = bw.add(K.GENERIC_PASSWORD, {"account": "b again", "service": "s", "accessGroup": GB}, b"b")
    full = reopen(bw.data)
    assert full.item_groups[added] == 3 and last_heads(full)[3][:2] == (2, 1)
    assert set(reopen(bw.data, HOLDER_B).items) == {added}
    assert len(reopen(bw.data, HOLDER_A).items) == len([g for g in items.values() if g == GA])


def clock_from(start):
    values = iter(range(start, start + 10**9, 1000))
    return lambda: next(values)


def test_a_scoped_compaction_carries_a_group_without_pages_and_its_chain_start():
    """§38.7 (session 51): A's holder compacts a file whose group B has no page (its head: epoch 1, group sequence 0,
    the start value for epoch 1, which A's holder cannot make). The new file (epoch 2) carries that head unchanged in
    every commit and lists B's chain start (3, 1) in the header, so that B's holder computes the same start value:
    B's holder, the full holder and C's holder open it, and B's holder adds its page 1 after that start value. A
    second compaction by A keeps both."""
    w, items = three_holders_file(b_items=False)
    old_heads = last_heads(reopen(w.data))
    sv = start_value(group_key(w.data, 3), reopen(w.data).file_id, 3, 1)
    assert old_heads[3] == (1, 0, sv)
    a = scoped_writer(w.data, HOLDER_A)
    a.compact()
    kc = reopen(a.data)
    assert kc.epoch == 2 and chain_starts_of(a.data) == (2, [(1, 1), (3, 1)])
    assert all(h[3] == (1, 0, sv) for h in heads_of_commits(kc)) and heads_of_commits(kc)
    assert set(kc.items) == set(items)
    assert reopen(a.data, HOLDER_B).items == {}
    assert set(reopen(a.data, HOLDER_C).items) == {i for i, g in items.items() if g == ""}
    bw = scoped_writer(a.data, HOLDER_B)
    added = bw.add(K.GENERIC_PASSWORD, {"account": "b", "service": "s", "accessGroup": GB}, b"b")
    assert last_heads(reopen(bw.data))[3][:2] == (1, 1) and reopen(bw.data).item_groups[added] == 3
    assert set(reopen(bw.data, HOLDER_B).items) == {added}
    again = scoped_writer(a.data, HOLDER_A, seed=5)
    again.compact()
    assert chain_starts_of(again.data) == (2, [(1, 1), (3, 1)]) and last_heads(reopen(again.data))[3] == (1, 0, sv)
    assert reopen(again.data, HOLDER_B).items == {}


def test_a_scoped_compaction_whose_copied_segments_take_several_records_writes_them_as_one_transaction():
    """Decided in the reference (§38.7, session 51; report to the lead): every commit must name every group, and A's
    holder cannot name a copied group before its first copied page (its start value needs K_g). So copied segments
    that take more than one record are transaction parts; since session 51 (§38.5) A's own items are parts of the
    same transaction, whose one commit, the heads alone, names every group. Here
    the default group's segments fill the first records and B's first page comes later: B's holder, the full holder
    and C's holder open the result."""
    w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=random.Random(17), clock=clock(), extra_groups=2,
                           scoped_slots=[(HOLDER_A["password"], [2]), (HOLDER_B["password"], [3]),
                                         (HOLDER_C["password"], [1])])
    items = {put(w, f"d{n}", "", secret=bytes([n]) * 400): "" for n in range(6)}
    items.update({put(w, f"b{n}", GB, secret=bytes([n]) * 400): GB for n in range(2)})
    items[put(w, "a", GA)] = GA
    a = scoped_writer(w.data, HOLDER_A, part_limit=1500)
    a.compact()
    kc = reopen(a.data)
    copied = [r for r in kc.records if set(segment_key_ids(kc, r)) & {1, 3}]
    assert len(copied) >= 3 and copied == kc.records[:len(copied)] and 3 not in segment_key_ids(kc, copied[0])
    # §38.5 (session 51): the whole rewrite is one transaction — the copies, then A's items, all parts — and one
    # commit of the heads alone.
    kinds = [r.kind for r in kc.records]
    assert kinds == [V2.KIND_PART] * (len(kinds) - 1) + [V2.KIND_COMMIT], kinds
    assert [(r.sequence, r.part) for r in kc.records] == [(n + 1, n) for n in range(len(kc.records))]
    assert 2 in segment_key_ids(kc, kc.records[-2]) and segment_key_ids(kc, kc.records[-1]) == [0]
    assert segments_of(kc, 3) == segments_of(reopen(w.data), 3) and segments_of(kc, 1) == segments_of(reopen(w.data), 1)
    assert set(kc.items) == set(items)
    assert set(reopen(a.data, HOLDER_B).items) == {i for i, g in items.items() if g == GB}
    assert set(reopen(a.data, HOLDER_C).items) == {i for i, g in items.items() if g == ""}


# ------------------------------------------------------------------------------------------------
# Review §42 (Docs/SpecVersion3Draft.md): where the reference followed the Swift engine
# ------------------------------------------------------------------------------------------------

def with_slots(data, extra):
    """data with both runs' header rebuilt by a K_log holder with the slots `extra` after its own (with_header)."""
    return with_header(data, extra_slots=extra)


def argon_slot_like(slot, memory, passes, lanes=1, seed=0):
    """The password slot `slot` made an Argon2id slot of these parameters and another slot id: structurally a slot
    (§2.2), never opened (its commitment and anchor are the PBKDF2 slot's)."""
    rng = random.Random(seed)
    return slot[:1] + bytes([3]) + slot[2:4] + rng.randbytes(16) + V2.u32(memory) + V2.u32(passes) + \
        bytes([lanes]) + bytes(3) + slot[32:]


@pytest.mark.parametrize("memory, passes", [((1 << 22) + 8, 1), (1 << 23, 8), (8, (1 << 20) + 1)])
def test_d7_an_argon2id_slot_past_specs_bounds_is_corrupted_before_any_derivation(memory, passes):
    """§42 D7, SPEC §21.1 (Swift SlotKDF.parse): a version 3 slot's Argon2id memory is at most 2²² KiB and its
    passes at most 2²⁰, each on its own, not only memory × passes ≤ 2²⁶. The hostile slot comes after the file's
    own password slot, which opens first: a reader that did not bound it would open the file (and never derive it)."""
    w, _ = writer()
    own = H.parse_header(reopen(w.data).header.raw)["slots"][0][1]
    hostile = with_slots(w.data, [argon_slot_like(own, memory, passes, seed=1)])
    with pytest.raises(K.Corrupted) as e:
        reopen(hostile)
    assert e.value.offset == 0 and "argon2id parameters" in e.value.reason, e.value.reason
    with pytest.raises(S.Corrupted):
        S.parse_slot(argon_slot_like(own, memory, passes))
    # At the bounds: opens (the Argon2id slot is not derived: the password slot before it opens).
    for m, p in ((1 << 22, 16), (8, 1 << 20)):
        assert reopen(with_slots(w.data, [argon_slot_like(own, m, p, seed=2)])).items == reopen(w.data).items


def test_d5_a_batch_of_65536_entries_alternating_between_groups_is_written_in_parts_of_8192():
    """§42 D5 (Swift RecordLogV3.maximumEntriesPerPart, partRanges): a part holds at most 8,192 of the batch's entries,
    so that entries alternating between groups (each change of group a segment) never make a record pass 65,535
    segments. The part limit is raised so that the bytes never cut (with pages padded to 256 bytes, 65,536
    one-entry pages pass the default limit): they are written as 8 records of 8,192 entries (7 parts, then the
    commit), 8,192 group segments each, and read back in their groups."""
    w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=random.Random(21), clock=clock(), extra_groups=1)
    w.part_limit = 1 << 30
    n = 65_536
    batch = [w.make_put(K.GENERIC_PASSWORD, {"account": f"x{i}", "service": "s",
                                             "accessGroup": "group-0" if i % 2 else ""}, b"s") for i in range(n)]
    w.append(batch)
    kc = reopen(w.data)
    assert [(r.kind, r.part, len(r.entries)) for r in kc.records] == [(V2.KIND_COMMIT, 0, 0)] + \
        [(V2.KIND_PART, p, 8192) for p in range(7)] + [(V2.KIND_COMMIT, 7, 8192)]     # after the creation commit
    # The frame's segment count (u16 at byte 21 of the record): 8,192 pages, and the heads in the commit.
    assert [V2.rd16(kc.log, r.offset + 21) for r in kc.records] == [1] + [8192] * 7 + [8193]
    assert len(kc.items) == n and all(kc.item_groups[p.item_id] == 1 + i % 2 for i, p in enumerate(batch))


def test_d5_a_move_stays_in_the_part_of_its_put():
    """§42 D5: parts are cut by the batch's entries as the caller gave them (Swift cuts `entries` before it adds a
    move's deletion), so a move's deletion in the old group's page is in the same part as its put; the cut made
    small here to see it."""
    w, _ = writer(items=0)
    a = [put(w, f"a{i}", "A") for i in range(3)]
    limit = V3.MAX_ENTRIES_PER_PART
    V3.MAX_ENTRIES_PER_PART = 2
    try:
        with w.transaction() as t:                           # put, move, move, put, move: 5 entries, 8 sealed
            t.add(K.GENERIC_PASSWORD, {"account": "n0", "service": "s"}, b"x")
            t.update(a[0], {"accessGroup": ""})
            t.update(a[1], {"accessGroup": ""})
            t.add(K.GENERIC_PASSWORD, {"account": "n1", "service": "s", "accessGroup": "A"}, b"y")
            t.update(a[2], {"accessGroup": ""})
    finally:
        V3.MAX_ENTRIES_PER_PART = limit
    kc = reopen(w.data)
    last = [r for r in kc.records if r.sequence > kc.records[-1].sequence - 3]
    assert [(r.kind, [kind for kind, _ in r.entries]) for r in last] == \
        [(V2.KIND_PART, ["put", "delete", "put"]), (V2.KIND_PART, ["delete", "put", "put"]),
         (V2.KIND_COMMIT, ["delete", "put"])]
    assert all(kc.item_groups[i] == 1 for i in a) and set(a) <= set(kc.tombstones)   # §24.4: moves keep their time


def v3_declaration(pages):
    """16 bytes that declare a version 3 header of `pages` pages: magic, version 3, flags 0, a length of that many
    pages (as the Swift test V3DetectionOverridesVersion2HeaderTests builds them)."""
    return H.MAGIC + bytes([0, 3, 0, 0]) + V2.u32((pages - 1) * H.PAGE_DATA + 100)


@pytest.fixture(scope="module")
def version_2_file():
    """A version 2 file with more than a chunk of records, so that the sixteen places of a run B (28,672 … 90,112)
    lie in its header page B (n = 1), its log's chunk 0 (n = 2 … 15) and that chunk's parity (n = 16)."""
    w = V2.Writer.create(None, [PW], iterations=1000, rng=random.Random(31), clock=clock())
    for batch in range(8):
        with w.transaction() as t:
            for n in range(10):
                t.add(K.GENERIC_PASSWORD, {"account": f"a{batch}-{n}", "service": "s"}, bytes([n]) * 1000)
    assert len(w.data) > H.run_b_offset(16) + H.PAGE
    return w.data, V2.open_keychain(w.data, PW).items


@pytest.mark.parametrize("pages", [2, 3, 9, 15])
def test_d3_a_version_2_file_with_its_first_16_bytes_damaged_is_not_taken_for_version_3(version_2_file, pages):
    """§42 D3 (Swift RecordLogV3.isVersion3): the first 16 bytes (version 3, 2, 1), then run A's first page as parity
    repairs it, then version 2's layout (its page B, or either page's parity), and only then a run B at each of the
    sixteen places, fifteen of which lie in a version 2 file's log. A version 2 file whose first 16 bytes are damaged
    and whose record bytes where a run B of `pages` pages would stand declare a version 3 header (damage parity
    repairs) is version 2: unsupportedVersion(2) to this reader, not a damaged version 3 file; version 2's reader
    opens it whole."""
    data, items = version_2_file
    damaged = bytearray(data)
    damaged[0:16] = bytes(16)                                       # page A's first 16 bytes: parity repairs them
    at = H.run_b_offset(pages)
    damaged[at:at + 16] = v3_declaration(pages)                     # 16 bytes of a record in chunk 0
    assert pages in H.declared_pages(bytes(damaged), at)
    with pytest.raises(K.UnsupportedVersion) as e:
        reopen(damaged)
    assert e.value.version == 2
    assert V2.open_keychain(bytes(damaged), PW).items == items
    # The first 16 bytes intact: version 2 already (they decide, before any run B).
    damaged[0:16] = data[0:16]
    with pytest.raises(K.UnsupportedVersion) as e:
        reopen(damaged)
    assert e.value.version == 2


def test_d5_parts_are_cut_by_bytes_then_each_every_8192_entries():
    """§42 D5: as Swift's partRanges, the batch is cut into parts by bytes first, and each such part again every
    MAX_ENTRIES_PER_PART entries from its start (not one greedy cut that starts counting bytes anew at each entry
    cut). Six entries of one size, a byte limit that fits three, and the entry cut made 2: parts of 2, 1, 2, 1."""
    w, _ = writer(items=0)
    placed = w._place([w.make_put(K.GENERIC_PASSWORD, {"account": f"x{i}", "service": "s"}, b"s") for i in range(6)])

    def parts(limit):
        w.part_limit = limit
        return [len(p) for p in w._split(placed)]
    assert any(parts(limit) == [3, 3] for limit in range(100, 10_000, 10))   # stops at the first such limit
    limit = V3.MAX_ENTRIES_PER_PART
    V3.MAX_ENTRIES_PER_PART = 2
    try:
        assert [len(p) for p in w._split(placed)] == [2, 1, 2, 1]
    finally:
        V3.MAX_ENTRIES_PER_PART = limit


def grant_counts(data: bytes) -> list:
    """The grants each slot of a file's chosen header holds, in the header's order."""
    return [len(S.parse_slot(b)["grants"]) for b in V3._slots_of(bytes.fromhex(H.open_prefix(data, PW)["header"]))]


def test_d11_one_credential_adds_40_groups_its_own_slot_reanchored_each_time():
    # §2.2 "Writing it again", SpecVersion3Draft D11: the adder's own slot gets the new keys in a new anchor, not a
    # grant, so it never fills (the 33rd group added was refused when each one granted to it).
    w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=random.Random(11), clock=clock())
    added = [put(w, f"g{i}", f"group {i}") for i in range(40)]
    assert grant_counts(w.data) == [0]
    kc = reopen(w.data)
    assert set(kc.items) == set(added) and len(kc.keys.groups) == 41


def test_d11_a_scoped_compaction_empties_its_slot_of_the_grants_added_groups_left():
    w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=random.Random(12), clock=clock(), extra_groups=2,
                           scoped_password=SCOPED["password"])
    mine = put(w, "mine", "group-0")
    for i in range(3):
        put(w, f"n{i}", f"new {i}")
    assert grant_counts(w.data) == [0, 3]
    scoped = V3.WriterV3.open(w.data, SCOPED, rng=random.Random(13), clock=clock())
    scoped.path = None
    scoped.compact()
    assert grant_counts(scoped.data) == [0, 0]
    # The re-anchored slot opens with its credential on the same keys; the full holder reads everything and grants
    # to the slot again when it adds a group.
    assert set(reopen(scoped.data, SCOPED).items) == {mine}
    full = V3.WriterV3.open(scoped.data, PW, rng=random.Random(14), clock=clock())
    full.path = None
    assert len(full.state.items) == 4
    put(full, "later", "new 3")
    assert grant_counts(full.data) == [0, 1]
    assert set(reopen(full.data, SCOPED).items) == {mine}


def test_d11_a_slot_changed_since_its_holder_opened_it_is_copied_as_it_is():
    # The opening counts only while the header holds the very bytes it read (a slot granted to since holds a grant
    # its holder never read, which re-anchoring would cut).
    w = V3.WriterV3.create(None, PASSWORD, iterations=1000, rng=random.Random(15), clock=clock(), extra_groups=2,
                           scoped_password=SCOPED["password"])
    put(w, "mine", "group-0")
    put(w, "n0", "new 0")
    scoped = V3.WriterV3.open(w.data, SCOPED, rng=random.Random(16), clock=clock())
    scoped.path = None
    slot = V3._slots_of(scoped.header.raw)[1]
    scoped.kc.own_slot = {**scoped.kc.own_slot, "bytes": slot[:-1] + bytes([slot[-1] ^ 1])}
    scoped.compact()
    assert grant_counts(scoped.data) == [0, 1] and V3._slots_of(scoped.header.raw)[1] == slot


@pytest.mark.parametrize("how", ["scoped compaction by A", "full compaction, A and B first after 4,096 entries"])
def test_a_rewrite_names_no_group_with_pages_at_group_sequence_0(how):
    """§38.5 (session 51, review-s51 F1): a rewrite's records are one transaction, parts then one commit of the heads
    alone, so no commit of the new file names a group that has pages in it at group sequence 0 — such a head carries
    the group's start value for the new epoch, with which a K_log holder could later write the group as empty. The
    scoped case: A's holder compacts (A has items, the default group and B have segments to copy); the old writer
    sealed the copies' commit with A at group sequence 0. The full case: 4,100 default-group items, then A's items
    and B's tombstone alone (its item deleted) — A's and B's first entries come after the first batch of 4,096, which
    the old writer committed with A and B at group sequence 0. Each new file opens whole for the full holder and for
    each group's holder."""
    w, items = three_holders_file()
    if how == "scoped compaction by A":
        before = set(reopen(w.data).items)
        a = scoped_writer(w.data, HOLDER_A)
        a.compact()
        data = a.data
    else:
        with w.transaction() as t:
            for n in range(4100):
                t.add(K.GENERIC_PASSWORD, {"account": f"d{n}", "service": "s"}, b"d")
        gone = next(i for i, g in items.items() if g == GB)
        w.delete(gone)
        before = set(reopen(w.data).items)
        w.compact()
        data = w.data
    full = reopen(data)
    assert full.epoch == 2
    paged = {k for k in (1, 2, 3) if segments_of(full, k)}
    assert paged == {1, 2, 3}, paged
    commits = heads_of_commits(full)
    leaked = [(n, k) for n, heads in enumerate(commits) for k in paged if heads[k][1] == 0]
    assert commits and leaked == [], leaked
    if how != "scoped compaction by A":
        assert set(full.tombstone_groups.values()) == {3} and len(full.records) > 2
    # Whole: every item, nothing set aside, the committed end at the end of the log, for every holder.
    assert set(full.items) == before and full.set_aside is None and full.committed_end == len(full.log)
    for credential, group in ((HOLDER_A, GA), (HOLDER_B, GB), (HOLDER_C, "")):
        kc = reopen(data, credential)
        assert kc.set_aside is None and kc.committed_end == full.committed_end
        assert set(kc.items) == {i for i, item in full.items.items() if V3.group_of(item) == group}


def test_worked_example_v3_trace_is_up_to_date():
    """SPEC.md §42 quotes this trace of the Swift-written Fixtures/v3/worked-example.kcf, made by trace_v3.py from the
    file and the passwords alone (every tag and MAC verified on the way: a failed check raises TraceFailure)."""
    import trace_v3 as T
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    fixtures = os.path.join(root, "Fixtures", "v3")
    with open(os.path.join(fixtures, "worked-example.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    args = (os.path.join(fixtures, "worked-example.kcf"), manifest["credential"]["password"], "the mail app's password",
            "hunter2", manifest)
    with open(os.path.join(here, "worked-example-v3-trace.md"), encoding="utf-8") as f:
        assert f.read() == T.trace(*args)
    with open(os.path.join(root, "SPEC.md"), encoding="utf-8") as f:
        spec = f.read()
    start = spec.index("### 42.1 ")
    end = spec.find("\n## 43. ", start)           # §43 (merging copies) follows the worked example
    assert spec[start:(end if end >= 0 else len(spec))] == T.trace(*args, spec=True)

"""Tests of the version 3 whole-file reference reader and writer (kcf_reference_v3.py).

    cd Scripts/reference && python3 -m pytest -q test_reference_v3.py
"""

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
import records_v3 as R  # noqa: E402

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
    assert kc.head[0] == len(kc.records) == 8 and kc.repairs == [] and kc.remnant is None
    # §2.10's prefix, checked from the bytes rather than through the writer's layout.
    n = kc.page_count
    assert n == pages and data[:8] == V2.MAGIC and data[8:10] == b"\x00\x03"
    assert data[:n * H.PAGE] == data[H.run_b_offset(n):H.run_b_offset(n) + n * H.PAGE]
    start = 8192 * n + 24576
    assert len(data) == start + kc.written_end                     # one partial chunk
    assert data[start + 8] == 1 and V2.rd64(data, start + 9) == 1  # the first record: a commit, sequence 1
    # The newest seal lies at 4,096·n (counter even) or 12,288 further, under K_header of header_v3's keys.
    opened = H.open_prefix(data, PW)
    at = 4096 * n + (kc.newest.counter % 2) * 12288
    k_header = H.epoch_keys(bytes.fromhex(opened["logKey"]), kc.file_id, kc.epoch, kc.header.epoch_salt)["header"]
    fields, _ = V2.read_seal_copy(data[at:at + V2.SEAL], k_header, kc.epoch)
    assert fields is not None and fields[3] == kc.committed_end and fields[5] == kc.head[1]
    # The first record decodes on its own (records_v3) with C0 as its previous chain and group 1 at page 1.
    first = R.decode_record(data[start:start + kc.records[0].length], {
        "fileID": kc.file_id.hex(), "epoch": kc.epoch, "chainKey": opened["chainKey"], "headsKey": opened["headsKey"],
        "previousChain": opened["c0"], "groups": [{"keyID": 1, "key": opened["groups"][0]["key"], "startEpoch": 1}]})
    assert first["heads"] == [{"keyID": 1, "startEpoch": kc.epoch, "groupSequence": 1, "lastTag": first["groups"][0]["lastTag"]}]
    # A second writer carries the group chain on.
    w2 = V3.WriterV3.open(data, PW, rng=random.Random(3), clock=clock())
    w2.path = None
    later = w2.add(K.GENERIC_PASSWORD, {"account": "later", "service": "s"}, b"l")
    after = reopen(w2.data)
    assert set(after.items) == set(kc.items) | {later} and after.head[0] == 9


def test_transaction_in_parts_and_pages():
    w, _ = writer(part_limit=900)
    with w.transaction() as t:
        for n in range(6):
            t.add(K.GENERIC_PASSWORD, {"account": f"p{n}", "service": "s"}, b"y" * 150)
    w.part_limit = V2.MAX_BODY
    two_page_commit(w)
    data = w.data
    kc = reopen(data)
    transaction, last = kc.records[3:-1], kc.records[-1]
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

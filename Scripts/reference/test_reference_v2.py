"""Tests of the version 2 reference reader and writer (kcf_reference_v2.py) and its Reed–Solomon codec.

    python3 -m pytest -q Scripts/reference/test_reference_v2.py
"""

import glob
import hashlib
import json
import os
import random
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import kcf_reference as K  # noqa: E402
import kcf_reference_v2 as V  # noqa: E402
import rs255 as RS  # noqa: E402

PW = {"password": "correct horse battery staple"}
HEALING = os.path.join(ROOT, "Fixtures", "healing")


def clock():
    values = iter(range(1_700_000_000_000, 1_800_000_000_000, 1000))
    return lambda: next(values)


def writer(seed=7, part_limit=V.MAX_BODY, items=3):
    w = V.Writer.create(None, [PW], iterations=1000, rng=random.Random(seed), clock=clock(), part_limit=part_limit)
    ids = [w.add(K.GENERIC_PASSWORD, {"account": f"a{n}", "service": "s"}, b"secret %d" % n) for n in range(items)]
    return w, ids


def reopen(data, credential=PW):
    return V.open_keychain(bytes(data), credential)


def big_file(seed=3):
    """About 150 KB of log over three chunks: one transaction of 600 items, then single adds."""
    w = V.Writer.create(None, [PW], iterations=1000, rng=random.Random(seed), clock=clock())
    with w.transaction() as t:
        for n in range(600):
            t.add(K.GENERIC_PASSWORD, {"account": f"user{n}", "service": "svc"}, bytes([n & 0xFF]) * 100)
    for n in range(5):
        w.add(K.GENERIC_PASSWORD, {"account": f"late{n}", "service": "svc"}, b"late")
    return w


@pytest.fixture(scope="module")
def big():
    w = big_file()
    return w.data, reopen(w.data)


# ------------------------------------------------------------------------------------------------
# Reed–Solomon
# ------------------------------------------------------------------------------------------------

def test_rs_matches_reedsolo_vectors():
    cases = json.load(open(os.path.join(HEALING, "reedsolomon.json")))["cases"]
    assert len(cases) == 160
    for c in cases:
        data = bytes.fromhex(c["data"])
        assert RS.encode(data, c["nsym"]) == bytes.fromhex(c["parity"])
        fixed, _ = RS.decode(bytes.fromhex(c["received"]), c["nsym"], c["erasures"])
        assert fixed[:len(data)] == bytes.fromhex(c["message"])


def test_rs_fixed_positions_parity_is_incremental():
    rng = random.Random(1)
    message = [rng.randrange(256) for _ in range(223)]
    for cut in (0, 1, 100, 223):
        padded = message[:cut] + [0] * (223 - cut)
        assert RS.parity_of_symbols(message[:cut]) == RS.encode(padded, 32)


def test_rs_refuses_17_errors_and_repairs_16():
    rng = random.Random(2)
    message = bytes(rng.randrange(256) for _ in range(223))
    word = bytearray(message + RS.encode(message, 32))
    for p in rng.sample(range(255), 16):
        word[p] ^= 0xA5
    assert RS.decode(word, 32)[0][:223] == message
    word = bytearray(message + RS.encode(message, 32))
    for p in rng.sample(range(255), 17):
        word[p] ^= 0x3C
    try:
        fixed, _ = RS.decode(word, 32)
        assert fixed[:223] != message          # a miscorrection is possible, a right answer is not
    except RS.Uncorrectable:
        pass


def test_chunk_parity_repairs_any_4k_burst():
    rng = random.Random(4)
    data = bytes(rng.randrange(256) for _ in range(V.CHUNK))
    parity = V.chunk_parity(data)
    for start in (0, 1, 12345, V.CHUNK - 4096):
        damaged = bytearray(data)
        damaged[start:start + 4096] = bytes(4096)
        fixed, changed, failed = V.repair_chunk(bytes(damaged), parity)
        assert fixed == data and failed == 0


# ------------------------------------------------------------------------------------------------
# The published vectors of Scripts/vectors
# ------------------------------------------------------------------------------------------------

def test_header_vectors():
    d = json.load(open(os.path.join(HEALING, "header-v2.json")))
    header = bytes.fromhex(d["header"])
    assert V.build_page(header) == bytes.fromhex(d["page"])
    h = V.parse_header(header)
    assert (h.epoch, h.rewrite_end, h.rewrite_sequence, h.horizon_days) == (3, 123_456, 42, 90)
    for vector, slot in zip(d["slots"], h.slots):
        c = vector["credential"]
        cred = {"password": c["password"]} if "password" in c else {"key": bytes.fromhex(c["key"])}
        mk, failed = V.open_slot(slot, h.file_id, cred, {})
        assert mk is not None and mk.hex() == d["masterKey"] and not failed, vector["label"]
        other = {"password": "wrong"} if "password" in c else {"key": bytes(32)}
        assert V.open_slot(slot, h.file_id, other, {}) == (None, False)
    k_header, k_record, _, c0 = V.epoch_keys(bytes.fromhex(d["masterKey"]), h)
    assert (k_header.hex(), k_record.hex(), c0.hex()) == (d["headerKey"], d["recordKey"], d["initialChain"])


class FixedNonces:
    """An rng for encode_record that hands out the vector's nonces in order."""

    def __init__(self, nonces):
        self.nonces = [bytes.fromhex(n) for n in nonces]

    def randbytes(self, n):
        assert n == 12
        return self.nonces.pop(0)


def test_record_vectors_both_ways():
    d = json.load(open(os.path.join(HEALING, "records-v2.json")))
    keys = V.Keys(bytes.fromhex(d["fileID"]), d["epoch"], b"", bytes.fromhex(d["recordKey"]),
                  bytes.fromhex(d["secretKey"]), bytes.fromhex(d["initialChain"]))
    chain = keys.c0
    for r in d["records"]:
        raw = bytes.fromhex(r["bytes"])
        frame = V.parse_frame(raw, 0, len(raw))
        entries, new_chain = V.open_record(raw, frame, keys, chain)
        assert (frame.kind, frame.sequence, frame.part, new_chain.hex()) == (r["kind"], r["sequence"], r["part"], r["chain"])
        assert [e.item_id.hex() for e in entries] == [e["id"] for e in r["entries"]]
        out = []
        for e, x in zip(entries, r["entries"]):
            if e.kind == V.ENTRY_PUT:
                assert e.item.secret.hex() == x["secret"]
                out.append(K.Put(e.item_id, e.item.cls, e.item.attributes, e.item.secret))
            else:
                assert (e.kind, e.time) == (x["kind"], x["time"])
                out.append(V.Tombstone(e.item_id, e.time) if e.kind == 3 else _delete(e.item_id, e.time))
        again, again_chain = V.encode_record(out, sequence=frame.sequence, kind=frame.kind, part=frame.part,
                                             chain=chain, keys=keys, rng=FixedNonces(r["nonces"]))
        assert again == raw and again_chain == new_chain
        chain = new_chain


def _delete(item_id, time):
    d = K.Delete(item_id)
    d.time = time
    return d


# ------------------------------------------------------------------------------------------------
# Round trips
# ------------------------------------------------------------------------------------------------

def test_new_file_layout_and_initial_commit():
    w, _ = writer(items=0)
    data = w.data
    assert len(data) == V.PREFIX
    assert data[V.HEADER_A:V.HEADER_A + V.PAGE] == data[V.HEADER_B:V.HEADER_B + V.PAGE]
    assert not any(data[V.SLOT_OFFSETS[0]:V.SLOT_OFFSETS[0] + V.SLOT_BYTES])
    kc = reopen(data)
    assert kc.items == {} and kc.head == (0, kc.keys.c0)
    assert (kc.newest.slot, kc.newest.counter, kc.committed_end, kc.written_end) == (1, 1, 0, 0)
    assert kc.remnant is None and kc.set_aside is None and kc.repairs == []


def test_round_trip_classes_update_delete_transaction():
    w, ids = writer()
    inet = w.add(K.INTERNET_PASSWORD, {"account": "bob", "server": "example.com", "port": 443, "path": "/x"}, b"web")
    key = w.add(K.KEY, {"label": "k", "keyClass": 1, "applicationLabel": b"\x01" * 20}, b"\x02" * 64)
    w.update(ids[0], {"label": "renamed"}, b"changed")
    w.delete(ids[1])
    with w.transaction() as t:
        new = t.add(K.GENERIC_PASSWORD, {"account": "t", "service": "s"}, b"")
        t.delete(ids[2])
    kc = reopen(w.data)
    assert set(kc.items) == {ids[0], inet, key, new}
    assert kc.items[ids[0]].secret == b"changed" and kc.items[ids[0]].attributes["label"] == "renamed"
    assert kc.items[new].secret == b"" and kc.items[key].cls == K.KEY
    assert kc.head[0] == len(kc.records) == 8
    assert set(kc.tombstones) == {ids[1], ids[2]}
    assert V.Writer.create(None, [PW], iterations=1000, rng=random.Random(7), clock=clock()).data == \
        writer(items=0)[0].data                                    # deterministic under a seed


def test_raw_key_and_two_slots():
    key = bytes(range(32))
    w = V.Writer.create(None, [PW, {"key": key}], iterations=1000, rng=random.Random(9), clock=clock())
    item = w.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s"}, b"x")
    for cred, slot in ((PW, 0), ({"key": key}, 1)):
        kc = reopen(w.data, cred)
        assert kc.slot_used == slot and kc.items[item].secret == b"x"
    with pytest.raises(K.WrongCredentials):
        reopen(w.data, {"password": "nope"})
    with pytest.raises(K.WrongCredentials):
        reopen(w.data, {"key": bytes(32)})


def test_transaction_in_parts_round_trip():
    w, _ = writer(part_limit=600)
    with w.transaction() as t:
        for n in range(6):
            t.add(K.GENERIC_PASSWORD, {"account": f"p{n}", "service": "s"}, b"y" * 150)
    kc = reopen(w.data)
    tail = kc.records[3:]
    assert [(r.kind, r.part) for r in tail] == [(3, 0), (3, 1), (3, 2), (3, 3), (3, 4), (1, 5)]
    assert [r.sequence for r in tail] == list(range(4, 10))
    assert len(kc.items) == 9 and kc.newest.counter == 1 + 3 + 6  # every part sealed


def test_chunks_and_their_parity(big):
    data, kc = big
    assert len(kc.items) == 605 and kc.committed_end > 2 * V.CHUNK
    log = V._Log(data)
    for chunk in range(kc.committed_end // V.CHUNK):
        assert log.complete_parity(chunk) == V.chunk_parity(log.bytes[chunk * V.CHUNK:(chunk + 1) * V.CHUNK])
    assert len(data) == V.physical(kc.written_end)
    assert kc.newest.parity == V.chunk_parity(log.bytes[2 * V.CHUNK:kc.written_end])


# ------------------------------------------------------------------------------------------------
# Damage
# ------------------------------------------------------------------------------------------------

def test_every_flipped_byte_of_a_record_is_repaired():
    w, ids = writer()
    data = w.data
    kc = reopen(data)
    record = kc.records[1]
    for logical in range(record.offset, record.offset + record.length):
        damaged = bytearray(data)
        damaged[V.physical(logical)] ^= 0x40
        after = reopen(damaged)
        assert after.items == kc.items and after.head == kc.head, logical
        assert after.repaired_log == {logical: data[V.physical(logical)]}


def test_flip_in_the_last_chunk_uses_the_slot_parity(big):
    data, kc = big
    damaged = bytearray(data)
    at = kc.records[-1].offset + 50
    damaged[V.physical(at)] ^= 1
    after = reopen(damaged)
    assert after.items == kc.items and list(after.repaired_log) == [at]


@pytest.mark.parametrize("logical", [1000, 60_000, V.CHUNK - 2048, 2 * V.CHUNK + 1000])
def test_a_zeroed_4k_sector_is_repaired(big, logical):
    data, kc = big
    damaged = bytearray(data)
    start = V.physical(logical)
    damaged[start:start + 4096] = bytes(4096)
    after = reopen(damaged)
    assert after.items == kc.items and after.head == kc.head
    assert any("repaired by parity" in r for r in after.repairs)


def test_repair_written_back_by_the_next_writer():
    w, _ = writer()
    data = bytearray(w.data)
    kc = reopen(data)
    data[V.physical(kc.records[0].offset + 60)] ^= 0xFF
    w2 = V.Writer(path=None, data=bytes(data), kc=reopen(data), rng=random.Random(1), clock=clock())
    w2.add(K.GENERIC_PASSWORD, {"account": "n", "service": "s"}, b"n")
    after = reopen(w2.data)
    assert after.repairs == [] and len(after.items) == 4


def test_header_copies():
    w, _ = writer()
    data = w.data
    kc = reopen(data)
    for base in (V.HEADER_A, V.HEADER_B):
        zeroed = bytearray(data)
        zeroed[base:base + V.PAGE] = bytes(V.PAGE)
        after = reopen(zeroed)
        assert after.items == kc.items and after.pages_to_rewrite == ["A" if base == 0 else "B"]
    burst = bytearray(data)
    burst[100:356] = bytes(256)                                  # 16 symbols of each codeword
    after = reopen(burst)
    assert after.items == kc.items and any("repaired by its parity" in r for r in after.repairs)
    both = bytearray(data)
    both[0:V.PAGE] = bytes(V.PAGE)
    both[V.HEADER_B:V.HEADER_B + V.PAGE] = bytes(V.PAGE)
    with pytest.raises(K.NotAKeychain):
        reopen(both)


def test_seal_copies():
    w, _ = writer()
    data = w.data
    kc = reopen(data)
    at = V.SLOT_OFFSETS[kc.newest.slot]
    one = bytearray(data)
    one[at:at + V.SEAL] = bytes(V.SEAL)
    assert reopen(one).newest.counter == kc.newest.counter
    flips = bytearray(data)
    for p in (3, 40, 90, V.SLOT_SEAL2_AT + 5, V.SLOT_SEAL2_AT + 70):
        flips[at + p] ^= 0x81
    assert reopen(flips).newest.counter == kc.newest.counter
    torn = bytearray(data)                                       # copy 2 holds the slot's previous seal
    old = V.build_seal(kc.epoch, kc.newest.counter - 2, 0, 0, (0, kc.keys.c0), kc.keys.k_header)
    torn[at + V.SLOT_SEAL2_AT:at + V.SLOT_BYTES] = old
    after = reopen(torn)
    assert after.newest.counter == kc.newest.counter - 1        # the torn slot does not count
    assert len(after.items) == len(kc.items) - 1 and after.remnant is not None


# ------------------------------------------------------------------------------------------------
# §3: remnants, undone transactions, records set aside, roll-back
# ------------------------------------------------------------------------------------------------

def test_torn_remnant_is_not_applied_and_is_cut():
    w, _ = writer()
    before = reopen(w.data)
    w.append([w.make_put(K.GENERIC_PASSWORD, {"account": "torn", "service": "s"}, b"t")], seal=False)
    kc = reopen(w.data)
    assert kc.items == before.items and kc.head == before.head
    assert kc.remnant == (before.committed_end, len(V._Log(w.data).bytes) - before.committed_end)
    w2 = V.Writer(path=None, data=w.data, kc=kc, rng=random.Random(2), clock=clock())
    new = w2.add(K.GENERIC_PASSWORD, {"account": "torn", "service": "s"}, b"again")
    after = reopen(w2.data)
    assert after.remnant is None and after.items[new].secret == b"again" and after.head[0] == before.head[0] + 1


def test_cut_transaction_is_undone_then_cut():
    w, _ = writer(part_limit=600)
    before = reopen(w.data)
    entries = [w.make_put(K.GENERIC_PASSWORD, {"account": f"p{n}", "service": "s"}, b"y" * 150) for n in range(6)]
    w.append(entries, cut_after=3)
    kc = reopen(w.data)
    assert kc.items == before.items and kc.head == before.head and kc.remnant is None
    assert kc.undone[0] == before.committed_end and kc.newest.written_end > kc.committed_end
    w2 = V.Writer(path=None, data=w.data, kc=kc, rng=random.Random(3), clock=clock())
    w2.add(K.GENERIC_PASSWORD, {"account": "after", "service": "s"}, b"a")
    after = reopen(w2.data)
    assert after.undone is None and len(after.items) == 4 and after.head[0] == before.head[0] + 1


def test_newest_record_past_repair_is_set_aside_and_writes_refused():
    w, _ = writer()
    data = bytearray(w.data)
    kc = reopen(data)
    last = kc.records[-1]
    for i in range(last.offset + 40, last.offset + last.length):
        data[V.physical(i)] ^= 0x5A
    slot = V.SLOT_OFFSETS[kc.newest.slot]
    for i in range(slot + V.SLOT_PARITY_AT, slot + V.SLOT_SEAL2_AT):
        data[i] ^= 0x33                                          # its parity too
    after = reopen(data)
    assert after.set_aside[0] == last.offset and len(after.items) == len(kc.items) - 1
    with pytest.raises(V.SetAsideRefusal):
        V.Writer(path=None, data=bytes(data), kc=after, rng=None, clock=clock())


def test_older_record_past_repair_is_corrupted():
    w, _ = writer()
    data = bytearray(w.data)
    kc = reopen(data)
    first = kc.records[0]
    for i in range(first.offset + 40, first.offset + first.length):
        data[V.physical(i)] ^= 0x5A
    for chunk_slot in V.SLOT_OFFSETS:                            # no parity can repair it
        for i in range(chunk_slot + V.SLOT_PARITY_AT, chunk_slot + V.SLOT_SEAL2_AT):
            data[i] ^= 0x33
    with pytest.raises(K.Corrupted):
        reopen(data)


def test_cut_below_the_older_commit_is_corrupted_and_in_the_newest_repaired():
    w, _ = writer()
    data = w.data
    kc = reopen(data)
    for length in (V.physical(kc.records[-2].offset + 10), V.PREFIX):
        with pytest.raises(K.Corrupted) as e:                   # §25.5: corrupted(file length)
            reopen(data[:length])
        assert e.value.offset == length
    after = reopen(data[:V.physical(kc.records[-1].offset + 10)])   # the missing bytes are erasures
    assert after.items == kc.items


def test_a_newest_record_that_never_reached_the_file_is_rebuilt_from_the_slot_parity():
    """§3 rule 4: the slot landed, the record and the file's new size did not: the missing bytes are erasures
    for the slot's parity, which rebuilds a record of up to 32 bytes per codeword (8 KiB) whole."""
    w, _ = writer()
    end = w.committed_end
    big = w.add(K.GENERIC_PASSWORD, {"account": "big", "service": "s"}, bytes(range(256)) * 20)
    full = reopen(w.data)
    cut = w.data[:V.physical(end)]
    after = reopen(cut)
    assert after.items == full.items and after.head == full.head and after.items[big].secret == bytes(range(256)) * 20
    assert end <= min(after.repaired_log) < end + 8 and after.set_aside is None
    rebuilt = V.Writer(path=None, data=cut, kc=after, rng=random.Random(1), clock=clock()).data
    assert rebuilt == w.data                                     # written back whole


def test_refusals():
    w, _ = writer()
    with pytest.raises(K.NotAKeychain):
        reopen(b"hello, world, not a keychain file")
    v1 = K.make_example()
    with pytest.raises(K.UnsupportedVersion) as e:
        reopen(v1, {"password": K.EXAMPLE_PASSWORD})
    assert e.value.version == 1
    bad_kind = bytearray(w.data)
    log = V._Log(w.data).bytes
    boxes = V.parse_frame(log, 0, len(log)).boxes
    first = V.physical(0)
    bad_kind[first + 8] = 9                                       # kind 9, frame check recomputed
    heads = b"".join(bytes(log[start - 6:start]) for _, _, start, _ in boxes)
    bad_kind[first + 29:first + 33] = hashlib.sha256(bytes(bad_kind[first:first + 29]) + heads).digest()[:4]
    with pytest.raises(V.UnsupportedFeature):
        reopen(bad_kind)


def test_cli(tmp_path):
    w, _ = writer()
    path = tmp_path / "f.kcf"
    path.write_bytes(w.data)
    script = os.path.join(HERE, "kcf_reference_v2.py")
    run = subprocess.run([sys.executable, script, "dump", str(path), "--password", PW["password"]],
                         capture_output=True, text=True)
    assert run.returncode == 0
    out = json.loads(run.stdout)
    assert len(out["items"]) == 3 and out["remnant"] is None and out["repairs"] == []
    run = subprocess.run([sys.executable, script, "dump", str(path), "--password", "wrong"], capture_output=True)
    assert run.returncode == 5
    path.write_bytes(w.data[:V.PREFIX])
    run = subprocess.run([sys.executable, script, "dump", str(path), "--password", PW["password"]], capture_output=True)
    assert run.returncode == 6                                   # cut below an acknowledged commit: corrupted
    run = subprocess.run([sys.executable, script, "dump", str(path)], capture_output=True)
    assert run.returncode == 2


def test_fuzzed_files_raise_only_typed_errors():
    w, _ = writer()
    data = w.data
    rng = random.Random(11)
    for _ in range(150):
        damaged = bytearray(data)
        for _ in range(rng.randrange(1, 40)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        if rng.random() < 0.3:
            damaged = damaged[:rng.randrange(len(damaged))]
        try:
            reopen(damaged)
        except K.KCFError:
            pass


# ------------------------------------------------------------------------------------------------
# Fixtures/v2 (Swift-written) and the reference's own files
# ------------------------------------------------------------------------------------------------

V2_DIR = os.path.join(ROOT, "Fixtures", "v2")


@pytest.mark.skipif(not glob.glob(os.path.join(V2_DIR, "*.json")), reason="Fixtures/v2 not in this checkout")
def test_fixtures_v2():
    import check_fixtures
    assert check_fixtures.main([V2_DIR]) == 0


def test_worked_example_v2_trace_is_up_to_date():
    """SPEC.md §29 quotes this trace of the Swift-written Fixtures/v2/worked-example.kcf; it must still be what the
    tracer derives from that file, and every check in it must have passed."""
    fixtures = os.path.join(ROOT, "Fixtures", "v2")
    with open(os.path.join(fixtures, "worked-example.json"), encoding="utf-8") as f:
        cred = json.load(f)["credential"]
    text = V.trace(os.path.join(fixtures, "worked-example.kcf"), cred)
    assert "**NO**" not in text and "**not zero**" not in text and "**different**" not in text
    with open(os.path.join(HERE, "worked-example-v2-trace.md"), encoding="utf-8") as f:
        assert f.read() == text


# ------------------------------------------------------------------------------------------------
# SPEC.md §28.4's open points 1–8, closed: the reader and writer do what SPEC.md states
# ------------------------------------------------------------------------------------------------

def rebuilt_header(raw, k_header, change):
    """The header `raw` with `change(bytearray)` applied to its bytes before the trailer, MAC and checksum
    computed again (what a writer with the key would write)."""
    length = V.rd32(raw, 12)
    body = bytearray(raw[:length - 48])
    change(body)
    body += K.hmac_sha256(k_header, bytes(body))
    body += hashlib.sha256(bytes(body)).digest()[:16]
    return bytes(body)


def with_pages(data, page_a=None, page_b=None):
    out = bytearray(data)
    if page_a is not None:
        out[V.HEADER_A:V.HEADER_A + V.PAGE] = page_a
    if page_b is not None:
        out[V.HEADER_B:V.HEADER_B + V.PAGE] = page_b
    return bytes(out)


def put_slot(data, place, seal, parity=bytes(V.CHUNK_PARITY), second=None):
    out = bytearray(data)
    at = V.SLOT_OFFSETS[place]
    out[at:at + V.SLOT_BYTES] = seal + parity + (seal if second is None else second)
    return bytes(out)


def test_open_point_1_version_told_from_page_b_or_parity_when_page_a_is_damaged():
    """§20.4 steps 4 and 5: page A's magic damaged; page B's first 16 bytes declare a version 2 header though its
    checksum fails as read (step 4), or both pages' first bytes are damaged and their parity repairs them
    (step 5): version 2, opened from the repaired copies."""
    w, _ = writer()
    kc = reopen(w.data)
    step4 = bytearray(w.data)
    step4[0] ^= 0xFF                                             # page A's magic
    step4[V.HEADER_B + 200] ^= 0xFF                              # page B's checksum fails as read
    after = reopen(step4)
    assert after.items == kc.items and sorted(after.pages_to_rewrite) == ["A", "B"]
    step5 = bytearray(w.data)
    for base in (V.HEADER_A, V.HEADER_B):
        step5[base:base + 16] = bytes(16)                        # neither page declares a header as read
    after = reopen(step5)
    assert after.items == kc.items and sorted(after.pages_to_rewrite) == ["A", "B"]
    both = bytearray(w.data)                                     # nothing identifies the file
    noise = random.Random(8)
    both[0:V.PAGE] = bytes(noise.randrange(256) for _ in range(V.PAGE))
    both[V.HEADER_B:V.HEADER_B + V.PAGE] = bytes(noise.randrange(256) for _ in range(V.PAGE))
    both[0] = 0
    with pytest.raises(K.NotAKeychain):
        reopen(both)


def test_open_point_2_flags_set_in_both_pages_is_unsupported_version_2():
    """§20.1, §20.4 step 6: a header with flags ≠ 0 is not a version 2 header; in both pages, version 1's reader
    answers unsupportedVersion(2). In one page only, the other copy is used and the page rewritten."""
    w, _ = writer()
    kc = reopen(w.data)
    for flags in (1, 0x8000):
        page = V.build_page(rebuilt_header(kc.header.raw, kc.keys.k_header,
                                           lambda h: h.__setitem__(slice(10, 12), V.u16(flags))))
        with pytest.raises(K.UnsupportedVersion) as e:
            reopen(with_pages(w.data, page, page))
        assert e.value.version == 2
        after = reopen(with_pages(w.data, page_a=page))
        assert after.items == kc.items and after.pages_to_rewrite == ["A"]


def test_open_point_3_a_torn_slot_alone_counts_for_its_ends():
    """§23.3 step 3: a torn slot (both copies read and differ) counts when the other place holds no seal that
    counts: its seal is the copy with the higher counter; its parity is not used."""
    w, _ = writer()                                              # seals 1 … 4; N = 4 in slot 0, O = 3 in slot 1
    kc = reopen(w.data)
    assert (kc.newest.slot, kc.newest.counter) == (0, 4)
    stale = V.build_seal(kc.epoch, 2, kc.records[0].offset + kc.records[0].length,
                         kc.records[0].offset + kc.records[0].length, (1, kc.records[0].chain), kc.keys.k_header)
    at = V.SLOT_OFFSETS[0]
    torn = bytearray(w.data)
    torn[at + V.SLOT_SEAL2_AT:at + V.SLOT_BYTES] = stale          # copy 2 still the slot's previous seal
    torn[at + V.SLOT_PARITY_AT:at + V.SLOT_SEAL2_AT] = bytes(V.CHUNK_PARITY)   # its parity mixed
    alone = bytearray(torn)
    alone[V.SLOT_OFFSETS[1]:V.SLOT_OFFSETS[1] + V.SLOT_BYTES] = bytes(V.SLOT_BYTES)
    after = reopen(alone)
    assert after.newest.counter == 4 and after.items == kc.items and after.head == kc.head
    assert after.set_aside is None and after.remnant is None
    after = reopen(torn)                                         # the other place counts: the torn slot does not
    assert after.newest.counter == 3 and len(after.items) == 2 and after.remnant is not None


def test_open_point_3_counter_and_written_end_limits():
    """§23.3 steps 4 and 5: a seal with counter 2⁶⁴ − 1 is ignored; a seal that counts with E_w > 2⁴⁸ is
    corrupted(4,096)."""
    w, _ = writer()
    kc = reopen(w.data)                                          # N = 4 in slot 0
    o = kc.older
    top = V.build_seal(kc.epoch, (1 << 64) - 1, o.written_end, o.committed_end, o.head, kc.keys.k_header)
    after = reopen(put_slot(w.data, 1, top))
    assert after.newest.counter == 4 and after.older is None and after.items == kc.items
    assert after.remnant is None
    huge = V.build_seal(kc.epoch, 5, (1 << 48) + 1, kc.committed_end, kc.head, kc.keys.k_header)
    with pytest.raises(K.Corrupted) as e:
        reopen(put_slot(w.data, 1, huge))
    assert e.value.offset == 4096
    edge = V.build_seal(kc.epoch, 5, 1 << 48, kc.committed_end, kc.head, kc.keys.k_header)
    after = reopen(put_slot(w.data, 1, edge))                    # E_w = 2⁴⁸ is within the limit
    assert after.newest.counter == 5 and after.items == kc.items
    past = V.build_seal(kc.epoch, 3, 1 << 48, kc.committed_end, kc.head, kc.keys.k_header)
    after = reopen(put_slot(w.data, 1, past))                    # an older seal past N does not precede N
    assert after.newest.counter == 4 and after.older is None and after.items == kc.items


def one_seal_cut(data, credential=PW):
    """What §26.4 says a writer does with an undone transaction: one seal (counter c + 1, E_w' = E_c, same E_c and
    head, the parity of E_c's chunk from its bytes) in the other slot, then the file truncated to physical(E_c)."""
    kc = reopen(data, credential)
    e_c = kc.committed_end
    assert kc.newest.written_end > e_c
    log = V._Log(data).bytes
    parity = V.chunk_parity(bytes(log[(e_c // V.CHUNK) * V.CHUNK:e_c]))
    c = kc.newest.counter + 1
    seal = V.build_seal(kc.epoch, c, e_c, e_c, kc.head, kc.keys.k_header)
    sealed = put_slot(data, c % 2, seal, parity)
    return sealed, sealed[:V.physical(e_c)]


def test_open_point_3_precedes_a_cut_with_one_seal_reads():
    """§23.3 precedes rule, §26.4: after the one-seal cut the older slot's E_w lies past the new written end, so it
    no longer precedes and is ignored; the file reads (before the truncation: with a remnant)."""
    w, _ = writer(part_limit=600)
    before = reopen(w.data)
    w.append([w.make_put(K.GENERIC_PASSWORD, {"account": f"p{n}", "service": "s"}, b"y" * 150) for n in range(6)],
             cut_after=3)
    untruncated, cut = one_seal_cut(w.data)
    after = reopen(cut)
    assert after.items == before.items and after.head == before.head
    assert after.older is None and after.undone is None and after.remnant is None and after.set_aside is None
    after = reopen(untruncated)
    assert after.items == before.items and after.undone is None
    assert after.remnant is not None and after.remnant[0] == before.committed_end
    fixture = os.path.join(ROOT, "Fixtures", "v2", "reference-undone-transaction.kcf")
    with open(fixture, "rb") as f:
        _, cut = one_seal_cut(f.read())
    assert len(reopen(cut).items) == 3 and reopen(cut).undone is None


def test_open_point_3_the_writer_cuts_an_undone_transaction_with_one_seal():
    """§26.4: the writer cuts with one seal, then the commit follows: the slots hold the cut (c + 1, E_w = E_c)
    and the commit (c + 2)."""
    w, _ = writer(part_limit=600)
    w.append([w.make_put(K.GENERIC_PASSWORD, {"account": f"p{n}", "service": "s"}, b"y" * 150) for n in range(6)],
             cut_after=3)
    kc = reopen(w.data)
    w2 = V.Writer(path=None, data=w.data, kc=kc, rng=random.Random(3), clock=clock())
    w2.add(K.GENERIC_PASSWORD, {"account": "after", "service": "s"}, b"a")
    after = reopen(w2.data)
    assert after.newest.counter == kc.newest.counter + 2
    assert (after.older.counter, after.older.written_end, after.older.committed_end) == \
        (kc.newest.counter + 1, kc.committed_end, kc.committed_end)


def test_open_point_4_a_forked_newest_seal_is_corrupted_a_forked_older_is_ignored():
    """§25.3: the newest seal's head is not the records' at its E_c: corrupted at its slot. The older one's:
    ignored, and N's last write begins at R."""
    w, _ = writer()
    kc = reopen(w.data)
    n, o = kc.newest, kc.older
    forged_n = V.build_seal(kc.epoch, n.counter, n.written_end, n.committed_end, (n.head[0], bytes(16)),
                            kc.keys.k_header)
    with pytest.raises(K.Corrupted) as e:
        reopen(put_slot(w.data, n.slot, forged_n, n.parity))
    assert e.value.offset == V.SLOT_OFFSETS[n.slot]
    forged_o = V.build_seal(kc.epoch, o.counter, o.written_end, o.committed_end, (o.head[0], bytes(16)),
                            kc.keys.k_header)
    after = reopen(put_slot(w.data, o.slot, forged_o, o.parity))
    assert after.items == kc.items and after.older is None
    assert any("fork" in r for r in after.repairs)


def test_open_point_5_no_seal_and_blank_slots_sets_records_past_r_aside():
    """§25.4: no seal counts and the file is longer than physical(R): the records past R are set aside, whatever
    the slot places hold (zeros included)."""
    w, _ = writer()
    data = bytearray(w.data)
    for at in V.SLOT_OFFSETS:
        data[at:at + V.SLOT_BYTES] = bytes(V.SLOT_BYTES)
    after = reopen(data)
    assert after.items == {} and after.set_aside is not None and after.set_aside[0] == 0
    assert after.remnant is None
    with pytest.raises(V.SetAsideRefusal):
        V.Writer(path=None, data=bytes(data), kc=after, rng=None, clock=clock())


def test_open_point_6_a_file_cut_below_an_acknowledged_commit_is_corrupted_at_its_length():
    """§25.5: shorter than physical(max(R, start of N's last write)): corrupted(file length)."""
    w, _ = writer()
    data = w.data
    kc = reopen(data)
    for length in (V.physical(kc.records[-2].offset + 10), V.PREFIX, V.physical(kc.older.written_end) - 1):
        with pytest.raises(K.Corrupted) as e:
            reopen(data[:length])
        assert e.value.offset == length and not isinstance(e.value, V.CorruptedRecord)
    after = reopen(data[:V.physical(kc.older.written_end)])      # cut inside the last write: rebuilt
    assert after.items == kc.items


def test_open_point_7_the_last_write_as_erasures_repairs_a_garbled_newest_record():
    """§19.5: a newest record overwritten with garbage (more than 16 symbols per codeword, the file at full length)
    is repaired by decoding with the last write's bytes as erasures (≤ 28 per codeword, 4 symbols kept as a
    check); a last write with more than 28 symbols in a codeword is not tried that way."""
    w, _ = writer()
    start = w.committed_end
    big = w.add(K.GENERIC_PASSWORD, {"account": "big", "service": "s"}, bytes(range(256)) * 20)   # ≈ 5.3 KB
    full = reopen(w.data)
    rng = random.Random(5)
    garbled = bytearray(w.data)
    for i in range(start, full.committed_end):
        garbled[V.physical(i)] = rng.randrange(256)
    after = reopen(garbled)
    assert after.items == full.items and after.items[big].secret == bytes(range(256)) * 20
    assert after.set_aside is None and after.head == full.head
    w2, _ = writer()
    start = w2.committed_end
    w2.add(K.GENERIC_PASSWORD, {"account": "big", "service": "s"}, bytes(range(256)) * 30)         # ≈ 7.9 KB
    full = reopen(w2.data)
    garbled = bytearray(w2.data)
    for i in range(start, full.committed_end):
        garbled[V.physical(i)] = rng.randrange(256)
    after = reopen(garbled)                                      # 31 symbols a codeword: past 28, set aside
    assert after.set_aside is not None and after.set_aside[0] == start and len(after.items) == 3


def argon_slot(memory, passes, lanes=1, seed=0):
    rng = random.Random(seed)
    params = V.u32(memory) + V.u32(passes) + bytes([lanes]) + bytes(3)
    return bytes([1, 3]) + V.u16(156) + V.random_bytes(rng, 16) + params + V.random_bytes(rng, 32 + 32 + 12 + 48)


def test_open_point_8_argon2id_total_over_all_slots():
    """§20.1: Argon2id memory × passes add up to at most 2²⁶ KiB over the slots of a header, checked before any
    derivation (the file is opened with its raw key: the Argon2id slots are never derived)."""
    key = bytes(range(32))
    w = V.Writer.create(None, [{"key": key}], rng=random.Random(12), clock=clock())
    w.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s"}, b"x")
    kc = reopen(w.data, {"key": key})
    h = kc.header

    def with_slots(extra):
        raw = V.build_header(h.file_id, h.epoch, h.epoch_salt, 0, (0, kc.keys.c0), 90, [h.slots[0].raw] + extra,
                             kc.keys.k_header)
        page = V.build_page(raw)
        return with_pages(w.data, page, page)

    ok = reopen(with_slots([argon_slot(1 << 22, 8, seed=1), argon_slot(1 << 21, 16, seed=2)]), {"key": key})
    assert ok.items == kc.items                                  # 2²⁵ + 2²⁵ = 2²⁶: at the limit
    with pytest.raises(K.Corrupted) as e:
        reopen(with_slots([argon_slot(1 << 22, 8, seed=1), argon_slot(1 << 21, 16, seed=2),
                           argon_slot(8, 1, seed=3)]), {"key": key})
    assert e.value.offset == V.HEADER_FIXED
    with pytest.raises(K.Corrupted) as e:
        reopen(with_slots([argon_slot(1 << 22, 16, seed=1), argon_slot(1 << 22, 16, seed=2)]), {"key": key})
    assert e.value.offset == V.HEADER_FIXED
    # §42 D7 (Docs/SpecVersion3Draft.md), checked here for version 2 too: each slot's memory ≤ 2²² KiB and passes
    # ≤ 2²⁰ on their own (SPEC §21.1), though memory × passes is within 2²⁶; at the slot's parameters' offset.
    for memory, passes in (((1 << 22) + 8, 1), (1 << 23, 8), (8, (1 << 20) + 1)):
        with pytest.raises(K.Corrupted) as e:
            reopen(with_slots([argon_slot(memory, passes, seed=1)]), {"key": key})
        assert e.value.offset == V.HEADER_FIXED + len(h.slots[0].raw) + 20 and "Argon2id parameters" in \
            e.value.reason, e.value.reason
    assert reopen(with_slots([argon_slot(8, 1 << 20, seed=1)]), {"key": key}).items == kc.items

"""Tests of format version 3's group page padding (Docs/FormatVersion3.md §2.5.1 "Page", §4 review finding 2):
a page's plaintext is `u8 1 ‖ u16 count ‖ entries ‖ zeros` of exactly padded(U) bytes, U = 3 + the entries' bytes,
so that a holder of K_log (who sees segment and page box lengths) cannot count a group's deletions from sizes.

    cd Scripts/reference && python3 -m pytest -q test_page_padding_v3.py

Expected sizes are written out from the rule in the brief (256 up to 256; powers of two up to 8,192; multiples of
8,192 after), never taken from the code under test.
"""

import os
import random
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kcf_reference as K  # noqa: E402
import kcf_reference_v3 as V3  # noqa: E402
import records_v3 as R  # noqa: E402
import test_reference_v3 as T  # noqa: E402  (its writers, scoped file and credentials)

FILE_ID = bytes(range(16))
GROUP_KEY = bytes(range(32, 64))
KEY_ID = 5
EPOCH = 1


def deletion(n: int) -> dict:
    return {"delete": {"id": bytes([n % 256, n // 256]).hex() * 8, "time": 1_700_000_000_000 + n}}


def page_plaintext_length(segment: bytes, keys: R.GroupKeys, group_sequence: int, previous_tag: bytes) -> int:
    """Opens a segment's page box with the page key alone (no parsing) and returns its plaintext's length."""
    p = R.rd32(segment, 5)
    plain = R.gcm_open(keys.page, segment[9:9 + p], R.page_aad(FILE_ID, KEY_ID, group_sequence, previous_tag))
    assert plain is not None
    return len(plain)


@pytest.mark.parametrize("used, padded", [(3, 256), (28, 256), (255, 256), (256, 256), (257, 512), (4096, 4096),
                                          (4097, 8192), (8192, 8192), (8193, 16384), (16384, 16384),
                                          (16385, 24576)])
def test_padded_page_length(used, padded):
    assert R.padded_page_length(used) == padded


@pytest.mark.parametrize("count, unpadded, padded", [(1, 28, 256), (10, 253, 256), (11, 278, 512), (300, 7503, 8192)])
def test_a_page_of_deletions_is_padded_to_its_size_class(count, unpadded, padded):
    keys = R.GroupKeys(GROUP_KEY, FILE_ID, KEY_ID)
    start = keys.start_value(EPOCH)
    segment = R.group_segment(keys, [deletion(n) for n in range(count)], 1, start, random.Random(count))
    assert 3 + 25 * count == unpadded                      # the rule's U, from §24.2's 25-byte deletion
    assert page_plaintext_length(segment, keys, 1, start) == padded
    # What a K_log holder sees: S = P = 12 + T + 16 (no secret boxes), the same for every count in the class.
    assert R.rd32(segment, 5) == padded + 28 and R.rd32(segment, 1) == padded + 28 and len(segment) == 9 + padded + 28
    # And the reader takes it back.
    spec = {"fileID": FILE_ID.hex(), "keyID": KEY_ID, "key": GROUP_KEY.hex(), "segments": [segment.hex()],
            "heads": [{"keyID": KEY_ID, "startEpoch": EPOCH, "groupSequence": 1,
                       "lastTag": segment[9 + padded + 28 - 16:9 + padded + 28].hex()}]}
    assert R.verify_group(spec) == 1


def forged_segment(padding: bytes, count: int = 1) -> tuple:
    """A segment of `count` deletions whose page plaintext is `u8 1 ‖ u16 count ‖ entries ‖ padding`, sealed
    properly under the group's page key as page 1 (so only the padding rule can refuse it). Returns (segment hex,
    its page tag hex)."""
    keys = R.GroupKeys(GROUP_KEY, FILE_ID, KEY_ID)
    rng = random.Random(99)
    plain = R.u8(1) + R.u16(count) + b"".join(R.entry_bytes(deletion(n), FILE_ID, keys, rng)[0] for n in range(count))
    assert len(plain) == 3 + 25 * count
    box = R.seal(keys.page, plain + padding, R.page_aad(FILE_ID, KEY_ID, 1, keys.start_value(EPOCH)), rng)
    return (R.u8(KEY_ID) + R.u32(len(box)) + R.u32(len(box)) + box).hex(), box[-16:].hex()


def verify_one(segment_hex: str, tag_hex: str) -> int:
    return R.verify_group({"fileID": FILE_ID.hex(), "keyID": KEY_ID, "key": GROUP_KEY.hex(), "segments": [segment_hex],
                           "heads": [{"keyID": KEY_ID, "startEpoch": EPOCH, "groupSequence": 1, "lastTag": tag_hex}]})


def test_a_page_padded_by_the_rule_by_hand_is_accepted():
    # The control for the forgeries below: one deletion (U = 28) and 228 zeros (T = 256) opens.
    assert verify_one(*forged_segment(bytes(228))) == 1
    assert verify_one(*forged_segment(bytes(512 - 278), count=11)) == 1


FORGED = {                                              # one deletion: U = 28, padded(U) = 256
    "a non-zero byte at the padding's end": bytes(227) + b"\x01",
    "a non-zero byte at the padding's start": b"\x80" + bytes(227),
    "a byte too long": bytes(229),
    "a byte too short": bytes(227),
    "padded to 512 where 256 is due": bytes(512 - 28),
    "not padded at all": b"",
}


@pytest.mark.parametrize("name", list(FORGED))
def test_a_page_whose_padding_breaks_the_rule_is_corrupted(name):
    padding = FORGED[name]
    segment, tag = forged_segment(padding)
    with pytest.raises(R.Corrupted) as e:
        verify_one(segment, tag)
    assert "padding" in e.value.reason, (name, e.value.reason)


def test_a_forged_padding_in_a_whole_record_is_refused_by_decode():
    """The same refusal through decode_record (a record: frame, the forged page, the heads, chain tag)."""
    chain_key, heads_key, previous = bytes(range(64, 96)), bytes(range(96, 128)), bytes(16)
    for padding, ok in ((bytes(228), True), (bytes(228 + 256), False), (bytes(227) + b"\x07", False)):
        segment_hex, tag_hex = forged_segment(padding)
        heads = {KEY_ID: {"startEpoch": EPOCH, "groupSequence": 1, "lastTag": bytes.fromhex(tag_hex)}}
        rng = random.Random(5)
        box = R.seal(heads_key, R.heads_plaintext(heads), R.heads_aad(FILE_ID, EPOCH, 1), rng)
        record = R.assemble(R.KIND_COMMIT, 1, 0, [bytes.fromhex(segment_hex), R.u8(0) + R.u32(len(box)) * 2 + box],
                            previous, chain_key)
        spec = {"fileID": FILE_ID.hex(), "epoch": EPOCH, "chainKey": chain_key.hex(), "headsKey": heads_key.hex(),
                "previousChain": previous.hex(), "groups": [{"keyID": KEY_ID, "key": GROUP_KEY.hex(),
                                                             "startEpoch": EPOCH, "sequence": 0}]}
        if ok:
            assert R.decode_record(record, spec)["segments"][0]["entries"] == [{"delete": deletion(0)["delete"]}]
        else:
            with pytest.raises(R.Corrupted) as e:
                R.decode_record(record, spec)
            assert "padding" in e.value.reason, e.value.reason


# --- whole files ------------------------------------------------------------------------------------------------

SIZE_CLASSES = {256, 512, 1024, 2048, 4096, 8192}


def group_segments(kc) -> list:
    """Every group segment of kc's log, as (key id, S, P), read with K_log's view only (the frames)."""
    out = []
    for r in kc.records:
        for s in R.split(kc.log[r.offset:r.offset + r.length])["segments"]:
            if s["keyID"]:
                out.append((s["keyID"], s["secrets"][1] - s["page"][0], s["page"][1] - s["page"][0]))
    return out


def assert_padded(kc):
    segments = group_segments(kc)
    assert segments
    for k, s, p in segments:
        t = p - 28                                         # the page plaintext: the box less nonce and tag
        assert t in SIZE_CLASSES or (t > 8192 and t % 8192 == 0), (k, s, p)


def test_a_file_is_written_padded_and_read_back_whole():
    w, ids = T.writer(items=10)
    big = w.add(K.GENERIC_PASSWORD, {"account": "big", "service": "s", "label": "z" * 9000}, b"big")   # U > 8,192
    w.delete(ids[0])                                       # a commit deleting one item (U = 28)
    with w.transaction() as t:                             # and one deleting nine (U = 228)
        for i in ids[1:]:
            t.delete(i)
    kc = T.reopen(w.data)
    assert set(kc.items) == {big} and kc.items[big].attributes["label"] == "z" * 9000
    assert_padded(kc)
    # The pages of the two deletion commits: the same sizes, so K_log's view does not count the deletions.
    deletions = group_segments(kc)[-2:]
    assert deletions[0] == deletions[1] == (1, 256 + 28, 256 + 28), deletions
    # The big put's page: U > 8,192, so a multiple of 8,192.
    assert any(p - 28 == 16384 for _, _, p in group_segments(kc))
    # After a full compaction, as well.
    w.compact()
    again = T.reopen(w.data)
    assert set(again.items) == {big} and again.items[big].attributes["label"] == "z" * 9000
    assert_padded(again)


def test_a_file_after_a_scoped_compaction_is_padded_and_read_back_whole():
    w, items = T.scoped_file()
    a = T.scoped_writer(w.data, T.HOLDER_A)
    gone = [i for i, g in items.items() if g == T.GA][:2]
    for i in gone:
        a.delete(i)
    a.compact()
    full = T.reopen(a.data)
    assert set(full.items) == set(items) - set(gone)
    assert_padded(full)
    assert len(T.reopen(a.data, T.HOLDER_A).items) == len([i for i, g in items.items() if g == T.GA]) - 2
    assert len(T.reopen(a.data, T.HOLDER_B).items) == len([i for i, g in items.items() if g == T.GB])
    # A full holder writes to it again and the scoped holder of B reads that, pages still padded.
    fw = V3.WriterV3.open(bytes(a.data), T.PW, rng=random.Random(4), clock=T.clock())
    fw.path = None
    extra = T.put(fw, "after", T.GB)
    assert extra in T.reopen(fw.data, T.HOLDER_B).items
    assert_padded(T.reopen(fw.data))


def test_a_transaction_is_cut_into_records_within_the_part_limit_counting_padding():
    """The writer cuts a batch into records of at most part_limit body bytes (a single entry too large alone
    excepted); it must count pages as padded: two entries of 150 bytes share a page of 512 bytes, not 306."""
    w, _ = T.scoped_file()
    limit = 2500
    w.part_limit = limit
    before = T.reopen(w.data).committed_end
    rng = random.Random(8)
    with w.transaction() as t:
        for n in range(40):
            group = [T.GA, T.GB, ""][n // 5 % 3]           # runs of five entries of one group
            t.add(K.GENERIC_PASSWORD, {"account": f"c{n}", "service": "s", "accessGroup": group,
                                       "label": "l" * rng.choice([20, 90, 150, 230, 480, 1000, 1500])}, b"v")
    kc = T.reopen(w.data)
    records = [r for r in kc.records if r.offset >= before]
    assert len(records) >= 3
    for r in records:
        assert r.length - 8 <= limit, (r.sequence, r.length - 8)
    assert_padded(kc)

"""Tests of the Python reference reader/writer of the KeychainFile format (SPEC.md).

Run: python3 -m pytest -q Scripts/reference/test_reference.py
"""

import json
import os
import random
import stat
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kcf_reference as K  # noqa: E402

ITER = 1000
PW = {"password": "correct horse"}
KEY = {"key": bytes(range(100, 132))}
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kcf_reference.py")


def clock_from(start=1_700_000_000_000, step=1000):
    it = iter(range(start, start + 10 ** 12, step))
    return lambda: next(it)


def new_writer(seed=1, creds=(PW,), iterations=ITER, **kw):
    return K.Writer.create(None, list(creds), iterations=iterations, rng=random.Random(seed),
                           clock=clock_from(), **kw)


def snapshot(items):
    return {iid: (it.cls, dict(it.attributes), bytes(it.secret)) for iid, it in items.items()}


def state_of(kc):
    return snapshot(kc.items)


def rechecksum(data):
    """Recomputes the header checksum after a deliberate header edit (MAC left as is)."""
    data = bytearray(data)
    H = K.rd_u32(data, 12)
    data[H - 48:H - 32] = K.sha256(bytes(data[:H - 48]))[:16]
    return bytes(data)


def remac(data, cred):
    """Recomputes checksum and header MAC (needs the master key: opens the original first)."""
    kc = K.open_keychain(data, cred, decrypt_secrets=False)
    data = bytearray(rechecksum(data))
    H = K.rd_u32(data, 12)
    data[H - 32:H] = K.hmac_sha256(kc.k_header, bytes(data[:H - 32]))
    return bytes(data)


@pytest.fixture(scope="module")
def small():
    """A small file with every record kind, with the expected state after each record.

    Opened with the raw key (fast) so that thousands of damaged copies can be opened.
    """
    w = new_writer(seed=7, creds=(KEY, PW))
    snaps = [snapshot(w.items)]
    heads = [w.head]
    g = w.add(K.GENERIC_PASSWORD, {"account": "alice", "service": "mail"}, b"pw1")
    snaps.append(snapshot(w.items)); heads.append(w.head)
    with w.transaction() as t:
        i = t.add(K.INTERNET_PASSWORD, {"account": "bob", "server": "example.com", "port": 443}, b"pw2")
        t.update(g, {"label": "Mail"}, b"pw1b")
    snaps.append(snapshot(w.items)); heads.append(w.head)
    w.delete(i)
    snaps.append(snapshot(w.items)); heads.append(w.head)
    w.add(K.KEY, {"keyClass": 2, "applicationTag": b"tag"}, b"\x01\x02")
    snaps.append(snapshot(w.items)); heads.append(w.head)
    data = w.data
    frames = K.scan_frames(data)
    assert len(frames) == 4
    return dict(data=data, snaps=snaps, heads=heads, frames=frames, H=K.rd_u32(data, 12))


# ---------------------------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------------------------

ALL_G = {"accessGroup": "grp", "accessible": 7, "synchronizable": True, "label": "Label é",
         "creationDate": -5, "modificationDate": 2 ** 63 - 1, "account": "acc", "service": "svc",
         "generic": b"\x00\xff", "description": "d", "comment": "c", "creator": 2 ** 32 - 1, "type": 0,
         "isInvisible": False, "isNegative": True}
ALL_I = {"accessGroup": "", "accessible": 1, "synchronizable": False, "label": "",
         "creationDate": -(2 ** 63), "modificationDate": 0, "account": "", "description": "", "comment": "",
         "creator": 0x61626364, "type": 1, "isInvisible": True, "isNegative": False, "server": "例え.jp",
         "securityDomain": "realm", "protocol": 0x68747073, "authenticationType": 0x64666C74, "port": 65535,
         "path": "/"}
ALL_C = {"accessGroup": "g", "accessible": 3, "synchronizable": False, "label": "cert",
         "creationDate": 1, "modificationDate": 2, "certificateType": 3, "certificateEncoding": 3,
         "subject": b"\x30\x00", "issuer": b"\x30\x01", "serialNumber": b"\x01", "subjectKeyID": b"",
         "publicKeyHash": bytes(20)}
ALL_K = {"accessGroup": "g", "accessible": 6, "synchronizable": True, "label": "key",
         "creationDate": 1, "modificationDate": 2, "keyClass": 1, "applicationLabel": bytes(20),
         "applicationTag": b"com.example.key", "keyType": 73, "keySizeInBits": -(2 ** 63),
         "effectiveKeySize": 2 ** 63 - 1, "isPermanent": True, "canEncrypt": False, "canDecrypt": True,
         "canDerive": False, "canSign": True, "canVerify": False, "canWrap": True, "canUnwrap": False}


@pytest.mark.parametrize("cls,attrs", [(K.GENERIC_PASSWORD, ALL_G), (K.INTERNET_PASSWORD, ALL_I),
                                       (K.CERTIFICATE, ALL_C), (K.KEY, ALL_K)])
def test_round_trip_every_attribute(cls, attrs):
    w = new_writer()
    iid = bytes(range(16))
    w.append([K.Put(iid, cls, attrs, b"secret \x00 bytes")])
    kc = K.open_keychain(w.data, PW)
    assert list(kc.items) == [iid]
    it = kc.items[iid]
    assert it.cls == cls
    assert it.attributes == attrs
    for name, value in it.attributes.items():
        assert type(value) is type(attrs[name])      # bool stays bool, int stays int
    assert it.secret == b"secret \x00 bytes"
    assert kc.head == (1, w.chain)
    assert kc.torn_tail is None


def test_all_tags_covered_by_round_trip():
    names = set(ALL_G) | set(ALL_I) | set(ALL_C) | set(ALL_K)
    assert names == set(K.ATTRIBUTES_BY_NAME)


def test_round_trip_limits():
    w = new_writer()
    big = "é" * (65535 // 2) + "x"          # 65,535 UTF-8 bytes
    assert len(big.encode()) == 65535
    p = w.make_put(K.GENERIC_PASSWORD, {"account": big, "generic": b"\xff" * 65535}, b"\xaa" * K.MAX_SECRET)
    w.append([p])
    e = w.make_put(K.GENERIC_PASSWORD, {"account": "empty"}, b"")
    w.append([e])
    kc = K.open_keychain(w.data, PW)
    assert kc.items[p.item_id].attributes["account"] == big
    assert kc.items[p.item_id].secret == b"\xaa" * K.MAX_SECRET
    assert kc.items[e.item_id].secret == b""


def test_writer_defaults_and_dates():
    w = new_writer()
    iid = w.add(K.INTERNET_PASSWORD, {"server": "s"}, b"x")
    a = K.open_keychain(w.data, PW).items[iid].attributes
    assert a == {"accessGroup": "", "accessible": 1, "synchronizable": False,
                 "creationDate": 1_700_000_000_000, "modificationDate": 1_700_000_000_000,
                 "account": "", "securityDomain": "", "server": "s", "protocol": 0,
                 "authenticationType": 0, "port": 0, "path": ""}
    w.update(iid, {"path": "/p"})
    a2 = K.open_keychain(w.data, PW).items[iid].attributes
    assert a2["creationDate"] == 1_700_000_000_000 and a2["modificationDate"] == 1_700_000_001_000
    assert a2["path"] == "/p"
    for cls in (K.CERTIFICATE, K.KEY):
        iid = w.add(cls, {}, b"")
        a = K.open_keychain(w.data, PW).items[iid].attributes
        for name in K.PRIMARY_KEY[cls]:
            assert name in a


def test_transactions_updates_deletes():
    w = new_writer()
    a = w.add(K.GENERIC_PASSWORD, {"account": "a"}, b"1")
    b = w.add(K.GENERIC_PASSWORD, {"account": "b"}, b"2")
    with w.transaction() as t:
        c = t.add(K.GENERIC_PASSWORD, {"account": "c"}, b"3")
        t.update(a, {"label": "A"}, b"1'")
        t.delete(b)
        t.update(c, secret=b"3'")            # an item added earlier in the same transaction
    kc = K.open_keychain(w.data, PW)
    assert kc.records[-1].kind == K.KIND_TRANSACTION
    assert set(kc.items) == {a, c}
    assert kc.items[a].attributes["label"] == "A" and kc.items[a].secret == b"1'"
    assert kc.items[c].secret == b"3'"
    assert kc.head[0] == 3
    # put that drops an attribute: the replacement is whole
    base = kc.items[a]
    attrs = dict(base.attributes); del attrs["label"]
    w.append([K.Put(a, base.cls, attrs, b"z")])
    kc = K.open_keychain(w.data, PW)
    assert "label" not in kc.items[a].attributes and kc.items[a].secret == b"z"
    # delete then put the same id again
    w.delete(a)
    w.append([K.Put(a, base.cls, attrs, b"again")])
    kc = K.open_keychain(w.data, PW)
    assert kc.items[a].secret == b"again"
    assert [r.sequence for r in kc.records] == list(range(1, 7))
    # a transaction of a single entry is kind 3
    w.append([K.Delete(c)], transaction=True)
    kc = K.open_keychain(w.data, PW)
    assert kc.records[-1].kind == 3 and c not in kc.items


def test_transaction_put_then_delete_same_item_and_delete_then_put():
    w = new_writer()
    x = bytes(16)
    p = w.make_put(K.GENERIC_PASSWORD, {"account": "x"}, b"", item_id=x)
    w.append([p, K.Delete(x)])
    kc = K.open_keychain(w.data, PW)
    assert kc.items == {}
    w.append([p])
    w.append([K.Delete(x), p])
    assert set(K.open_keychain(w.data, PW).items) == {x}


def test_file_on_disk(tmp_path):
    path = tmp_path / "k.kcf"
    w = K.Writer.create(str(path), [PW], iterations=ITER, rng=random.Random(3), clock=clock_from())
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    iid = w.add(K.GENERIC_PASSWORD, {"account": "a"}, b"s")
    assert path.read_bytes() == w.data
    assert K.open_keychain(str(path), PW).items[iid].secret == b"s"
    assert [p.name for p in tmp_path.iterdir()] == ["k.kcf"]      # no temporary left behind
    with pytest.raises(FileExistsError):
        K.Writer.create(str(path), [PW], iterations=ITER)


def test_deterministic_with_seed():
    def make():
        w = new_writer(seed=42, creds=(PW, KEY))
        w.add(K.GENERIC_PASSWORD, {"account": "a"}, b"s")
        w.delete(next(iter(w.items)))
        return w.data
    assert make() == make()
    assert make() != new_writer(seed=43, creds=(PW, KEY)).data


def test_example_file_is_deterministic_and_opens():
    d = K.make_example()
    assert d == K.make_example()
    kc = K.open_keychain(d, {"password": K.EXAMPLE_PASSWORD})
    kc2 = K.open_keychain(d, {"key": K.EXAMPLE_KEY})
    assert state_of(kc) == state_of(kc2) and kc.head == kc2.head == (3, kc.records[-1].chain)


def test_epoch_other_than_one():
    w = new_writer(epoch=5)
    w.add(K.GENERIC_PASSWORD, {"account": "a"}, b"s")
    assert K.open_keychain(w.data, PW).epoch == 5


# ---------------------------------------------------------------------------------------------
# Credentials
# ---------------------------------------------------------------------------------------------

def test_wrong_password_and_key():
    w = new_writer(creds=(PW, KEY))
    with pytest.raises(K.WrongCredentials):
        K.open_keychain(w.data, {"password": "wrong"})
    with pytest.raises(K.WrongCredentials):
        K.open_keychain(w.data, {"key": bytes(32)})
    only_pw = new_writer(creds=(PW,)).data
    with pytest.raises(K.WrongCredentials):
        K.open_keychain(only_pw, KEY)
    only_key = new_writer(creds=(KEY,)).data
    with pytest.raises(K.WrongCredentials):
        K.open_keychain(only_key, PW)
    with pytest.raises(ValueError):
        K.open_keychain(only_key, {"key": bytes(31)})


def test_several_slots_each_opens():
    pw2 = {"password": "second"}
    w = new_writer(creds=(PW, pw2, KEY))
    iid = w.add(K.GENERIC_PASSWORD, {"account": "a"}, b"s")
    for cred, slot in ((PW, 0), (pw2, 1), (KEY, 2)):
        kc = K.open_keychain(w.data, cred)
        assert kc.slot_used == slot and kc.items[iid].secret == b"s"


def test_password_nfc_normalisation():
    decomposed = {"password": "Cafe\u0301 \u212b"}      # e + combining acute; ANGSTROM SIGN (NFC: Å)
    precomposed = {"password": "Caf\u00e9 \u00c5"}
    w = new_writer(creds=(decomposed,))
    K.open_keychain(w.data, precomposed)
    K.open_keychain(w.data, decomposed)
    assert K.normalize_password(decomposed["password"]) == "Café Å".encode()


def test_empty_password():
    w = new_writer(creds=({"password": ""},))
    K.open_keychain(w.data, {"password": ""})


def test_default_iterations():
    w = K.Writer.create(None, [PW], rng=random.Random(1))
    kc = K.open_keychain(w.data, PW)
    assert kc.header.slots[0].iterations == K.DEFAULT_ITERATIONS == 600_000


def test_slot_iteration_change_and_transplant_do_not_open():
    w = new_writer(seed=1)
    d = bytearray(w.data)
    d[76 + 20:76 + 24] = K.u32(ITER + 1)
    with pytest.raises(K.WrongCredentials):
        K.open_keychain(rechecksum(d), PW)
    other = new_writer(seed=2).data            # same password, other file
    d = bytearray(w.data)
    d[76:76 + 116] = other[76:76 + 116]
    with pytest.raises(K.WrongCredentials):
        K.open_keychain(rechecksum(d), PW)


# ---------------------------------------------------------------------------------------------
# Header checks (§9.1)
# ---------------------------------------------------------------------------------------------

def test_not_a_keychain():
    for d in (b"", b"\x89KCF\r\n\x1a\n", b"\x89KCF\r\n\x1a\n\x00\x01\x00\x00\x00\x00\x01",
              b"PK\x03\x04" + bytes(300)):
        with pytest.raises(K.NotAKeychain):
            K.open_keychain(d, PW)


def test_unsupported_version():
    d = bytearray(new_writer().data)
    for v in (0, 2, 0xFFFF):
        d[8:10] = K.u16(v)
        with pytest.raises(K.UnsupportedVersion) as e:
            K.open_keychain(bytes(d), PW)
        assert e.value.version == v
    d[10] = 0x80                              # flags are checked after the version
    with pytest.raises(K.UnsupportedVersion):
        K.open_keychain(bytes(d), PW)


def test_flags_and_header_length():
    good = new_writer().data
    for bit in range(16):
        d = bytearray(good)
        d[10:12] = K.u16(1 << bit)
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(bytes(d), PW)
        assert e.value.offset == 10
    for H in (0, 235, 65537, 2 ** 32 - 1):
        d = bytearray(good)
        d[12:16] = K.u32(H)
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(bytes(d), PW)
        assert e.value.offset == 12
    d = bytearray(good)
    d[12:16] = K.u32(65536)
    with pytest.raises(K.Corrupted) as e:
        K.open_keychain(bytes(d), PW)
    assert (e.value.offset, e.value.reason) == (0, "truncated header")


def test_header_structure_errors_before_key_derivation():
    good = new_writer(creds=(PW, KEY)).data     # slots at 76 (116 bytes) and 192 (112 bytes)
    H = K.rd_u32(good, 12)

    def expect(edit, offset):
        d = bytearray(good)
        edit(d)
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(rechecksum(d), PW)
        assert e.value.offset == offset, e.value

    expect(lambda d: d.__setitem__(72, 0), 72)
    expect(lambda d: d.__setitem__(72, 17), 72)
    expect(lambda d: d.__setitem__(72, 1), 192)           # one slot too few: bytes left over
    expect(lambda d: d.__setitem__(72, 3), 304)           # one slot too many: runs into checksum
    expect(lambda d: d.__setitem__(74, 1), 73)            # reserved
    expect(lambda d: d.__setitem__(76, 3), 76)            # unknown slot type
    expect(lambda d: d.__setitem__(76, 2), 78)            # type 2 with length 116
    expect(lambda d: d.__setitem__(77, 1), 77)            # slot reserved byte
    expect(lambda d: d.__setitem__(slice(78, 80), K.u16(112)), 78)
    expect(lambda d: d.__setitem__(slice(96, 100), K.u32(0)), 96)
    # an absurd iteration count is rejected before PBKDF2 would run for hours
    expect(lambda d: d.__setitem__(slice(96, 100), K.u32(50_000_001)), 96)
    expect(lambda d: d.__setitem__(slice(96, 100), K.u32(2 ** 32 - 1)), 96)
    # checksum itself
    d = bytearray(good)
    d[H - 48] ^= 1
    with pytest.raises(K.Corrupted) as e:
        K.open_keychain(bytes(d), PW)
    assert e.value.offset == H - 48
    # header MAC: bytes covered by a (recomputed) checksum but not re-MACed
    for off in (32, 39, 40, 71, H - 32, H - 1):
        d = bytearray(good)
        d[off] ^= 1
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(rechecksum(d), PW)
        assert e.value.offset == H - 32
    # the file id is also bound into every slot's AAD: the slot no longer opens
    d = bytearray(good)
    d[16] ^= 1
    with pytest.raises(K.WrongCredentials):
        K.open_keychain(rechecksum(d), PW)


def test_iterations_at_limits_accepted():
    w = new_writer(iterations=1)
    K.open_keychain(w.data, PW)
    with pytest.raises(ValueError):
        new_writer(iterations=0)


# ---------------------------------------------------------------------------------------------
# Torn tails (§9.2)
# ---------------------------------------------------------------------------------------------

def test_truncation_at_every_offset(small):
    data, frames, H = small["data"], small["frames"], small["H"]
    ends = [H] + [o + n for o, n in frames]
    for cut in range(len(data) + 1):
        d = data[:cut]
        if cut < 16:
            with pytest.raises(K.NotAKeychain):
                K.open_keychain(d, KEY)
            continue
        if cut < H:
            with pytest.raises(K.Corrupted) as e:
                K.open_keychain(d, KEY)
            assert (e.value.offset, e.value.reason) == (0, "truncated header")
            continue
        kc = K.open_keychain(d, KEY)
        k = max(i for i, e in enumerate(ends) if e <= cut)        # whole records before the cut
        assert state_of(kc) == small["snaps"][k], cut
        assert kc.head == small["heads"][k]
        assert kc.torn_tail == (None if cut == ends[k] else (ends[k], cut - ends[k]))
        assert len(kc.records) == k


def test_single_bit_flips_everywhere(small):
    data, frames, H = small["data"], small["frames"], small["H"]
    n = len(frames)
    for i in range(len(data)):
        for bit in range(8):
            d = bytearray(data)
            d[i] ^= 1 << bit
            d = bytes(d)
            where = f"byte {i} bit {bit}"
            if i < 8:
                with pytest.raises(K.NotAKeychain):
                    K.open_keychain(d, KEY)
            elif i < 10:
                with pytest.raises(K.UnsupportedVersion):
                    K.open_keychain(d, KEY)
            elif i < H:
                with pytest.raises(K.Corrupted) as e:
                    K.open_keychain(d, KEY)
                if i < 12:
                    assert e.value.offset == 10, where
                elif i >= 16:
                    assert e.value.offset == (H - 32 if i >= H - 32 else H - 48), where
            else:
                r = max(j for j, (o, _) in enumerate(frames) if o <= i)
                off, length = frames[r]
                if r < n - 1 or i < off + 8:
                    with pytest.raises(K.Corrupted) as e:
                        K.open_keychain(d, KEY)
                    assert e.value.offset == off, where
                else:
                    kc = K.open_keychain(d, KEY)
                    assert kc.torn_tail == (off, length), where
                    assert state_of(kc) == small["snaps"][n - 1], where
                    assert kc.head == small["heads"][n - 1], where


def test_zero_tail_and_garbage(small):
    data = small["data"]
    end = len(data)
    for z in (1, 7, 8, 9, 100, 5000):
        kc = K.open_keychain(data + bytes(z), KEY)
        assert kc.torn_tail == (end, z) and state_of(kc) == small["snaps"][-1]
    for g in (b"\x01", b"\xff" * 7):
        assert K.open_keychain(data + g, KEY).torn_tail == (end, len(g))
    for g in (b"\x01" + bytes(10), bytes(8) + b"\x01", b"\xff" * 8):
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(data + g, KEY)
        assert (e.value.offset, e.value.reason) == (end, "frame length")
    # a valid frame header announcing more than is there: torn; with trailing zeros after a
    # complete frame: the zeros are the torn tail
    o, n = small["frames"][-1]
    assert K.open_keychain(data[:o + 8] + bytes(3), KEY).torn_tail == (o, 11)


def test_frame_length_out_of_range_is_corrupted_even_at_the_end(small):
    data = small["data"]
    for L in (0, 8, K.MAX_BODY + 1, 2 ** 32 - 1):
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(data + K.u32(L) + K.u32(L ^ 0xFFFFFFFF), KEY)
        assert e.value.offset == len(data)
    # L = 9: in range, but an empty payload never parses: torn at the end, corrupted before a record
    w = K.Writer.open(data, KEY, rng=random.Random(5))
    tiny = K.u32(9) + K.u32(9 ^ 0xFFFFFFFF) + b"\x02" + K.u64(5)
    assert K.open_keychain(data + tiny, KEY).torn_tail == (len(data), 17)
    w.write_raw(tiny)
    w.append([K.Delete(next(iter(w.items)))])
    with pytest.raises(K.Corrupted):
        K.open_keychain(w.data, KEY)


def test_writer_truncates_torn_tail(tmp_path, small):
    path = tmp_path / "t.kcf"
    o, n = small["frames"][-1]
    path.write_bytes(small["data"][:o + n - 3])
    w = K.Writer.open(str(path), KEY, rng=random.Random(9), clock=clock_from())
    assert w.head == small["heads"][-2]
    iid = w.add(K.GENERIC_PASSWORD, {"account": "new"}, b"n")
    kc = K.open_keychain(str(path), KEY)
    assert kc.torn_tail is None and kc.head[0] == 4 and iid in kc.items
    assert path.read_bytes()[:o] == small["data"][:o]


# ---------------------------------------------------------------------------------------------
# Records moved, removed, duplicated, spliced
# ---------------------------------------------------------------------------------------------

def _records(small):
    d = small["data"]
    return d[:small["H"]], [d[o:o + n] for o, n in small["frames"]]


def test_reordered_records(small):
    hdr, recs = _records(small)
    for i in range(len(recs) - 1):
        r = list(recs)
        r[i], r[i + 1] = r[i + 1], r[i]
        d = hdr + b"".join(r)
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(d, KEY)
        assert e.value.offset == len(hdr) + sum(map(len, recs[:i]))


def test_removed_records(small):
    hdr, recs = _records(small)
    for i in range(len(recs) - 1):
        d = hdr + b"".join(recs[:i] + recs[i + 1:])
        if i == len(recs) - 2:
            # the final record now follows a gap: it fails to verify and, being final, is torn
            kc = K.open_keychain(d, KEY)
            assert kc.torn_tail is not None and state_of(kc) == small["snaps"][i]
        else:
            with pytest.raises(K.Corrupted):
                K.open_keychain(d, KEY)
    # dropping whole records from the end cannot be detected from the file alone (§13)
    kc = K.open_keychain(hdr + b"".join(recs[:-1]), KEY)
    assert kc.torn_tail is None and kc.head == small["heads"][-2]


def test_duplicated_records(small):
    hdr, recs = _records(small)
    for i in range(len(recs)):
        r = recs[:i + 1] + [recs[i]] + recs[i + 1:]
        d = hdr + b"".join(r)
        if i == len(recs) - 1:
            kc = K.open_keychain(d, KEY)
            assert kc.torn_tail == (len(hdr) + sum(map(len, recs)), len(recs[i]))
            assert state_of(kc) == small["snaps"][-1]
        else:
            with pytest.raises(K.Corrupted) as e:
                K.open_keychain(d, KEY)
            assert e.value.offset == len(hdr) + sum(map(len, recs[:i + 1]))


def test_spliced_from_another_file():
    def build(seed):
        w = new_writer(seed=seed, creds=(PW,))
        w.add(K.GENERIC_PASSWORD, {"account": "a"}, b"1")
        w.add(K.GENERIC_PASSWORD, {"account": "b"}, b"2")
        w.add(K.GENERIC_PASSWORD, {"account": "c"}, b"3")
        return w.data
    a, b = build(1), build(2)
    fa, fb = K.scan_frames(a), K.scan_frames(b)
    H = K.rd_u32(a, 12)
    for i in range(3):
        recs = [a[o:o + n] for o, n in fa]
        recs[i] = b[fb[i][0]:fb[i][0] + fb[i][1]]
        d = a[:H] + b"".join(recs)
        if i == 2:
            assert K.open_keychain(d, PW).torn_tail is not None
        else:
            with pytest.raises(K.Corrupted):
                K.open_keychain(d, PW)
    # another file's header in front of this file's records
    with pytest.raises(K.Corrupted):
        K.open_keychain(b[:H] + a[H:], PW)


def test_fork_splice():
    """Two copies of one file written independently: records of one cannot extend the other."""
    w = new_writer(seed=1)
    w.add(K.GENERIC_PASSWORD, {"account": "a"}, b"1")
    base = w.data
    f1 = K.Writer.open(base, PW, rng=random.Random(11), clock=clock_from(2_000_000_000_000))
    f2 = K.Writer.open(base, PW, rng=random.Random(12), clock=clock_from(2_000_000_000_000))
    for f, name in ((f1, "x"), (f2, "y")):
        f.add(K.GENERIC_PASSWORD, {"account": name}, b"")
        f.add(K.GENERIC_PASSWORD, {"account": name + "2"}, b"")
    fr1, fr2 = K.scan_frames(f1.data), K.scan_frames(f2.data)
    # record 2 of the other fork chains from record 1, which both share: a valid (fork) file
    o, n = fr2[1]
    K.open_keychain(base + f2.data[o:o + n], PW)
    # record 3 of fork 2 after record 2 of fork 1: chain mismatch
    o3, n3 = fr2[2]
    o2, n2 = fr1[1]
    d = base + f1.data[o2:o2 + n2] + f2.data[o3:o3 + n3]
    kc = K.open_keychain(d, PW)
    assert kc.torn_tail == (len(base) + n2, n3)
    with pytest.raises(K.Corrupted):
        K.open_keychain(d + f1.data[fr1[2][0]:], PW)


# ---------------------------------------------------------------------------------------------
# Records that fail verification: corrupted in the middle, torn at the end
# ---------------------------------------------------------------------------------------------

def _bad_then(w_builder):
    """Runs w_builder(writer) which appends one bad record; returns (bad-at-end, bad-then-good, offset)."""
    w = new_writer(seed=3)
    a = w.add(K.GENERIC_PASSWORD, {"account": "a"}, b"1")
    before = snapshot(w.items)
    off = len(w.data)
    w_builder(w, a)
    at_end = w.data
    w.append([w.make_put(K.GENERIC_PASSWORD, {"account": "zzz"}, b"")], check=False)
    return at_end, w.data, off, before


def _check_bad(builder):
    at_end, followed, off, before = _bad_then(builder)
    kc = K.open_keychain(at_end, PW)
    assert kc.torn_tail == (off, len(at_end) - off)
    assert state_of(kc) == before
    with pytest.raises(K.Corrupted) as e:
        K.open_keychain(followed, PW)
    assert e.value.offset == off
    return e.value.reason


def _raw_put(w, fields, *, cls=K.GENERIC_PASSWORD, item_id=None, **kw):
    iid = item_id or w.new_item_id()
    pt = K.encode_attributes_raw(iid, cls, fields, **kw)
    w.append([K.Put(iid, cls, {}, b"s", raw_attributes=pt)], check=False)


def A(name, value):
    a = K.ATTRIBUTES_BY_NAME[name]
    return (a.tag, a.type, K.encode_value(a, value))


DATES = [A("creationDate", 1), A("modificationDate", 2)]
ACC = A("account", "x")


ATTRIBUTE_CASES = {
    "baseline is valid": None,
    "unknown tag": [A("creationDate", 1), A("modificationDate", 2), (0x0110, 1, b"")],
    "unknown tag 0": [(0x0000, 1, b""), A("creationDate", 1), A("modificationDate", 2)],
    "tag of another class": DATES + [(0x0201, 1, b"s")],
    "wrong type": [(0x0001, 2, b""), A("creationDate", 1), A("modificationDate", 2)],
    "string as bytes type": [A("creationDate", 1), A("modificationDate", 2), (0x0101, 2, b"x")],
    "unsorted": [A("modificationDate", 2), A("creationDate", 1)],
    "duplicate tag": [A("creationDate", 1), A("creationDate", 1), A("modificationDate", 2)],
    "missing creationDate": [A("modificationDate", 2), ACC],
    "missing modificationDate": [A("creationDate", 2), ACC],
    "invalid UTF-8": DATES + [(0x0101, 1, b"\xc3\x28")],
    "UTF-8 surrogate": DATES + [(0x0101, 1, b"\xed\xa0\x80")],
    "overlong UTF-8": DATES + [(0x0101, 1, b"\xc0\xaf")],
    "string too long": DATES + [(0x0101, 1, b"a" * 65536)],
    "bytes too long": DATES + [(0x0103, 2, b"a" * 65536)],
    "boolean 2": DATES + [(0x0108, 4, b"\x02")],
    "boolean length 2": DATES + [(0x0108, 4, b"\x00\x01")],
    "boolean length 0": DATES + [(0x0108, 4, b"")],
    "integer length 7": [(0x0002, 3, bytes(6) + b"\x01")] + DATES,
    "integer length 9": [(0x0002, 3, bytes(8) + b"\x01")] + DATES,
    "date length 4": [A("creationDate", 1), (0x0006, 5, bytes(4))],
    "accessible 0": [(0x0002, 3, K.i64(0))] + DATES,
    "accessible 8": [(0x0002, 3, K.i64(8))] + DATES,
    "creator 2^32": DATES + [(0x0106, 3, K.i64(2 ** 32))],
    "creator -1": DATES + [(0x0106, 3, K.i64(-1))],
    "value runs past end": DATES + [(0x0101, 1, b"")],
}


@pytest.mark.parametrize("case", list(ATTRIBUTE_CASES))
def test_strict_attribute_decoding(case):
    fields = ATTRIBUTE_CASES[case]
    if fields is None:
        w = new_writer()
        _raw_put(w, DATES + [ACC])
        K.open_keychain(w.data, PW)
        return
    if case == "value runs past end":
        builder = lambda w, a: _raw_put(w, [], count=2, trailing=K.encode_attribute(5, 5, K.i64(1))
                                        + K.u16(6) + b"\x05" + K.u32(9) + K.i64(2))
    else:
        builder = lambda w, a: _raw_put(w, fields)
    _check_bad(builder)


@pytest.mark.parametrize("case,kw,cls", [
    ("count 1", dict(count=1), 1), ("count 3 with 2", dict(count=3), 1), ("count 65", dict(count=65), 1),
    ("count 0", dict(count=0), 1), ("trailing byte", dict(trailing=b"\x00"), 1),
    ("encoding version 0", dict(version=0), 1), ("encoding version 2", dict(version=2), 1),
    ("class 0", {}, 0), ("class 5", {}, 5)])
def test_strict_attribute_structure(case, kw, cls):
    _check_bad(lambda w, a: _raw_put(w, DATES, cls=cls, **kw))


@pytest.mark.parametrize("name,value,ok", [
    ("port", 65535, True), ("port", 65536, False), ("port", -1, False),
    ("keyClass", 2, True), ("keyClass", 3, False),
    ("certificateType", 0, True), ("certificateType", 3, True), ("certificateType", 4, False),
    ("protocol", 2 ** 32 - 1, True), ("protocol", 2 ** 32, False),
    ("authenticationType", -1, False), ("type", 2 ** 32, False),
    ("keyType", -7, True), ("certificateEncoding", 99, True), ("keySizeInBits", 2 ** 63 - 1, True)])
def test_integer_ranges(name, value, ok):
    a = K.ATTRIBUTES_BY_NAME[name]
    cls = {"I": K.INTERNET_PASSWORD, "K": K.KEY, "C": K.CERTIFICATE}[a.classes[0]] \
        if a.classes[0] != "G" else K.GENERIC_PASSWORD
    if name in ("type",):
        cls = K.GENERIC_PASSWORD
    fields = sorted(DATES + [(a.tag, a.type, K.i64(value))])
    if ok:
        w = new_writer()
        _raw_put(w, fields, cls=cls)
        assert list(K.open_keychain(w.data, PW).items.values())[0].attributes[name] == value
    else:
        _check_bad(lambda w, _: _raw_put(w, fields, cls=cls))
        with pytest.raises(ValueError):
            K.encode_value(a, value)


def test_record_level_failures():
    reasons = {}

    def case(name, fn):
        reasons[name] = _check_bad(fn)

    g = lambda w: w.make_put(K.GENERIC_PASSWORD, {"account": "new"}, b"s")
    case("kind 0", lambda w, a: w.append([g(w)], check=False, kind_byte=0))
    case("kind 4", lambda w, a: w.append([g(w)], check=False, kind_byte=4))
    case("kind put but delete payload", lambda w, a: w.append([K.Delete(a)], check=False, kind_byte=1))
    case("sequence repeats", lambda w, a: w.append([g(w)], check=False, seq=1))
    case("sequence skips", lambda w, a: w.append([g(w)], check=False, seq=3))
    case("wrong previous chain", lambda w, a: w.append([g(w)], check=False, prev_chain=bytes(16)))
    case("extra payload byte", lambda w, a: w.append([g(w)], check=False, extra_payload=b"\x00"))
    case("transaction count 0", lambda w, a: w.append([g(w)], transaction=True, check=False, entry_count=0))
    case("transaction count too big", lambda w, a: w.append([g(w)], transaction=True, check=False,
                                                            entry_count=2))
    case("transaction count fewer", lambda w, a: w.append([g(w), K.Delete(a)], check=False, entry_count=1))
    case("transaction count over limit", lambda w, a: w.append([g(w)], transaction=True, check=False,
                                                               entry_count=K.MAX_ENTRIES + 1))
    case("delete unknown item", lambda w, a: w.append([K.Delete(bytes(16))], check=False))
    case("delete twice in a transaction", lambda w, a: w.append([K.Delete(a), K.Delete(a)], check=False))
    case("deletion plaintext 15", lambda w, a: w.append([K.Delete(a, raw_plaintext=a[:15])], check=False))
    case("deletion plaintext 17", lambda w, a: w.append([K.Delete(a, raw_plaintext=a + b"\0")], check=False))
    case("secret too long", lambda w, a: w.append(
        [K.Put(a, 1, w.items[a].attributes, b"\0" * (K.MAX_SECRET + 1))], check=False))

    def id_mismatch(w, a):
        p = g(w)
        p.raw_attributes = K.encode_attributes(bytes(16), p.cls, p.attributes)
        w.append([p], check=False)
    case("attributes id differs from secret box id", id_mismatch)

    def dup(w, a):
        w.append([w.make_put(K.GENERIC_PASSWORD, {"account": "a"}, b"")], check=False)
    case("uniqueness", dup)

    def dup_in_txn(w, a):
        w.append([w.make_put(K.GENERIC_PASSWORD, {"account": "q"}, b""),
                  w.make_put(K.GENERIC_PASSWORD, {"account": "q"}, b"")], check=False)
    case("uniqueness within a transaction", dup_in_txn)

    def txn_bad_last(w, a):
        w.append([w.make_put(K.GENERIC_PASSWORD, {"account": "ok"}, b""), K.Delete(bytes(16))], check=False)
    case("transaction with one bad entry (atomic)", txn_bad_last)

    def bad_box_length(w, a):
        frame, chain = w.encode_record([g(w)])
        frame = bytearray(frame)
        frame[17:21] = K.u32(27)
        w.write_raw(bytes(frame))
        w.seq += 1
        w.chain = chain
    case("box length 27", bad_box_length)

    def flipped_secret(w, a):
        frame, chain = w.encode_record([g(w)])
        frame = bytearray(frame)
        frame[-20] ^= 1                           # inside the secret box's ciphertext/tag
        w.write_raw(bytes(frame))
        w.seq += 1
        w.chain = chain
    case("secret box tag (secrets are verified on replay)", flipped_secret)
    assert all(reasons.values())


def test_uniqueness_rules():
    w = new_writer()
    w.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s"}, b"")
    with pytest.raises(K.DuplicateItem):
        w.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s"}, b"")
    # not duplicates: another class, another access group, synchronizable, non-key attribute differs
    w.add(K.INTERNET_PASSWORD, {"account": "a"}, b"")
    w.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s", "accessGroup": "g"}, b"")
    w.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s", "synchronizable": True}, b"")
    with pytest.raises(K.DuplicateItem):
        w.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s", "label": "other"}, b"")
    # normalisation is not applied: "é" precomposed and decomposed are different accounts
    w.add(K.GENERIC_PASSWORD, {"account": "\u00e9"}, b"")
    w.add(K.GENERIC_PASSWORD, {"account": "e\u0301"}, b"")
    K.open_keychain(w.data, PW)


def test_uniqueness_only_after_the_record():
    w = new_writer()
    x = w.add(K.GENERIC_PASSWORD, {"account": "x"}, b"")
    y = w.add(K.GENERIC_PASSWORD, {"account": "y"}, b"")
    with w.transaction() as t:                  # swap the two accounts
        t.update(x, {"account": "y"})
        t.update(y, {"account": "x"})
    with w.transaction() as t:                  # take over a key, then delete its holder
        t.update(x, {"account": "x"})
        t.delete(y)
    kc = K.open_keychain(w.data, PW)
    assert {i.attributes["account"] for i in kc.items.values()} == {"x"}
    # missing primary-key attributes compare as their defaults
    w2 = new_writer()
    _raw_put(w2, DATES)
    _raw_put(w2, DATES + [A("account", ""), A("service", "")])
    assert K.open_keychain(w2.data, PW).torn_tail is not None
    w2.append([w2.make_put(K.GENERIC_PASSWORD, {"account": "ok"}, b"")], check=False)
    with pytest.raises(K.Corrupted) as e:
        K.open_keychain(w2.data, PW)
    assert "uniqueness" in e.value.reason


def test_writer_refuses_invalid():
    w = new_writer()
    with pytest.raises(ValueError):
        w.add(K.GENERIC_PASSWORD, {"server": "not for G"}, b"")
    with pytest.raises(TypeError):
        w.add(K.GENERIC_PASSWORD, {"synchronizable": 1}, b"")
    with pytest.raises(ValueError):
        w.add(K.GENERIC_PASSWORD, {"account": "a" * 65536}, b"")
    with pytest.raises(ValueError):
        w.add(K.GENERIC_PASSWORD, {}, b"x" * (K.MAX_SECRET + 1))
    with pytest.raises(K.ItemNotFound):
        w.delete(bytes(16))
    assert w.data == new_writer().data             # nothing was written


# ---------------------------------------------------------------------------------------------
# Trace and CLI
# ---------------------------------------------------------------------------------------------

def test_trace_covers_every_box(small):
    text = K.trace(small["data"], KEY, also=[PW])
    kc = K.open_keychain(small["data"], KEY)
    assert text.count("AAD (74 bytes):") == kc.box_count == 9
    assert "C0 = header MAC[0 ..< 16]" in text and kc.c0.hex() in text
    assert kc.k_record.hex() in text and kc.k_header.hex() in text and kc.master_key.hex() in text
    for r in kc.records:
        assert f"Chain value after record {r.sequence}: `{r.chain.hex()}`" in text
    assert "PBKDF2" in text and "same master key as the slot that opened the file | yes" in text
    bad = bytearray(small["data"]); bad[-1] ^= 1
    assert "torn tail" in K.trace(bytes(bad), KEY)


def run_cli(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def test_cli(tmp_path, small):
    p = tmp_path / "s.kcf"
    p.write_bytes(small["data"])
    key = KEY["key"].hex()
    r = run_cli("dump", str(p), "--key", key)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["head"]["sequence"] == 4 and len(out["items"]) == 2 and out["torn_tail"] is None
    assert run_cli("dump", str(p), "--password", PW["password"]).returncode == 0
    assert run_cli("dump", str(p), "--password", "nope").returncode == 5
    q = tmp_path / "x"
    q.write_bytes(b"hello")
    assert run_cli("dump", str(q), "--key", key).returncode == 3
    d = bytearray(small["data"]); d[9] = 2
    q.write_bytes(bytes(d))
    assert run_cli("dump", str(q), "--key", key).returncode == 4
    d = bytearray(small["data"]); d[small["H"] + 30] ^= 1
    q.write_bytes(bytes(d))
    r = run_cli("dump", str(q), "--key", key)
    assert r.returncode == 6 and json.loads(r.stderr)["offset"] == small["H"]
    assert run_cli("dump", str(tmp_path / "missing"), "--key", key).returncode == 1
    r = run_cli("--trace", str(p), "--key", key)
    assert r.returncode == 0 and "## Worked example" in r.stdout
    r = run_cli("--trace", str(p), "--password", "nope")
    assert r.returncode == 5 and "Opening failed" in r.stdout
    assert run_cli("example", str(tmp_path / "e.kcf")).returncode == 0
    assert (tmp_path / "e.kcf").read_bytes() == K.make_example()


# ---------------------------------------------------------------------------------------------
# Robustness: only typed errors, whatever the damage
# ---------------------------------------------------------------------------------------------

def test_fuzz_damaged_files_raise_only_typed_errors(small):
    rng = random.Random(2024)
    data = small["data"]
    for _ in range(3000):
        d = bytearray(data)
        op = rng.randrange(4)
        if op == 0:                                   # several random bytes overwritten
            for _ in range(rng.randrange(1, 6)):
                d[rng.randrange(len(d))] = rng.randrange(256)
        elif op == 1:                                 # a random range deleted
            a = rng.randrange(len(d)); del d[a:a + rng.randrange(1, 64)]
        elif op == 2:                                 # random bytes inserted
            a = rng.randrange(len(d)); d[a:a] = rng.randbytes(rng.randrange(1, 64))
        else:                                         # random tail
            d = d[:rng.randrange(len(d))] + rng.randbytes(rng.randrange(0, 64))
        try:
            K.open_keychain(bytes(d), KEY)
        except (K.NotAKeychain, K.UnsupportedVersion, K.WrongCredentials, K.Corrupted):
            pass


def test_fuzz_attribute_plaintexts():
    """Random (validly sealed) attribute plaintexts: decoded strictly or rejected, never a crash."""
    rng = random.Random(7)
    good = K.encode_attributes(bytes(16), K.INTERNET_PASSWORD, ALL_I)
    accepted = 0
    for _ in range(20000):
        pt = bytearray(good)
        for _ in range(rng.randrange(1, 4)):
            pt[rng.randrange(len(pt))] = rng.randrange(256)
        try:
            iid, cls, values = K.decode_attributes(bytes(pt))
        except K._Invalid:
            continue
        accepted += 1
        # whatever is accepted re-encodes to exactly the same bytes (the encoding is canonical)
        assert K.encode_attributes(iid, cls, values) == bytes(pt)
    assert accepted > 0


# ---------------------------------------------------------------------------------------------
# Findings about SPEC.md, pinned as tests (see README.md, "Findings")
# ---------------------------------------------------------------------------------------------

def test_finding_final_transaction_can_be_cut_to_a_prefix_of_its_entries():
    """The entry count E and the number of boxes in a record are in no AAD (§7.2).

    Someone who can write the file can cut the *final* transaction down to its first entries,
    rewriting E and the frame length: every remaining box still opens, the chain is intact, and the
    file opens without any report: a partially applied transaction.  (A non-final one is caught by
    the next record's chain.)  This test pins the behaviour SPEC.md currently prescribes.
    """
    w = new_writer()
    w.add(K.GENERIC_PASSWORD, {"account": "keep"}, b"")
    with w.transaction() as t:
        a = t.add(K.GENERIC_PASSWORD, {"account": "a"}, b"A")
        b = t.add(K.GENERIC_PASSWORD, {"account": "b"}, b"B")
    data = w.data
    o, n = K.scan_frames(data)[-1]
    frame = data[o:o + n]
    payload = frame[17:]
    entries = K.parse_payload(K.KIND_TRANSACTION, payload)
    first = b"\x01" + b"".join(K.u32(len(bx)) + bx for bx in entries[0][1])
    body = frame[8:17] + K.u32(1) + first
    forged = data[:o] + K.u32(len(body)) + K.u32(len(body) ^ 0xFFFFFFFF) + body
    kc = K.open_keychain(forged, PW)
    assert kc.torn_tail is None
    assert a in kc.items and b not in kc.items          # half of the transaction applied
    assert kc.head[0] == 2 and kc.head[1] != w.chain     # only a stored head would reveal it


def test_finding_semantic_failure_in_final_record_is_silently_dropped():
    """A final record whose boxes all open but which deletes an unknown item (or breaks uniqueness)
    is a writer bug, not a crash, yet §9.2 step 4 drops it as a torn tail without an error."""
    w = new_writer()
    w.add(K.GENERIC_PASSWORD, {"account": "x"}, b"")
    w.append([K.Delete(bytes(16))], check=False)
    kc = K.open_keychain(w.data, PW)
    assert kc.torn_tail is not None and len(kc.items) == 1


def test_finding_short_garbage_tail_is_torn_but_eight_bytes_are_corrupted(small):
    data = small["data"]
    assert K.open_keychain(data + b"\xff" * 7, KEY).torn_tail == (len(data), 7)
    with pytest.raises(K.Corrupted):
        K.open_keychain(data + b"\xff" * 8, KEY)

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


def remac(data, cred, original=None):
    """Recomputes checksum and header MAC of `data`; the key comes from opening `original` (default:
    `data` itself) with `cred`."""
    kc = K.open_keychain(data if original is None else original, cred, decrypt_secrets=False)
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
         "applicationTag": b"com.example.key", "keyType": 2 ** 32 - 1, "keySizeInBits": 0,
         "effectiveKeySize": 2 ** 31 - 1, "isPermanent": True, "canEncrypt": False, "canDecrypt": True,
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
    for H in (0, 235, 1981, 65536, 65537, 2 ** 32 - 1):
        d = bytearray(good)
        d[12:16] = K.u32(H)
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(bytes(d), PW)
        assert e.value.offset == 12
    d = bytearray(good)
    d[12:16] = K.u32(1980)                    # in range, but the file is shorter
    with pytest.raises(K.Corrupted) as e:
        K.open_keychain(bytes(d), PW)
    assert (e.value.offset, e.value.reason) == (0, "truncated header")
    # in range, file long enough (zero padding), checksum no longer at H - 48
    with pytest.raises(K.Corrupted) as e:
        K.open_keychain(bytes(d) + bytes(2000), PW)
    assert e.value.offset == 1980 - 48


def test_largest_header_sixteen_slots():
    creds = [{"password": f"p{i}"} for i in range(15)] + [KEY]
    w = new_writer(creds=creds, iterations=1)
    assert K.rd_u32(w.data, 12) == 76 + 15 * 116 + 112 + 48 == 1976
    K.open_keychain(w.data, KEY)
    K.open_keychain(w.data, {"password": "p14"})
    with pytest.raises(ValueError):
        new_writer(creds=creds + [PW], iterations=1)          # 17 credentials
    w = new_writer(creds=[{"password": f"p{i}"} for i in range(16)], iterations=1)
    assert K.rd_u32(w.data, 12) == K.MAX_HEADER == 76 + 16 * 116 + 48
    K.open_keychain(w.data, {"password": "p15"})


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
    # an absurd iteration count is rejected before PBKDF2 would run for minutes
    expect(lambda d: d.__setitem__(slice(96, 100), K.u32(10_000_001)), 96)
    expect(lambda d: d.__setitem__(slice(96, 100), K.u32(2 ** 32 - 1)), 96)
    # structure before iterations: a bad count in slot 1 and a bad type in slot 2 -> the type
    def both(d):
        d[96:100] = K.u32(0)
        d[192] = 9
    expect(both, 192)
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
    with pytest.raises(ValueError):
        new_writer(iterations=10_000_001)
    with pytest.raises(ValueError):                    # 3 × 10,000,000 > 20,000,000 in all
        K.Writer.create(None, [PW, {"password": "b"}, {"password": "c"}], iterations=10_000_000,
                        rng=random.Random(1))


def test_total_iterations_over_all_password_slots():
    """§5: 1 … 10,000,000 per slot, at most 20,000,000 over the password slots of a header; checked
    before any derivation.  The file is opened with the raw key, so no PBKDF2 runs at all: a header
    that passes the checks fails (if at all) only at the header MAC, which remac recomputes."""
    pw2, pw3 = {"password": "b"}, {"password": "c"}
    good = new_writer(creds=(PW, pw2, pw3, KEY)).data      # password slots at 76, 192, 308
    H = K.rd_u32(good, 12)

    def with_iterations(counts):
        d = bytearray(good)
        for off, c in zip((96, 212, 328), counts):
            d[off:off + 4] = K.u32(c)
        return remac(bytes(d), KEY, good)

    K.open_keychain(with_iterations((10_000_000, 9_999_999, 1)), KEY)        # exactly 20,000,000
    K.open_keychain(with_iterations((1, 10_000_000, 9_999_999)), KEY)
    for counts in ((10_000_000, 10_000_000, 1), (1, 10_000_000, 10_000_000), (10_000_000,) * 3):
        with pytest.raises(K.Corrupted) as e:               # 20,000,001 or more in all
            K.open_keychain(with_iterations(counts), KEY)
        assert e.value.offset == 328 and "total" in e.value.reason      # where the total passes the limit
    with pytest.raises(K.Corrupted) as e:                   # over the total too, but per-slot checks come first
        K.open_keychain(with_iterations((10_000_000, 10_000_001, 1)), KEY)
    assert e.value.offset == 212 and "total" not in e.value.reason
    with pytest.raises(K.Corrupted) as e:                   # 15M + 15M: the per-slot limit of slot 1
        K.open_keychain(with_iterations((15_000_000, 1, 1)), KEY)
    assert e.value.offset == 96
    assert H == 76 + 3 * 116 + 112 + 48


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
                if r < n - 1:
                    # a non-final record: corrupted at its offset.  In its 8-byte frame header the
                    # length check no longer matches and the next record's header is plausible (§9.2
                    # step 2): "frame length"; anywhere else step 4 fails in a frame that does not end
                    # at the end of the file.
                    with pytest.raises(K.Corrupted) as e:
                        K.open_keychain(d, KEY)
                    assert e.value.offset == off, where
                    if i < off + 8:
                        assert e.value.reason == "frame length", where
                else:
                    # the final record: a torn tail covering exactly that record, whatever the byte.
                    # In its frame header: step 2 finds no plausible header after it.  Elsewhere: step
                    # 4 fails (kind, sequence, parse or a tag) in a frame that ends at the end of the
                    # file.  A bit flip cannot reach step 5: every plaintext is authenticated.
                    kc = K.open_keychain(d, KEY)
                    assert kc.torn_tail == (off, length), where
                    assert state_of(kc) == small["snaps"][n - 1], where
                    assert kc.head == small["heads"][n - 1], where


def test_zero_tail_and_garbage(small):
    """§9.2 steps 1-2: a tail whose length check does not match is torn, whatever its bytes, unless
    a plausible frame header follows it."""
    data = small["data"]
    end = len(data)
    for z in (1, 7, 8, 9, 17, 100, 5000):
        kc = K.open_keychain(data + bytes(z), KEY)
        assert kc.torn_tail == (end, z) and state_of(kc) == small["snaps"][-1]
    rng = random.Random(99)
    garbage = [b"\x01", b"\xff" * 7, b"\x01" + bytes(10), bytes(8) + b"\x01", b"\xff" * 8,
               b"\xff" * 5000, bytes(range(256)) * 4] + [rng.randbytes(rng.randrange(8, 3000)) for _ in range(50)]
    for g in garbage:
        assert K.find_plausible_frame(data + g, end + 1, 5) is None
        if len(g) >= 8 and K.rd_u32(g, 4) == K.rd_u32(g, 0) ^ 0xFFFFFFFF:
            continue                                    # (never happens with these)
        kc = K.open_keychain(data + g, KEY)
        assert kc.torn_tail == (end, len(g)) and state_of(kc) == small["snaps"][-1]
        assert kc.head == small["heads"][-1]
    # a valid frame header announcing more than is there: torn
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
# Records that fail verification.  §9.2 step 4 (structure, authenticity): corrupted in the middle,
# torn at the end.  Step 5 (meaning, after every box verified): corrupted wherever the record is.
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
    """A step-4 failure: torn tail as the final record, corrupted at its offset before another."""
    at_end, followed, off, before = _bad_then(builder)
    kc = K.open_keychain(at_end, PW)
    assert kc.torn_tail == (off, len(at_end) - off)
    assert state_of(kc) == before
    with pytest.raises(K.Corrupted) as e:
        K.open_keychain(followed, PW)
    assert e.value.offset == off
    return e.value.reason


def _check_semantic(builder):
    """A step-5 failure: corrupted at the record's offset, the final record included."""
    at_end, followed, off, before = _bad_then(builder)
    reasons = []
    for d in (at_end, followed):
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(d, PW)
        assert e.value.offset == off
        reasons.append(e.value.reason)
    assert reasons[0] == reasons[1]
    return reasons[0]


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
    assert _check_semantic(builder).startswith("entry 0: attributes:")


@pytest.mark.parametrize("case,kw,cls", [
    ("count 1", dict(count=1), 1), ("count 3 with 2", dict(count=3), 1), ("count 65", dict(count=65), 1),
    ("count 0", dict(count=0), 1), ("trailing byte", dict(trailing=b"\x00"), 1),
    ("encoding version 0", dict(version=0), 1), ("encoding version 2", dict(version=2), 1),
    ("class 0", {}, 0), ("class 5", {}, 5)])
def test_strict_attribute_structure(case, kw, cls):
    assert _check_semantic(lambda w, a: _raw_put(w, DATES, cls=cls, **kw)).startswith("entry 0: attributes:")


@pytest.mark.parametrize("name,value,ok", [
    ("port", 65535, True), ("port", 65536, False), ("port", -1, False),
    ("keyClass", 2, True), ("keyClass", 3, False),
    ("certificateType", 0, True), ("certificateType", 3, True), ("certificateType", 4, False),
    ("protocol", 2 ** 32 - 1, True), ("protocol", 2 ** 32, False),
    ("authenticationType", -1, False), ("type", 2 ** 32, False),
    ("certificateType", -1, False),
    ("keyType", 0, True), ("keyType", 2 ** 32 - 1, True), ("keyType", 2 ** 32, False), ("keyType", -7, False),
    ("certificateEncoding", 99, True), ("certificateEncoding", 2 ** 32 - 1, True),
    ("certificateEncoding", 2 ** 32, False), ("certificateEncoding", -1, False),
    ("keySizeInBits", 2 ** 31 - 1, True), ("keySizeInBits", 2 ** 31, False), ("keySizeInBits", -1, False),
    ("effectiveKeySize", 0, True), ("effectiveKeySize", 2 ** 31, False), ("effectiveKeySize", -(2 ** 63), False),
    ("creator", 0, True), ("accessible", 7, True), ("accessible", 0, False)])
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
        assert "out of range" in _check_semantic(lambda w, _: _raw_put(w, fields, cls=cls))
        with pytest.raises(ValueError):
            K.encode_value(a, value)


def test_record_level_failures():
    """Step 4 failures (structure and authenticity): torn as the final record, corrupted before
    another.  Step 5 failures (meaning): corrupted in both positions."""
    reasons = {}

    def case(name, fn):
        reasons[name] = _check_bad(fn)

    def semantic(name, fn):
        reasons[name] = _check_semantic(fn)

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
    semantic("delete unknown item", lambda w, a: w.append([K.Delete(bytes(16))], check=False))
    semantic("delete twice in a transaction", lambda w, a: w.append([K.Delete(a), K.Delete(a)], check=False))
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
    semantic("uniqueness", dup)

    def dup_in_txn(w, a):
        w.append([w.make_put(K.GENERIC_PASSWORD, {"account": "q"}, b""),
                  w.make_put(K.GENERIC_PASSWORD, {"account": "q"}, b"")], check=False)
    semantic("uniqueness within a transaction", dup_in_txn)

    def txn_bad_last(w, a):
        w.append([w.make_put(K.GENERIC_PASSWORD, {"account": "ok"}, b""), K.Delete(bytes(16))], check=False)
    semantic("transaction with one bad entry (atomic)", txn_bad_last)

    def class_change(w, a):
        w.append([K.Put(a, K.INTERNET_PASSWORD, {"creationDate": 1, "modificationDate": 2}, b"")], check=False)
    semantic("put changes a live item's class", class_change)

    def class_change_in_txn(w, a):
        x = bytes([7]) * 16
        w.append([w.make_put(K.GENERIC_PASSWORD, {"account": "new"}, b"", item_id=x),
                  K.Put(x, K.KEY, {"creationDate": 1, "modificationDate": 2}, b"")], check=False)
    semantic("put changes the class of an item added earlier in the transaction", class_change_in_txn)

    def short_attributes(w, a):                    # no room even for the item id
        w.append([K.Put(a, 1, {}, b"", raw_attributes=b"\x01" + a[:10])], check=False)
    semantic("attributes plaintext of 11 bytes", short_attributes)

    def empty_attributes(w, a):
        w.append([K.Put(a, 1, {}, b"", raw_attributes=b"")], check=False)
    semantic("empty attributes plaintext", empty_attributes)

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

    def step4_before_step5(w, a):
        # entry 0 deletes an unknown item (step 5) but entry 1's box does not open (step 4): the
        # record is judged by step 4 first, so as the final record it is a torn tail
        frame, chain = w.encode_record([K.Delete(bytes(16)), K.Delete(a)])
        frame = bytearray(frame)
        frame[-1] ^= 1
        w.write_raw(bytes(frame))
        w.seq += 1
        w.chain = chain
    case("step 4 failure after a step 5 failure", step4_before_step5)
    assert all(reasons.values())
    assert "not live" in reasons["delete unknown item"]
    assert "class" in reasons["put changes a live item's class"]
    assert "uniqueness" in reasons["uniqueness"]


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
    off = len(w2.data)
    _raw_put(w2, DATES + [A("account", ""), A("service", "")])
    with pytest.raises(K.Corrupted) as e:         # step 5: corrupted even as the final record
        K.open_keychain(w2.data, PW)
    assert "uniqueness" in e.value.reason and e.value.offset == off


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
    assert text.count("AAD (78 bytes):") == kc.box_count == 9
    for field in ("entry count", "entry index", "box role", "previous chain value"):
        assert f"| {field} |" in text
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
# The revised §7.2 / §9.2 rules (formerly findings F1-F3 of README.md)
# ---------------------------------------------------------------------------------------------

def _cut_final_transaction(data, keep, *, entry_count=None):
    """Rewrites the final record (a transaction) to keep only its first `keep` entries, with E, L and
    the length check rewritten to match: what someone who can write the file (but has no key) can do."""
    o, n = K.scan_frames(data)[-1]
    frame = data[o:o + n]
    entries = K.parse_payload(K.KIND_TRANSACTION, frame[17:])
    body = frame[8:17] + K.u32(keep if entry_count is None else entry_count)
    for ek, boxes in entries[:keep]:
        body += bytes([ek]) + b"".join(K.u32(len(bx)) + bx for bx in boxes)
    return data[:o] + K.u32(len(body)) + K.u32(len(body) ^ 0xFFFFFFFF) + body, o


def test_entry_count_attack_final_transaction_cut_short():
    """§7.2: the entry count E is in every box's AAD, so the final transaction can no longer be cut
    down to a prefix of its entries: the remaining boxes do not open under E' (step 4), and as the
    final frame it is a torn tail: none of the transaction is applied."""
    w = new_writer()
    keep = w.add(K.GENERIC_PASSWORD, {"account": "keep"}, b"")
    before, head_before = snapshot(w.items), w.head
    with w.transaction() as t:
        a = t.add(K.GENERIC_PASSWORD, {"account": "a"}, b"A")
        b = t.add(K.GENERIC_PASSWORD, {"account": "b"}, b"B")
        t.delete(keep)
    data = w.data
    full = K.open_keychain(data, PW)
    assert set(full.items) == {a, b}
    for k in (1, 2):
        forged, o = _cut_final_transaction(data, k)
        kc = K.open_keychain(forged, PW)
        assert kc.torn_tail == (o, len(forged) - o)
        assert snapshot(kc.items) == before and kc.head == head_before
        assert a not in kc.items and b not in kc.items and keep in kc.items
        # the same cut followed by another record is corrupted
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(forged + data[o:], PW)
        assert e.value.offset == o
    # keeping the entries but changing E alone breaks the parse (step 4)
    forged, o = _cut_final_transaction(data, 3, entry_count=2)
    assert K.open_keychain(forged, PW).torn_tail == (o, len(forged) - o)
    # a writer that seals the wrong count into the AAD produces a record that never opens
    w2 = new_writer()
    w2.append([w2.make_put(K.GENERIC_PASSWORD, {"account": "x"}, b""),
               w2.make_put(K.GENERIC_PASSWORD, {"account": "y"}, b"")], check=False, aad_entry_count=1)
    assert K.open_keychain(w2.data, PW).torn_tail == (K.rd_u32(w2.data, 12), len(w2.data) - K.rd_u32(w2.data, 12))
    # kinds 1 and 2 seal an entry count of 1
    w3 = new_writer()
    w3.append([w3.make_put(K.GENERIC_PASSWORD, {"account": "x"}, b"")], check=False, aad_entry_count=0)
    assert K.open_keychain(w3.data, PW).torn_tail is not None


def test_aad_layout():
    fid, chain, iid = bytes(range(16)), bytes(range(100, 116)), bytes(range(200, 216))
    aad = K.box_aad(fid, 0x0102030405060708, 9, 3, 0xAABBCCDD, 0x11223344, 2, iid, chain)
    assert len(aad) == 78
    assert aad[0:4] == b"KCF1" and aad[4:20] == fid and aad[20:28] == K.u64(0x0102030405060708)
    assert aad[28:36] == K.u64(9) and aad[36] == 3
    assert aad[37:41] == bytes.fromhex("aabbccdd") and aad[41:45] == bytes.fromhex("11223344")
    assert aad[45] == 2 and aad[46:62] == iid and aad[62:78] == chain


def test_semantic_failures_in_final_record_are_corrupted():
    """§9.2 step 5: once every box of the final record has verified, a failure of its meaning is
    `corrupted`, not a torn tail (the record was written by a holder of the key, not torn by a crash)."""
    def build():
        w = new_writer()
        x = w.add(K.GENERIC_PASSWORD, {"account": "x"}, b"")
        return w, x, len(w.data)
    cases = [   # (expected part of the reason, builder)
        ("not live", lambda w, x: w.append([K.Delete(bytes(16))], check=False)),
        ("uniqueness", lambda w, x: w.append([w.make_put(K.GENERIC_PASSWORD, {"account": "x"}, b"")],
                                             check=False)),
        ("class", lambda w, x: w.append([K.Put(x, K.CERTIFICATE, {"creationDate": 1, "modificationDate": 1},
                                               b"")], check=False)),
        ("unknown tag", lambda w, x: _raw_put(w, DATES + [(0x0110, 1, b"")])),
        ("creationDate missing", lambda w, x: _raw_put(w, [A("modificationDate", 2)] + [ACC])),
        ("out of range", lambda w, x: _raw_put(w, DATES + [(0x0106, 3, K.i64(-1))])),
    ]
    for expected, fn in cases:
        w, x, off = build()
        fn(w, x)
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(w.data, PW)
        assert e.value.offset == off, expected
        assert expected in e.value.reason, (expected, e.value.reason)
        # and the writer truncating "torn tails" must not silently drop it either
        with pytest.raises(K.Corrupted):
            K.Writer.open(w.data, PW)


def test_class_rules():
    """§8.3: an item keeps its class while it is live; deleted and put again it may take another."""
    w = new_writer()
    x = w.add(K.GENERIC_PASSWORD, {"account": "x"}, b"")
    with pytest.raises(ValueError):
        w.append([K.Put(x, K.KEY, {"creationDate": 1, "modificationDate": 1}, b"")])
    w.delete(x)
    w.append([K.Put(x, K.KEY, {"creationDate": 1, "modificationDate": 1}, b"k")])
    # in one transaction: delete, then put with another class
    w.append([K.Delete(x), K.Put(x, K.CERTIFICATE, {"creationDate": 1, "modificationDate": 1}, b"c")])
    kc = K.open_keychain(w.data, PW)
    assert kc.items[x].cls == K.CERTIFICATE and kc.items[x].secret == b"c"


def test_garbage_tails_that_are_not_zeros_are_torn(small):
    """§9.2 step 2: what a crash left (stale data, random bytes, a half-written header) is a torn
    tail when no plausible frame header follows, whatever the bytes are."""
    data, end = small["data"], len(small["data"])
    o, n = small["frames"][-1]
    last = data[o:o + n]
    tails = {
        "random": random.Random(5).randbytes(1000),
        "0xff": b"\xff" * 64,
        "ASCII": b"stale text from an older file " * 10,
        # a stale copy of the final record (sequence 4, not greater than the expected 5) behind a
        # damaged length: not plausible
        "stale older record": b"\x00\x00\x00\x05" + last,
        # a frame header with a good length check and sequence 9, but whose frame does not fit
        "header that does not fit": b"\x01" * 8 + K.u32(500) + K.u32(500 ^ 0xFFFFFFFF) + b"\x01" + K.u64(9),
        # ... and one that fits but has kind 4
        "kind 4": b"\x01" * 8 + K.u32(9) + K.u32(9 ^ 0xFFFFFFFF) + b"\x04" + K.u64(9),
        # ... and one that fits but has L = 8
        "L = 8": b"\x01" * 8 + K.u32(8) + K.u32(8 ^ 0xFFFFFFFF) + b"\x01" + K.u64(9) + bytes(8),
    }
    for name, g in tails.items():
        kc = K.open_keychain(data + g, KEY)
        assert kc.torn_tail == (end, len(g)), name
        assert state_of(kc) == small["snaps"][-1] and kc.head == small["heads"][-1], name


def test_damaged_length_followed_by_a_valid_record_is_corrupted(small):
    """§9.2 step 2: damage to a frame header that is followed by a plausible frame header is
    `corrupted(offset, "frame length")`, never a torn tail."""
    data, frames = small["data"], small["frames"]
    for r, (o, n) in enumerate(frames[:-1]):
        for edit in ((0, 0x01), (3, 0x80), (4, 0x10), (7, 0x01)):
            d = bytearray(data)
            d[o + edit[0]] ^= edit[1]
            with pytest.raises(K.Corrupted) as e:
                K.open_keychain(bytes(d), KEY)
            assert (e.value.offset, e.value.reason) == (o, "frame length"), (r, edit)
        # the whole frame header zeroed (as a crash might leave it) followed by the next record
        d = bytearray(data)
        d[o:o + 8] = bytes(8)
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(bytes(d), KEY)
        assert (e.value.offset, e.value.reason) == (o, "frame length")
    # garbage appended, then a valid-looking frame header (sequence > expected) that fits
    end = len(data)
    o, n = frames[-1]
    plausible = K.u32(9) + K.u32(9 ^ 0xFFFFFFFF) + b"\x02" + K.u64(6) + bytes(9)
    for g in (b"\x07" * 3, b"\x07" * 20, bytes(100)):
        with pytest.raises(K.Corrupted) as e:
            K.open_keychain(data + g + plausible, KEY)
        assert (e.value.offset, e.value.reason) == (end, "frame length")
    # the final record's length damaged, then a copy of a valid record of another sequence > 4
    d = bytearray(data)
    d[o] ^= 1
    with pytest.raises(K.Corrupted):
        K.open_keychain(bytes(d) + plausible, KEY)
    assert K.open_keychain(bytes(d), KEY).torn_tail == (o, n)


def test_plausible_frame_search():
    d = bytes(20) + K.u32(9) + K.u32(9 ^ 0xFFFFFFFF) + b"\x01" + K.u64(3)
    assert K.find_plausible_frame(d, 0, 2) == 20
    assert K.find_plausible_frame(d, 0, 3) is None            # sequence must be greater
    assert K.find_plausible_frame(d, 21, 2) is None
    assert K.find_plausible_frame(d[:-1], 0, 2) is None        # 17 bytes must remain
    d2 = d + bytes(100)
    assert K.find_plausible_frame(d2, 0, 2) == 20
    unaligned = b"\x01" * 3 + d
    assert K.find_plausible_frame(unaligned, 0, 2) == 23


def test_short_garbage_tail_and_eight_bytes_are_both_torn(small):
    data = small["data"]
    assert K.open_keychain(data + b"\xff" * 7, KEY).torn_tail == (len(data), 7)
    assert K.open_keychain(data + b"\xff" * 8, KEY).torn_tail == (len(data), 8)


# ---------------------------------------------------------------------------------------------
# GCM spelt out in traces; the conformance fixtures; the §14 worked example
# ---------------------------------------------------------------------------------------------

FIXTURES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Fixtures", "v1"))


def test_gcm_details_recompute_the_tag():
    rng = random.Random(3)
    for n in (0, 1, 15, 16, 17, 100):
        k, nonce, aad = rng.randbytes(32), rng.randbytes(12), rng.randbytes(rng.randrange(0, 90))
        box = K.gcm_seal(k, nonce, rng.randbytes(n), aad)
        rows = dict(K.gcm_details(k, box, aad))
        assert rows["equals the stored tag"] == "yes"
        bad = bytearray(box); bad[-1] ^= 1
        assert dict(K.gcm_details(k, bytes(bad), aad))["equals the stored tag"] == "**NO**"


def _manifest_for(kc, name, cred):
    items = []
    for iid in sorted(kc.items):
        it = kc.items[iid]
        attrs = {}
        for n, v in it.attributes.items():
            a = K.ATTRIBUTES_BY_NAME[n]
            attrs[n] = {K.TYPE_NAMES[a.type]: v.hex() if a.type == K.T_BYTES else v}
        items.append({"id": iid.hex(), "class": K.CLASS_NAMES[it.cls], "attributes": attrs,
                      "secret": it.secret.hex()})
    return {"name": name, "formatVersion": 1, "description": "test", "credential": cred,
            "expect": {"outcome": "opens", "itemCount": len(items), "items": items,
                       "head": {"sequence": kc.head[0], "chainValue": kc.head[1].hex()},
                       "tornTail": None if kc.torn_tail is None else
                       {"offset": kc.torn_tail[0], "byteCount": kc.torn_tail[1]}}}


def test_check_fixtures_detects_mismatches(tmp_path, small):
    import check_fixtures as C
    cred = {"key": KEY["key"].hex()}
    data = small["data"] + bytes(5)
    (tmp_path / "s.kcf").write_bytes(data)
    m = _manifest_for(K.open_keychain(data, KEY), "s", cred)
    (tmp_path / "s.json").write_text(json.dumps(m))
    bad = bytearray(small["data"]); bad[small["H"] + 3] ^= 1
    (tmp_path / "c.kcf").write_bytes(bytes(bad))
    (tmp_path / "c.json").write_text(json.dumps({"name": "c", "formatVersion": 1, "description": "", "credential": cred,
                                                 "expect": {"outcome": "fails", "error": "corrupted",
                                                            "errorOffsetRange": [small["H"], small["H"] + 1]}}))
    assert C.main([str(tmp_path)]) == 0

    def mutated(fn, target="s"):
        j = json.loads((tmp_path / f"{target}.json").read_text())
        fn(j["expect"])
        d = tmp_path / "m"
        d.mkdir(exist_ok=True)
        for f in d.iterdir():
            f.unlink()
        (d / f"{target}.kcf").write_bytes((tmp_path / f"{target}.kcf").read_bytes())
        (d / f"{target}.json").write_text(json.dumps(j))
        return C.main([str(d)])

    assert mutated(lambda e: e["items"][0]["attributes"]["accessible"].update(integer=True)) == 1
    assert mutated(lambda e: e["items"][0]["attributes"].pop("accessGroup")) == 1
    assert mutated(lambda e: e["items"][0].update(secret="00")) == 1
    assert mutated(lambda e: e["items"][0].update({"class": "certificate"})) == 1
    assert mutated(lambda e: e.update(itemCount=3)) == 1
    assert mutated(lambda e: e["head"].update(sequence=3)) == 1
    assert mutated(lambda e: e.update(tornTail=None)) == 1
    assert mutated(lambda e: e.update(unknownField=1)) == 1
    assert mutated(lambda e: e.update(errorOffsetRange=[0, small["H"]]), "c") == 1
    assert mutated(lambda e: e.update(error="wrongCredentials"), "c") == 1
    assert mutated(lambda e: e.update(outcome="opens"), "c") == 1


@pytest.mark.skipif(not os.path.exists(os.path.join(FIXTURES, "worked-example.kcf")), reason="Fixtures/v1 not generated")
def test_conformance_fixtures():
    import check_fixtures as C
    assert C.main([FIXTURES]) == 0


@pytest.mark.skipif(not os.path.exists(os.path.join(FIXTURES, "worked-example.kcf")), reason="no worked example")
def test_worked_example_trace_is_up_to_date():
    with open(os.path.join(FIXTURES, "worked-example.json"), encoding="utf-8") as f:
        cred = json.load(f)["credential"]
    cred = {"password": cred["password"]} if "password" in cred else {"key": bytes.fromhex(cred["key"])}
    text = K.trace(os.path.join(FIXTURES, "worked-example.kcf"), cred, raise_errors=True)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "worked-example-trace.md"), encoding="utf-8") as f:
        assert f.read() == text

#!/usr/bin/env python3
"""KeychainFile format version 3's records (Docs/FormatVersion3.md §2.5): an independent implementation.

Written from the byte table of §2.5.1 (frame, segments, group pages, secret boxes, heads, chain tag) with Python's
`cryptography` for HKDF, HMAC and AES-GCM, hashlib for SHA-256 and BLAKE2b, and the version 1 reference
(kcf_reference.py) for the attributes inside a put: the second implementation the Swift codec is checked against
(Tests/KeychainFileTests/Format/V3/RecordV3ReferenceTests.swift). Version 3 is a design still; nothing here reads
or writes a whole file, and the log-side keys (the epoch's chain key, the heads key, the first record's previous
chain tag) are inputs, as the header derives them from the log key.

CLI (hex and JSON in, JSON out), for the Swift tests:

    records_v3.py encode SPEC_JSON
        SPEC: {"fileID", "epoch", "chainKey", "headsKey", "kind", "sequence", "part", "previousChain",
               "heads": [HEAD...], "groups": [{"keyID", "key"}...], "seed",
               "segments": [{"seal": {"keyID", "entries": [ENTRY...]}} | {"copy": SEGMENT_HEX}...]}
        prints {"record": HEX, "chainTag": HEX, "heads": [HEAD...]}   (the heads after the record)
    records_v3.py decode RECORD_HEX KEYS_JSON
        KEYS: {"fileID", "epoch", "chainKey", "headsKey", "previousChain",
               "groups": [{"keyID", "key", "startEpoch", "sequence", "lastTag" (absent before page 1)}...]}
        prints {"kind", "sequence", "part", "end", "chainTag", "heads": [HEAD...] | null,
                "segments": [{"keyID", "opaque": HEX} | {"keyID", "groupSequence", "tag", "segment": HEX,
                              "entries": [ENTRY...]}...], "groups": [the chain states after the record]}
    records_v3.py verify-group SPEC_JSON
        SPEC: {"fileID", "keyID", "key", "segments": [SEGMENT_HEX...], "heads": [HEAD...]}
        prints {"pages": n}

    HEAD:  {"keyID", "startEpoch", "groupSequence", "lastTag"}   (group sequence 0: no page yet, lastTag the
           group's start value for its start epoch, what page 1 follows — §35.7, session 51)

encode names every group of "groups" in the heads after the record: a group without a head in "heads" starts its
chain in this epoch, at group sequence 0 with its start value (§35.7 (session 51): a commit's heads state every
group the writer knows). decode and verify-group refuse a commit whose heads do not name a group they follow (one
of "groups", or "keyID"), with or without pages (a whole group dropped, §40).
    ENTRY: {"put": {"id", "class", "attributes": {name: value}, "secret"}} | {"delete": {"id", "time"}}
           | {"tombstone": {"id", "time"}}          (ids and secrets in hex; dates in ms)

Group pages are padded with zeros to their size class (§2.5.1 "Page", padded_page_length); a page of any other
length, or with a non-zero padding byte, is refused as corrupted.

Exit status 6 with {"result": "corrupted", "offset", "reason"} when the record is refused (offset in the record,
or in the segment for verify-group); 7 with {"result": "unsupported", ...} for a kind or page encoding of a newer
writer.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac as _hmac
import json
import os
import random
import struct
import sys
from typing import Optional

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kcf_reference as K  # noqa: E402  (attributes of a put: SPEC §7.3)

KIND_COMMIT, KIND_PART = 1, 3
MIN_BODY, MAX_BODY = 72, 16 * 1024 * 1024
FIXED = 27                      # frame: length, check, kind, sequence, part, count, frame check
SEGMENT_HEADER = 9              # key id, segment length, page box length
MAX_SEGMENTS = 65_535           # the frame's u16 segment count
MIN_SEGMENT = SEGMENT_HEADER + 28
MAX_SECRET = 1 << 20
PAGE_ENCODING = 1
PAGE_LIMIT = 8192
PAGE_PAD_MIN = 256              # a group page's plaintext is padded to at least this (§2.5.1 "Page")
PAGE_PAD_STEP = 8192            # … to a power of two up to this, then to a multiple of it
HEAD_SIZE = 33


class Corrupted(Exception):
    def __init__(self, offset: int, reason: str):
        super().__init__(f"at {offset}: {reason}")
        self.offset, self.reason = offset, reason


class Unsupported(Exception):
    def __init__(self, offset: int, reason: str):
        super().__init__(f"at {offset}: {reason}")
        self.offset, self.reason = offset, reason


def u8(v): return struct.pack(">B", v)
def u16(v): return struct.pack(">H", v)
def u32(v): return struct.pack(">I", v)
def u64(v): return struct.pack(">Q", v)
def i64(v): return struct.pack(">q", v)
def rd16(b, o): return struct.unpack_from(">H", b, o)[0]
def rd32(b, o): return struct.unpack_from(">I", b, o)[0]
def rd64(b, o): return struct.unpack_from(">Q", b, o)[0]
def rdi64(b, o): return struct.unpack_from(">q", b, o)[0]


def hkdf(ikm: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(ikm)


def hmac16(key: bytes, message: bytes) -> bytes:
    return _hmac.new(key, message, hashlib.sha256).digest()[:16]


def blake2b16(box: bytes) -> bytes:
    return hashlib.blake2b(box, digest_size=16).digest()


def seal(key: bytes, plain: bytes, aad: bytes, rng: random.Random) -> bytes:
    nonce = bytes(rng.getrandbits(8) for _ in range(12))
    return nonce + AESGCM(key).encrypt(nonce, plain, aad)


def gcm_open(key: bytes, box: bytes, aad: bytes) -> Optional[bytes]:
    try:
        return AESGCM(key).decrypt(box[:12], box[12:], aad)
    except InvalidTag:
        return None


# --- keys and associated data (§2.5.1) --------------------------------------------------------------------

class GroupKeys:
    def __init__(self, group_key: bytes, file_id: bytes, key_id: int):
        assert len(group_key) == 32 and len(file_id) == 16 and 1 <= key_id <= 255
        self.key_id, self.file_id = key_id, file_id
        self.page = hkdf(group_key, b"KCF3 group page" + file_id + u8(key_id))
        self.secret = hkdf(group_key, b"KCF3 group secret" + file_id + u8(key_id))
        self.start = hkdf(group_key, b"KCF3 group start" + file_id + u8(key_id))

    def start_value(self, epoch: int) -> bytes:
        return hmac16(self.start, u64(epoch))


def page_aad(file_id: bytes, key_id: int, group_sequence: int, previous_tag: bytes) -> bytes:
    return b"KCF3 page" + file_id + u8(key_id) + u64(group_sequence) + previous_tag


def secret_aad(file_id: bytes, key_id: int, item_id: bytes) -> bytes:
    return b"KCF3 secret box\x00" + file_id + u8(key_id) + item_id


def heads_aad(file_id: bytes, epoch: int, sequence: int) -> bytes:
    return b"KCF3 heads" + file_id + u64(epoch) + u64(sequence)


def padded_page_length(used: int) -> int:
    """§2.5.1 "Page": the plaintext length T of a group page whose entries end at `used` (U = 3 + the entries'
    bytes): 256 up to 256; the smallest power of two ≥ U up to 8,192; past that the smallest multiple of 8,192 ≥ U.
    So a page's size tells a holder of K_log only its size class, not how many deletions it holds (review finding
    2). The writer pads to it; the reader refuses a page of any other length."""
    if used <= PAGE_PAD_MIN:
        return PAGE_PAD_MIN
    if used <= PAGE_PAD_STEP:
        return 1 << (used - 1).bit_length()
    return -(-used // PAGE_PAD_STEP) * PAGE_PAD_STEP


# --- writing ----------------------------------------------------------------------------------------------

def entry_bytes(entry: dict, file_id: bytes, keys: GroupKeys, rng: random.Random) -> tuple:
    """An entry of a page (§24.2) and, for a put, its secret box."""
    if "put" in entry:
        p = entry["put"]
        item_id, secret = bytes.fromhex(p["id"]), bytes.fromhex(p["secret"])
        attributes = K.encode_attributes(item_id, p["class"], p["attributes"])
        box = seal(keys.secret, secret, secret_aad(file_id, keys.key_id, item_id), rng)
        return b"\x01" + u32(len(attributes)) + attributes + u32(len(secret)) + blake2b16(box), box
    kind, d = (2, entry["delete"]) if "delete" in entry else (3, entry["tombstone"])
    return u8(kind) + bytes.fromhex(d["id"]) + i64(d["time"]), b""


def group_segment(keys: GroupKeys, entries: list, group_sequence: int, previous_tag: bytes,
                  rng: random.Random) -> bytes:
    plain, boxes = u8(PAGE_ENCODING) + u16(len(entries)), b""
    for entry in entries:
        encoded, box = entry_bytes(entry, keys.file_id, keys, rng)
        plain += encoded
        boxes += box
    plain += bytes(padded_page_length(len(plain)) - len(plain))       # zeros up to the page's size class
    page = seal(keys.page, plain, page_aad(keys.file_id, keys.key_id, group_sequence, previous_tag), rng)
    return u8(keys.key_id) + u32(len(page) + len(boxes)) + u32(len(page)) + page + boxes


def heads_plaintext(heads: dict) -> bytes:
    return b"".join(u8(k) + u64(h["startEpoch"]) + u64(h["groupSequence"]) + h["lastTag"]
                    for k, h in sorted(heads.items()))


def assemble(kind: int, sequence: int, part: int, segments: list, previous_chain: bytes, chain_key: bytes) -> bytes:
    """The record around `segments` (each: key id ‖ S ‖ P ‖ body): frame, frame check, chain tag."""
    if len(segments) > MAX_SEGMENTS:          # the frame's u16 count (§2.5.1); writers cut parts well below it
        raise ValueError(f"a record holds at most {MAX_SEGMENTS} segments, not {len(segments)}")
    body = FIXED - 8 + sum(len(s) for s in segments) + 16
    head = u32(body) + u32(body ^ 0xFFFFFFFF) + u8(kind) + u64(sequence) + u32(part) + u16(len(segments))
    frame = head + hashlib.sha256(head + b"".join(s[:SEGMENT_HEADER] for s in segments)).digest()[:4]
    return frame + b"".join(segments) + chain_tag(chain_key, previous_chain, frame, segments)


def chain_tag(chain_key: bytes, previous_chain: bytes, frame: bytes, segments: list) -> bytes:
    message = previous_chain + frame
    for s in segments:
        page_length = rd32(s, 5)
        message += s[:SEGMENT_HEADER] + s[SEGMENT_HEADER + page_length - 16:SEGMENT_HEADER + page_length]
    return hmac16(chain_key, message)


def encode_record(spec: dict) -> tuple:
    """Returns (record, chain tag, heads after it). Pages are sealed in order. §35.7 (session 51): a group of
    "groups" without a head starts its chain in this epoch and is named at group sequence 0 with its start value
    (so a commit's heads name every group the writer holds, with pages or not)."""
    file_id, epoch = bytes.fromhex(spec["fileID"]), spec["epoch"]
    rng = random.Random(spec.get("seed", 0))
    keys = {g["keyID"]: GroupKeys(bytes.fromhex(g["key"]), file_id, g["keyID"]) for g in spec.get("groups", [])}
    heads = {h["keyID"]: {"startEpoch": h["startEpoch"], "groupSequence": h["groupSequence"],
                          "lastTag": bytes.fromhex(h["lastTag"])} for h in spec.get("heads", [])}
    for k, group in keys.items():
        heads.setdefault(k, {"startEpoch": epoch, "groupSequence": 0, "lastTag": group.start_value(epoch)})
    segments = []
    for s in spec["segments"]:
        if "copy" in s:
            segments.append(bytes.fromhex(s["copy"]))
            continue
        k = s["seal"]["keyID"]
        head = heads[k]
        segment = group_segment(keys[k], s["seal"]["entries"], head["groupSequence"] + 1, head["lastTag"], rng)
        heads[k] = {"startEpoch": head["startEpoch"], "groupSequence": head["groupSequence"] + 1,
                    "lastTag": segment[SEGMENT_HEADER + rd32(segment, 5) - 16:SEGMENT_HEADER + rd32(segment, 5)]}
        segments.append(segment)
    if spec["kind"] == KIND_COMMIT:
        box = seal(bytes.fromhex(spec["headsKey"]), heads_plaintext(heads), heads_aad(file_id, epoch, spec["sequence"]), rng)
        segments.append(u8(0) + u32(len(box)) + u32(len(box)) + box)
    record = assemble(spec["kind"], spec["sequence"], spec["part"], segments, bytes.fromhex(spec["previousChain"]),
                      bytes.fromhex(spec["chainKey"]))
    return record, record[-16:], heads


# --- reading ----------------------------------------------------------------------------------------------

def split(record: bytes) -> dict:
    """The frame and its segments, every length checked before use (§2.5.1 "Reading", up to the frame check)."""
    if len(record) < 8:
        raise Corrupted(0, "shorter than the length fields")
    length, check = rd32(record, 0), rd32(record, 4)
    if length ^ 0xFFFFFFFF != check:
        raise Corrupted(0, "length check")
    if not MIN_BODY <= length <= MAX_BODY:
        raise Corrupted(0, f"body length {length}")
    end = 8 + length
    if end > len(record):
        raise Corrupted(0, "body runs past the bytes given")
    count = rd16(record, 21)
    if not 1 <= count <= (length - 35) // MIN_SEGMENT:
        raise Corrupted(21, f"segment count {count}")
    segments, pos = [], FIXED
    for index in range(count):
        if pos + SEGMENT_HEADER > end - 16:
            raise Corrupted(pos, f"segment {index}: header runs into the chain tag")
        key_id, s_len, p_len = record[pos], rd32(record, pos + 1), rd32(record, pos + 5)
        if s_len < 28 or not 28 <= p_len <= s_len:
            raise Corrupted(pos + 1, f"segment {index}: lengths {s_len}, {p_len}")
        if pos + SEGMENT_HEADER + s_len > end - 16:
            raise Corrupted(pos + 1, f"segment {index}: runs into the chain tag")
        segments.append({"keyID": key_id, "start": pos, "page": (pos + 9, pos + 9 + p_len),
                         "secrets": (pos + 9 + p_len, pos + 9 + s_len)})
        pos += SEGMENT_HEADER + s_len
    if pos != end - 16:
        raise Corrupted(pos, f"{end - 16 - pos} bytes between the last segment and the chain tag")
    headers = b"".join(record[s["start"]:s["start"] + SEGMENT_HEADER] for s in segments)
    if hashlib.sha256(record[:23] + headers).digest()[:4] != record[23:27]:
        raise Corrupted(0, "frame check")
    kind = record[8]
    if kind not in (KIND_COMMIT, KIND_PART):
        raise Unsupported(8, f"kind {kind}")
    heads_at = [i for i, s in enumerate(segments) if s["keyID"] == 0]
    if kind == KIND_COMMIT and heads_at != [count - 1]:
        raise Corrupted(0, f"a commit's heads segments at {heads_at}, not exactly its last")
    if kind == KIND_COMMIT and segments[-1]["secrets"][0] != segments[-1]["secrets"][1]:
        raise Corrupted(segments[-1]["start"] + 1, "the heads segment holds bytes after its box")
    if kind == KIND_PART and heads_at:
        raise Corrupted(segments[heads_at[0]]["start"], "a transaction part holds a heads segment")
    return {"kind": kind, "sequence": rd64(record, 9), "part": rd32(record, 17), "end": end, "segments": segments}


def open_page(data: bytes, seg: dict, keys: GroupKeys, group_sequence: int, previous_tag: bytes,
              where: str) -> tuple:
    """Opens a group's page as page `group_sequence` of its chain and checks its secret boxes. Returns
    (entries as JSON, tag)."""
    p0, p1 = seg["page"]
    s0, s1 = seg["secrets"]
    plain = gcm_open(keys.page, data[p0:p1], page_aad(keys.file_id, keys.key_id, group_sequence, previous_tag))
    if plain is None:
        raise Corrupted(p0, f"{where}: group {keys.key_id}'s page does not authenticate as page {group_sequence} "
                            f"of its chain (dropped, repeated, reordered, replaced or damaged)")
    if len(plain) < 3:
        raise Corrupted(p0, f"{where}: page shorter than 3 bytes")
    if plain[0] != PAGE_ENCODING:
        raise Unsupported(p0, f"page encoding {plain[0]}")
    count, pos, box_at, entries = rd16(plain, 1), 3, s0, []
    if count < 1:
        raise Corrupted(p0, f"{where}: a page without entries")
    for _ in range(count):
        if pos >= len(plain):
            raise Corrupted(p0, f"{where}: entries run past the page")
        kind = plain[pos]
        if kind == 1:
            if pos + 5 > len(plain):
                raise Corrupted(p0, f"{where}: put runs past the page")
            a = rd32(plain, pos + 1)
            if pos + 5 + a + 20 > len(plain):
                raise Corrupted(p0, f"{where}: put runs past the page")
            attributes = plain[pos + 5:pos + 5 + a]
            secret_length, digest = rd32(plain, pos + 5 + a), plain[pos + 9 + a:pos + 25 + a]
            pos += 25 + a
            try:
                item_id, cls, values = K.decode_attributes(attributes)
            except K._Invalid as e:
                raise Corrupted(p0, f"{where}: {e.reason}") from None
            if secret_length > MAX_SECRET:
                raise Corrupted(p0, f"{where}: a secret of {secret_length} bytes")
            if box_at + secret_length + 28 > s1:
                raise Corrupted(p0, f"{where}: a put names a secret box that is not there")
            box = data[box_at:box_at + secret_length + 28]
            if blake2b16(box) != digest:
                raise Corrupted(box_at, f"{where}: a secret box is not the one its page names")
            secret = gcm_open(keys.secret, box, secret_aad(keys.file_id, keys.key_id, item_id))
            if secret is None:
                raise Corrupted(box_at, f"{where}: a secret box does not authenticate")
            box_at += secret_length + 28
            shown = {n: (v.hex() if isinstance(v, bytes) else v) for n, v in values.items()}
            entries.append({"put": {"id": item_id.hex(), "class": cls, "attributes": shown, "secret": secret.hex()}})
        elif kind in (2, 3):
            if pos + 25 > len(plain):
                raise Corrupted(p0, f"{where}: a deletion runs past the page")
            name = "delete" if kind == 2 else "tombstone"
            entries.append({name: {"id": plain[pos + 1:pos + 17].hex(), "time": rdi64(plain, pos + 17)}})
            pos += 25
        else:
            raise Corrupted(p0, f"{where}: entry kind {kind}")
    # §2.5.1: zeros from the end of the last entry (U = pos) up to exactly padded(U) bytes.
    if len(plain) != padded_page_length(pos):
        raise Corrupted(p0, f"{where}: a page of {len(plain)} bytes whose entries end at {pos}: its padding is not "
                            f"the {padded_page_length(pos) - pos} zero bytes up to {padded_page_length(pos)}")
    if any(plain[pos:]):
        raise Corrupted(p0, f"{where}: a page whose padding after its entries holds a byte other than zero")
    if box_at != s1:
        raise Corrupted(box_at, f"{where}: {s1 - box_at} bytes of secret boxes no put names")
    return entries, data[p1 - 16:p1]


def open_heads(box: bytes, at: int, heads_key: bytes, file_id: bytes, epoch: int, sequence: int) -> dict:
    """A commit's heads. §35.7 (session 51): group sequence 0 is a head too (a group with no page in the file yet,
    its tag the group's start value); key id 0, key ids not strictly increasing and a start epoch after the epoch
    stay refused."""
    plain = gcm_open(heads_key, box, heads_aad(file_id, epoch, sequence))
    if plain is None:
        raise Corrupted(at, "the heads do not authenticate")
    if len(plain) % HEAD_SIZE:
        raise Corrupted(at, f"heads of {len(plain)} bytes")
    heads, previous = {}, 0
    for o in range(0, len(plain), HEAD_SIZE):
        k, start, seq = plain[o], rd64(plain, o + 1), rd64(plain, o + 9)
        if k <= previous or start > epoch:
            raise Corrupted(at, f"head of key id {k}: out of order or out of range")
        previous = k
        heads[k] = {"startEpoch": start, "groupSequence": seq, "lastTag": plain[o + 17:o + 33]}
    return heads


def check_head(chain: dict, heads: dict, at: int):
    """§35.7, §35.9 step 6 (session 51): every group the reader follows has a head at each commit, equal to its
    chain's end — (start epoch, group sequence, last page tag), or for a chain with no page (start epoch, 0, the
    start value), which `chain["lastTag"]` then holds. A followed group the heads do not name, with pages or not, is
    refused: a K_log holder that dropped every page and the head of a group must not leave it looking empty (§40)."""
    head, k = heads.get(chain["keyID"]), chain["keyID"]
    if head is None:
        raise Corrupted(at, f"the heads do not name group {k}; its pages may have been dropped")
    if (head["startEpoch"], head["groupSequence"], head["lastTag"]) != (chain["startEpoch"], chain["sequence"], chain["lastTag"]):
        raise Corrupted(at, f"group {k}'s chain does not end at its head")


def decode_record(record: bytes, spec: dict) -> dict:
    file_id, epoch = bytes.fromhex(spec["fileID"]), spec["epoch"]
    frame = split(record)
    segs = frame["segments"]
    frame_bytes = record[:FIXED]
    expected = chain_tag(bytes.fromhex(spec["chainKey"]), bytes.fromhex(spec["previousChain"]), frame_bytes,
                         [record[s["start"]:s["secrets"][1]] for s in segs])
    if not _hmac.compare_digest(expected, record[frame["end"] - 16:frame["end"]]):
        raise Corrupted(frame["end"] - 16, "the chain tag does not match")
    heads = None
    if frame["kind"] == KIND_COMMIT:
        h = segs[-1]
        heads = open_heads(record[h["page"][0]:h["page"][1]], h["page"][0], bytes.fromhex(spec["headsKey"]),
                           file_id, epoch, frame["sequence"])
        for s in segs[:-1]:
            if s["keyID"] not in heads:
                raise Corrupted(s["start"], f"a segment of group {s['keyID']}, which the heads do not name")
    chains = {}
    for g in spec.get("groups", []):
        keys = GroupKeys(bytes.fromhex(g["key"]), file_id, g["keyID"])
        last = bytes.fromhex(g["lastTag"]) if g.get("lastTag") else keys.start_value(g["startEpoch"])
        chains[g["keyID"]] = {"keyID": g["keyID"], "keys": keys, "startEpoch": g["startEpoch"],
                              "sequence": g.get("sequence", 0), "lastTag": last}
    out = []
    for index, s in enumerate(segs):
        if s["keyID"] == 0:
            continue
        chain = chains.get(s["keyID"])
        raw = record[s["start"]:s["secrets"][1]]
        if chain is None:
            out.append({"keyID": s["keyID"], "opaque": raw.hex()})
            continue
        entries, tag = open_page(record, s, chain["keys"], chain["sequence"] + 1, chain["lastTag"], f"segment {index}")
        chain["sequence"] += 1
        chain["lastTag"] = tag
        out.append({"keyID": s["keyID"], "groupSequence": chain["sequence"], "tag": tag.hex(), "segment": raw.hex(),
                    "entries": entries})
    if heads is not None:
        for chain in chains.values():
            check_head(chain, heads, segs[-1]["page"][0])
    return {"kind": frame["kind"], "sequence": frame["sequence"], "part": frame["part"], "end": frame["end"],
            "chainTag": record[frame["end"] - 16:frame["end"]].hex(),
            "heads": heads_json(heads) if heads is not None else None, "segments": out,
            "groups": [{"keyID": c["keyID"], "startEpoch": c["startEpoch"], "sequence": c["sequence"],
                        "lastTag": c["lastTag"].hex()} for c in chains.values()]}


def verify_group(spec: dict) -> int:
    """A group's segments, in log order, against the newest heads (the group chain verifier). Returns the pages."""
    file_id, k = bytes.fromhex(spec["fileID"]), spec["keyID"]
    keys = GroupKeys(bytes.fromhex(spec["key"]), file_id, k)
    heads = {h["keyID"]: {"startEpoch": h["startEpoch"], "groupSequence": h["groupSequence"],
                          "lastTag": bytes.fromhex(h["lastTag"])} for h in spec["heads"]}
    head = heads.get(k)
    if head is None:            # §35.7 (session 51): a group is named by every commit, with pages or not
        raise Corrupted(0, f"the heads do not name group {k}; its pages may have been dropped")
    chain = {"keyID": k, "startEpoch": head["startEpoch"], "sequence": 0, "lastTag": keys.start_value(head["startEpoch"])}
    for index, hex_segment in enumerate(spec["segments"]):
        raw = bytes.fromhex(hex_segment)
        if len(raw) < MIN_SEGMENT or raw[0] != k or rd32(raw, 1) != len(raw) - 9 or not 28 <= rd32(raw, 5) <= len(raw) - 9:
            raise Corrupted(0, f"segment {index} is not a segment of group {k}")
        seg = {"page": (9, 9 + rd32(raw, 5)), "secrets": (9 + rd32(raw, 5), len(raw))}
        _, tag = open_page(raw, seg, keys, chain["sequence"] + 1, chain["lastTag"], f"segment {index}")
        chain["sequence"] += 1
        chain["lastTag"] = tag
    check_head(chain, heads, 0)
    return chain["sequence"]


def heads_json(heads: dict) -> list:
    return [{"keyID": k, "startEpoch": h["startEpoch"], "groupSequence": h["groupSequence"], "lastTag": h["lastTag"].hex()}
            for k, h in sorted(heads.items())]


def main(argv) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["encode", "decode", "verify-group"])
    ap.add_argument("args", nargs="+")
    a = ap.parse_args(argv)
    try:
        if a.command == "encode":
            record, tag, heads = encode_record(json.loads(a.args[0]))
            print(json.dumps({"record": record.hex(), "chainTag": tag.hex(), "heads": heads_json(heads)}))
        elif a.command == "decode":
            print(json.dumps(decode_record(bytes.fromhex(a.args[0]), json.loads(a.args[1]))))
        else:
            print(json.dumps({"pages": verify_group(json.loads(a.args[0]))}))
    except Corrupted as e:
        print(json.dumps({"result": "corrupted", "offset": e.offset, "reason": e.reason}))
        return 6
    except Unsupported as e:
        print(json.dumps({"result": "unsupported", "offset": e.offset, "reason": e.reason}))
        return 7
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""KeychainFile (.kcf) format version 1: independent reference reader and writer.

Written from SPEC.md alone (no look at the Swift sources), as the second implementation that the
Swift code and the conformance fixtures are checked against.  Standard library plus the
`cryptography` package (OpenSSL) for SHA-256, HMAC, HKDF, PBKDF2 and AES-GCM.

Module use:

    kc = open_keychain("file.kcf", {"password": "pw"})       # or {"key": bytes(32)}
    kc.items[item_id].attributes["account"], kc.items[item_id].secret, kc.head, kc.torn_tail

    w = Writer.create("new.kcf", [{"password": "pw"}], iterations=1000, rng=random.Random(1))
    item_id = w.add(GENERIC_PASSWORD, {"account": "a", "service": "s"}, b"secret")
    w.append([Put(...), Delete(...)])                          # low level: one record

CLI:

    kcf_reference.py dump FILE (--password P | --key HEX)      # items as JSON
    kcf_reference.py --trace FILE (--password P | --key HEX)   # Markdown derivation (SPEC §14)
    kcf_reference.py example OUT.kcf                            # deterministic small example file

Exit codes: 0 success (a torn tail is reported in the output, not an error), 1 I/O or other error,
2 usage, 3 notAKeychain, 4 unsupportedVersion, 5 wrongCredentials, 6 corrupted.

Every place where SPEC.md left a choice open is marked "SPEC-AMBIGUITY" and listed in README.md.
"""

from __future__ import annotations

import argparse
import hmac as _hmac
import json
import os
import random
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as crypto_hmac
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

# ---------------------------------------------------------------------------------------------
# Constants (SPEC §4, §5, §7, §11)
# ---------------------------------------------------------------------------------------------

MAGIC = b"\x89KCF\r\n\x1a\n"
VERSION = 1
HEADER_FIXED = 76            # bytes before the first slot (§4)
HEADER_TRAILER = 48          # checksum (16) + header MAC (32)
MIN_HEADER = 236
MAX_HEADER = 1_980          # 76 + 16 × 116 + 48 (§4, §11)
MIN_SLOTS, MAX_SLOTS = 1, 16
SLOT_PASSWORD, SLOT_RAW_KEY = 1, 2
SLOT_LENGTH = {SLOT_PASSWORD: 116, SLOT_RAW_KEY: 112}
MIN_ITERATIONS, MAX_ITERATIONS = 1, 10_000_000      # per password slot (§5)
MAX_TOTAL_ITERATIONS = 20_000_000                   # over all the password slots of a header (§5)
DEFAULT_ITERATIONS = 600_000
MIN_BODY, MAX_BODY = 9, 268_435_456
FRAME_HEADER = 8
MIN_BOX = 28
NONCE_LEN, TAG_LEN = 12, 16
MIN_ENTRIES, MAX_ENTRIES = 1, 16_777_216
MAX_SECRET = 1_048_576
MIN_ATTRIBUTES, MAX_ATTRIBUTES = 2, 64
MAX_VALUE = 65_535
ATTR_ENCODING_VERSION = 1
AAD_LEN = 78
DELETION_BOX = MIN_BOX + 16   # §7.3, §9.2 step 4: exactly 44 bytes
MAX_BOXES_PER_KEY = 2 ** 31

KIND_PUT, KIND_DELETE, KIND_TRANSACTION = 1, 2, 3
KIND_NAMES = {1: "put", 2: "delete", 3: "transaction"}
ROLE_ATTRIBUTES, ROLE_SECRET, ROLE_DELETION = 1, 2, 3
ROLE_NAMES = {1: "attributes", 2: "secret", 3: "deletion"}

LABEL_SLOT_AAD = b"KCF1 key slot"
LABEL_RAW_KEY = b"KCF1 raw-key slot"
LABEL_HEADER = b"KCF1 header"
LABEL_RECORDS = b"KCF1 records"
LABEL_BOX = b"KCF1"

GENERIC_PASSWORD, INTERNET_PASSWORD, CERTIFICATE, KEY = 1, 2, 3, 4
CLASS_NAMES = {1: "genericPassword", 2: "internetPassword", 3: "certificate", 4: "key"}
CLASS_BY_NAME = {v: k for k, v in CLASS_NAMES.items()}
CLASS_LETTER = {1: "G", 2: "I", 3: "C", 4: "K"}

T_STRING, T_BYTES, T_INTEGER, T_BOOLEAN, T_DATE = 1, 2, 3, 4, 5
TYPE_NAMES = {1: "string", 2: "bytes", 3: "integer", 4: "boolean", 5: "date"}

I64_MIN, I64_MAX = -(2 ** 63), 2 ** 63 - 1
_U32 = (0, 2 ** 32 - 1)
_U31 = (0, 2 ** 31 - 1)


@dataclass(frozen=True)
class AttributeDef:
    tag: int
    name: str
    type: int
    classes: str              # letters G I C K
    range: Optional[tuple]    # inclusive (lo, hi) for integers, None = any i64


# SPEC §8.2.  Every integer attribute's range is given in the notes column; "integer attributes
# without a range accept any i64" then applies to none of them.  Dates accept any i64.
_ATTRIBUTE_LIST = [
    AttributeDef(0x0001, "accessGroup", T_STRING, "GICK", None),
    AttributeDef(0x0002, "accessible", T_INTEGER, "GICK", (1, 7)),
    AttributeDef(0x0003, "synchronizable", T_BOOLEAN, "GICK", None),
    AttributeDef(0x0004, "label", T_STRING, "GICK", None),
    AttributeDef(0x0005, "creationDate", T_DATE, "GICK", None),
    AttributeDef(0x0006, "modificationDate", T_DATE, "GICK", None),
    AttributeDef(0x0101, "account", T_STRING, "GI", None),
    AttributeDef(0x0102, "service", T_STRING, "G", None),
    AttributeDef(0x0103, "generic", T_BYTES, "G", None),
    AttributeDef(0x0104, "description", T_STRING, "GI", None),
    AttributeDef(0x0105, "comment", T_STRING, "GI", None),
    AttributeDef(0x0106, "creator", T_INTEGER, "GI", _U32),
    AttributeDef(0x0107, "type", T_INTEGER, "GI", _U32),
    AttributeDef(0x0108, "isInvisible", T_BOOLEAN, "GI", None),
    AttributeDef(0x0109, "isNegative", T_BOOLEAN, "GI", None),
    AttributeDef(0x0201, "server", T_STRING, "I", None),
    AttributeDef(0x0202, "securityDomain", T_STRING, "I", None),
    AttributeDef(0x0203, "protocol", T_INTEGER, "I", _U32),
    AttributeDef(0x0204, "authenticationType", T_INTEGER, "I", _U32),
    AttributeDef(0x0205, "port", T_INTEGER, "I", (0, 65_535)),
    AttributeDef(0x0206, "path", T_STRING, "I", None),
    AttributeDef(0x0301, "certificateType", T_INTEGER, "C", (0, 3)),
    AttributeDef(0x0302, "certificateEncoding", T_INTEGER, "C", _U32),
    AttributeDef(0x0303, "subject", T_BYTES, "C", None),
    AttributeDef(0x0304, "issuer", T_BYTES, "C", None),
    AttributeDef(0x0305, "serialNumber", T_BYTES, "C", None),
    AttributeDef(0x0306, "subjectKeyID", T_BYTES, "C", None),
    AttributeDef(0x0307, "publicKeyHash", T_BYTES, "C", None),
    AttributeDef(0x0401, "keyClass", T_INTEGER, "K", (0, 2)),
    AttributeDef(0x0402, "applicationLabel", T_BYTES, "K", None),
    AttributeDef(0x0403, "applicationTag", T_BYTES, "K", None),
    AttributeDef(0x0404, "keyType", T_INTEGER, "K", _U32),
    AttributeDef(0x0405, "keySizeInBits", T_INTEGER, "K", _U31),
    AttributeDef(0x0406, "effectiveKeySize", T_INTEGER, "K", _U31),
    AttributeDef(0x0407, "isPermanent", T_BOOLEAN, "K", None),
    AttributeDef(0x0408, "canEncrypt", T_BOOLEAN, "K", None),
    AttributeDef(0x0409, "canDecrypt", T_BOOLEAN, "K", None),
    AttributeDef(0x040A, "canDerive", T_BOOLEAN, "K", None),
    AttributeDef(0x040B, "canSign", T_BOOLEAN, "K", None),
    AttributeDef(0x040C, "canVerify", T_BOOLEAN, "K", None),
    AttributeDef(0x040D, "canWrap", T_BOOLEAN, "K", None),
    AttributeDef(0x040E, "canUnwrap", T_BOOLEAN, "K", None),
]
ATTRIBUTES = {a.tag: a for a in _ATTRIBUTE_LIST}
ATTRIBUTES_BY_NAME = {a.name: a for a in _ATTRIBUTE_LIST}
REQUIRED_ATTRIBUTES = ("creationDate", "modificationDate")

# §8.1 primary keys; §8.2: accessGroup and synchronizable are part of every primary key.
PRIMARY_KEY = {
    GENERIC_PASSWORD: ("account", "service"),
    INTERNET_PASSWORD: ("account", "securityDomain", "server", "protocol", "authenticationType",
                        "port", "path"),
    CERTIFICATE: ("certificateType", "issuer", "serialNumber"),
    KEY: ("keyClass", "applicationLabel", "applicationTag", "keyType", "keySizeInBits",
          "effectiveKeySize"),
}
TYPE_DEFAULTS = {T_STRING: "", T_BYTES: b"", T_INTEGER: 0, T_BOOLEAN: False}
# §8.2 last paragraph: defaults a writer stores for attributes the application did not give.
WRITER_DEFAULTS = {"accessGroup": "", "accessible": 1, "synchronizable": False}


def attribute_allowed(a: AttributeDef, cls: int) -> bool:
    return CLASS_LETTER.get(cls, "?") in a.classes


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

class KCFError(Exception):
    """Base class of every error this module raises for file contents."""


class NotAKeychain(KCFError):
    def __init__(self, reason: str = "not a keychain"):
        super().__init__(reason)
        self.reason = reason


class UnsupportedVersion(KCFError):
    def __init__(self, version: int):
        super().__init__(f"unsupported version {version}")
        self.version = version


class WrongCredentials(KCFError):
    def __init__(self):
        super().__init__("wrong credentials")


class Corrupted(KCFError):
    def __init__(self, offset: int, reason: str):
        super().__init__(f"corrupted at offset {offset}: {reason}")
        self.offset = offset
        self.reason = reason


class DuplicateItem(KCFError):
    """Writer: an add or update would break §8.3 uniqueness."""


class ItemNotFound(KCFError):
    """Writer: update or delete of an item that is not live."""


class _Invalid(Exception):
    """A frame failed its structure or authenticity checks (§9.2 step 4): a torn tail if the frame
    ends exactly at the end of the file, Corrupted otherwise.  Also raised by decode_attributes."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Semantic(Exception):
    """A record that verified in §9.2 step 4 fails a check of its meaning (step 5): always Corrupted.

    code: "decode" (attributes do not decode, §7.3), "not-live" (deletion of an item that is not live
    at that point of the record), "class" (a put changes a live item's class), "duplicate" (§8.3).
    """

    def __init__(self, code: str, reason: str):
        super().__init__(reason)
        self.code = code
        self.reason = reason


# ---------------------------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------------------------

def sha256(data: bytes) -> bytes:
    h = hashes.Hash(hashes.SHA256())
    h.update(bytes(data))
    return h.finalize()


def hmac_sha256(key: bytes, data: bytes) -> bytes:
    h = crypto_hmac.HMAC(bytes(key), hashes.SHA256())
    h.update(bytes(data))
    return h.finalize()


def hkdf_sha256(ikm: bytes, salt: bytes, info: bytes, length: int = 32) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=bytes(salt), info=bytes(info)).derive(bytes(ikm))


def hkdf_steps(ikm: bytes, salt: bytes, info: bytes) -> tuple:
    """RFC 5869 for L = 32, spelt out for traces: (PRK = HMAC(salt, IKM), T(1) = HMAC(PRK, info ‖ 01))."""
    prk = hmac_sha256(salt, ikm)
    return prk, hmac_sha256(prk, bytes(info) + b"\x01")


def pbkdf2_sha256(password: bytes, salt: bytes, iterations: int, length: int = 32) -> bytes:
    return PBKDF2HMAC(algorithm=hashes.SHA256(), length=length, salt=bytes(salt),
                      iterations=iterations).derive(bytes(password))


def gcm_seal(key: bytes, nonce: bytes, plaintext: bytes, aad: bytes) -> bytes:
    """Returns a box: nonce ‖ ciphertext ‖ tag (§3)."""
    assert len(nonce) == NONCE_LEN
    return bytes(nonce) + AESGCM(bytes(key)).encrypt(bytes(nonce), bytes(plaintext), bytes(aad))


def gcm_open(key: bytes, box: bytes, aad: bytes) -> Optional[bytes]:
    """Opens a box; None if the tag does not verify."""
    box = bytes(box)
    if len(box) < NONCE_LEN + TAG_LEN:
        return None
    try:
        return AESGCM(bytes(key)).decrypt(box[:NONCE_LEN], box[NONCE_LEN:], bytes(aad))
    except InvalidTag:
        return None


def _aes_block(key: bytes, block: bytes) -> bytes:
    enc = Cipher(algorithms.AES(bytes(key)), modes.ECB()).encryptor()
    return enc.update(bytes(block)) + enc.finalize()


def _gf128_mul(x: int, y: int) -> int:
    """Multiplication in GF(2^128) with GCM's bit order (NIST SP 800-38D, algorithm 1)."""
    r = 0xE1 << 120
    z, v = 0, y
    for i in range(127, -1, -1):
        if (x >> i) & 1:
            z ^= v
        v = (v >> 1) ^ r if v & 1 else v >> 1
    return z


def ghash(h: bytes, aad: bytes, ciphertext: bytes) -> bytes:
    """GHASH_H(A, C) over A ‖ pad ‖ C ‖ pad ‖ u64(bits of A) ‖ u64(bits of C) (SP 800-38D §7.1)."""
    def blocks(b):
        b = bytes(b)
        return [b[i:i + 16].ljust(16, b"\0") for i in range(0, len(b), 16)]
    hi = int.from_bytes(h, "big")
    y = 0
    for blk in blocks(aad) + blocks(ciphertext) + [u64(8 * len(aad)) + u64(8 * len(ciphertext))]:
        y = _gf128_mul(y ^ int.from_bytes(blk, "big"), hi)
    return y.to_bytes(16, "big")


def gcm_details(key: bytes, box: bytes, aad: bytes) -> list:
    """AES-256-GCM spelt out for a trace (96-bit nonce): rows of (name, value)."""
    box = bytes(box)
    nonce, ct, tag = box[:NONCE_LEN], box[NONCE_LEN:-TAG_LEN], box[-TAG_LEN:]
    h = _aes_block(key, bytes(16))
    j0 = nonce + u32(1)
    ekj0 = _aes_block(key, j0)
    s_ = ghash(h, aad, ct)
    rows = [("H = AES-256(K, 0^128)", _c(h)), ("J0 = nonce ‖ 00000001", _c(j0)), ("E(K, J0)", _c(ekj0))]
    if ct:
        rows.append(("first keystream block E(K, nonce ‖ 00000002) (plaintext = ciphertext XOR keystream)",
                     _c(_aes_block(key, nonce + u32(2)))))
    rows += [("S = GHASH_H(AAD, ciphertext) (computed here in Python)", _c(s_)),
             ("expected tag = E(K, J0) XOR S", _c(bytes(a ^ b for a, b in zip(ekj0, s_)))),
             ("equals the stored tag", "yes" if bytes(a ^ b for a, b in zip(ekj0, s_)) == tag else "**NO**")]
    return rows


def normalize_password(password: str) -> bytes:
    """§3: Unicode NFC, then UTF-8."""
    if not isinstance(password, str):
        raise TypeError("password must be a str")
    return unicodedata.normalize("NFC", password).encode("utf-8")


def u8(v: int) -> bytes:
    return bytes([v])


def u16(v: int) -> bytes:
    return v.to_bytes(2, "big")


def u32(v: int) -> bytes:
    return v.to_bytes(4, "big")


def u64(v: int) -> bytes:
    return v.to_bytes(8, "big")


def i64(v: int) -> bytes:
    return v.to_bytes(8, "big", signed=True)


def rd_u16(b, o) -> int:
    return int.from_bytes(b[o:o + 2], "big")


def rd_u32(b, o) -> int:
    return int.from_bytes(b[o:o + 4], "big")


def rd_u64(b, o) -> int:
    return int.from_bytes(b[o:o + 8], "big")


def random_bytes(rng: Optional[random.Random], n: int) -> bytes:
    """Random bytes: from `rng` when given (tests: deterministic, NOT secure), else os.urandom."""
    if rng is None:
        return os.urandom(n)
    return rng.randbytes(n)


# ---------------------------------------------------------------------------------------------
# Data model
# ---------------------------------------------------------------------------------------------

@dataclass
class Slot:
    offset: int               # absolute offset in the file
    type: int
    length: int
    slot_id: bytes
    iterations: Optional[int]
    salt: bytes
    nonce: bytes
    wrapped: bytes
    tag: bytes
    raw: bytes                # the whole slot

    @property
    def aad_prefix(self) -> bytes:
        return self.raw[: self.length - 60]


@dataclass
class Header:
    version: int
    flags: int
    length: int
    file_id: bytes
    epoch: int
    epoch_salt: bytes
    slots: list
    checksum: bytes
    mac: bytes
    raw: bytes


@dataclass
class Item:
    id: bytes
    cls: int
    attributes: dict          # name -> str | bytes | int | bool (dates: int milliseconds)
    secret: Optional[bytes] = None

    @property
    def class_name(self) -> str:
        return CLASS_NAMES[self.cls]

    def uniqueness_key(self) -> tuple:
        return uniqueness_key(self.cls, self.attributes)


@dataclass
class RecordInfo:
    offset: int
    length: int               # whole frame, 8 + L
    kind: int
    sequence: int
    chain: bytes              # the record's chain value (tag of its last box)
    entries: list             # [("put", item_id) | ("delete", item_id)]


@dataclass
class Keychain:
    header: Header
    master_key: bytes
    k_header: bytes
    k_record: bytes
    c0: bytes
    items: dict               # item id -> Item, insertion order = first put
    head: tuple               # (sequence, chain value); (0, C0) for a file without records
    torn_tail: Optional[tuple]  # (offset, byte count) or None
    records: list             # RecordInfo, in file order
    end_of_records: int       # offset just past the last verified record
    slot_used: int            # index of the slot that opened the file
    box_count: int            # boxes sealed under K_record so far

    @property
    def file_id(self) -> bytes:
        return self.header.file_id

    @property
    def epoch(self) -> int:
        return self.header.epoch

    def to_json(self) -> dict:
        return {
            "file_id": self.header.file_id.hex(),
            "epoch": self.header.epoch,
            "header_length": self.header.length,
            "slots": [{"type": s.type, "slot_id": s.slot_id.hex(), "iterations": s.iterations}
                      for s in self.header.slots],
            "head": {"sequence": self.head[0], "chain": self.head[1].hex()},
            "torn_tail": None if self.torn_tail is None else
            {"offset": self.torn_tail[0], "length": self.torn_tail[1]},
            "items": [item_to_json(self.items[i]) for i in sorted(self.items)],
        }


def value_to_json(tag_type: int, value):
    if tag_type == T_BYTES:
        return value.hex()
    return value


def item_to_json(item: Item) -> dict:
    attrs = {}
    for name, value in sorted(item.attributes.items(), key=lambda kv: ATTRIBUTES_BY_NAME[kv[0]].tag):
        a = ATTRIBUTES_BY_NAME[name]
        attrs[name] = {"type": TYPE_NAMES[a.type], "value": value_to_json(a.type, value)}
    return {"id": item.id.hex(), "class": item.class_name, "attributes": attrs,
            "secret_hex": None if item.secret is None else item.secret.hex()}


def uniqueness_key(cls: int, attributes: dict) -> tuple:
    """§8.3: class, the class's primary-key attributes, accessGroup and synchronizable.

    §8.3: an attribute the item does not have compares as its default (empty string, empty bytes, 0,
    false); strings compare by their exact UTF-8 bytes (here: exact code points, which is the same for
    valid UTF-8), without Unicode normalisation.
    """
    names = ("accessGroup", "synchronizable") + PRIMARY_KEY[cls]
    return (cls,) + tuple(attributes.get(n, TYPE_DEFAULTS[ATTRIBUTES_BY_NAME[n].type]) for n in names)


# ---------------------------------------------------------------------------------------------
# Attribute encoding (§7.3)
# ---------------------------------------------------------------------------------------------

def encode_value(a: AttributeDef, value) -> bytes:
    """Python value -> attribute value bytes, checked against the §7.3/§8.2 rules."""
    t = a.type
    if t == T_STRING:
        if not isinstance(value, str):
            raise TypeError(f"{a.name}: expected str")
        b = value.encode("utf-8")
    elif t == T_BYTES:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"{a.name}: expected bytes")
        b = bytes(value)
    elif t in (T_INTEGER, T_DATE):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{a.name}: expected int")
        if not I64_MIN <= value <= I64_MAX:
            raise ValueError(f"{a.name}: out of i64 range")
        if a.range is not None and not a.range[0] <= value <= a.range[1]:
            raise ValueError(f"{a.name}: {value} out of range {a.range}")
        b = i64(value)
    elif t == T_BOOLEAN:
        if not isinstance(value, bool):
            raise TypeError(f"{a.name}: expected bool")
        b = b"\x01" if value else b"\x00"
    else:  # pragma: no cover
        raise AssertionError(t)
    if len(b) > MAX_VALUE:
        raise ValueError(f"{a.name}: value longer than {MAX_VALUE} bytes")
    return b


def encode_attribute(tag: int, type_: int, value_bytes: bytes) -> bytes:
    return u16(tag) + u8(type_) + u32(len(value_bytes)) + bytes(value_bytes)


def encode_attributes(item_id: bytes, cls: int, attributes: dict) -> bytes:
    """Attributes box plaintext for a dict {name or tag: python value}, checked like the reader."""
    if len(item_id) != 16:
        raise ValueError("item id must be 16 bytes")
    if cls not in CLASS_NAMES:
        raise ValueError(f"unknown class {cls}")
    fields = []
    for key, value in attributes.items():
        a = ATTRIBUTES[key] if isinstance(key, int) else ATTRIBUTES_BY_NAME[key]
        if not attribute_allowed(a, cls):
            raise ValueError(f"{a.name} is not allowed for class {CLASS_NAMES[cls]}")
        fields.append((a.tag, a.type, encode_value(a, value)))
    fields.sort()
    tags = [f[0] for f in fields]
    if len(set(tags)) != len(tags):
        raise ValueError("attribute given twice")
    for req in REQUIRED_ATTRIBUTES:
        if ATTRIBUTES_BY_NAME[req].tag not in tags:
            raise ValueError(f"{req} is required")
    if not MIN_ATTRIBUTES <= len(fields) <= MAX_ATTRIBUTES:
        raise ValueError("attribute count out of range")
    return encode_attributes_raw(item_id, cls, fields)


def encode_attributes_raw(item_id: bytes, cls: int, fields: Sequence[tuple], *,
                          version: int = ATTR_ENCODING_VERSION, count: Optional[int] = None,
                          trailing: bytes = b"") -> bytes:
    """Unchecked encoder (tests craft malformed plaintexts with it): fields = [(tag, type, bytes)]."""
    out = bytearray(u8(version) + bytes(item_id) + u8(cls) + u16(len(fields) if count is None else count))
    for tag, type_, vb in fields:
        out += encode_attribute(tag, type_, vb)
    return bytes(out + trailing)


def decode_attributes(pt: bytes, trace_rows: Optional[list] = None) -> tuple:
    """Attributes box plaintext -> (item id, class, {name: value}); raises _Invalid (§7.3, §8.2)."""
    n = len(pt)
    if n < 20:
        raise _Invalid("attributes: shorter than 20 bytes")
    if pt[0] != ATTR_ENCODING_VERSION:
        raise _Invalid(f"attributes: encoding version {pt[0]}")
    item_id = bytes(pt[1:17])
    cls = pt[17]
    if cls not in CLASS_NAMES:
        raise _Invalid(f"attributes: unknown class {cls}")
    count = rd_u16(pt, 18)
    if not MIN_ATTRIBUTES <= count <= MAX_ATTRIBUTES:
        raise _Invalid(f"attributes: count {count} out of range")
    pos = 20
    prev_tag = -1
    values = {}
    for _ in range(count):
        if pos + 7 > n:
            raise _Invalid("attributes: truncated attribute header")
        tag = rd_u16(pt, pos)
        type_ = pt[pos + 2]
        length = rd_u32(pt, pos + 3)
        vpos = pos + 7
        if tag <= prev_tag:
            raise _Invalid(f"attributes: tag 0x{tag:04X} not in strictly increasing order")
        prev_tag = tag
        a = ATTRIBUTES.get(tag)
        if a is None:
            raise _Invalid(f"attributes: unknown tag 0x{tag:04X}")
        if not attribute_allowed(a, cls):
            raise _Invalid(f"attributes: tag 0x{tag:04X} ({a.name}) not allowed for class {CLASS_NAMES[cls]}")
        if type_ != a.type:
            raise _Invalid(f"attributes: tag 0x{tag:04X} ({a.name}) has type {type_}, expected {a.type}")
        if length > n - vpos:
            raise _Invalid(f"attributes: value of 0x{tag:04X} runs past the end")
        vb = bytes(pt[vpos:vpos + length])
        if type_ in (T_STRING, T_BYTES):
            if length > MAX_VALUE:
                raise _Invalid(f"attributes: value of {a.name} longer than {MAX_VALUE} bytes")
            if type_ == T_STRING:
                try:
                    value = vb.decode("utf-8", errors="strict")
                except UnicodeDecodeError:
                    raise _Invalid(f"attributes: {a.name} is not valid UTF-8") from None
            else:
                value = vb
        elif type_ in (T_INTEGER, T_DATE):
            if length != 8:
                raise _Invalid(f"attributes: {a.name} has length {length}, expected 8")
            value = int.from_bytes(vb, "big", signed=True)
            if a.range is not None and not a.range[0] <= value <= a.range[1]:
                raise _Invalid(f"attributes: {a.name} = {value} out of range")
        else:  # boolean
            if length != 1:
                raise _Invalid(f"attributes: {a.name} has length {length}, expected 1")
            if vb[0] not in (0, 1):
                raise _Invalid(f"attributes: {a.name} boolean value {vb[0]}")
            value = vb[0] == 1
        values[a.name] = value
        if trace_rows is not None:
            trace_rows.append((pos, tag, a.name, type_, length, vb, value))
        pos = vpos + length
    if pos != n:
        raise _Invalid(f"attributes: {n - pos} trailing bytes")
    for req in REQUIRED_ATTRIBUTES:
        if req not in values:
            raise _Invalid(f"attributes: required {req} missing")
    return item_id, cls, values


# ---------------------------------------------------------------------------------------------
# Tracing (SPEC §14)
# ---------------------------------------------------------------------------------------------

def hexdump_lines(data: bytes, width: int = 32, base: Optional[int] = None) -> str:
    """Hex in rows of `width` bytes; with `base`, each row is prefixed by its absolute offset."""
    data = bytes(data)
    if not data:
        return "(empty)"
    rows = []
    for i in range(0, len(data), width):
        chunk = data[i:i + width].hex()
        rows.append(chunk if base is None else f"{base + i:06d}: {chunk}")
    return "\n".join(rows)


class Tracer:
    """Collects a Markdown trace.  The reader calls it at every step when given one."""

    def __init__(self):
        self.lines: list = []

    def h(self, level: int, text: str):
        self.lines += ["", "#" * level + " " + text, ""]

    def p(self, text: str):
        self.lines += [text, ""]

    def code(self, text: str):
        self.lines += ["```", text, "```", ""]

    def table(self, header: Sequence[str], rows: Iterable[Sequence]):
        self.lines.append("| " + " | ".join(header) + " |")
        self.lines.append("| " + " | ".join("---" for _ in header) + " |")
        for r in rows:
            self.lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
        self.lines.append("")

    def kv(self, rows: Iterable[Sequence]):
        self.table(("value", "bytes (hex)"), rows)

    def text(self) -> str:
        out, blank = [], False
        for line in self.lines:      # collapse runs of blank lines
            if line == "":
                if blank:
                    continue
                blank = True
            else:
                blank = False
            out.append(line)
        return "\n".join(out).strip() + "\n"


def _c(b: bytes) -> str:
    return f"`{bytes(b).hex()}`" if b else "(empty)"


# ---------------------------------------------------------------------------------------------
# Reader (§9)
# ---------------------------------------------------------------------------------------------

def parse_header(data: bytes, tr: Optional[Tracer] = None) -> Header:
    """§9.1 steps 1 and 2: everything that is checked before any key derivation."""
    if len(data) < 16 or bytes(data[:8]) != MAGIC:
        raise NotAKeychain()
    version = rd_u16(data, 8)
    if version != VERSION:
        raise UnsupportedVersion(version)
    flags = rd_u16(data, 10)
    if flags != 0:
        raise Corrupted(10, "flags")
    H = rd_u32(data, 12)
    if not MIN_HEADER <= H <= MAX_HEADER:
        raise Corrupted(12, "header length out of range")
    if len(data) < H:
        raise Corrupted(0, "truncated header")
    hdr = bytes(data[:H])
    checksum = hdr[H - 48:H - 32]
    checksum_calc = sha256(hdr[:H - 48])
    if tr:
        tr.h(3, "Header")
        tr.p(f"File size {len(data)} bytes; header length H = {H}; records start at offset {H}.")
        rows = [
            (0, 8, "magic", _c(hdr[0:8]), "`\\x89KCF\\r\\n\\x1a\\n`"),
            (8, 2, "version", _c(hdr[8:10]), version),
            (10, 2, "flags", _c(hdr[10:12]), flags),
            (12, 4, "header length H", _c(hdr[12:16]), H),
            (16, 16, "file id", _c(hdr[16:32]), ""),
            (32, 8, "epoch", _c(hdr[32:40]), rd_u64(hdr, 32)),
            (40, 32, "epoch salt", _c(hdr[40:72]), ""),
            (72, 1, "slot count n", _c(hdr[72:73]), hdr[72]),
            (73, 3, "reserved", _c(hdr[73:76]), ""),
        ]
        pos = 76
        for i in range(min(hdr[72], MAX_SLOTS)):
            if pos + 4 > H - 48:
                break
            S = rd_u16(hdr, pos + 2)
            rows.append((pos, S, f"key slot {i + 1}", "(below)", f"type {hdr[pos]}"))
            pos += max(S, 1)
        rows += [(H - 48, 16, "checksum", _c(checksum), ""), (H - 32, 32, "header MAC", _c(hdr[H - 32:]), "")]
        tr.table(("offset", "size", "field", "bytes (hex)", "value"), rows)
        tr.h(4, "Checksum")
        tr.p(f"Input `header[0 ..< H−48]` = `header[0 ..< {H - 48}]` ({H - 48} bytes):")
        tr.code(hexdump_lines(hdr[:H - 48], base=0))
        tr.kv([("SHA-256(input)", _c(checksum_calc)),
               ("checksum = SHA-256(input)[0 ..< 16]", _c(checksum_calc[:16])),
               ("stored checksum", _c(checksum)),
               ("match", "yes" if checksum_calc[:16] == checksum else "**NO**")])
    if checksum_calc[:16] != checksum:
        raise Corrupted(H - 48, "header checksum")
    n = hdr[72]
    if not MIN_SLOTS <= n <= MAX_SLOTS:
        raise Corrupted(72, "slot count out of range")
    if hdr[73:76] != b"\0\0\0":
        # SPEC-AMBIGUITY: §4 says reserved = 0^3; §9.1 step 2 lists "reserved bytes (zero)" among the
        # slot checks.  Read as covering these three header bytes too.
        raise Corrupted(73, "reserved header bytes not zero")
    # §9.1 step 2, in the order the text lists the checks: first the structure (each slot's type,
    # reserved byte and length; the slot lengths add up to H), then the iteration counts (each slot
    # within 1…10,000,000, then the total over the password slots).
    slots = []
    pos = HEADER_FIXED
    end = H - HEADER_TRAILER
    for _ in range(n):
        if pos + 4 > end:
            raise Corrupted(pos, "key slots run past the checksum")
        stype = hdr[pos]
        if stype not in SLOT_LENGTH:
            raise Corrupted(pos, f"unknown slot type {stype}")
        if hdr[pos + 1] != 0:
            raise Corrupted(pos + 1, "slot reserved byte not zero")
        S = rd_u16(hdr, pos + 2)
        if S != SLOT_LENGTH[stype]:
            raise Corrupted(pos + 2, f"slot length {S} for type {stype}")
        if pos + S > end:
            raise Corrupted(pos + 2, "key slot runs past the checksum")
        raw = hdr[pos:pos + S]
        if stype == SLOT_PASSWORD:
            iterations = rd_u32(raw, 20)
            salt = raw[24:56]
        else:
            iterations = None
            salt = raw[20:52]
        slots.append(Slot(offset=pos, type=stype, length=S, slot_id=raw[4:20], iterations=iterations,
                          salt=salt, nonce=raw[S - 60:S - 48], wrapped=raw[S - 48:S - 16],
                          tag=raw[S - 16:S], raw=raw))
        pos += S
    if pos != end:
        raise Corrupted(pos, "slot lengths do not add up to the header length")
    for slot in slots:
        if slot.type == SLOT_PASSWORD and not MIN_ITERATIONS <= slot.iterations <= MAX_ITERATIONS:
            raise Corrupted(slot.offset + 20, f"iteration count {slot.iterations} out of range")
    total = 0
    for slot in slots:
        if slot.type == SLOT_PASSWORD:
            total += slot.iterations
            if total > MAX_TOTAL_ITERATIONS:
                # SPEC-AMBIGUITY: "the offending offset" of the total: the iterations field of the
                # password slot that takes the running total past 20,000,000.
                raise Corrupted(slot.offset + 20, f"total iteration count {total} over {MAX_TOTAL_ITERATIONS}")
    return Header(version=version, flags=flags, length=H, file_id=hdr[16:32], epoch=rd_u64(hdr, 32),
                  epoch_salt=hdr[40:72], slots=slots, checksum=checksum, mac=hdr[H - 32:H], raw=hdr)


def derive_kek(slot: Slot, file_id: bytes, credential: dict, tr: Optional[Tracer] = None) -> bytes:
    if slot.type == SLOT_PASSWORD:
        pw = normalize_password(credential["password"])
        kek = pbkdf2_sha256(pw, slot.salt, slot.iterations, 32)
        if tr:
            tr.p("KEK = PBKDF2-HMAC-SHA256(UTF-8(NFC(password)), salt, iterations, 32). With dkLen = 32 = hLen "
                 "there is one block: KEK = T1 = U1 XOR U2 XOR … XOR U_c, where U1 = HMAC-SHA256(P, salt ‖ "
                 "u32(1)) and U_j = HMAC-SHA256(P, U_{j−1}).")
            tr.kv([("password (as given, UTF-8)", _c(credential["password"].encode("utf-8", "surrogatepass"))),
                   ("P = UTF-8(NFC(password))", _c(pw)),
                   ("salt", _c(slot.salt)),
                   (f"iterations c = {slot.iterations}", _c(u32(slot.iterations))),
                   ("U1 = HMAC-SHA256(P, salt ‖ 00000001)", _c(hmac_sha256(pw, slot.salt + u32(1)))),
                   ("KEK", _c(kek))])
    else:
        info = LABEL_RAW_KEY + file_id
        kek = hkdf_sha256(credential["key"], slot.salt, info, 32)
        if tr:
            prk, t1 = hkdf_steps(credential["key"], slot.salt, info)
            assert t1 == kek
            tr.p("KEK = HKDF-SHA256(IKM = application key, salt, info = \"KCF1 raw-key slot\" ‖ file id, 32):")
            tr.kv([("IKM (application key)", _c(credential["key"])), ("salt", _c(slot.salt)),
                   ("info", _c(info)), ("PRK = HMAC-SHA256(salt, IKM)", _c(prk)),
                   ("KEK = T(1) = HMAC-SHA256(PRK, info ‖ 01)", _c(kek))])
    return kek


def _credential_slot_type(credential: dict) -> int:
    if not isinstance(credential, dict) or len(credential) != 1:
        raise ValueError('credential must be {"password": str} or {"key": bytes32}')
    if "password" in credential:
        if not isinstance(credential["password"], str):
            raise TypeError("password must be a str")
        return SLOT_PASSWORD
    if "key" in credential:
        key = credential["key"]
        # SPEC-AMBIGUITY: §5 says "exactly 32 bytes" but not what a reader does with another length;
        # here it is a usage error, raised before the file is read.
        if not isinstance(key, (bytes, bytearray)) or len(key) != 32:
            raise ValueError("application key must be exactly 32 bytes")
        return SLOT_RAW_KEY
    raise ValueError('credential must be {"password": str} or {"key": bytes32}')


def derive_subkeys(mk: bytes, header: Header, tr: Optional[Tracer] = None) -> tuple:
    info_h = LABEL_HEADER + header.file_id + u64(header.epoch)
    info_r = LABEL_RECORDS + header.file_id + u64(header.epoch)
    k_header = hkdf_sha256(mk, header.epoch_salt, info_h, 32)
    k_record = hkdf_sha256(mk, header.epoch_salt, info_r, 32)
    if tr:
        tr.h(3, "Subkeys (§6)")
        tr.p("`HKDF-SHA256(IKM = MK, salt = epoch salt, info = label ‖ file id ‖ u64(epoch), 32)`")
        prk, t_h = hkdf_steps(mk, header.epoch_salt, info_h)
        _, t_r = hkdf_steps(mk, header.epoch_salt, info_r)
        assert (t_h, t_r) == (k_header, k_record)
        tr.kv([("IKM = master key", _c(mk)), ("salt = epoch salt", _c(header.epoch_salt)),
               ("PRK = HMAC-SHA256(epoch salt, MK) (same for both)", _c(prk)),
               ("info for K_header (\"KCF1 header\" ‖ file id ‖ u64(epoch))", _c(info_h)),
               ("K_header = HMAC-SHA256(PRK, info ‖ 01)", _c(k_header)),
               ("info for K_record (\"KCF1 records\" ‖ file id ‖ u64(epoch))", _c(info_r)),
               ("K_record = HMAC-SHA256(PRK, info ‖ 01)", _c(k_record))])
    return k_header, k_record


def box_aad(file_id: bytes, epoch: int, seq: int, kind: int, entry_count: int, entry: int, role: int,
            item_id: bytes, prev_chain: bytes) -> bytes:
    """§7.2: the 78-byte associated data of a record box."""
    aad = (LABEL_BOX + file_id + u64(epoch) + u64(seq) + u8(kind) + u32(entry_count) + u32(entry) + u8(role)
           + item_id + prev_chain)
    assert len(aad) == AAD_LEN, len(aad)
    return aad


class State:
    """Live items and the §8.3 uniqueness index; records are applied atomically."""

    def __init__(self):
        self.items: dict = {}       # id -> Item
        self.index: dict = {}       # uniqueness key -> id

    def copy(self) -> "State":
        s = State()
        s.items = dict(self.items)
        s.index = dict(self.index)
        return s

    def plan(self, entries: list) -> dict:
        """§9.2 step 5: applies entries ("put", Item) / ("delete", id) in order to an overlay.

        Raises _Semantic.  "Live at that point of the record" (deletions, class changes) is judged
        against the state produced by the entries before it; uniqueness only after the whole record.
        """
        pending: dict = {}
        for kind, obj in entries:
            iid = obj.id if kind == "put" else obj
            live = pending[iid] if iid in pending else self.items.get(iid)
            if kind == "put":
                if live is not None and live.cls != obj.cls:
                    raise _Semantic("class", f"put of item {obj.id.hex()} changes its class from "
                                             f"{CLASS_NAMES[live.cls]} to {CLASS_NAMES[obj.cls]}")
                pending[obj.id] = obj
            else:
                if live is None:
                    raise _Semantic("not-live", f"deletion of item {obj.hex()} which is not live")
                pending[obj] = None
        seen: dict = {}
        for iid, item in pending.items():
            if item is None:
                continue
            key = item.uniqueness_key()
            other = seen.get(key)
            if other is not None:
                raise _Semantic("duplicate", f"uniqueness: items {other.hex()} and {iid.hex()} have equal primary keys")
            seen[key] = iid
            holder = self.index.get(key)
            if holder is not None and holder != iid and holder not in pending:
                raise _Semantic("duplicate", f"uniqueness: items {holder.hex()} and {iid.hex()} have equal primary keys")
        return pending

    def commit(self, pending: dict):
        for iid, item in pending.items():
            old = self.items.get(iid)
            if old is not None:
                key = old.uniqueness_key()
                if self.index.get(key) == iid:
                    del self.index[key]
            if item is None:
                self.items.pop(iid, None)
        for iid, item in pending.items():
            if item is not None:
                self.items[iid] = item
                self.index[item.uniqueness_key()] = iid


def _parse_box_field(payload: bytes, pos: int, role: int) -> tuple:
    if pos + 4 > len(payload):
        raise _Invalid(f"payload ends inside a box length ({ROLE_NAMES[role]})")
    B = rd_u32(payload, pos)
    if B < MIN_BOX:
        raise _Invalid(f"{ROLE_NAMES[role]} box length {B} < {MIN_BOX}")
    if B > len(payload) - pos - 4:
        raise _Invalid(f"{ROLE_NAMES[role]} box runs past the frame")
    if role == ROLE_SECRET and B - MIN_BOX > MAX_SECRET:
        raise _Invalid(f"secret of {B - MIN_BOX} bytes exceeds {MAX_SECRET}")
    if role == ROLE_DELETION and B != DELETION_BOX:
        raise _Invalid(f"deletion box length {B}, expected {DELETION_BOX}")
    return bytes(payload[pos + 4:pos + 4 + B]), pos + 4 + B


def parse_payload(kind: int, payload: bytes) -> list:
    """§7.1: -> [(entry kind, [box, ...])]; the payload MUST be consumed exactly."""
    entries = []
    pos = 0
    if kind in (KIND_PUT, KIND_DELETE):
        ekinds = [kind]
    else:
        if len(payload) < 4:
            raise _Invalid("transaction payload shorter than its entry count")
        E = rd_u32(payload, 0)
        if not MIN_ENTRIES <= E <= MAX_ENTRIES:
            raise _Invalid(f"transaction entry count {E} out of range")
        pos = 4
        ekinds = None
    i = 0
    while True:
        if ekinds is not None:
            if i >= len(ekinds):
                break
            ek = ekinds[i]
        else:
            if i >= E:
                break
            if pos >= len(payload):
                raise _Invalid(f"transaction ends after {i} of {E} entries")
            ek = payload[pos]
            pos += 1
            if ek not in (KIND_PUT, KIND_DELETE):
                raise _Invalid(f"transaction entry {i} has kind {ek}")
        if ek == KIND_PUT:
            a, pos = _parse_box_field(payload, pos, ROLE_ATTRIBUTES)
            s, pos = _parse_box_field(payload, pos, ROLE_SECRET)
            entries.append((KIND_PUT, [a, s]))
        else:
            d, pos = _parse_box_field(payload, pos, ROLE_DELETION)
            entries.append((KIND_DELETE, [d]))
        i += 1
    if pos != len(payload):
        raise _Invalid(f"{len(payload) - pos} bytes after the last box field")
    return entries


def verify_frame(frame: bytes, offset: int, header: Header, k_record: bytes, expected_seq: int,
                 chain: bytes, state: State, tr: Optional[Tracer] = None) -> tuple:
    """§9.2 steps 4 and 5 for one whole frame.

    Step 4 (structure and authenticity) raises _Invalid; only once every box has been checked does
    step 5 (meaning) run, raising _Semantic.  Returns (kind, seq, pending changes, secret boxes by
    item id, new chain value, entry summary, box count).
    """
    L = len(frame) - FRAME_HEADER
    kind = frame[8]
    seq = rd_u64(frame, 9)
    if tr:
        tr.table(("offset", "size", "field", "bytes (hex)", "value"), [
            (offset, 4, "body length L", _c(frame[0:4]), L),
            (offset + 4, 4, "length check", _c(frame[4:8]),
             f"0x{rd_u32(frame, 4):08X} = L XOR 0xFFFFFFFF: "
             f"{'yes' if rd_u32(frame, 4) == L ^ 0xFFFFFFFF else 'NO'}"),
            (offset + 8, 1, "kind", _c(frame[8:9]), f"{kind} ({KIND_NAMES.get(kind, '?')})"),
            (offset + 9, 8, "sequence", _c(frame[9:17]), f"{seq} (expected {expected_seq})"),
            (offset + 17, L - 9, "payload", "(below)", ""),
        ])
    # -- step 4: structure and authenticity --------------------------------------------------
    if kind not in KIND_NAMES:
        raise _Invalid(f"record kind {kind}")
    if seq != expected_seq:
        raise _Invalid(f"sequence {seq}, expected {expected_seq}")
    payload = frame[17:]
    parsed = parse_payload(kind, payload)
    entry_count = len(parsed)          # = E for a transaction (parse_payload consumed exactly E), else 1
    fid, epoch = header.file_id, header.epoch
    ops = []                           # ("put", Item | None) / ("delete", id), for step 5
    decode_failures = []               # (entry index, reason): step-5 failures found while verifying
    secrets = {}
    summary = []
    boxes = 0
    box_pos = offset + 17 + (4 if kind == KIND_TRANSACTION else 0)
    if tr and kind == KIND_TRANSACTION:
        tr.p(f"Transaction entry count E = {rd_u32(payload, 0)} (`{payload[:4].hex()}` at offset {offset + 17}).")
    zeros = b"\0" * 16
    for index, (ek, bxs) in enumerate(parsed):
        entry_index = index if kind == KIND_TRANSACTION else 0
        if kind == KIND_TRANSACTION:
            box_pos += 1
            if tr:
                tr.h(5, f"Entry {index}: {KIND_NAMES[ek]} (entry kind byte `{ek:02x}` at offset {box_pos - 1})")
        if ek == KIND_PUT:
            attrs_box, secret_box = bxs
            aad = box_aad(fid, epoch, seq, kind, entry_count, entry_index, ROLE_ATTRIBUTES, zeros, chain)
            pt = gcm_open(k_record, attrs_box, aad)
            boxes += 1
            if tr:
                _trace_box(tr, box_pos, ROLE_ATTRIBUTES, attrs_box, aad, pt, k_record)
            if pt is None:
                raise _Invalid(f"attributes box of entry {index} does not open")
            box_pos += 4 + len(attrs_box)
            chain = attrs_box[-TAG_LEN:]
            rows = [] if tr else None
            decoded = None
            try:
                iid, cls, values = decode_attributes(pt, rows)
                decoded = Item(id=iid, cls=cls, attributes=values)
            except _Invalid as e:
                decode_failures.append((index, e.reason))
            if tr:
                _trace_attributes(tr, pt, rows, decoded, decode_failures[-1][1] if decoded is None else None)
                tr.p(f"Chain value after this box: `{chain.hex()}`")
            # The secret box's AAD carries the item id from the attributes plaintext (bytes 1 ..< 17).
            # SPEC-AMBIGUITY: an (authenticated) attributes plaintext too short to hold an id leaves the
            # secret box's AAD undefined; the reference skips that box's tag check and lets the
            # step-5 decoding failure (already recorded) make the record corrupted.
            item_id = bytes(pt[1:17]) if len(pt) >= 17 else None
            if item_id is None:
                boxes += 1
                if tr:
                    tr.p(f"**Secret box** at offset {box_pos}: not checked, the attributes plaintext holds no item id.")
            else:
                aad = box_aad(fid, epoch, seq, kind, entry_count, entry_index, ROLE_SECRET, item_id, chain)
                spt = gcm_open(k_record, secret_box, aad)
                boxes += 1
                if tr:
                    _trace_box(tr, box_pos, ROLE_SECRET, secret_box, aad, spt, k_record)
                if spt is None:
                    raise _Invalid(f"secret box of entry {index} does not open")
                # §9.2: secret boxes only need their tag checked (gcm_open did that); the secret is
                # decrypted again, from this box, when it is asked for.
                secrets[item_id] = (secret_box, aad)
            box_pos += 4 + len(secret_box)
            chain = secret_box[-TAG_LEN:]
            if tr:
                tr.p(f"Chain value after this box: `{chain.hex()}`")
            ops.append(("put", decoded))
            summary.append(("put", item_id))
        else:
            (del_box,) = bxs
            aad = box_aad(fid, epoch, seq, kind, entry_count, entry_index, ROLE_DELETION, zeros, chain)
            pt = gcm_open(k_record, del_box, aad)
            boxes += 1
            if tr:
                _trace_box(tr, box_pos, ROLE_DELETION, del_box, aad, pt, k_record)
            if pt is None:
                raise _Invalid(f"deletion box of entry {index} does not open")
            assert len(pt) == 16          # the box length (44) was checked by parse_payload
            box_pos += 4 + len(del_box)
            chain = del_box[-TAG_LEN:]
            if tr:
                tr.p(f"Deletion of item `{bytes(pt).hex()}`.")
                tr.p(f"Chain value after this box: `{chain.hex()}`")
            ops.append(("delete", bytes(pt)))
            summary.append(("delete", bytes(pt)))
    # -- step 5: meaning (every box verified) --------------------------------------------------
    if decode_failures:
        index, reason = decode_failures[0]
        raise _Semantic("decode", f"entry {index}: {reason}")
    pending = state.plan(ops)
    return kind, seq, pending, secrets, chain, summary, boxes


AAD_FIELDS = (("\"KCF1\"", 0, 4), ("file id", 4, 20), ("epoch", 20, 28), ("sequence", 28, 36),
              ("record kind", 36, 37), ("entry count", 37, 41), ("entry index", 41, 45), ("box role", 45, 46),
              ("item id", 46, 62), ("previous chain value", 62, 78))


def _aad_value(name: str, b: bytes) -> str:
    if name == "\"KCF1\"":
        return '"KCF1"'
    if name in ("epoch", "sequence", "record kind", "entry count", "entry index"):
        v = int.from_bytes(b, "big")
        return f"{v} ({KIND_NAMES.get(v, '?')})" if name == "record kind" else str(v)
    if name == "box role":
        return f"{b[0]} ({ROLE_NAMES.get(b[0], '?')})"
    return ""


def _trace_box(tr: Tracer, pos: int, role: int, box: bytes, aad: bytes, pt: Optional[bytes],
               key: Optional[bytes] = None):
    tr.p(f"**{ROLE_NAMES[role].capitalize()} box** — box field at offset {pos}: "
         f"`u32 B` = {len(box)} (`{u32(len(box)).hex()}`), box at offset {pos + 4} "
         f"(nonce at {pos + 4}, ciphertext at {pos + 16}, tag at {pos + 4 + len(box) - TAG_LEN}).")
    tr.table(("AAD field", "offset", "size", "bytes (hex)", "value"),
             [(name, a, b - a, _c(aad[a:b]), _aad_value(name, aad[a:b])) for name, a, b in AAD_FIELDS])
    tr.p(f"AAD ({len(aad)} bytes):")
    tr.code(hexdump_lines(aad))
    tr.kv([("nonce", _c(box[:NONCE_LEN])),
           (f"ciphertext ({len(box) - 28} bytes)", _c(box[NONCE_LEN:-TAG_LEN])),
           ("tag", _c(box[-TAG_LEN:])),
           ("opens under K_record", "yes" if pt is not None else "**NO**")])
    if key is not None:
        tr.p("AES-256-GCM under K_record, step by step:")
        tr.kv(gcm_details(key, box, aad))
    if pt is not None:
        text = f" — as UTF-8 text: {json.dumps(pt.decode('utf-8'))}" if role == ROLE_SECRET and _is_text(pt) else ""
        tr.p(f"Plaintext ({len(pt)} bytes){text}:")
        tr.code(hexdump_lines(pt))


def _fmt_value(type_: int, value) -> str:
    if type_ == T_STRING:
        return json.dumps(value, ensure_ascii=False)
    if type_ == T_BYTES:
        return f"`{value.hex()}`" if value else "(empty)"
    if type_ == T_BOOLEAN:
        return "true" if value else "false"
    if type_ == T_DATE:
        return f"{value} ms ({time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(value // 1000))}.{value % 1000:03d}Z)" \
            if -62135596800000 < value < 253402300800000 else str(value)
    return str(value)


def _trace_attributes(tr: Tracer, pt: bytes, rows: list, item: Optional[Item], failure: Optional[str]):
    if len(pt) >= 20:
        cls = pt[17]
        tr.p(f"Attributes decoding: encoding version {pt[0]} (`{pt[0]:02x}`), item id `{bytes(pt[1:17]).hex()}`, "
             f"class {cls} ({CLASS_NAMES.get(cls, '?')}, `{cls:02x}`), attribute count {rd_u16(pt, 18)} "
             f"(`{bytes(pt[18:20]).hex()}`). Each attribute is `u16 tag ‖ u8 type ‖ u32 length ‖ value`; "
             f"offsets are within the plaintext.")
    if rows:
        tr.table(("offset", "tag", "name", "type", "length", "value bytes", "value"),
                 [(pos, f"0x{tag:04X}", name, f"{t} ({TYPE_NAMES[t]})", length, _c(vb), _fmt_value(t, value))
                  for pos, tag, name, t, length, vb, value in rows])
    if failure is not None:
        tr.p(f"**Decoding fails: {failure}** (§9.2 step 5: `corrupted` once every box of the record has verified).")


def _read_source(path_or_bytes) -> bytes:
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes)
    with open(path_or_bytes, "rb") as f:
        return f.read()


def open_keychain(path_or_bytes, credential: dict, *, tracer: Optional[Tracer] = None,
                  decrypt_secrets: bool = True, trace_credentials: Sequence[dict] = ()) -> Keychain:
    """SPEC §9: open, authenticate and replay a keychain file.

    trace_credentials (tracing only): further credentials used to show the derivation of slots that
    the opening credential does not need; they do not change the result.
    """
    slot_type = _credential_slot_type(credential)
    data = _read_source(path_or_bytes)
    tr = tracer
    header = parse_header(data, tr)
    H = header.length
    # §9.1 step 3 / §5: try every slot of the credential's type, in order.
    mk = None
    used = -1
    for i, slot in enumerate(header.slots):
        if tr:
            tr.h(3, f"Key slot {i + 1} (offset {slot.offset})")
            rows = [(slot.offset, 1, "type", _c(slot.raw[0:1]),
                     "1 (password)" if slot.type == 1 else "2 (raw key)"),
                    (slot.offset + 1, 1, "reserved", _c(slot.raw[1:2]), ""),
                    (slot.offset + 2, 2, "slot length S", _c(slot.raw[2:4]), slot.length),
                    (slot.offset + 4, 16, "slot id", _c(slot.slot_id), "")]
            if slot.type == SLOT_PASSWORD:
                rows += [(slot.offset + 20, 4, "iterations", _c(slot.raw[20:24]), slot.iterations),
                         (slot.offset + 24, 32, "salt", _c(slot.salt), "")]
            else:
                rows += [(slot.offset + 20, 32, "salt", _c(slot.salt), "")]
            S = slot.length
            rows += [(slot.offset + S - 60, 12, "nonce", _c(slot.nonce), ""),
                     (slot.offset + S - 48, 32, "wrapped key", _c(slot.wrapped), ""),
                     (slot.offset + S - 16, 16, "tag", _c(slot.tag), "")]
            tr.table(("offset", "size", "field", "bytes (hex)", "value"), rows)
        if mk is not None:
            if tr:
                tr.p("Not tried: an earlier slot already yielded the master key.")
                _trace_extra_slot(tr, slot, header, trace_credentials, mk)
            continue
        if slot.type != slot_type:
            if tr:
                tr.p("Not tried: its type does not match the credential.")
                _trace_extra_slot(tr, slot, header, trace_credentials, None)
            continue
        kek = derive_kek(slot, header.file_id, credential, tr)
        aad = LABEL_SLOT_AAD + header.file_id + slot.aad_prefix
        opened = gcm_open(kek, slot.nonce + slot.wrapped + slot.tag, aad)
        if tr:
            tr.p(f"AAD = \"KCF1 key slot\" ‖ file id ‖ slot[0 ..< S−60] ({len(aad)} bytes):")
            tr.code(hexdump_lines(aad))
            tr.p("AES-256-GCM under the KEK, step by step (box = nonce ‖ wrapped key ‖ tag):")
            tr.kv(gcm_details(kek, slot.nonce + slot.wrapped + slot.tag, aad)
                  + [("tag verifies", "yes" if opened is not None else "no"),
                     ("master key MK (the decrypted wrapped key)", _c(opened) if opened is not None else "—")])
        if opened is not None and len(opened) == 32:
            mk, used = opened, i
    if mk is None:
        raise WrongCredentials()
    k_header, k_record = derive_subkeys(mk, header, tr)
    mac = hmac_sha256(k_header, header.raw[:H - 32])
    c0 = mac[:16]
    if tr:
        tr.h(3, "Header MAC and C0")
        tr.p(f"`HMAC-SHA256(K_header, header[0 ..< H−32])` over bytes 0 ..< {H - 32}.")
        tr.kv([("computed header MAC", _c(mac)), ("stored header MAC", _c(header.mac)),
               ("match", "yes" if _hmac.compare_digest(mac, header.mac) else "**NO**"),
               ("C0 = header MAC[0 ..< 16]", _c(c0))])
    if not _hmac.compare_digest(mac, header.mac):
        raise Corrupted(H - 32, "header MAC")

    # §9.2 replay
    state = State()
    secrets: dict = {}
    records = []
    pos = H
    expected = 1
    chain = c0
    torn = None
    total_boxes = 0
    size = len(data)
    while pos < size:
        remaining = size - pos
        if tr:
            tr.h(3, f"Record at offset {pos}")
        if remaining < FRAME_HEADER:
            torn = (pos, remaining)
            if tr:
                tr.p(f"Only {remaining} bytes remain: incomplete frame header, **torn tail**.")
            break
        L = rd_u32(data, pos)
        check = rd_u32(data, pos + 4)
        if check != L ^ 0xFFFFFFFF:
            # §9.2 step 2: damage followed by a plausible frame header is corrupted; otherwise the
            # bytes are what a crash left of the final record, whatever they contain.
            found = find_plausible_frame(data, pos + 1, expected)
            if found is not None:
                if tr:
                    tr.p(f"Length check `{data[pos + 4:pos + 8].hex()}` does not match L = {L}, and a "
                         f"plausible frame header follows at offset {found}: **corrupted**.")
                raise Corrupted(pos, "frame length")
            torn = (pos, remaining)
            if tr:
                tr.p(f"Length check `{data[pos + 4:pos + 8].hex()}` does not match L = {L} and no plausible "
                     f"frame header follows in the remaining {remaining} bytes: **torn tail**.")
            break
        if not MIN_BODY <= L <= MAX_BODY:
            raise Corrupted(pos, f"frame body length {L} out of range")
        end = pos + FRAME_HEADER + L
        if end > size:
            torn = (pos, remaining)
            if tr:
                tr.p(f"Frame of {FRAME_HEADER + L} bytes extends past the end of the file: **torn tail**.")
            break
        frame = data[pos:end]
        try:
            kind, seq, pending, new_secrets, chain_after, summary, nboxes = verify_frame(
                frame, pos, header, k_record, expected, chain, state, tr)
        except _Invalid as e:
            # §9.2 step 4: a structure or authenticity failure
            if end == size:
                torn = (pos, remaining)
                if tr:
                    tr.p(f"Verification failed ({e.reason}) in a frame that ends at the end of the file: "
                         f"**torn tail**.")
                break
            if tr:
                tr.p(f"Verification failed ({e.reason}) in a frame that does not end at the end of the file: "
                     f"**corrupted**.")
            raise Corrupted(pos, e.reason) from None
        except _Semantic as e:
            # §9.2 step 5: the record verified, so it was written by a holder of the key: always corrupted
            if tr:
                tr.p(f"Every box verified but the record's meaning is invalid ({e.reason}): **corrupted**.")
            raise Corrupted(pos, e.reason) from None
        state.commit(pending)
        for iid, item in pending.items():
            if item is None:
                secrets.pop(iid, None)
            else:
                secrets[iid] = new_secrets[iid]
        records.append(RecordInfo(offset=pos, length=end - pos, kind=kind, sequence=seq,
                                  chain=chain_after, entries=summary))
        total_boxes += nboxes
        chain = chain_after
        expected = seq + 1
        if tr:
            tr.p(f"Record {seq} applied. **Chain value after record {seq}: `{chain.hex()}`**")
        pos = end

    items = {}
    for iid, item in state.items.items():
        secret = None
        if decrypt_secrets:
            box, aad = secrets[iid]
            secret = gcm_open(k_record, box, aad)
            assert secret is not None
        items[iid] = Item(id=item.id, cls=item.cls, attributes=dict(item.attributes), secret=secret)
    head = (expected - 1, chain)
    kc = Keychain(header=header, master_key=mk, k_header=k_header, k_record=k_record, c0=c0, items=items,
                  head=head, torn_tail=torn, records=records,
                  end_of_records=pos if torn is None else torn[0], slot_used=used, box_count=total_boxes)
    if tr:
        tr.h(3, "Result")
        tr.kv([("head sequence", head[0]), ("head chain value", _c(head[1])),
               ("torn tail", "none" if torn is None else f"offset {torn[0]}, {torn[1]} bytes"),
               ("live items", len(items))])
        for iid in items:
            it = items[iid]
            tr.p(f"Item `{iid.hex()}` ({it.class_name}): secret `{it.secret.hex() if it.secret else ''}`"
                 + (f" ({json.dumps(it.secret.decode('utf-8'))})" if it.secret and _is_text(it.secret) else ""))
    return kc


def _trace_extra_slot(tr: Tracer, slot: Slot, header: Header, creds: Sequence[dict], mk: Optional[bytes]):
    for cred in creds:
        try:
            if _credential_slot_type(cred) != slot.type:
                continue
        except (ValueError, TypeError):
            continue
        tr.p("For the record, with the other credential given to the trace:")
        kek = derive_kek(slot, header.file_id, cred, tr)
        aad = LABEL_SLOT_AAD + header.file_id + slot.aad_prefix
        opened = gcm_open(kek, slot.nonce + slot.wrapped + slot.tag, aad)
        tr.p(f"AAD = \"KCF1 key slot\" ‖ file id ‖ slot[0 ..< S−60] ({len(aad)} bytes):")
        tr.code(hexdump_lines(aad))
        rows = gcm_details(kek, slot.nonce + slot.wrapped + slot.tag, aad) + [
            ("tag verifies", "yes" if opened is not None else "no"),
            ("master key MK (the decrypted wrapped key)", _c(opened) if opened is not None else "—")]
        if mk is not None and opened is not None:
            rows.append(("same master key as the slot that opened the file", "yes" if opened == mk else "**NO**"))
        tr.kv(rows)
        return


def _is_text(b: bytes) -> bool:
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return s.isprintable()


def find_plausible_frame(data: bytes, start: int, expected_seq: int) -> Optional[int]:
    """§9.2 step 2: the first offset q ≥ start holding a *plausible frame header*, or None.

    Plausible: 17 bytes remain from q; the length check matches L; 9 ≤ L ≤ 268,435,456; the frame
    ends within the file; the kind is 1, 2 or 3; the sequence number is greater than expected_seq.
    Every byte offset is a candidate (frames need not be aligned).
    """
    data = bytes(data)
    size = len(data)
    last = size - 17                   # last candidate offset
    if start > last:
        return None
    # x[i] = data[i] XOR data[i+4] for i in start ..< size-4; a length check matches at q exactly
    # when x[q .. q+4] is ff ff ff ff.  Big-integer XOR does this for the whole range at once.
    a = data[start:size - 4]
    b = data[start + 4:size]
    x = (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(len(a), "big")
    i = x.find(b"\xff\xff\xff\xff")
    while i != -1:
        q = start + i
        if q > last:
            return None
        L = rd_u32(data, q)
        if (MIN_BODY <= L <= MAX_BODY and q + FRAME_HEADER + L <= size and data[q + 8] in KIND_NAMES
                and rd_u64(data, q + 9) > expected_seq):
            return q
        i = x.find(b"\xff\xff\xff\xff", i + 1)
    return None


def scan_frames(data: bytes) -> list:
    """Frame boundaries without cryptography (for tests and tools): [(offset, length)]."""
    H = rd_u32(data, 12)
    out = []
    pos = H
    while pos + 8 <= len(data):
        L = rd_u32(data, pos)
        if rd_u32(data, pos + 4) != L ^ 0xFFFFFFFF or pos + 8 + L > len(data):
            break
        out.append((pos, 8 + L))
        pos += 8 + L
    return out


def trace(path_or_bytes, credential: dict, *, raise_errors: bool = False,
          also: Sequence[dict] = ()) -> str:
    """Markdown derivation of a whole file, ready for SPEC §14.

    On an error the trace up to the failing step is returned with the error appended (or, with
    raise_errors, the error is raised with the partial text in its `trace` attribute).
    """
    tr = Tracer()
    tr.h(2, "Worked example: step-by-step derivation")
    cred = ("password " + json.dumps(credential["password"], ensure_ascii=False)) if "password" in credential \
        else f"application key `{bytes(credential['key']).hex()}`"
    tr.p(f"Opened with the {cred}. All values are hex; offsets are from the start of the file.")
    data = _read_source(path_or_bytes)
    try:
        open_keychain(data, credential, tracer=tr, trace_credentials=also)
    except KCFError as e:
        tr.p(f"**Opening failed: {type(e).__name__}: {e}**")
        if raise_errors:
            e.trace = tr.text()
            raise
    tr.h(3, "The whole file")
    tr.p(f"{len(data)} bytes; each row is prefixed by its offset (decimal).")
    tr.code(hexdump_lines(data, base=0))
    return tr.text()


# ---------------------------------------------------------------------------------------------
# Writer (§10)
# ---------------------------------------------------------------------------------------------

@dataclass
class Put:
    item_id: bytes
    cls: int
    attributes: dict                      # name -> python value (complete: the writer stores it as is)
    secret: bytes = b""
    raw_attributes: Optional[bytes] = None  # tests: an already encoded (possibly malformed) plaintext


@dataclass
class Delete:
    item_id: bytes
    raw_plaintext: Optional[bytes] = None   # tests: a deletion plaintext other than the id


def build_slot(stype: int, file_id: bytes, mk: bytes, credential: dict, iterations: int,
               rng: Optional[random.Random]) -> bytes:
    slot_id = random_bytes(rng, 16)
    salt = random_bytes(rng, 32)
    nonce = random_bytes(rng, 12)
    S = SLOT_LENGTH[stype]
    if stype == SLOT_PASSWORD:
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            raise ValueError("iterations out of range")
        prefix = u8(stype) + u8(0) + u16(S) + slot_id + u32(iterations) + salt
        kek = pbkdf2_sha256(normalize_password(credential["password"]), salt, iterations, 32)
    else:
        prefix = u8(stype) + u8(0) + u16(S) + slot_id + salt
        kek = hkdf_sha256(credential["key"], salt, LABEL_RAW_KEY + file_id, 32)
    assert len(prefix) == S - 60
    box = gcm_seal(kek, nonce, mk, LABEL_SLOT_AAD + file_id + prefix)
    slot = prefix + box
    assert len(slot) == S
    return slot


def build_header(file_id: bytes, epoch: int, epoch_salt: bytes, slots: Sequence[bytes], mk: bytes) -> bytes:
    H = HEADER_FIXED + sum(len(s) for s in slots) + HEADER_TRAILER
    body = (MAGIC + u16(VERSION) + u16(0) + u32(H) + file_id + u64(epoch) + epoch_salt + u8(len(slots))
            + b"\0\0\0" + b"".join(slots))
    checksum = sha256(body)[:16]
    k_header = hkdf_sha256(mk, epoch_salt, LABEL_HEADER + file_id + u64(epoch), 32)
    mac = hmac_sha256(k_header, body + checksum)
    hdr = body + checksum + mac
    assert len(hdr) == H
    return hdr


def _now_ms() -> int:
    return int(time.time() * 1000)


class Writer:
    """Appends records to a keychain file, keeping an in-memory mirror (`data`) of its bytes.

    path None: in memory only (tests).  rng: every random value (file id, salts, slot ids, nonces,
    master key, item ids) is drawn from it when given; os.urandom otherwise.
    """

    def __init__(self, *, path, data: bytes, keychain: Keychain, rng, clock):
        self.path = path
        self.buf = bytearray(data)
        self.kc = keychain
        self.rng = rng
        self.clock = clock or _now_ms
        self.file_id = keychain.header.file_id
        self.epoch = keychain.header.epoch
        self.k_record = keychain.k_record
        self.seq, self.chain = keychain.head
        self.state = State()
        for item in keychain.items.values():
            self.state.commit({item.id: item})
        self.box_count = keychain.box_count

    # -- creation / opening -------------------------------------------------------------------

    @classmethod
    def create(cls, path, credentials, iterations: int = DEFAULT_ITERATIONS,
               rng: Optional[random.Random] = None, *, epoch: int = 1, clock: Optional[Callable] = None,
               overwrite: bool = False) -> "Writer":
        """§4–§6, §10: a new file with one slot per credential (in the order given).

        Random draws, in this order: file id (16), epoch salt (32), master key (32), then per slot:
        slot id (16), salt (32), nonce (12).
        """
        if isinstance(credentials, dict):
            credentials = [credentials]
        if not MIN_SLOTS <= len(credentials) <= MAX_SLOTS:
            raise ValueError("1 to 16 credentials")
        n_pw = sum(1 for c in credentials if _credential_slot_type(c) == SLOT_PASSWORD)
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS or n_pw * iterations > MAX_TOTAL_ITERATIONS:
            raise ValueError(f"iterations: 1 … {MAX_ITERATIONS:,} per slot and {MAX_TOTAL_ITERATIONS:,} "
                             f"over all password slots (§5)")
        file_id = random_bytes(rng, 16)
        epoch_salt = random_bytes(rng, 32)
        mk = random_bytes(rng, 32)
        slots = [build_slot(_credential_slot_type(c), file_id, mk, c, iterations, rng) for c in credentials]
        hdr = build_header(file_id, epoch, epoch_salt, slots, mk)
        if path is not None:
            _atomic_create(path, hdr, overwrite)
        kc = open_keychain(hdr, credentials[0])
        return cls(path=path, data=hdr, keychain=kc, rng=rng, clock=clock)

    @classmethod
    def open(cls, path_or_bytes, credential: dict, rng: Optional[random.Random] = None, *,
             clock: Optional[Callable] = None) -> "Writer":
        """Opens an existing file for appending; a torn tail is truncated (§10) when the file is written."""
        data = _read_source(path_or_bytes)
        kc = open_keychain(data, credential)
        path = None if isinstance(path_or_bytes, (bytes, bytearray, memoryview)) else path_or_bytes
        end = kc.end_of_records
        if path is not None and end != len(data):
            with open(path, "r+b") as f:
                f.truncate(end)
                f.flush()
                os.fsync(f.fileno())
        return cls(path=path, data=data[:end], keychain=kc, rng=rng, clock=clock)

    @property
    def data(self) -> bytes:
        return bytes(self.buf)

    @property
    def head(self) -> tuple:
        return (self.seq, self.chain)

    @property
    def items(self) -> dict:
        return self.state.items

    # -- low level ----------------------------------------------------------------------------

    def _seal(self, aad: bytes, plaintext: bytes) -> bytes:
        if self.box_count >= MAX_BOXES_PER_KEY:
            raise RuntimeError("2^31 boxes sealed under this K_record: rewrite the file (new epoch)")
        self.box_count += 1
        return gcm_seal(self.k_record, random_bytes(self.rng, NONCE_LEN), plaintext, aad)

    def encode_record(self, entries: Sequence, *, transaction: Optional[bool] = None, seq: Optional[int] = None,
                      kind_byte: Optional[int] = None, prev_chain: Optional[bytes] = None,
                      extra_payload: bytes = b"", entry_count: Optional[int] = None,
                      aad_entry_count: Optional[int] = None) -> tuple:
        """Seals one record. Returns (frame bytes, chain value).

        Keyword overrides (tests only): seq, kind_byte, prev_chain, extra_payload, entry_count (the E
        written in a transaction's payload) and aad_entry_count (the count sealed into every box's AAD;
        by default the number of entries).
        """
        entries = list(entries)
        if not entries:
            raise ValueError("a record needs at least one entry")
        if transaction is None:
            transaction = len(entries) > 1
        if transaction:
            kind = KIND_TRANSACTION
        else:
            if len(entries) != 1:
                raise ValueError("several entries need a transaction")
            kind = KIND_PUT if isinstance(entries[0], Put) else KIND_DELETE
        seq = self.seq + 1 if seq is None else seq
        chain = self.chain if prev_chain is None else prev_chain
        n = (len(entries) if kind == KIND_TRANSACTION else 1) if aad_entry_count is None else aad_entry_count
        payload = bytearray()
        if kind == KIND_TRANSACTION:
            payload += u32(len(entries) if entry_count is None else entry_count)
        for index, e in enumerate(entries):
            ei = index if kind == KIND_TRANSACTION else 0
            if isinstance(e, Put):
                if kind == KIND_TRANSACTION:
                    payload += u8(KIND_PUT)
                pt = e.raw_attributes if e.raw_attributes is not None else \
                    encode_attributes(e.item_id, e.cls, e.attributes)
                box = self._seal(box_aad(self.file_id, self.epoch, seq, kind, n, ei, ROLE_ATTRIBUTES, b"\0" * 16,
                                         chain), pt)
                chain = box[-TAG_LEN:]
                payload += u32(len(box)) + box
                box = self._seal(box_aad(self.file_id, self.epoch, seq, kind, n, ei, ROLE_SECRET, e.item_id,
                                         chain), e.secret)
                chain = box[-TAG_LEN:]
                payload += u32(len(box)) + box
            elif isinstance(e, Delete):
                if kind == KIND_TRANSACTION:
                    payload += u8(KIND_DELETE)
                pt = e.item_id if e.raw_plaintext is None else e.raw_plaintext
                box = self._seal(box_aad(self.file_id, self.epoch, seq, kind, n, ei, ROLE_DELETION, b"\0" * 16,
                                         chain), pt)
                chain = box[-TAG_LEN:]
                payload += u32(len(box)) + box
            else:
                raise TypeError(e)
        payload += extra_payload
        body = u8(kind if kind_byte is None else kind_byte) + u64(seq) + bytes(payload)
        frame = u32(len(body)) + u32(len(body) ^ 0xFFFFFFFF) + body
        return frame, chain

    def write_raw(self, raw: bytes):
        """Appends bytes as they are (tests: torn tails, garbage). Does not change the head."""
        self.buf += raw
        self._append_to_file(raw)

    def _append_to_file(self, raw: bytes):
        if self.path is None:
            return
        with open(self.path, "r+b") as f:
            f.seek(0, os.SEEK_END)
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())

    def append(self, entries: Sequence, *, transaction: Optional[bool] = None, check: bool = True,
               **overrides) -> RecordInfo:
        """Appends one record: a single Put or Delete (kinds 1/2), or a transaction (kind 3).

        check=True validates the entries as a reader will (attributes, deletions of live items,
        uniqueness -> DuplicateItem / ItemNotFound); check=False writes whatever it is given (tests).
        """
        entries = list(entries)
        pending = None
        if check:
            ops = []
            for e in entries:
                if isinstance(e, Put):
                    pt = e.raw_attributes if e.raw_attributes is not None else \
                        encode_attributes(e.item_id, e.cls, e.attributes)
                    try:
                        iid, cls, values = decode_attributes(pt)
                    except _Invalid as err:
                        raise ValueError(err.reason) from None
                    if iid != e.item_id:
                        raise ValueError("attributes item id differs from the entry's")
                    if len(e.secret) > MAX_SECRET:
                        raise ValueError("secret longer than 1 MiB")
                    ops.append(("put", Item(id=iid, cls=cls, attributes=values)))
                else:
                    ops.append(("delete", e.item_id))
            try:
                pending = self.state.plan(ops)
            except _Semantic as err:
                if err.code == "duplicate":
                    raise DuplicateItem(err.reason) from None
                if err.code == "not-live":
                    raise ItemNotFound(err.reason) from None
                raise ValueError(err.reason) from None      # "class": an item keeps its class (§8.3)
        offset = len(self.buf)
        frame, chain = self.encode_record(entries, transaction=transaction, **overrides)
        if check and len(frame) - FRAME_HEADER > MAX_BODY:
            raise ValueError("record body longer than 256 MiB")
        self.buf += frame
        self._append_to_file(frame)
        seq = overrides.get("seq") or self.seq + 1
        self.seq, self.chain = seq, chain
        if pending is not None:
            for e in entries:
                if isinstance(e, Put) and pending.get(e.item_id) is not None:
                    pending[e.item_id].secret = bytes(e.secret)
            self.state.commit(pending)
        return RecordInfo(offset=offset, length=len(frame), kind=frame[8], sequence=seq, chain=chain,
                          entries=[("put" if isinstance(e, Put) else "delete", e.item_id) for e in entries])

    # -- high level (defaults, dates, ids) -----------------------------------------------------

    def new_item_id(self) -> bytes:
        return random_bytes(self.rng, 16)

    def make_put(self, cls: int, attributes: dict, secret: bytes = b"", *, item_id: Optional[bytes] = None,
                 base: Optional[Item] = None) -> Put:
        """A Put with §8.2's writer defaults filled in and the dates set."""
        if isinstance(cls, str):
            cls = CLASS_BY_NAME[cls]
        now = self.clock()
        attrs = {}
        if base is not None:
            attrs.update(base.attributes)
        else:
            for name in PRIMARY_KEY[cls]:
                attrs[name] = TYPE_DEFAULTS[ATTRIBUTES_BY_NAME[name].type]
            attrs.update(WRITER_DEFAULTS)
            attrs["creationDate"] = now
        attrs.update(attributes)
        attrs["modificationDate"] = now
        if base is not None:
            attrs["creationDate"] = base.attributes.get("creationDate", now)
        iid = item_id if item_id is not None else (base.id if base is not None else self.new_item_id())
        return Put(item_id=iid, cls=cls, attributes=attrs, secret=bytes(secret))

    def add(self, cls, attributes: dict, secret: bytes = b"", *, item_id: Optional[bytes] = None) -> bytes:
        p = self.make_put(cls, attributes, secret, item_id=item_id)
        self.append([p])
        return p.item_id

    def update(self, item_id: bytes, attributes: Optional[dict] = None, secret: Optional[bytes] = None):
        base = self.state.items.get(item_id)
        if base is None:
            raise ItemNotFound(item_id.hex())
        p = self.make_put(base.cls, attributes or {}, base.secret if secret is None else secret, base=base)
        self.append([p])

    def delete(self, item_id: bytes):
        self.append([Delete(item_id)])

    def transaction(self) -> "Batch":
        return Batch(self)


class Batch:
    """with writer.transaction() as t: t.add(...); t.update(...); t.delete(...)  -> one kind-3 record."""

    def __init__(self, writer: Writer):
        self.w = writer
        self.entries: list = []
        self.view = dict(writer.state.items)

    def add(self, cls, attributes: dict, secret: bytes = b"", *, item_id: Optional[bytes] = None) -> bytes:
        p = self.w.make_put(cls, attributes, secret, item_id=item_id)
        self.entries.append(p)
        self.view[p.item_id] = Item(p.item_id, p.cls, p.attributes, p.secret)
        return p.item_id

    def update(self, item_id: bytes, attributes: Optional[dict] = None, secret: Optional[bytes] = None):
        base = self.view.get(item_id)
        if base is None:
            raise ItemNotFound(item_id.hex())
        p = self.w.make_put(base.cls, attributes or {}, base.secret if secret is None else secret, base=base)
        self.entries.append(p)
        self.view[item_id] = Item(p.item_id, p.cls, p.attributes, p.secret)

    def delete(self, item_id: bytes):
        if item_id not in self.view:
            raise ItemNotFound(item_id.hex())
        self.entries.append(Delete(item_id))
        del self.view[item_id]

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None and self.entries:
            self.w.append(self.entries, transaction=True)
        return False


def _atomic_create(path, data: bytes, overwrite: bool):
    """§10: mode 0600, temporary name in the same directory, durable, then renamed into place."""
    path = os.fspath(path)
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".kcf-", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


# ---------------------------------------------------------------------------------------------
# Example file (deterministic) and CLI
# ---------------------------------------------------------------------------------------------

EXAMPLE_PASSWORD = "correct horse battery staple"
EXAMPLE_KEY = bytes(range(32))


def make_example(path=None, *, seed: int = 14, iterations: int = 1000) -> bytes:
    """A small deterministic file exercising every record kind: the reference's own worked example."""
    rng = random.Random(seed)
    clock_values = iter(range(1_700_000_000_000, 1_800_000_000_000, 1000))
    w = Writer.create(path, [{"password": EXAMPLE_PASSWORD}, {"key": EXAMPLE_KEY}], iterations=iterations,
                      rng=rng, clock=lambda: next(clock_values), overwrite=True)
    a = w.add(GENERIC_PASSWORD, {"account": "alice", "service": "mail.example.com", "label": "Mail"},
              b"hunter2")
    with w.transaction() as t:
        b = t.add(INTERNET_PASSWORD, {"account": "bob", "server": "example.com", "protocol": 0x68747073,
                                      "port": 443, "path": "/login"}, b"s3cret")
        t.update(a, {"comment": "rotated"}, b"hunter3")
    w.delete(b)
    return w.data


EXIT_OK, EXIT_OTHER, EXIT_USAGE = 0, 1, 2
EXIT_CODES = {NotAKeychain: 3, UnsupportedVersion: 4, WrongCredentials: 5, Corrupted: 6}


def _credential_from_args(args) -> dict:
    if (args.password is None) == (args.key is None):
        raise SystemExit("give exactly one of --password and --key")
    if args.password is not None:
        return {"password": args.password}
    return {"key": bytes.fromhex(args.key)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="kcf_reference.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", metavar="FILE", help="print the Markdown derivation of FILE (SPEC §14)")
    ap.add_argument("--password")
    ap.add_argument("--key", metavar="HEX", help="32-byte application key, hex")
    sub = ap.add_subparsers(dest="command")
    d = sub.add_parser("dump", help="print the live items as JSON")
    d.add_argument("file")
    d.add_argument("--password", dest="password_sub")
    d.add_argument("--key", dest="key_sub", metavar="HEX")
    t = sub.add_parser("trace", help="same as --trace")
    t.add_argument("file")
    t.add_argument("--password", dest="password_sub")
    t.add_argument("--key", dest="key_sub", metavar="HEX")
    e = sub.add_parser("example", help="write the reference's deterministic example file")
    e.add_argument("out")
    e.add_argument("--seed", type=int, default=14)
    e.add_argument("--iterations", type=int, default=1000)
    args = ap.parse_args(argv)
    for name in ("password", "key"):
        v = getattr(args, name + "_sub", None)
        if v is not None:
            setattr(args, name, v)
    try:
        if args.command == "example":
            make_example(args.out, seed=args.seed, iterations=args.iterations)
            print(f"wrote {args.out} (password {json.dumps(EXAMPLE_PASSWORD)}, key {EXAMPLE_KEY.hex()})")
            return EXIT_OK
        if args.trace or args.command == "trace":
            if args.password is not None and args.key is not None:
                cred, also = {"password": args.password}, [{"key": bytes.fromhex(args.key)}]
            else:
                cred, also = _credential_from_args(args), []
            try:
                sys.stdout.write(trace(args.trace or args.file, cred, raise_errors=True, also=also))
            except KCFError as err:
                sys.stdout.write(err.trace)
                raise
            return EXIT_OK
        if args.command == "dump":
            kc = open_keychain(args.file, _credential_from_args(args))
            json.dump(kc.to_json(), sys.stdout, indent=2, ensure_ascii=False)
            sys.stdout.write("\n")
            return EXIT_OK
        ap.print_usage(sys.stderr)
        return EXIT_USAGE
    except KCFError as err:
        out = {"error": type(err).__name__, "message": str(err)}
        if isinstance(err, Corrupted):
            out.update(offset=err.offset, reason=err.reason)
        if isinstance(err, UnsupportedVersion):
            out.update(version=err.version)
        print(json.dumps(out), file=sys.stderr)
        return EXIT_CODES.get(type(err), EXIT_OTHER)
    except (OSError, ValueError, TypeError) as err:
        print(json.dumps({"error": type(err).__name__, "message": str(err)}), file=sys.stderr)
        return EXIT_OTHER


if __name__ == "__main__":
    sys.exit(main())

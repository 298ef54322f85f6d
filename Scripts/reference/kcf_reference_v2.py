#!/usr/bin/env python3
"""KeychainFile (.kcf) format version 2: independent reference reader and writer.

Written from Docs/FormatVersion2.md and the vector scripts of Scripts/vectors (header_v2_vectors.py,
record_v2_vectors.py), WITHOUT reading the Swift sources: the second implementation that the Swift code and
Fixtures/v2 are checked against. Standard library, the `cryptography` package (SHA-256, HMAC, HKDF, PBKDF2,
AES-GCM, Argon2id) and this directory's pure-Python Reed–Solomon (`rs255.py`). Version 1's pieces that version 2
reuses (attribute encoding of SPEC.md §7.3, the state and its §8.3 uniqueness rules, errors) come from
`kcf_reference.py`.

Module use:

    kc = open_keychain("file.kcf", {"password": "pw"})      # or {"key": bytes(32)}
    kc.items, kc.head, kc.remnant, kc.set_aside, kc.repairs, kc.committed_end, kc.written_end

    w = Writer.create("new.kcf", [{"password": "pw"}], iterations=1000, rng=random.Random(1))
    item_id = w.add(K.GENERIC_PASSWORD, {"account": "a", "service": "s"}, b"secret")
    w.append([K.Put(...), K.Delete(...)], part_limit=...)   # low level: one commit, or parts and a commit

CLI:

    kcf_reference_v2.py dump FILE (--password P | --key HEX)
    kcf_reference_v2.py trace FILE (--password P | --key HEX)   # Markdown derivation (SPEC.md §29)

Exit codes: 0 success (a remnant, a set-aside tail and repairs are reported in the output), 1 I/O or other
error, 2 usage, 3 notAKeychain, 4 unsupportedVersion, 5 wrongCredentials, 6 corrupted, 7 unsupportedFeature,
8 rolledBack.

Every place where the design document left a choice open, or where the bytes Swift writes had to tell what the
text does not, is marked "DOC-FINDING" and listed in README.md. Where SPEC.md (§18–§29, which settled them) says
otherwise, this module follows SPEC.md: telling the version (§20.4), the commit slots (§23.3), the file's length
(§25.5), the fork check (§25.3), what does not verify (§25.4), repair (§19.5), cutting (§26.4).
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
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import kcf_reference as K  # noqa: E402
import rs255 as RS  # noqa: E402

from kcf_reference import (Corrupted, KCFError, NotAKeychain, UnsupportedVersion,  # noqa: E402,F401
                           WrongCredentials)


class UnsupportedFeature(KCFError):
    """A frame that holds together but uses a kind, key id, role or page encoding this reader does not know
    (offset: the record's log offset)."""

    def __init__(self, offset: int, reason: str):
        super().__init__(f"unsupported feature at offset {offset}: {reason}")
        self.offset = offset
        self.reason = reason


class CorruptedRecord(Corrupted):
    """Damage in the log: `offset` is the record's logical offset (the log's, as Swift reports it);
    `file_offset` the physical one."""

    def __init__(self, offset: int, reason: str):
        super().__init__(offset, reason + " (log offset)")
        self.file_offset = physical(offset)


class RolledBack(KCFError):
    """The file does not contain a head the caller pinned (SPEC.md §15.4). The reader does not raise it: a file cut
    below an acknowledged commit is corrupted(file length) (§25.5)."""

    def __init__(self, length: int, needed: int):
        super().__init__(f"rolled back: the file has {length} bytes, an acknowledged commit needs {needed}")
        self.length = length
        self.needed = needed


class SetAsideRefusal(KCFError):
    """Writer: the file holds records set aside as possibly acknowledged; appending is refused."""


# ---------------------------------------------------------------------------------------------
# Layout (§1)
# ---------------------------------------------------------------------------------------------

PAGE = 4096
HEADER_A = 0
SLOT_REGION = 12 * 1024
SLOT_OFFSETS = (PAGE, PAGE + SLOT_REGION)                 # 4,096 and 16,384
HEADER_B = PAGE + 2 * SLOT_REGION                         # 28,672
PREFIX = HEADER_B + PAGE                                  # P = 32,768
SEAL = 128
SEAL_CONTENT = 96
SLOT_PARITY_AT = SEAL                                     # seal 1 ‖ parity ‖ seal 2
SLOT_SEAL2_AT = SEAL + 8192
SLOT_BYTES = SEAL + 8192 + SEAL                           # 8,448
CHUNK = 256 * 223                                         # 57,088 data bytes
CHUNK_PARITY = 256 * 32                                   # 8,192
STRIDE = CHUNK + CHUNK_PARITY                             # 65,280

VERSION = 2
MAGIC = K.MAGIC
HEADER_FIXED = 112
HEADER_TRAILER = 48
MIN_HEADER, MAX_HEADER = 276, 2656
PAGE_DATA = 3568                                          # 16 codewords × 223
PAGE_PARITY = 512
MAX_HEADER_SLOTS = 16
COMMITTED_SLOT = 156
MAX_ITERATIONS = 10_000_000
MAX_TOTAL_ITERATIONS = 20_000_000
MAX_ARGON_WORK = 1 << 26                                  # KiB × passes
MAX_REWRITE_END = (1 << 62) - 1

SEAL_MAGIC = b"KCFS"

KIND_COMMIT, KIND_PART = 1, 3
ROLE_PAGE, ROLE_SECRET = 1, 2
ENTRY_PUT, ENTRY_DELETE, ENTRY_TOMBSTONE = 1, 2, 3
PAGE_ENCODING = 1
PAGE_LIMIT = 8192
MIN_BODY, MAX_BODY = 59, 16 * 1024 * 1024
MAX_SECRET = 1 << 20

LABEL_RAW_KEY = b"KCF2 raw-key slot"
LABEL_COMMITMENT = b"KCF2 slot commitment"
LABEL_WRAP = b"KCF2 slot wrap"
LABEL_SLOT_AAD = b"KCF2 key slot"
LABEL_HEADER = b"KCF2 header"
LABEL_RECORDS = b"KCF2 records"
LABEL_SECRETS = b"KCF2 secrets"
LABEL_C0 = b"KCF2 C0"
LABEL_BOX = b"KCF2"
LABEL_SECRET_BOX = b"KCF2 secret box\x00"


@dataclass(frozen=True)
class Layout:
    """Where the log starts (P) and where the two commit slots lie. Version 2's is fixed (§1); version 3 moves both
    with its header's page count (FormatVersion3.md §2.10), which is why the reader and writer below take one."""
    prefix: int = PREFIX
    slot_offsets: tuple = SLOT_OFFSETS

    def physical(self, logical: int) -> int:
        """§1: physical(L) = P + (L div 57,088) × 65,280 + (L mod 57,088)."""
        return self.prefix + (logical // CHUNK) * STRIDE + logical % CHUNK

    def parity_offset(self, chunk: int) -> int:
        """Where a complete chunk's parity lies: right after its data."""
        return self.prefix + chunk * STRIDE + CHUNK

    def logical_length(self, file_length: int) -> int:
        """The logical bytes a file of this physical length holds (data of whole and partial chunks)."""
        if file_length <= self.prefix:
            return 0
        q, r = divmod(file_length - self.prefix, STRIDE)
        return q * CHUNK + min(r, CHUNK)


V2_LAYOUT = Layout()


def physical(logical: int) -> int:
    return V2_LAYOUT.physical(logical)


def parity_offset(chunk: int) -> int:
    return V2_LAYOUT.parity_offset(chunk)


def logical_length(file_length: int) -> int:
    return V2_LAYOUT.logical_length(file_length)


def u8(v): return struct.pack(">B", v)
def u16(v): return struct.pack(">H", v)
def u32(v): return struct.pack(">I", v)
def u64(v): return struct.pack(">Q", v)
def i64(v): return struct.pack(">q", v)
def rd16(b, o): return struct.unpack_from(">H", b, o)[0]
def rd32(b, o): return struct.unpack_from(">I", b, o)[0]
def rd64(b, o): return struct.unpack_from(">Q", b, o)[0]
def rdi64(b, o): return struct.unpack_from(">q", b, o)[0]


def blake2b16(data: bytes) -> bytes:
    return hashlib.blake2b(bytes(data), digest_size=16).digest()


def random_bytes(rng: Optional[random.Random], n: int) -> bytes:
    return K.random_bytes(rng, n)


def normalize_password(password: str) -> bytes:
    # DOC-FINDING: §6 makes Unicode 15.0's NFC normative. Python's unicodedata has its own version
    # (unicodedata.unidata_version); the two agree for every assigned 15.0 code point except where a newer
    # version changed a decomposition, which no version after 15.0 did, so the NFC of Python ≥ 3.12 (15.0)
    # or 3.11 (14.0, agreeing on the code points 14.0 assigns) is used. Writers here do not refuse unassigned
    # code points (§6 says writers refuse them for new slots): the reference writer refuses nothing and
    # should only be given assigned passwords.
    return unicodedata.normalize("NFC", password).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Parity (§2): page, chunk and seal codewords
# ---------------------------------------------------------------------------------------------

def page_parity(block: bytes) -> bytes:
    """§4: 3,568 bytes = 16 codewords, byte i·16 + j symbol i of codeword j; parity symbol i of codeword j
    at i·16 + j of the 512 parity bytes."""
    parity = bytearray(PAGE_PARITY)
    for j in range(16):
        p = RS.parity_of_symbols(block[j::16][:223])
        for i in range(32):
            parity[i * 16 + j] = p[i]
    return bytes(parity)


def build_page(header: bytes) -> bytes:
    block = header + bytes(PAGE_DATA - len(header))
    return block + page_parity(block) + bytes(16)


def repair_page(page: bytes) -> tuple:
    """Decodes the 16 codewords of a header page: (proposed 3,568 bytes, codewords changed, codewords beyond
    repair)."""
    block = bytearray(page[:PAGE_DATA])
    changed = failed = 0
    for j in range(16):
        symbols = page[j:PAGE_DATA:16]
        parity = page[PAGE_DATA + j:PAGE_DATA + PAGE_PARITY:16]
        try:
            fixed, positions = RS.decode_fixed(symbols, parity)
        except RS.Uncorrectable:
            failed += 1
            continue
        if positions:
            changed += 1
        for i in range(223):
            block[i * 16 + j] = fixed[i]
    return bytes(block), changed, failed


def chunk_parity(data: bytes) -> bytes:
    """§2: the 8,192 parity bytes of a chunk's data (≤ 57,088 bytes; zeros past it). Data byte i·256 + j is
    symbol i of codeword j.

    DOC-FINDING: §2 does not say where parity symbol i of codeword j lies in the chunk's 8,192 parity bytes
    (nor in the slot's). §4 says it for the header page (i·16 + j); the same interleaving, i·256 + j, is
    taken here, and confirmed by Swift-written files (see README.md).
    """
    acc = [0] * 256
    for pos, b in enumerate(data):
        if b:
            i, j = divmod(pos, 256)
            acc[j] ^= RS.byte_table(i)[b]
    parity = bytearray(CHUNK_PARITY)
    for j in range(256):
        if acc[j]:
            p = acc[j].to_bytes(32, "big")
            for i in range(32):
                parity[i * 256 + j] = p[i]
    return bytes(parity)


ERASURE_CHECK = 4                         # §19.5: parity symbols per codeword kept unused as a check


def repair_chunk(data: bytes, parity: bytes, erasures: Sequence[int] = (), last_write: Sequence[int] = ()) -> tuple:
    """Proposes repaired data for one chunk (data ≤ 57,088 bytes, zero-padded; parity 8,192 bytes).

    erasures: data offsets within the chunk known to be unreadable. last_write: data offsets of the last write
    (§23.1); where a codeword stays unrepaired, it is decoded again with those bytes as erasures too, if they are
    at most 32 − 4 in it, and the result is taken only if 2·errors + erasures ≤ 28 (§19.5: 4 parity symbols kept
    unused as a check). Returns (proposed data of len(data), number of codewords that changed, number beyond
    repair). Codewords whose parity matches are skipped.
    """
    padded = bytes(data) + bytes(CHUNK - len(data))
    expected = chunk_parity(padded)
    erased: dict = {}
    for e in erasures:
        i, j = divmod(e, 256)
        erased.setdefault(j, []).append(i)
    suspect: dict = {}
    for e in last_write:
        i, j = divmod(e, 256)
        suspect.setdefault(j, set()).add(i)
    out = bytearray(padded)
    changed = failed = 0
    for j in range(256):
        stored = parity[j::256]
        if expected[j::256] == stored and j not in erased:
            continue
        symbols = padded[j::256]
        try:
            fixed, positions = RS.decode_fixed(symbols, stored, erased.get(j, ()))
        except RS.Uncorrectable:
            fixed = None
            wider = set(erased.get(j, ())) | suspect.get(j, set())
            if suspect.get(j) and len(wider) <= RS.NSYM - ERASURE_CHECK:
                try:
                    fixed, positions = RS.decode_fixed(symbols, stored, sorted(wider))
                    errors = [p for p in positions if p not in wider]
                    if 2 * len(errors) + len(wider) > RS.NSYM - ERASURE_CHECK:
                        fixed = None
                except RS.Uncorrectable:
                    fixed = None
            if fixed is None:
                failed += 1
                continue
        if any(p < 223 for p in positions):
            changed += 1
        for i in range(223):
            out[i * 256 + j] = fixed[i]
    return bytes(out[:len(data)]), changed, failed


def seal_parity(content: bytes) -> bytes:
    """§3: 32 bytes of RS parity over a seal's 96 bytes of content.

    DOC-FINDING: §3 says "32 of RS parity over them" without the layout: a shortened codeword (the 96 bytes at
    degrees 127 … 32, which is what reedsolo's encode gives) or §2's fixed positions (the 96 bytes at degrees
    254 … 159, zeros after). Taken: the shortened codeword; checked against Swift-written seals (README.md).
    """
    return RS.encode(content, 32)


def repair_seal(seal: bytes) -> Optional[bytes]:
    try:
        fixed, _ = RS.decode(seal, 32)
    except RS.Uncorrectable:
        return None
    return fixed


# ---------------------------------------------------------------------------------------------
# The header (§4)
# ---------------------------------------------------------------------------------------------

@dataclass
class SlotV2:
    offset: int               # within the header
    type: int                 # 1 password, 2 raw key, 3 legacy
    kdf: int                  # 1 PBKDF2, 2 HKDF, 3 Argon2id; 0 for a legacy slot
    slot_id: bytes
    params: dict
    salt: bytes
    commitment: Optional[bytes]
    nonce: bytes
    sealed: bytes             # wrapped master key ‖ tag
    raw: bytes
    legacy: Optional[K.Slot] = None

    @property
    def credential_kind(self) -> str:
        if self.type == 3:
            return "password" if self.legacy.type == K.SLOT_PASSWORD else "key"
        return "password" if self.type == 1 else "key"


@dataclass
class HeaderV2:
    raw: bytes
    length: int
    file_id: bytes
    epoch: int
    epoch_salt: bytes
    rewrite_end: int
    rewrite_sequence: int
    rewrite_chain: bytes
    horizon_days: int
    slots: list
    mac: bytes
    checksum: bytes


def header_checksum_ok(buf: bytes) -> bool:
    if len(buf) < 16:
        return False
    length = rd32(buf, 12)
    if not MIN_HEADER <= length <= MAX_HEADER or length > len(buf):
        return False
    return hashlib.sha256(buf[:length - 16]).digest()[:16] == buf[length - 16:length]


def parse_header(h: bytes, base: int = 0) -> HeaderV2:
    """Structure of a header whose checksum verified (§4). Raises Corrupted at the offending field (offsets
    within the page plus `base`)."""
    def bad(off, why):
        raise Corrupted(base + off, why)
    if h[:8] != MAGIC:
        bad(0, "magic")
    if rd16(h, 8) != VERSION:
        raise UnsupportedVersion(rd16(h, 8))
    if rd16(h, 10) != 0:
        # SPEC.md §20.1: flags ≠ 0 is not a version 2 header. read_header_copies never passes such a copy here
        # (declares_v2); kept for direct callers.
        bad(10, "flags")
    length = rd32(h, 12)
    file_id = h[16:32]
    epoch = rd64(h, 32)
    epoch_salt = h[40:72]
    rewrite_end = rd64(h, 72)
    rewrite_sequence = rd64(h, 80)
    rewrite_chain = h[88:104]
    horizon = rd32(h, 104)
    count = h[108]
    if rewrite_end > MAX_REWRITE_END:
        bad(72, "rewrite end")
    if (rewrite_end == 0) != (rewrite_sequence == 0):
        bad(80, "rewrite head sequence")
    if not 1 <= horizon <= 36525:
        bad(104, "tombstone horizon")
    if not 1 <= count <= MAX_HEADER_SLOTS:
        bad(108, "slot count")
    if h[109:112] != bytes(3):
        bad(109, "reserved")
    pos = HEADER_FIXED
    slots = []
    total_iterations = 0
    total_argon = 0                       # §20.1: memory × passes over all slots, as for PBKDF2's iterations
    for _ in range(count):
        if pos + 4 > length - HEADER_TRAILER:
            bad(pos, "slots run past the trailer")
        stype, kdf, slen = h[pos], h[pos + 1], rd16(h, pos + 2)
        if pos + slen > length - HEADER_TRAILER:
            bad(pos, "slot runs past the trailer")
        raw = h[pos:pos + slen]
        if stype in (1, 2):
            if slen != COMMITTED_SLOT:
                bad(pos + 2, "slot length")
            if (stype == 1 and kdf not in (1, 3)) or (stype == 2 and kdf != 2):
                bad(pos + 1, "KDF id")
            p = raw[20:32]
            params = {}
            if kdf == 1:
                params["iterations"] = rd32(p, 0)
                if not 1 <= params["iterations"] <= MAX_ITERATIONS or p[4:] != bytes(8):
                    bad(pos + 20, "PBKDF2 parameters")
                total_iterations += params["iterations"]
            elif kdf == 2:
                if p != bytes(12):
                    bad(pos + 20, "HKDF parameters")
            else:
                memory, passes, lanes = rd32(p, 0), rd32(p, 4), p[8]
                params = {"memoryKiB": memory, "passes": passes, "lanes": lanes}
                if (not 1 <= lanes <= 16 or not 1 <= passes <= (1 << 20) or not 8 * lanes <= memory <= (1 << 22)
                        or memory * passes > MAX_ARGON_WORK or p[9:] != bytes(3)):
                    bad(pos + 20, "Argon2id parameters")
                total_argon += memory * passes
            slots.append(SlotV2(pos, stype, kdf, raw[4:20], params, raw[32:64], raw[64:96], raw[96:108],
                                raw[108:156], raw))
        elif stype == 3:
            if kdf != 0:
                bad(pos + 1, "legacy slot KDF byte")
            v1 = raw[4:]
            v1type = v1[0] if v1 else 0
            if v1type not in K.SLOT_LENGTH or slen != 4 + K.SLOT_LENGTH[v1type]:
                bad(pos + 2, "legacy slot length")
            if v1[1] != 0 or rd16(v1, 2) != K.SLOT_LENGTH[v1type]:
                bad(pos + 4, "legacy slot")
            if v1type == K.SLOT_PASSWORD:
                iterations = rd32(v1, 20)
                if not 1 <= iterations <= MAX_ITERATIONS:
                    bad(pos + 24, "legacy iterations")
                total_iterations += iterations
                salt = v1[24:56]
            else:
                iterations = None
                salt = v1[20:52]
            n = len(v1)
            legacy = K.Slot(offset=pos + 4, type=v1type, length=n, slot_id=v1[4:20], iterations=iterations,
                            salt=salt, nonce=v1[n - 60:n - 48], wrapped=v1[n - 48:n - 16], tag=v1[n - 16:], raw=v1)
            slots.append(SlotV2(pos, 3, 0, v1[4:20], {"iterations": iterations}, salt, None, legacy.nonce,
                                v1[n - 48:], raw, legacy))
        else:
            bad(pos, f"slot type {stype}")
        pos += slen
    if pos != length - HEADER_TRAILER:
        bad(pos, "slots do not end at the trailer")
    if total_iterations > MAX_TOTAL_ITERATIONS:
        bad(HEADER_FIXED, "PBKDF2 iterations over 20,000,000 in all")
    if total_argon > MAX_ARGON_WORK:
        bad(HEADER_FIXED, "Argon2id memory × passes over 2^26 KiB in all")
    ids = [s.slot_id for s in slots]
    if len(set(ids)) != len(ids):
        bad(HEADER_FIXED, "slot ids not distinct")
    return HeaderV2(h[:length], length, file_id, epoch, epoch_salt, rewrite_end, rewrite_sequence, rewrite_chain,
                    horizon, slots, h[length - 48:length - 16], h[length - 16:length])


def kek_of(slot: SlotV2, file_id: bytes, credential: dict) -> bytes:
    if slot.kdf == 1:
        return K.pbkdf2_sha256(normalize_password(credential["password"]), slot.salt, slot.params["iterations"], 32)
    if slot.kdf == 2:
        return K.hkdf_sha256(credential["key"], slot.salt, LABEL_RAW_KEY + file_id, 32)
    if slot.kdf == 3:
        from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
        p = slot.params
        return Argon2id(salt=slot.salt, length=32, iterations=p["passes"], lanes=p["lanes"],
                        memory_cost=p["memoryKiB"]).derive(normalize_password(credential["password"]))
    raise AssertionError(slot.kdf)


def open_slot(slot: SlotV2, file_id: bytes, credential: dict, cache: dict) -> tuple:
    """(master key or None, whether the credential matched the slot's commitment but the unwrap failed)."""
    kind = "password" if "password" in credential else "key"
    if slot.credential_kind != kind:
        return None, False
    if slot.type == 3:
        # Legacy slot: opens as version 1's (SPEC.md §5): the KEK seals the master key directly.
        v1 = slot.legacy
        key = ("legacy", v1.iterations, v1.salt)
        if key not in cache:
            if v1.type == K.SLOT_PASSWORD:
                pw = unicodedata.normalize("NFC", credential["password"]).encode("utf-8")
                cache[key] = K.pbkdf2_sha256(pw, v1.salt, v1.iterations, 32)
            else:
                cache[key] = K.hkdf_sha256(credential["key"], v1.salt, K.LABEL_RAW_KEY + file_id, 32)
        mk = K.gcm_open(cache[key], v1.nonce + v1.wrapped + v1.tag, K.LABEL_SLOT_AAD + file_id + v1.aad_prefix)
        return mk, False
    key = (slot.kdf, tuple(sorted(slot.params.items())), slot.salt)
    if key not in cache:
        cache[key] = kek_of(slot, file_id, credential)
    kek = cache[key]
    commitment = K.hkdf_sha256(kek, b"", LABEL_COMMITMENT + file_id + slot.slot_id, 32)
    if not _hmac.compare_digest(commitment, slot.commitment):
        return None, False
    wrap = K.hkdf_sha256(kek, b"", LABEL_WRAP + file_id + slot.slot_id, 32)
    mk = K.gcm_open(wrap, slot.nonce + slot.sealed, LABEL_SLOT_AAD + file_id + slot.raw[:96])
    return mk, mk is None


def epoch_keys(mk: bytes, h: HeaderV2) -> tuple:
    info = h.file_id + u64(h.epoch)
    k_header = K.hkdf_sha256(mk, h.epoch_salt, LABEL_HEADER + info, 32)
    k_record = K.hkdf_sha256(mk, h.epoch_salt, LABEL_RECORDS + info, 32)
    k_secret = K.hkdf_sha256(mk, b"", LABEL_SECRETS + h.file_id, 32)
    c0 = K.hmac_sha256(k_header, LABEL_C0 + info + h.epoch_salt)[:16]
    return k_header, k_record, k_secret, c0


def build_committed_slot(stype: int, kdf: dict, credential: dict, mk: bytes, file_id: bytes,
                         rng: Optional[random.Random]) -> bytes:
    slot_id, salt, nonce = random_bytes(rng, 16), random_bytes(rng, 32), random_bytes(rng, 12)
    if kdf["id"] == 1:
        params = u32(kdf["iterations"]) + bytes(8)
    elif kdf["id"] == 2:
        params = bytes(12)
    else:
        params = struct.pack(">IIB", kdf["memoryKiB"], kdf["passes"], kdf["lanes"]) + bytes(3)
    probe = SlotV2(0, stype, kdf["id"], slot_id, {k: v for k, v in kdf.items() if k != "id"}, salt, None, nonce,
                   b"", b"")
    kek = kek_of(probe, file_id, credential)
    commitment = K.hkdf_sha256(kek, b"", LABEL_COMMITMENT + file_id + slot_id, 32)
    wrap = K.hkdf_sha256(kek, b"", LABEL_WRAP + file_id + slot_id, 32)
    head = bytes([stype, kdf["id"]]) + u16(COMMITTED_SLOT) + slot_id + params + salt + commitment
    slot = head + nonce + AESGCM(wrap).encrypt(nonce, mk, LABEL_SLOT_AAD + file_id + head)
    assert len(slot) == COMMITTED_SLOT
    return slot


def build_header(file_id: bytes, epoch: int, epoch_salt: bytes, rewrite_end: int, rewrite_head: tuple,
                 horizon: int, slots: Sequence[bytes], k_header: bytes) -> bytes:
    length = HEADER_FIXED + sum(len(s) for s in slots) + HEADER_TRAILER
    out = (MAGIC + u16(VERSION) + u16(0) + u32(length) + file_id + u64(epoch) + epoch_salt + u64(rewrite_end)
           + u64(rewrite_head[0]) + rewrite_head[1] + u32(horizon) + u8(len(slots)) + bytes(3) + b"".join(slots))
    out += K.hmac_sha256(k_header, out)
    out += hashlib.sha256(out).digest()[:16]
    assert len(out) == length
    return out


# ---------------------------------------------------------------------------------------------
# Commit slots (§3)
# ---------------------------------------------------------------------------------------------

@dataclass
class Seal:
    slot: int
    counter: int
    epoch: int
    written_end: int
    committed_end: int
    head_sequence: int
    head_chain: bytes
    copies: str               # which copies authenticated: "both", "first", "second"
    repaired: bool            # a copy authenticated only after its RS repair
    parity: bytes             # the slot's 8,192 bytes of partial-chunk parity

    @property
    def head(self) -> tuple:
        return self.head_sequence, self.head_chain


def seal_content(epoch: int, counter: int, written_end: int, committed_end: int, head: tuple,
                 k_header: bytes) -> bytes:
    body = (SEAL_MAGIC + u64(epoch) + u64(counter) + u64(written_end) + u64(committed_end) + u64(head[0])
            + head[1] + bytes(4))
    assert len(body) == 64
    return body + K.hmac_sha256(k_header, body)


def build_seal(epoch, counter, written_end, committed_end, head, k_header) -> bytes:
    content = seal_content(epoch, counter, written_end, committed_end, head, k_header)
    return content + seal_parity(content)


MAX_COUNTER = (1 << 64) - 1               # §23.3 step 4: a seal counts only with c < 2⁶⁴ − 1
MAX_WRITTEN_END = 1 << 48                 # §23.3 step 5


def read_seal_copy(raw: bytes, k_header: bytes, epoch: int) -> tuple:
    """§23.3 step 1: (fields or None, repaired) for one 128-byte seal copy. A copy reads if its magic is "KCFS",
    its reserved bytes are zero, its MAC verifies, it has the header's epoch and E_c ≤ E_w — as read, or else
    after its RS decode (§19.4)."""
    def check(b):
        if b[:4] != SEAL_MAGIC or b[60:64] != bytes(4):
            return None
        if not _hmac.compare_digest(K.hmac_sha256(k_header, b[:64]), b[64:96]):
            return None
        fields = (rd64(b, 4), rd64(b, 12), rd64(b, 20), rd64(b, 28), rd64(b, 36), bytes(b[44:60]))
        if fields[0] != epoch or fields[3] > fields[2]:
            return None
        return fields
    fields = check(raw)
    if fields is not None:
        return fields, False
    fixed = repair_seal(raw)
    if fixed is None:
        return None, False
    fields = check(fixed)
    return fields, fields is not None


def read_commit_slot(region: bytes, index: int, epoch: int, k_header: bytes, notes: list) -> Optional[Seal]:
    """§23.3 steps 1–4 for slot place `index`: the seal it holds, or None. A torn slot (both copies read and
    differ) gives the copy with the higher counter, marked torn (its parity is never used for repair); whether
    it counts depends on the other place (read_commit_slots). A seal whose counter names the other place, or is
    2⁶⁴ − 1, is ignored."""
    region = bytes(region) + bytes(SLOT_BYTES - len(region))
    first, rep1 = read_seal_copy(region[:SEAL], k_header, epoch)
    second, rep2 = read_seal_copy(region[SLOT_SEAL2_AT:SLOT_BYTES], k_header, epoch)
    if first is None and second is None:
        if any(region):
            notes.append(f"commit slot {index}: no seal copy reads")
        return None
    torn = first is not None and second is not None and first != second
    if torn:
        fields = first if first[1] >= second[1] else second
        which = "torn"
    else:
        fields = first if first is not None else second
        which = "both" if first is not None and second is not None else ("first" if first is not None else "second")
        if which != "both":
            notes.append(f"commit slot {index}: seal copy {'2' if which == 'first' else '1'} damaged, the other used")
    if rep1 or rep2:
        notes.append(f"commit slot {index}: seal repaired by its parity")
    s_epoch, counter, written_end, committed_end, head_seq, head_chain = fields
    if counter % 2 != index or counter >= MAX_COUNTER:
        notes.append(f"commit slot {index}: counter {counter} does not count in this place (ignored)")
        return None
    return Seal(index, counter, s_epoch, written_end, committed_end, head_seq, head_chain, which, rep1 or rep2,
                region[SLOT_PARITY_AT:SLOT_SEAL2_AT])


def read_commit_slots(data: bytes, epoch: int, k_header: bytes, notes: list, layout: Layout = V2_LAYOUT) -> tuple:
    """§23.3: (N, O, ignored) — the newest seal that counts, the older one if it precedes N, and a seal that did
    not precede N (ignored: N's last write is then empty). Raises corrupted(4,096) for a seal that counts with
    E_w > 2⁴⁸."""
    found = [read_commit_slot(data[at:at + SLOT_BYTES], index, epoch, k_header, notes)
             for index, at in enumerate(layout.slot_offsets)]
    seals = [s for s in found if s is not None]
    # Step 3: a torn slot does not count when the other place holds a seal that counts; alone, it counts.
    # (Both places torn cannot come from one interrupted write; both are then kept, the higher counter newest.)
    if any(s.copies != "torn" for s in seals):
        for s in seals:
            if s.copies == "torn":
                notes.append(f"commit slot {s.slot}: torn between its seal copies (not counted: the other place "
                             f"holds a seal)")
        seals = [s for s in seals if s.copies != "torn"]
    else:
        for s in seals:
            notes.append(f"commit slot {s.slot}: torn between its seal copies (counted for its ends: the other "
                         f"place holds no seal; its parity is not used)")
    for s in seals:
        if s.written_end > MAX_WRITTEN_END:
            raise Corrupted(layout.slot_offsets[0], f"commit slot {s.slot}: a seal claims a written end of {s.written_end}, "
                                             f"past 2^48")
    seals.sort(key=lambda s: -s.counter)
    newest = seals[0] if seals else None
    older = seals[1] if len(seals) > 1 else None
    ignored = None
    if older is not None and not (older.written_end <= newest.written_end
                                  and older.committed_end <= newest.committed_end):
        notes.append(f"commit slot {older.slot} (counter {older.counter}): does not precede the newest seal "
                     f"(written before a cut); ignored")
        ignored, older = older, None
    return newest, older, ignored


# ---------------------------------------------------------------------------------------------
# Records (§5)
# ---------------------------------------------------------------------------------------------

@dataclass
class Frame:
    offset: int               # logical
    length: int               # 8 + L
    kind: int
    sequence: int
    part: int
    entry_count: int
    box_count: int
    boxes: list               # (key id, role, start, length) with start logical, pointing at the box bytes

    @property
    def end(self) -> int:
        return self.offset + self.length


class _Bad(Exception):
    """A record that does not verify (structure or a tag): damage at its offset, or a remnant."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Unsupported(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def parse_frame(log: bytes, offset: int, end: int) -> Frame:
    """The frame at `offset` (§5): length and its check, counts, box fields, frame check. Raises _Bad, or
    _Unsupported for a frame that holds together with a kind, key id or role this reader does not know."""
    if offset + 33 > end:
        raise _Bad("frame header past the end")
    body = rd32(log, offset)
    if rd32(log, offset + 4) != body ^ 0xFFFFFFFF:
        raise _Bad("frame length check")
    if not MIN_BODY <= body <= MAX_BODY:
        raise _Bad(f"body length {body}")
    total = 8 + body
    if offset + total > end:
        raise _Bad("frame runs past the end")
    kind = log[offset + 8]
    sequence = rd64(log, offset + 9)
    part = rd32(log, offset + 17)
    entries = rd32(log, offset + 21)
    count = rd32(log, offset + 25)
    if not 1 <= entries <= body // 25:
        raise _Bad(f"entry count {entries}")
    if not 1 <= count <= body // 34:
        raise _Bad(f"box count {count}")
    pos = offset + 33
    stop = offset + total
    boxes = []
    heads = b""
    for _ in range(count):
        if pos + 6 > stop:
            raise _Bad("box field past the frame")
        key_id, role, length = log[pos], log[pos + 1], rd32(log, pos + 2)
        if length < 28 or pos + 6 + length > stop:
            raise _Bad(f"box length {length}")
        heads += log[pos:pos + 6]
        boxes.append((key_id, role, pos + 6, length))
        pos += 6 + length
    if pos != stop:
        raise _Bad("boxes do not end at the frame's end")
    check = hashlib.sha256(bytes(log[offset:offset + 29]) + heads).digest()[:4]
    if check != bytes(log[offset + 29:offset + 33]):
        raise _Bad("frame check")
    frame = Frame(offset, total, kind, sequence, part, entries, count, boxes)
    if kind not in (KIND_COMMIT, KIND_PART):
        raise _Unsupported(f"record kind {kind}")
    for key_id, role, _, _ in boxes:
        if key_id != 0:
            raise _Unsupported(f"box key id {key_id}")
        if role not in (ROLE_PAGE, ROLE_SECRET):
            raise _Unsupported(f"box role {role}")
    if boxes[-1][1] != ROLE_PAGE:
        raise _Bad("the record does not end with a page")
    return frame


def page_aad(file_id, epoch, frame: Frame, box_index: int, prev_chain: bytes) -> bytes:
    aad = (LABEL_BOX + file_id + u64(epoch) + u64(frame.sequence) + u8(frame.kind) + u32(frame.part)
           + u32(frame.entry_count) + u32(frame.box_count) + u32(box_index) + u8(0) + prev_chain)
    assert len(aad) == 70
    return aad


def secret_aad(file_id: bytes, item_id: bytes) -> bytes:
    aad = LABEL_SECRET_BOX + file_id + u8(0) + item_id
    assert len(aad) == 49
    return aad


@dataclass
class Entry:
    kind: int                 # ENTRY_PUT / ENTRY_DELETE / ENTRY_TOMBSTONE
    item_id: bytes
    item: Optional[K.Item] = None   # for a put (with its secret decrypted)
    time: Optional[int] = None      # for a deletion or tombstone


def open_record(log: bytes, frame: Frame, keys: "Keys", prev_chain: bytes, *, decrypt_secrets: bool = True) -> tuple:
    """Opens every page and checks every secret box (§5 "open verifies everything"). Returns (entries, chain).
    Raises _Bad for a box that does not authenticate or a page that does not parse, _Unsupported for a page
    of another encoding."""
    entries = []
    pending = []              # secret boxes before the next page: bytes
    chain = prev_chain
    for index, (_, role, start, length) in enumerate(frame.boxes):
        box = bytes(log[start:start + length])
        if role == ROLE_SECRET:
            pending.append(box)
            continue
        aad = page_aad(keys.file_id, keys.epoch, frame, index, chain)
        plain = K.gcm_open(keys.k_record, box, aad)
        if plain is None:
            raise _Bad(f"page (box {index}) does not authenticate")
        chain = box[-16:]
        entries.extend(_parse_page(plain, pending, keys, index, decrypt_secrets))
        pending = []
    if len(entries) != frame.entry_count:
        raise _Bad(f"pages hold {len(entries)} entries, the frame says {frame.entry_count}")
    return entries, chain


def _parse_page(plain: bytes, secret_boxes: list, keys: "Keys", index: int, decrypt: bool) -> list:
    # DOC-FINDING: §5 says a page that authenticates "in another page encoding" is unsupportedFeature, but
    # not what a page of encoding 1 that authenticates and does not parse is (the writer sealed it so):
    # corrupted here — it can only be a writer's bug, never damage.
    if len(plain) < 3:
        raise _Bad(f"page {index}: shorter than 3 bytes")
    if plain[0] != PAGE_ENCODING:
        raise _Unsupported(f"page encoding {plain[0]}")
    count = rd16(plain, 1)
    if count < 1:
        raise _Bad(f"page {index}: no entries")
    pos = 3
    out = []
    used = 0
    for _ in range(count):
        if pos >= len(plain):
            raise _Bad(f"page {index}: entries run past the page")
        kind = plain[pos]
        if kind == ENTRY_PUT:
            if pos + 5 > len(plain):
                raise _Bad(f"page {index}: put header")
            a = rd32(plain, pos + 1)
            if pos + 5 + a + 20 > len(plain):
                raise _Bad(f"page {index}: put runs past the page")
            attributes = plain[pos + 5:pos + 5 + a]
            secret_length = rd32(plain, pos + 5 + a)
            digest = plain[pos + 9 + a:pos + 25 + a]
            pos += 25 + a
            try:
                item_id, cls, values = K.decode_attributes(attributes)
            except K._Invalid as e:
                raise _Bad(f"page {index}: {e.reason}") from None
            if secret_length > MAX_SECRET:
                raise _Bad(f"page {index}: secret of {secret_length} bytes")
            if used >= len(secret_boxes):
                raise _Bad(f"page {index}: a put names a secret box that is not there")
            box = secret_boxes[used]
            used += 1
            if len(box) != secret_length + 28:
                raise _Bad(f"page {index}: secret box of {len(box)} bytes, the put says {secret_length}")
            if blake2b16(box) != digest:
                raise _Bad(f"page {index}: secret box digest")
            secret = K.gcm_open(keys.k_secret, box, secret_aad(keys.file_id, item_id))
            if secret is None:
                raise _Bad(f"page {index}: secret box tag")
            out.append(Entry(ENTRY_PUT, item_id, K.Item(item_id, cls, values, secret if decrypt else None)))
        elif kind in (ENTRY_DELETE, ENTRY_TOMBSTONE):
            if pos + 25 > len(plain):
                raise _Bad(f"page {index}: deletion runs past the page")
            out.append(Entry(kind, bytes(plain[pos + 1:pos + 17]), time=rdi64(plain, pos + 17)))
            pos += 25
        else:
            # DOC-FINDING: an unknown entry kind inside a page of encoding 1 is not mentioned (§5 lists
            # unsupportedFeature for kinds of records, key ids, roles and page encodings only). Corrupted here.
            raise _Bad(f"page {index}: entry kind {kind}")
    if pos != len(plain):
        raise _Bad(f"page {index}: {len(plain) - pos} bytes after the entries")
    if used != len(secret_boxes):
        raise _Bad(f"page {index}: {len(secret_boxes) - used} secret boxes no put names")
    return out


@dataclass
class Keys:
    file_id: bytes
    epoch: int
    k_header: bytes
    k_record: bytes
    k_secret: bytes
    c0: bytes


def entry_bytes(entry, digest: bytes) -> bytes:
    if isinstance(entry, K.Put):
        attrs = entry.raw_attributes if entry.raw_attributes is not None else \
            K.encode_attributes(entry.item_id, entry.cls, entry.attributes)
        return b"\x01" + u32(len(attrs)) + attrs + u32(len(entry.secret)) + digest
    kind = ENTRY_TOMBSTONE if isinstance(entry, Tombstone) else ENTRY_DELETE
    return bytes([kind]) + entry.item_id + i64(entry.time)


@dataclass
class Tombstone:
    item_id: bytes
    time: int


def encode_record(entries: list, *, sequence: int, kind: int, part: int, chain: bytes, keys: Keys,
                  rng: Optional[random.Random], page_limit: int = PAGE_LIMIT) -> tuple:
    """One record (§5): secret boxes then their page, pages of ≤ page_limit plaintext bytes (always one entry).
    Deletions need `.time` (a K.Delete gets the attribute from the writer). Returns (bytes, chain)."""
    sizes = [len(entry_bytes(e, bytes(16))) for e in entries]
    pages, start, size = [], 0, 3
    for index, n in enumerate(sizes):
        if index > start and size + n > page_limit:
            pages.append(entries[start:index])
            start, size = index, 3
        size += n
    pages.append(entries[start:])
    box_count = len(pages) + sum(1 for e in entries if isinstance(e, K.Put))
    fields = []
    pending_pages = []
    for page in pages:
        plain = u8(PAGE_ENCODING) + u16(len(page))
        for e in page:
            digest = bytes(16)
            if isinstance(e, K.Put):
                nonce = random_bytes(rng, 12)
                box = nonce + AESGCM(keys.k_secret).encrypt(nonce, e.secret, secret_aad(keys.file_id, e.item_id))
                fields.append((ROLE_SECRET, box))
                digest = blake2b16(box)
            plain += entry_bytes(e, digest)
        fields.append((ROLE_PAGE, (plain, random_bytes(rng, 12))))   # nonces drawn in box order
        pending_pages.append(len(fields) - 1)
    # Pages are sealed after the layout is known (their AAD holds the box count and their index).
    frame = Frame(0, 0, kind, sequence, part, len(entries), box_count, [])
    boxes = []
    for index, (role, content) in enumerate(fields):
        if role == ROLE_PAGE:
            plain, nonce = content
            box = nonce + AESGCM(keys.k_record).encrypt(nonce, plain, page_aad(keys.file_id, keys.epoch, frame,
                                                                                index, chain))
            chain = box[-16:]
        else:
            box = content
        boxes.append(u8(0) + u8(role) + u32(len(box)) + box)
    body = 25 + sum(len(b) for b in boxes)
    head = u32(body) + u32(body ^ 0xFFFFFFFF) + u8(kind) + u64(sequence) + u32(part) + u32(len(entries)) + u32(box_count)
    check = hashlib.sha256(head + b"".join(b[:6] for b in boxes)).digest()[:4]
    record = head + check + b"".join(boxes)
    if not MIN_BODY <= body <= MAX_BODY:
        raise ValueError(f"record body of {body} bytes is outside {MIN_BODY} … {MAX_BODY}")
    return record, chain


# ---------------------------------------------------------------------------------------------
# Reading a file
# ---------------------------------------------------------------------------------------------

@dataclass
class RecordInfo:
    offset: int               # logical
    length: int
    kind: int
    sequence: int
    part: int
    chain: bytes
    entries: list             # [("put" | "delete" | "tombstone", item id)]


@dataclass
class KeychainV2:
    header: HeaderV2
    keys: Keys
    master_key: bytes
    slot_used: int
    items: dict
    head: tuple
    records: list             # applied records and transaction parts, RecordInfo
    committed_end: int        # logical end of what was applied
    written_end: int          # the newest commit's E_w (the rewrite end without one)
    newest: Optional[Seal]
    older: Optional[Seal]
    remnant: Optional[tuple]  # (logical offset, byte count) past the committed end a writer cuts
    set_aside: Optional[tuple]  # (logical offset, byte count, reason): possibly acknowledged, not applied
    undone: Optional[tuple]   # (logical offset, byte count): a transaction without its commit
    repairs: list             # human-readable notes of damage found and repaired (or only found)
    repaired_log: dict        # logical offset -> byte: record bytes that verified only as repaired
    pages_to_rewrite: list    # "A"/"B": header pages that do not hold the chosen copy
    tombstones: dict          # item id -> time of deletion (deletions and tombstones seen)
    file_length: int
    log: bytes = b""          # the logical bytes as read (repairs applied)

    @property
    def file_id(self) -> bytes:
        return self.header.file_id

    @property
    def epoch(self) -> int:
        return self.header.epoch

    @property
    def torn_tail(self):
        """For tools that expect version 1's name: the remnant, or the undone transaction."""
        return self.remnant

    def to_json(self) -> dict:
        def span(t):
            return None if t is None else {"offset": t[0], "byteCount": t[1], **({"reason": t[2]} if len(t) > 2 else {})}
        return {
            "formatVersion": 2,
            "file_id": self.header.file_id.hex(),
            "epoch": self.header.epoch,
            "header_length": self.header.length,
            "slots": [{"type": s.type, "kdf": s.kdf, "slot_id": s.slot_id.hex(), **s.params} for s in self.header.slots],
            "slot_used": self.slot_used,
            "rewrite_end": self.header.rewrite_end,
            "committed_end": self.committed_end,
            "written_end": self.written_end,
            "newest_commit": None if self.newest is None else {"slot": self.newest.slot, "counter": self.newest.counter},
            "head": {"sequence": self.head[0], "chain": self.head[1].hex()},
            "remnant": span(self.remnant),
            "undone_transaction": span(self.undone),
            "set_aside": span(self.set_aside),
            "repairs": self.repairs,
            "header_pages_to_rewrite": self.pages_to_rewrite,
            "items": [K.item_to_json(self.items[i]) for i in sorted(self.items)],
        }


def _read_source(path_or_bytes) -> bytes:
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes)
    with open(path_or_bytes, "rb") as f:
        return f.read()


def _check_credential(credential: dict):
    K._credential_slot_type(credential)


def declares_v2(first: bytes) -> bool:
    """SPEC.md §20.4 step 2: the first 16 bytes declare a version 2 header — magic, version 2, flags 0, L in
    276 … 2,656."""
    return (len(first) >= 16 and first[:8] == MAGIC and rd16(first, 8) == VERSION and rd16(first, 10) == 0
            and MIN_HEADER <= rd32(first, 12) <= MAX_HEADER)


def _copy_reads(buf: bytes, base: int):
    """§20.3: (header, None) if the copy reads — declares a version 2 header, checksum and structure hold;
    (None, structure error) if its checksum verifies but its structure does not; (None, None) otherwise."""
    if not declares_v2(buf) or not header_checksum_ok(buf):
        return None, None
    try:
        return parse_header(buf[:rd32(buf, 12)], base), None
    except (Corrupted, UnsupportedVersion) as e:
        return None, e


def read_header_copies(data: bytes, repairs: list) -> list:
    """§20.3 steps 1–3: each header page's copy: [(name, base, parsed header or None, how, structure error)]."""
    out = []
    for name, base in (("A", HEADER_A), ("B", HEADER_B)):
        page = data[base:base + PAGE]
        if len(page) < PAGE:
            # DOC-FINDING: a page cut by the file's end is not discussed; its missing bytes could be erasures.
            # Here: the bytes there are used as read, zero-filled.
            page = page + bytes(PAGE - len(page))
        header, error = _copy_reads(page, base)
        if header is not None:
            block = page[:PAGE_DATA]
            if (any(block[header.length:]) or page[PAGE_DATA:PAGE_DATA + PAGE_PARITY] != page_parity(block)
                    or any(page[-16:])):
                repairs.append(f"header page {name}: pad or parity disagree with the copy (to rewrite)")
                out.append((name, base, header, "as read, page to rewrite", None))
            else:
                out.append((name, base, header, "as read", None))
            continue
        proposed, changed, failed = repair_page(page)
        repaired, error2 = _copy_reads(proposed, base)
        if repaired is not None:
            repairs.append(f"header page {name}: repaired by its parity ({changed} codewords changed"
                           + (f", {failed} beyond repair" if failed else "") + ")")
            out.append((name, base, repaired, "repaired", None))
        else:
            error = error or error2
            repairs.append(f"header page {name}: unusable"
                           + (f" (checksum verifies but the structure does not: {error})" if error else
                              " (no version 2 header, or its checksum fails and parity does not repair it)"))
            out.append((name, base, None, "unusable", error))
    return out


def tell_version(data: bytes, repairs: list) -> list:
    """SPEC.md §20.4: decides from the file alone whether it is version 2; returns the header copies (§20.3) if
    so. Otherwise raises what version 1's reader answers: notAKeychain for another magic (or fewer than 16
    bytes), unsupportedVersion(v) for another version — a header that says version 2 with flags set in both
    pages included. This module reads version 2 only: a version 1 file is unsupportedVersion(1)."""
    if len(data) < 16:
        raise NotAKeychain()
    if declares_v2(data[:16]):                                                # step 2
        return read_header_copies(data, repairs)
    if data[:8] == MAGIC and rd16(data, 8) == 1:                              # step 3: version 1's reader
        raise UnsupportedVersion(1)
    if len(data) >= HEADER_B + 16 and declares_v2(data[HEADER_B:HEADER_B + 16]):   # step 4
        return read_header_copies(data, repairs)
    notes: list = []
    copies = read_header_copies(data, notes)                                  # step 5: parity of A or B
    if any(header is not None for _, _, header, _, _ in copies):
        repairs.extend(notes)
        return copies
    if data[:8] != MAGIC:                                                     # step 6: version 1's answers
        raise NotAKeychain()
    raise UnsupportedVersion(rd16(data, 8))


def open_keychain(path_or_bytes, credential: dict, *, decrypt_secrets: bool = True) -> KeychainV2:
    data = _read_source(path_or_bytes)
    _check_credential(credential)
    repairs: list = []
    copies = tell_version(data, repairs)
    parsed = [(name, h) for name, _, h, _, _ in copies if h is not None]
    if not parsed:
        # §20.3: no copy reads: corrupted(0), or the first structure error of a copy whose checksum verified.
        errors = [e for _, _, _, _, e in copies if e is not None]
        if errors:
            raise errors[0]
        raise Corrupted(0, "no header copy reads")
    # Try every copy's slots with the credential; check every copy's MAC under every master key found.
    cache: dict = {}
    opened = {}               # copy name -> (slot index, master key)
    unwrap_failed = False
    masters = []
    for name, h in parsed:
        for index, slot in enumerate(h.slots):
            mk, failed = open_slot(slot, h.file_id, credential, cache)
            unwrap_failed |= failed
            if mk is not None:
                opened.setdefault(name, (index, mk))
                if mk not in masters:
                    masters.append(mk)
    if not masters:
        if unwrap_failed:
            raise Corrupted(HEADER_FIXED, "a slot's commitment matches the credential but its key does not unwrap")
        raise WrongCredentials()
    verified = []             # (name, header, master key)
    for name, h in parsed:
        for mk in masters:
            k_header = epoch_keys(mk, h)[0]
            if _hmac.compare_digest(K.hmac_sha256(k_header, h.raw[:h.length - 48]), h.mac):
                verified.append((name, h, mk))
                break
        else:
            repairs.append(f"header page {name}: the MAC does not verify under the master key")
    if not verified:
        raise Corrupted(parsed[0][1].length - 48, "header MAC")
    # Highest epoch; page A's on a tie.
    verified.sort(key=lambda t: (-t[1].epoch, t[0]))
    chosen_name, header, mk = verified[0]
    if chosen_name not in opened:
        raise Corrupted(HEADER_FIXED, f"header copies disagree: the chosen copy {chosen_name} has no slot for "
                                      f"this credential, the other does")
    slot_used = opened[chosen_name][0]
    if opened[chosen_name][1] != mk:
        raise Corrupted(HEADER_FIXED, "the chosen copy's slot gives another master key")
    pages_to_rewrite = []
    for name, base, hb, how, _ in copies:
        if hb is None or hb.raw != header.raw or how != "as read":
            pages_to_rewrite.append(name)
    if len(verified) == 2 and verified[0][1].raw != verified[1][1].raw:
        repairs.append(f"header copies differ: page {chosen_name}'s (epoch {header.epoch}) chosen")
    keys = Keys(header.file_id, header.epoch, *epoch_keys(mk, header))
    if header.rewrite_end == 0 and header.rewrite_chain != keys.c0:
        raise Corrupted(88, "rewrite head chain value is not C0 with a rewrite end of 0")
    kc = _replay(data, header, keys, repairs, decrypt_secrets)
    kc.master_key, kc.slot_used, kc.pages_to_rewrite = mk, slot_used, pages_to_rewrite
    return kc


class _Log:
    """The logical bytes of the log as read, with the chunk map and parity access (§1, §2)."""

    def __init__(self, data: bytes, layout: Layout = V2_LAYOUT):
        self.data = data
        self.layout = layout
        self.length = layout.logical_length(len(data))
        out = bytearray()
        chunk = 0
        while chunk * CHUNK < self.length:
            start = layout.prefix + chunk * STRIDE
            out += data[start:start + min(CHUNK, self.length - chunk * CHUNK)]
            chunk += 1
        self.bytes = out

    def complete_parity(self, chunk: int) -> Optional[bytes]:
        at = self.layout.parity_offset(chunk)
        if at + CHUNK_PARITY > len(self.data):
            return None
        return self.data[at:at + CHUNK_PARITY]


def _replay(data: bytes, header: HeaderV2, keys: Keys, repairs: list, decrypt: bool, *,
            layout: Layout = V2_LAYOUT, scan_class: Optional[type] = None) -> KeychainV2:
    """SPEC.md §25.1 steps 3–5: the commit slots, the file's length, the replay up to E_c, the fork check, and
    what a record that does not verify is. layout and scan_class (a _Scan that reads another record format) let
    version 3 (kcf_reference_v3.py), whose rules for all this are version 2's, use it as it is."""
    physical = layout.physical
    log = _Log(data, layout)
    rewrite_end = header.rewrite_end
    newest, older, not_preceding = read_commit_slots(data, header.epoch, keys.k_header, repairs, layout)
    # Where N's last write begins (§23.1): the older seal's E_w; N.E_w when the older seal does not precede N (a
    # cut: it wrote no log bytes, §23.3); R without an older seal (as §25.3 says for a forked one).
    if newest is None:
        last_write = rewrite_end
    elif older is not None:
        last_write = older.written_end
    elif not_preceding is not None:
        last_write = newest.written_end
    else:
        last_write = rewrite_end
    written = max(newest.written_end, rewrite_end) if newest else rewrite_end
    committed = max(newest.committed_end, rewrite_end) if newest else rewrite_end
    # §25.5: shorter than the acknowledged data — cut below an acknowledged commit.
    floor = max(rewrite_end, last_write) if newest else rewrite_end
    if len(data) < physical(floor):
        raise Corrupted(len(data), f"the file ({len(data)} bytes) is cut below an acknowledged commit: it must hold "
                                   f"{physical(floor)} bytes (log offset {floor})")
    parity_seals = [s for s in (newest, older) if s is not None and s.copies != "torn"]
    scan = (scan_class or _Scan)(log, keys, header, parity_seals, repairs, decrypt, end=committed,
                 last_write=(last_write, newest.written_end) if newest and last_write < newest.written_end else None)
    scan.run()
    # §25.3 the fork check, O then N: a verified commit ends at the seal's E_c with another head.
    if older is not None and scan.forked(older):
        repairs.append(f"commit slot {older.slot} (counter {older.counter}): its head is not the records' at "
                       f"{older.committed_end} (a fork); ignored")
        older, last_write = None, rewrite_end
    if newest is not None and scan.forked(newest):
        raise Corrupted(layout.slot_offsets[newest.slot], f"commit slot {newest.slot} (counter {newest.counter}): the newest "
                                                   f"seal's head is not the records' at {newest.committed_end} (a fork)")
    # §25.1: the acknowledged end A.
    if newest is not None and last_write >= newest.written_end:
        acknowledged = newest.committed_end
    else:
        acknowledged = max(rewrite_end, older.committed_end if older else 0)
    acknowledged = max(acknowledged, rewrite_end)
    set_aside = remnant = undone = None
    applied_end = committed
    if scan.stopped is not None:
        # §25.4: x, the record's offset or its transaction's first part's.
        off, why = scan.stopped
        if scan.semantic or off < acknowledged or newest is None or off >= newest.committed_end:
            raise CorruptedRecord(off, why)
        set_aside = (off, newest.committed_end - off, f"possibly acknowledged, does not verify: {why}")
        applied_end = scan.commit_boundary_at_or_below(off)
    elif newest is None and len(data) > physical(rewrite_end):
        # §25.4: no seal counts and records lie past the rewrite end: their commits cannot be read; set aside.
        set_aside = (rewrite_end, max(0, log.length - rewrite_end), "records past the rewrite end and no commit counts")
    else:
        # §25.4 rule 3: log bytes in E_c ..< N.E_w are an undone transaction; file bytes past physical(E_w) a remnant.
        if newest is not None and newest.written_end > committed:
            undone = (committed, newest.written_end - committed)
        if len(data) > physical(written):
            remnant = (written, max(0, log.length - written))
    state, records, head = scan.state_at(applied_end)
    kc = KeychainV2(header=header, keys=keys, master_key=b"", slot_used=-1, items=state.items, head=head,
                    records=records, committed_end=applied_end, written_end=written, newest=newest, older=older,
                    remnant=remnant, set_aside=set_aside, undone=undone, repairs=repairs,
                    repaired_log=scan.repaired_bytes, pages_to_rewrite=[], tombstones=scan.tombstones_at(applied_end),
                    file_length=len(data), log=bytes(scan.log))
    # SPEC.md §43.9 (merge_reference.shared_history): the logical log bytes as the file stores them (parity not
    # applied, repairs not taken: `log` above holds those), and the state the replay reached at each commit end
    # (commit end -> (state, records, head, tombstones)), so that a merge can take the state at the last commit
    # two copies share.
    kc.stored_log = bytes(log.bytes)
    kc.commit_states = scan.snapshots
    return kc


class _Scan:
    """Frames and boxes from logical offset 0 on (§5), the chain through them, the state after every commit,
    transaction layout, and repair of a record that does not verify through the parity of its chunks (§2)."""

    def __init__(self, log: _Log, keys: Keys, header: HeaderV2, seals: list, repairs: list, decrypt: bool, *,
                 end: int, last_write: Optional[tuple] = None):
        self.source = log
        self.log = bytearray(log.bytes)
        # §25.2: the replay runs while the position is below E_c (`end`); frames must end by it. §25.5: bytes below
        # it that the file does not hold read as zeros and are erasures for the seals' parity. (Zeros are added
        # for at most one largest record past the file's end: a record further out cannot be rebuilt.)
        self.end = end
        reach = min(end, len(self.log) + 8 + MAX_BODY)
        if reach > len(self.log):
            self.log += bytes(reach - len(self.log))
        self.last_write = last_write  # (start, end) of N's last write: erasures of a second try (§19.5)
        self.keys = keys
        self.header = header
        self.seals = seals
        self.repairs = repairs
        self.decrypt = decrypt
        self.repaired_bytes: dict = {}
        self.stopped = None           # (x, reason): x the first record that did not verify, or its transaction's
        self.reached = 0              # end of the last record that verified
        self.snapshots = {}           # commit end -> (state, records, head, tombstones)
        self.semantic = False         # the stop is corrupted wherever it lies: §8 broken, or E_c inside a transaction

    def head_at(self, offset: int):
        if offset == 0 and self.header.rewrite_end == 0:
            return (0, self.keys.c0)
        b = self.snapshots.get(offset)
        return None if b is None else b[2]

    def commit_boundary_at_or_below(self, offset: int) -> int:
        return max(o for o in self.snapshots if o <= offset)

    def state_at(self, offset: int):
        s = self.snapshots[offset]
        return s[0], s[1], s[2]

    def tombstones_at(self, offset: int):
        return self.snapshots[offset][3]

    def forked(self, seal: Seal) -> bool:
        """§25.3: a verified commit ends at the seal's E_c and the head there is not the seal's."""
        head = self.head_at(seal.committed_end)
        return head is not None and head != seal.head

    def run(self):
        keys = self.keys
        state = K.State()
        records: list = []
        tombstones: dict = {}
        pending_entries: list = []    # entries of transaction parts not yet committed
        pending_records: list = []
        pending_tomb: dict = {}
        pending_raw: list = []        # the transaction's entries as read (Entry), for check_transaction
        offset = 0
        expected_seq = 1 if self.header.rewrite_end == 0 else None
        chain = keys.c0
        head = (0, keys.c0)
        if self.header.rewrite_end == 0:
            self.snapshots[0] = (state.copy(), [], head, {})
        expected_part = 0
        rewrite_end = self.header.rewrite_end
        while offset < self.end:
            # x: the record's offset, or its transaction's first part's (§25.4).
            x = pending_records[0].offset if pending_records else offset
            try:
                frame, entries, new_chain = self._verify(offset, chain)
            except _Unsupported as e:
                raise UnsupportedFeature(offset, e.reason)
            except _Bad as e:
                self.stopped = (x, e.reason if x == offset else f"record at {offset}: {e.reason}")
                break
            # Sequence and transaction layout (§24.5, §24.6).
            if expected_seq is not None and frame.sequence != expected_seq:
                self.stopped = (x, f"record at {offset}: sequence {frame.sequence}, expected {expected_seq}")
                break
            if frame.part != expected_part:
                self.stopped = (x, f"record at {offset}: part {frame.part}, expected {expected_part}")
                break
            if offset < rewrite_end < frame.end or (frame.end == rewrite_end and frame.kind == KIND_PART):
                self.stopped = (x, "no commit ends at the rewrite end")      # §25.2 step 5: damage below R
                break
            expected_seq = frame.sequence + 1
            info = RecordInfo(offset, frame.length, frame.kind, frame.sequence, frame.part, new_chain,
                              [({1: "put", 2: "delete", 3: "tombstone"}[e.kind], e.item_id) for e in entries])
            chain = new_chain
            offset = frame.end
            self.reached = offset
            pending_records.append(info)
            pending_raw.extend(entries)
            for e in entries:
                if e.kind == ENTRY_PUT:
                    pending_entries.append(("put", e.item))
                elif e.kind == ENTRY_DELETE:
                    pending_entries.append(("delete", e.item_id))
                    pending_tomb[e.item_id] = e.time
                else:
                    # DOC-FINDING: §5 does not say what a tombstone does to the state on replay (whether it may
                    # name a live item, or must not). Here: it changes nothing, it only keeps the id and time.
                    pending_tomb[e.item_id] = e.time
            if frame.kind == KIND_PART:
                expected_part += 1
                continue
            expected_part = 0
            try:
                plan = state.plan(pending_entries)
                self.check_transaction(state, pending_raw, offset)
            except K._Semantic as e:
                # §25.2 step 4: a transaction that breaks §8 below E_c: corrupted at its first part.
                self.stopped = (pending_records[0].offset, e.reason)
                self.semantic = True
                self.reached = pending_records[0].offset
                break
            state.commit(plan)
            # A put does not clear a tombstone (§24.4): a merge keeps the deletion time of an item it brought back.
            tombstones.update(pending_tomb)
            records.extend(pending_records)
            pending_entries, pending_records, pending_tomb, pending_raw = [], [], {}, []
            head = (frame.sequence, chain)
            self.snapshots[offset] = (state.copy(), list(records), head, dict(tombstones))
            if offset == rewrite_end and head != (self.header.rewrite_sequence, self.header.rewrite_chain):
                raise CorruptedRecord(0, "the records' head at the rewrite end is not the header's rewrite head")
        if self.stopped is None and pending_records:
            # §25.2: the replay reached E_c inside a transaction.
            self.stopped = (pending_records[0].offset, "E_c falls inside a transaction")
            self.semantic = True

    def check_transaction(self, state: K.State, entries: list, end: int):
        """A transaction's entries (Entry, in order) against the state before it, checked beyond §24.4 by a
        record format that needs it: raises K._Semantic (corrupted wherever it lies). `end` is where its commit
        ends. Version 2 checks nothing more (version 3 overrides this for access groups)."""

    def parse_frame(self, buf, offset: int, end: int) -> Frame:
        """The record format's frame at offset (version 3 overrides this and open_record)."""
        return parse_frame(buf, offset, end)

    def open_record(self, buf, frame: Frame, chain: bytes) -> tuple:
        """(entries, chain after the record), or _Bad / _Unsupported."""
        return open_record(buf, frame, self.keys, chain, decrypt_secrets=self.decrypt)

    def _verify(self, offset: int, chain: bytes):
        """(frame, entries, chain) of the record at offset, repairing it through parity when it does not
        verify as read. Raises _Bad when it does not verify either way."""
        try:
            frame = self.parse_frame(self.log, offset, min(self.end, len(self.log)))
            entries, new_chain = self.open_record(self.log, frame, chain)
            return frame, entries, new_chain
        except _Bad as first:
            repaired = self._repair(offset, chain)
            if repaired is None:
                raise first
            return repaired

    def _parities(self, chunk: int) -> list:
        """Candidate (parity, data end within the chunk) for a chunk: its own parity when complete, else the
        commit slots' partial-chunk parity, newest first, with data past the slot's written end as zeros."""
        out = []
        own = self.source.complete_parity(chunk)
        if own is not None and (chunk + 1) * CHUNK <= self.source.length:
            out.append((own, CHUNK))
        for s in self.seals:
            if s.written_end // CHUNK == chunk:
                out.append((s.parity, s.written_end - chunk * CHUNK))
        return out

    def _reach(self, buf, offset: int, fallback: int) -> int:
        """The last chunk the frame at offset claims to reach, if its length holds together."""
        try:
            body = rd32(buf, offset)
            if rd32(buf, offset + 4) == body ^ 0xFFFFFFFF and MIN_BODY <= body <= MAX_BODY:
                return (offset + 8 + body - 1) // CHUNK
        except struct.error:
            pass
        return fallback

    def _repair(self, offset: int, chain: bytes):
        """§2: decodes the chunks the record at offset may lie in (its own parity for a complete chunk, the
        commit slots' for the last one), and accepts the proposal only if the record then verifies; only the
        record's own changed bytes are taken."""
        limit = max(0, (max(len(self.log), max((s.written_end for s in self.seals), default=0)) - 1) // CHUNK)
        first_chunk = offset // CHUNK
        last_chunk = min(limit, self._reach(self.log, offset, first_chunk))
        tried = set()
        while True:
            proposal = bytearray(self.log)
            for chunk in range(first_chunk, last_chunk + 1):
                start = chunk * CHUNK
                for parity, data_end in self._parities(chunk):
                    data = bytes(self.log[start:start + data_end])
                    data = data + bytes(data_end - len(data))
                    # §25.5: bytes the slot says were written but the file does not hold: erasures.
                    erasures = list(range(max(0, self.source.length - start), data_end))
                    # §19.5: where codewords stay unrepaired, the last write's bytes as erasures too.
                    suspect = ()
                    if self.last_write is not None:
                        lo = max(self.last_write[0], start) - start
                        hi = min(self.last_write[1], start + data_end) - start
                        suspect = range(lo, hi) if lo < hi else ()
                    fixed, changed, failed = repair_chunk(data, parity, erasures, suspect)
                    if changed:
                        if len(proposal) < start + len(fixed):
                            proposal += bytes(start + len(fixed) - len(proposal))
                        proposal[start:start + len(fixed)] = fixed
                        break
            tried.add(last_chunk)
            try:
                frame = self.parse_frame(proposal, offset, min(self.end, len(proposal)))
                entries, new_chain = self.open_record(proposal, frame, chain)
            except (_Bad, _Unsupported):
                reach = min(limit, self._reach(proposal, offset, last_chunk))
                if reach > last_chunk and reach not in tried:
                    last_chunk = reach
                    continue
                return None
            # Accept only the bytes of this record that changed (§2: parity is never trusted).
            count = 0
            if len(self.log) < frame.end:
                self.log += bytes(frame.end - len(self.log))
            for i in range(frame.offset, frame.end):
                if self.log[i] != proposal[i]:
                    self.repaired_bytes[i] = proposal[i]
                    self.log[i] = proposal[i]
                    count += 1
            self.repairs.append(f"record at logical {offset} (sequence {frame.sequence}): {count} bytes "
                                f"repaired by parity, then verified")
            return frame, entries, new_chain


# ---------------------------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------------------------

class Writer:
    """Creates and appends to version 2 files (§1–§5), keeping an in-memory mirror (`buf`) of the bytes.

    Appending follows §3: the record at physical(E_w) with the parity of every chunk it completes, then the
    other commit slot with the new seal (counter c + 1) and the partial chunk's parity recomputed from the
    verified data. path None: memory only. rng: every random value, in a fixed order, when given.
    """

    def __init__(self, *, path, data: bytes, kc: KeychainV2, rng, clock, part_limit: int = MAX_BODY,
                 layout: Layout = V2_LAYOUT):
        if kc.set_aside is not None:
            raise SetAsideRefusal(f"records set aside as possibly acknowledged at logical {kc.set_aside[0]}: "
                                  f"appending is refused")
        self.path = path
        self.layout = layout
        physical = layout.physical
        self.rng = rng
        self.clock = clock or K._now_ms
        self.kc = kc
        self.keys = kc.keys
        self.header = kc.header
        self.part_limit = part_limit
        self.state = K.State()
        for item in kc.items.values():
            self.state.commit({item.id: item})
        self.head = kc.head
        self.written_end = self.committed_end = kc.committed_end
        self.counter = kc.newest.counter if kc.newest is not None else None
        # The verified logical bytes up to the committed end (repairs included); anything after is cut.
        self.log = bytearray(kc.log[:self.committed_end])
        self.buf = bytearray(data[:physical(self.committed_end)] if self.committed_end else data[:layout.prefix])
        if len(self.buf) < physical(self.committed_end):      # bytes rebuilt from erasures (§3 rule 4)
            self.buf += bytes(physical(self.committed_end) - len(self.buf))
        # Transaction parts sealed past the committed end (an undone transaction) are cut as SPEC.md §26.4 says:
        # one seal in the other slot (counter c + 1, E_w' = E_c, the same E_c and head, the parity of E_c's chunk
        # from its verified bytes), then the file truncated to physical(E_c). The older slot's E_w then lies past
        # the new written end: it no longer precedes the newest seal and is ignored (§23.3).
        self._pending_cut_seals = kc.newest is not None and kc.newest.written_end > kc.committed_end
        # Write back bytes that verified only as repaired (§2), and header pages that do not hold the copy.
        for off, b in kc.repaired_log.items():
            if off < self.committed_end:
                self.buf[physical(off)] = b
        for chunk in range(self.committed_end // CHUNK):
            at = layout.parity_offset(chunk)
            self.buf[at:at + CHUNK_PARITY] = chunk_parity(bytes(self.log[chunk * CHUNK:(chunk + 1) * CHUNK]))
        self._rewrite_header_pages(kc.pages_to_rewrite)

    def _rewrite_header_pages(self, names: list):
        """Header pages ("A", "B") that do not hold the chosen copy, written again from it."""
        page = build_page(self.header.raw)
        for name in names:
            base = HEADER_A if name == "A" else HEADER_B
            self.buf[base:base + PAGE] = page

    # -- creation / opening -------------------------------------------------------------------

    @classmethod
    def create(cls, path, credentials, iterations: int = 600_000, rng: Optional[random.Random] = None, *,
               epoch: int = 1, clock: Optional[Callable] = None, kdfs: Optional[list] = None,
               initial_commit: bool = True, overwrite: bool = False, part_limit: int = MAX_BODY) -> "Writer":
        """A new file: one committed slot per credential, both header pages, and (initial_commit) a first seal
        in slot 0 with counter 0 and E_w = E_c = 0.

        DOC-FINDING: §3 does not say what a new file's commit slots hold (blank, or an initial seal — and with
        which counter). §8.1 mentions files where "no commit was ever written" (both slots blank); Swift writes
        counter 1 into slot 1 and leaves slot 0 zero.

        Random draws, in order: file id, epoch salt, master key, then per slot: slot id, salt, nonce; then
        item ids and nonces as used.
        """
        if isinstance(credentials, dict):
            credentials = [credentials]
        file_id, epoch_salt, mk = random_bytes(rng, 16), random_bytes(rng, 32), random_bytes(rng, 32)
        slots = []
        for n, c in enumerate(credentials):
            kdf = (kdfs[n] if kdfs else None) or ({"id": 1, "iterations": iterations} if "password" in c else {"id": 2})
            slots.append(build_committed_slot(1 if "password" in c else 2, kdf, c, mk, file_id, rng))
        probe = HeaderV2(b"", 0, file_id, epoch, epoch_salt, 0, 0, b"", 90, [], b"", b"")
        k_header, k_record, k_secret, c0 = epoch_keys(mk, probe)
        header = build_header(file_id, epoch, epoch_salt, 0, (0, c0), 90, slots, k_header)
        page = build_page(header)
        buf = bytearray(PREFIX)
        buf[HEADER_A:HEADER_A + PAGE] = page
        buf[HEADER_B:HEADER_B + PAGE] = page
        if initial_commit:
            # As Swift writes a new file: counter 1, so in slot 1; slot 0 stays blank.
            seal = build_seal(epoch, 1, 0, 0, (0, c0), k_header)
            buf[SLOT_OFFSETS[1]:SLOT_OFFSETS[1] + SLOT_BYTES] = seal + bytes(CHUNK_PARITY) + seal
        if path is not None:
            K._atomic_create(path, bytes(buf), overwrite)
        kc = open_keychain(bytes(buf), credentials[0])
        return cls(path=path, data=bytes(buf), kc=kc, rng=rng, clock=clock, part_limit=part_limit)

    @classmethod
    def open(cls, path, credential: dict, rng: Optional[random.Random] = None, *, clock=None,
             part_limit: int = MAX_BODY) -> "Writer":
        data = _read_source(path)
        kc = open_keychain(data, credential)
        return cls(path=path, data=data, kc=kc, rng=rng, clock=clock, part_limit=part_limit)

    @property
    def data(self) -> bytes:
        return bytes(self.buf)

    # -- items --------------------------------------------------------------------------------

    def new_item_id(self) -> bytes:
        return random_bytes(self.rng, 16)

    def make_put(self, cls, attributes: dict, secret: bytes = b"", *, item_id=None, base=None) -> K.Put:
        if isinstance(cls, str):
            cls = K.CLASS_BY_NAME[cls]
        now = self.clock()
        attrs = {}
        if base is not None:
            attrs.update(base.attributes)
        else:
            for name in K.PRIMARY_KEY[cls]:
                attrs[name] = K.TYPE_DEFAULTS[K.ATTRIBUTES_BY_NAME[name].type]
            attrs.update(K.WRITER_DEFAULTS)
            attrs["creationDate"] = now
        attrs.update(attributes)
        attrs["modificationDate"] = now
        if base is not None:
            attrs["creationDate"] = base.attributes.get("creationDate", now)
        iid = item_id if item_id is not None else (base.id if base is not None else self.new_item_id())
        return K.Put(iid, cls, attrs, bytes(secret))

    def add(self, cls, attributes: dict, secret: bytes = b"", *, item_id=None) -> bytes:
        p = self.make_put(cls, attributes, secret, item_id=item_id)
        self.append([p])
        return p.item_id

    def update(self, item_id: bytes, attributes: Optional[dict] = None, secret: Optional[bytes] = None):
        base = self.state.items.get(item_id)
        if base is None:
            raise K.ItemNotFound(item_id.hex())
        self.append([self.make_put(base.cls, attributes or {}, base.secret if secret is None else secret, base=base)])

    def delete(self, item_id: bytes):
        self.append([K.Delete(item_id)])

    # -- records ------------------------------------------------------------------------------

    def _split(self, entries: list) -> list:
        """Cuts a batch into groups each of which encodes to ≤ part_limit body bytes (at least one entry)."""
        groups, current, size = [], [], 25
        for e in entries:
            n = 6 + 28 + len(entry_bytes(e, bytes(16))) + 3 + (6 + 28 + len(e.secret) if isinstance(e, K.Put) else 0)
            if current and size + n > self.part_limit:
                groups.append(current)
                current, size = [], 25
            current.append(e)
            size += n
        groups.append(current)
        return groups

    def append(self, entries: list, *, check: bool = True, cut_after: Optional[int] = None,
               seal: bool = True) -> list:
        """Appends a batch: one commit (kind 1, part 0), or parts 0 … n − 1 (kind 3) and a commit of part n when
        it does not fit in one record of part_limit body bytes. Each record gets its own commit slot (§3 step 3:
        transaction parts are sealed, E_c moving only with the commit).

        cut_after: tests — stop after writing that many records (their slots included), leaving a transaction
        without its commit. seal False: tests — write the records but no commit slot (a crash between steps 1
        and 2 of §3: a remnant). Returns the records' logical offsets.
        """
        now = self.clock()
        for e in entries:
            if isinstance(e, K.Delete) and not hasattr(e, "time"):
                e.time = now
        if check:
            plan = self.state.plan([("put", K.Item(e.item_id, e.cls, e.attributes, e.secret)) if isinstance(e, K.Put)
                                    else ("delete", e.item_id) for e in entries if not isinstance(e, Tombstone)])
        groups = self._split(entries)
        offsets = []
        chain = self.head[1]
        sequence = self.head[0]
        for part, group in enumerate(groups):
            kind = KIND_COMMIT if part == len(groups) - 1 else KIND_PART
            sequence += 1
            record, chain = self._encode_record(group, sequence=sequence, kind=kind, part=part, chain=chain)
            offsets.append(self.written_end)
            self._write_record(record, commit=kind == KIND_COMMIT, head=(sequence, chain), seal=seal)
            if cut_after is not None and len(offsets) >= cut_after and kind != KIND_COMMIT:
                self._flush()
                return offsets
        if check and seal:
            self.state.commit(plan)
        if seal:
            self.head = (sequence, chain)
        self._flush()
        return offsets

    def _encode_record(self, entries: list, *, sequence: int, kind: int, part: int, chain: bytes) -> tuple:
        """(record bytes, its chain value) in the file's record format (version 3 overrides this and _split)."""
        return encode_record(entries, sequence=sequence, kind=kind, part=part, chain=chain, keys=self.keys,
                             rng=self.rng)

    def _write_cut_seals(self):
        self._pending_cut_seals = False
        end = self.committed_end
        last = end // CHUNK
        partial = chunk_parity(bytes(self.log[last * CHUNK:end]))
        self.counter += 1
        seal = build_seal(self.keys.epoch, self.counter, end, end, self.head, self.keys.k_header)
        at = self.layout.slot_offsets[self.counter % 2]
        self.buf[at:at + SLOT_BYTES] = seal + partial + seal

    def _write_record(self, record: bytes, *, commit: bool, head: tuple, seal: bool = True):
        if self._pending_cut_seals:
            self._write_cut_seals()
        start = self.written_end
        self.log += record
        end = start + len(record)
        # Step 1: the record's bytes at physical(E_w), and the parity of every chunk it completes.
        physical = self.layout.physical
        pos = start
        while pos < end:
            chunk_end = (pos // CHUNK + 1) * CHUNK
            piece_end = min(end, chunk_end)
            at = physical(pos)
            need = at + (piece_end - pos)
            if len(self.buf) < need:
                self.buf += bytes(need - len(self.buf))
            self.buf[at:need] = self.log[pos:piece_end]
            if piece_end == chunk_end:
                chunk = pos // CHUNK
                p_at = self.layout.parity_offset(chunk)
                if len(self.buf) < p_at + CHUNK_PARITY:
                    self.buf += bytes(p_at + CHUNK_PARITY - len(self.buf))
                self.buf[p_at:p_at + CHUNK_PARITY] = chunk_parity(bytes(self.log[chunk * CHUNK:chunk_end]))
            pos = piece_end
        self.written_end = end
        del self.buf[physical(end) if end % CHUNK else self.layout.prefix + (end // CHUNK) * STRIDE:]
        if not seal:
            return
        # Step 2: the other slot, with the new seal and the partial chunk's parity.
        if commit:
            self.committed_end = end
            self.committed_head = head
        counter = 0 if self.counter is None else self.counter + 1
        self.counter = counter
        last = end // CHUNK
        partial = chunk_parity(bytes(self.log[last * CHUNK:end]))
        committed_head = head if commit else self.head
        seal = build_seal(self.keys.epoch, counter, end, self.committed_end, committed_head, self.keys.k_header)
        at = self.layout.slot_offsets[counter % 2]
        self.buf[at:at + SLOT_BYTES] = seal + partial + seal

    def _flush(self):
        if self.path is None:
            return
        with open(self.path, "r+b") as f:
            f.write(self.buf)
            f.truncate(len(self.buf))
            f.flush()
            os.fsync(f.fileno())

    def transaction(self) -> "Batch":
        return Batch(self)


class Batch(K.Batch):
    """with writer.transaction() as t: t.add(...); t.update(...); t.delete(...) -> one commit, or parts."""

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None and self.entries:
            self.w.append(self.entries)
        return False


# ---------------------------------------------------------------------------------------------
# Tracing (SPEC.md §29): the worked example's derivation, step by step
# ---------------------------------------------------------------------------------------------

def _fields(tr, base: int, rows):
    """rows: (relative offset, size, name, bytes, value) -> a table with absolute offsets."""
    tr.table(("offset", "size", "field", "bytes (hex)", "value"),
             [(base + off, size, name, K._c(b) if b else "—", value) for off, size, name, b, value in rows])


def _trace_hkdf(name: str, ikm: bytes, salt: bytes, info: bytes) -> list:
    prk, t1 = K.hkdf_steps(ikm, salt, info)
    return [(f"{name}: info ({len(info)} bytes)", K._c(info)),
            (f"{name}: PRK = HMAC-SHA256(salt{' (32 zero bytes, RFC 5869 for an empty salt)' if not salt else ''}, IKM)",
             K._c(prk)),
            (f"{name} = T(1) = HMAC-SHA256(PRK, info ‖ 01)", K._c(t1))]


def trace(path_or_bytes, credential: dict) -> str:
    """A Markdown derivation of a version 2 file with one committed PBKDF2 or raw-key slot (SPEC.md §29): the
    header page, the slot (KEK, commitment, wrap key, master key), the epoch keys and C0, every record (frame,
    boxes with their associated data, page plaintext, chain values), both commit slots' seals, and the parity
    of the last chunk. The file is first opened by the reader above, so every value shown also verified there."""
    data = _read_source(path_or_bytes)
    kc = open_keychain(data, credential)
    h, keys, mk = kc.header, kc.keys, kc.master_key
    tr = K.Tracer()
    cred_text = (f"the password {json.dumps(credential['password'], ensure_ascii=False)}" if "password" in credential
                 else "the raw key given")
    tr.h(2, "Worked example of format version 2: step-by-step derivation")
    tr.p(f"Opened with {cred_text} by `Scripts/reference/kcf_reference_v2.py` (the independent implementation). "
         f"All values are hex; integers are big-endian. File offsets are physical (from the file's start); record "
         f"offsets are logical (from the log's start), physical(L) = 32768 + (L div 57088) × 65280 + (L mod 57088).")
    tr.p(f"File size {len(data)} bytes = prefix 32768 + {len(data) - PREFIX} bytes of log (logical length "
         f"{logical_length(len(data))}, {'one partial chunk' if logical_length(len(data)) < CHUNK else 'more than one chunk'}).")
    tr.table(("physical range", "content"),
             [("0 ..< 4096", "header page A"), ("4096 ..< 12544", "commit slot 0 (8448 bytes; then zeros to 16384)"),
              ("16384 ..< 24832", "commit slot 1 (8448 bytes; then zeros to 28672)"), ("28672 ..< 32768", "header page B"),
              (f"32768 ..< {len(data)}", f"chunk 0 data: log bytes 0 ..< {logical_length(len(data))}")])

    # -- header
    raw = h.raw
    tr.h(3, "Header page A (offset 0)")
    tr.p(f"Header length L = {h.length} = 112 fixed + {h.length - 160} of slots + 48 of trailer. "
         f"Page B (offset 28672) is byte for byte the same page: "
         f"{'yes' if data[HEADER_B:HEADER_B + PAGE] == data[:PAGE] else '**no**'}.")
    _fields(tr, 0, [(0, 8, "magic", raw[0:8], "`\\x89KCF\\r\\n\\x1a\\n`"),
                    (8, 2, "format version", raw[8:10], rd16(raw, 8)),
                    (10, 2, "flags", raw[10:12], rd16(raw, 10)),
                    (12, 4, "header length L", raw[12:16], h.length),
                    (16, 16, "file id", raw[16:32], ""),
                    (32, 8, "epoch", raw[32:40], h.epoch),
                    (40, 32, "epoch salt", raw[40:72], ""),
                    (72, 8, "rewrite end", raw[72:80], h.rewrite_end),
                    (80, 8, "rewrite head sequence", raw[80:88], h.rewrite_sequence),
                    (88, 16, "rewrite head chain value", raw[88:104], "C0 (below)" if h.rewrite_chain == keys.c0 else ""),
                    (104, 4, "tombstone horizon (days)", raw[104:108], h.horizon_days),
                    (108, 1, "slot count", raw[108:109], len(h.slots)),
                    (109, 3, "reserved", raw[109:112], ""),
                    (112, h.length - 160, "slots", b"", "(below: one slot after another)"),
                    (h.length - 48, 32, "MAC", h.mac, ""),
                    (h.length - 16, 16, "checksum", h.checksum, "")])
    tr.p(f"Checksum = SHA-256(header[0 ..< {h.length - 16}])[0 ..< 16]:")
    full = hashlib.sha256(raw[:h.length - 16]).digest()
    tr.kv([("SHA-256(header[0 ..< L − 16])", K._c(full)), ("first 16 bytes", K._c(full[:16])),
           ("stored checksum", K._c(h.checksum)), ("match", "yes" if full[:16] == h.checksum else "**NO**")])
    page = data[:PAGE]
    tr.p(f"The page: header bytes 0 ..< {h.length}, zeros to 3568 "
         f"({'all zero' if not any(page[h.length:PAGE_DATA]) else '**not zero**'}), 512 parity bytes at 3568, "
         f"16 zero bytes at 4080 ({'all zero' if not any(page[4080:]) else '**not zero**'}). Codeword j (0 … 15) is "
         f"bytes j, 16 + j, …, 16·222 + j of the 3568 (symbol i at degree 254 − i); its parity symbol i is byte "
         f"3568 + 16·i + j.")
    cw0 = bytes(page[0:PAGE_DATA:16])
    tr.kv([("codeword 0's 223 data symbols (page bytes 0, 16, 32, …)", K._c(cw0)),
           ("codeword 0's parity RS(255, 223) (page bytes 3568, 3584, …)", K._c(page[PAGE_DATA:PAGE_DATA + PAGE_PARITY:16])),
           ("parity of those symbols computed here", K._c(RS.parity_of_symbols(cw0))),
           ("the whole 512 parity bytes equal page_parity(3568 bytes)",
            "yes" if page[PAGE_DATA:PAGE_DATA + PAGE_PARITY] == page_parity(page[:PAGE_DATA]) else "**NO**")])

    # -- slot
    slot = h.slots[kc.slot_used]
    so = slot.offset
    s = slot.raw
    tr.h(3, f"Committed key slot {kc.slot_used} (header offset {so})")
    kdf_value = {1: "1 (PBKDF2-HMAC-SHA256)", 2: "2 (HKDF-SHA256 of a raw key)", 3: "3 (Argon2id)"}.get(slot.kdf, slot.kdf)
    _fields(tr, so, [(0, 1, "type", s[0:1], {1: "1 (password)", 2: "2 (raw key)"}.get(s[0], s[0])),
                     (1, 1, "KDF id", s[1:2], kdf_value),
                     (2, 2, "slot length", s[2:4], rd16(s, 2)),
                     (4, 16, "slot id", s[4:20], ""),
                     (20, 12, "KDF parameters", s[20:32], ", ".join(f"{k} {v}" for k, v in slot.params.items()) or "none"),
                     (32, 32, "salt", s[32:64], ""),
                     (64, 32, "commitment", s[64:96], ""),
                     (96, 12, "nonce", s[96:108], ""),
                     (108, 32, "wrapped master key", s[108:140], ""),
                     (140, 16, "tag", s[140:156], "")])
    if slot.kdf == 1:
        pw = normalize_password(credential["password"])
        kek = K.pbkdf2_sha256(pw, slot.salt, slot.params["iterations"], 32)
        tr.p("KEK = PBKDF2-HMAC-SHA256(P = UTF-8(NFC(password)), salt, iterations, 32): one block, "
             "T1 = U1 XOR U2 XOR … XOR U_c with U1 = HMAC-SHA256(P, salt ‖ 00000001), U_j = HMAC-SHA256(P, U_{j−1}).")
        u1 = K.hmac_sha256(pw, slot.salt + u32(1))
        tr.kv([(f"P ({len(pw)} bytes)", K._c(pw)), ("U1", K._c(u1)), ("U2", K._c(K.hmac_sha256(pw, u1))),
               ("KEK = T1", K._c(kek))])
    else:
        kek = kek_of(slot, h.file_id, credential)
        tr.kv([("KEK", K._c(kek))])
    commitment = K.hkdf_sha256(kek, b"", LABEL_COMMITMENT + h.file_id + slot.slot_id, 32)
    wrap = K.hkdf_sha256(kek, b"", LABEL_WRAP + h.file_id + slot.slot_id, 32)
    rows = _trace_hkdf("commitment", kek, b"", LABEL_COMMITMENT + h.file_id + slot.slot_id)
    rows.append(("stored commitment (slot bytes 64 ..< 96); equal in constant time",
                 K._c(slot.commitment) + (" — yes" if commitment == slot.commitment else " — **NO**")))
    rows += _trace_hkdf("K_wrap", kek, b"", LABEL_WRAP + h.file_id + slot.slot_id)
    tr.p('Commitment = HKDF-SHA256(KEK, empty salt, "KCF2 slot commitment" ‖ file id ‖ slot id); '
         'K_wrap = HKDF-SHA256(KEK, empty salt, "KCF2 slot wrap" ‖ file id ‖ slot id). The reader compares the '
         'commitment before it unwraps anything.')
    tr.kv(rows)
    aad = LABEL_SLOT_AAD + h.file_id + s[:96]
    tr.p(f'Unwrap: AES-256-GCM under K_wrap, nonce = slot bytes 96 ..< 108, ciphertext ‖ tag = slot bytes 108 ..< 156, '
         f'associated data "KCF2 key slot" ‖ file id ‖ slot bytes 0 ..< 96 ({len(aad)} bytes):')
    tr.code(K.hexdump_lines(aad))
    box = slot.nonce + slot.sealed
    tr.kv(K.gcm_details(wrap, box, aad) + [("master key (plaintext)", K._c(mk))])

    # -- epoch keys
    tr.h(3, "Keys of the epoch and C0")
    info = h.file_id + u64(h.epoch)
    rows = _trace_hkdf("K_header", mk, h.epoch_salt, LABEL_HEADER + info)
    rows += _trace_hkdf("K_record", mk, h.epoch_salt, LABEL_RECORDS + info)
    rows += _trace_hkdf("secret key (key id 0)", mk, b"", LABEL_SECRETS + h.file_id)
    c0_full = K.hmac_sha256(keys.k_header, LABEL_C0 + info + h.epoch_salt)
    rows += [('C0 input "KCF2 C0" ‖ file id ‖ u64 epoch ‖ epoch salt', K._c(LABEL_C0 + info + h.epoch_salt)),
             ("HMAC-SHA256(K_header, input)", K._c(c0_full)), ("C0 = first 16 bytes", K._c(keys.c0))]
    tr.p('K_header and K_record = HKDF-SHA256(master key, salt = epoch salt, info = label ‖ file id ‖ u64 epoch); '
         'the secret key = HKDF-SHA256(master key, empty salt, "KCF2 secrets" ‖ file id); '
         'C0 = HMAC-SHA256(K_header, "KCF2 C0" ‖ file id ‖ u64 epoch ‖ epoch salt)[0 ..< 16].')
    tr.kv(rows)
    mac = K.hmac_sha256(keys.k_header, raw[:h.length - 48])
    tr.kv([(f"header MAC = HMAC-SHA256(K_header, header[0 ..< {h.length - 48}])", K._c(mac)),
           ("stored MAC", K._c(h.mac)), ("match", "yes" if mac == h.mac else "**NO**"),
           ("rewrite end 0, so the rewrite head must be (0, C0)",
            "yes" if (h.rewrite_sequence, h.rewrite_chain) == (0, keys.c0) else "—")])

    # -- records
    log = kc.log
    chain = keys.c0 if h.rewrite_end == 0 else None
    for rec in kc.records:
        off = rec.offset
        frame = parse_frame(log, off, len(log))
        body = rd32(log, off)
        tr.h(3, f"Record at log offset {off} (file offset {physical(off)}): sequence {rec.sequence}, "
                f"{'commit' if rec.kind == KIND_COMMIT else 'transaction part'}")
        b = log[off:off + 33]
        _fields(tr, off, [(0, 4, "body length L", b[0:4], body), (4, 4, "L xor FFFFFFFF", b[4:8], ""),
                          (8, 1, "kind", b[8:9], {1: "1 (commit)", 3: "3 (transaction part)"}[b[8]]),
                          (9, 8, "sequence", b[9:17], frame.sequence), (17, 4, "part", b[17:21], frame.part),
                          (21, 4, "entry count", b[21:25], frame.entry_count),
                          (25, 4, "box count", b[25:29], frame.box_count), (29, 4, "frame check", b[29:33], "")])
        heads = b"".join(bytes(log[st - 6:st]) for _, _, st, _ in frame.boxes)
        full = hashlib.sha256(bytes(log[off:off + 29]) + heads).digest()
        tr.p(f"Record length 8 + L = {8 + body} (log bytes {off} ..< {off + 8 + body}). Frame check = "
             f"SHA-256(frame bytes 0 ..< 29 ‖ the 6-byte header of each box field)[0 ..< 4]:")
        tr.kv([("box field headers, in order", K._c(heads)), ("SHA-256(…)", K._c(full)),
               ("first 4 bytes; equal to the stored check", K._c(full[:4]) + (" — yes" if full[:4] == b[29:33] else " — **NO**"))])
        pending = []
        for index, (key_id, role, start, length) in enumerate(frame.boxes):
            box = bytes(log[start:start + length])
            tr.p(f"**Box {index}**: field at log offset {start - 6}: key id {key_id}, role {role} "
                 f"({'page' if role == ROLE_PAGE else 'secret box'}), B = {length} (`{bytes(log[start - 6:start]).hex()}`); "
                 f"nonce at {start}, ciphertext at {start + 12}, tag at {start + length - 16}.")
            if role == ROLE_SECRET:
                pending.append(box)
                tr.kv([("nonce", K._c(box[:12])), (f"ciphertext ({length - 28} bytes)", K._c(box[12:-16])),
                       ("tag", K._c(box[-16:])), ("digest = BLAKE2b-128(whole box)", K._c(blake2b16(box)))])
                tr.p("Its associated data and plaintext follow the page that names it (the item id is in the page).")
                continue
            aad = page_aad(keys.file_id, keys.epoch, frame, index, chain)
            names = (('"KCF2"', 0, 4), ("file id", 4, 20), ("epoch", 20, 28), ("sequence", 28, 36), ("kind", 36, 37),
                     ("part", 37, 41), ("entry count (the record's)", 41, 45), ("box count", 45, 49),
                     ("box index", 49, 53), ("key id", 53, 54), ("previous chain value", 54, 70))
            tr.table(("page AAD field", "offset", "size", "bytes (hex)"),
                     [(n, a, z - a, K._c(aad[a:z])) for n, a, z in names])
            plain = K.gcm_open(keys.k_record, box, aad)
            tr.kv([("nonce", K._c(box[:12])), (f"ciphertext ({length - 28} bytes)", K._c(box[12:-16])),
                   ("tag = the chain value after this page", K._c(box[-16:])),
                   ("opens under K_record", "yes" if plain is not None else "**NO**")]
                  + K.gcm_details(keys.k_record, box, aad))
            chain = box[-16:]
            tr.p(f"Page plaintext ({len(plain)} bytes): encoding {plain[0]}, entry count {rd16(plain, 1)}:")
            tr.code(K.hexdump_lines(plain))
            pos, used = 3, 0
            for _ in range(rd16(plain, 1)):
                kind = plain[pos]
                if kind == ENTRY_PUT:
                    a = rd32(plain, pos + 1)
                    attrs = plain[pos + 5:pos + 5 + a]
                    slen = rd32(plain, pos + 5 + a)
                    digest = plain[pos + 9 + a:pos + 25 + a]
                    rows_ = []
                    item_id, cls, values = K.decode_attributes(attrs, rows_)
                    tr.p(f"Entry at page offset {pos}: put (`01`), A = {a} (`{plain[pos + 1:pos + 5].hex()}`), attributes "
                         f"at {pos + 5} ..< {pos + 5 + a} (SPEC.md §7.3), secret length S = {slen}, digest "
                         f"`{digest.hex()}` at {pos + 9 + a}.")
                    K._trace_attributes(tr, attrs, rows_, None, None)
                    sbox = pending[used]
                    used += 1
                    saad = secret_aad(keys.file_id, item_id)
                    secret = K.gcm_open(keys.k_secret, sbox, saad)
                    tr.p(f'Its secret box: length {len(sbox)} = S + 28: {"yes" if len(sbox) == slen + 28 else "**NO**"}; '
                         f'BLAKE2b-128 equals the digest: {"yes" if blake2b16(sbox) == digest else "**NO**"}. Associated '
                         f'data "KCF2 secret box" ‖ 00 ‖ file id ‖ key id 00 ‖ item id ({len(saad)} bytes):')
                    tr.code(K.hexdump_lines(saad))
                    tr.kv(K.gcm_details(keys.k_secret, sbox, saad)
                          + [("secret (plaintext)", K._c(secret) + (f" = {json.dumps(secret.decode())}" if K._is_text(secret) else ""))])
                    pos += 25 + a
                else:
                    tr.p(f"Entry at page offset {pos}: {'deletion' if kind == ENTRY_DELETE else 'tombstone'} "
                         f"(`{kind:02x}`), item id `{plain[pos + 1:pos + 17].hex()}`, time "
                         f"`{plain[pos + 17:pos + 25].hex()}` = {rdi64(plain, pos + 17)} ms.")
                    pos += 25
            pending = []
        tr.p(f"Chain value of the record (its last page's tag): `{chain.hex()}`; head ({rec.sequence}, `{chain.hex()}`).")

    # -- seals
    tr.h(3, "Commit slots")
    for index, at in enumerate(SLOT_OFFSETS):
        region = data[at:at + SLOT_BYTES]
        if not any(region):
            tr.p(f"Slot {index} (offset {at}): all zero (blank).")
            continue
        seal = region[:SEAL]
        tr.p(f"Slot {index} (offset {at}): seal copy 1 at {at}, partial-chunk parity at {at + 128} ..< {at + 8320}, "
             f"seal copy 2 at {at + 8320}; the two copies are {'identical' if seal == region[8320:8448] else '**different**'}.")
        _fields(tr, at, [(0, 4, "magic", seal[0:4], '"KCFS"'), (4, 8, "epoch", seal[4:12], rd64(seal, 4)),
                         (12, 8, "counter c", seal[12:20], f"{rd64(seal, 12)} (slot c mod 2 = {rd64(seal, 12) % 2})"),
                         (20, 8, "written end E_w", seal[20:28], rd64(seal, 20)),
                         (28, 8, "committed end E_c", seal[28:36], rd64(seal, 28)),
                         (36, 8, "head sequence", seal[36:44], rd64(seal, 36)),
                         (44, 16, "head chain value", seal[44:60], ""), (60, 4, "reserved", seal[60:64], ""),
                         (64, 32, "HMAC-SHA256(K_header, bytes 0 ..< 64)", seal[64:96], ""),
                         (96, 32, "RS parity of bytes 0 ..< 96", seal[96:128], "")])
        tr.kv([("HMAC computed", K._c(K.hmac_sha256(keys.k_header, seal[:64]))),
               ("RS parity computed (96 bytes as a shortened codeword, degrees 127 … 32)", K._c(seal_parity(seal[:96])))])
    # -- parity of the last chunk
    ew = kc.newest.written_end
    last = ew // CHUNK
    part = bytes(log[last * CHUNK:ew])
    par = chunk_parity(part)
    tr.h(3, f"Parity of the last chunk (chunk {last}, {len(part)} data bytes)")
    tr.p(f"The newest seal (counter {kc.newest.counter}, slot {kc.newest.slot}) carries in its slot the parity of "
         f"log bytes {last * CHUNK} ..< {ew}, zeros after them. Data byte i·256 + j is symbol i of codeword j "
         f"(degree 254 − i); parity symbol i of codeword j is parity byte i·256 + j. With n = {len(part)} bytes, codeword j "
         f"holds ⌈(n − j) / 256⌉ data symbols (symbols 0, 1, … at degrees 254, 253, …) and zeros at every later symbol; "
         f"a codeword with no data has zero parity.")
    j = 0
    sym = part[j::256]
    tr.kv([(f"codeword 0's data symbols (log bytes 0, 256, …): {len(sym)} symbols, then zeros", K._c(sym)),
           ("its 32 parity symbols (slot parity bytes 0, 256, 512, …)", K._c(kc.newest.parity[j::256])),
           ("computed here", K._c(RS.parity_of_symbols(sym + bytes(223 - len(sym))))),
           ("all 8192 bytes equal the stored slot parity", "yes" if par == kc.newest.parity else "**NO**"),
           ("parity bytes 0 ..< 64 (symbol 0 of codewords 0 … 63)", K._c(par[:64]))])
    if kc.older is not None:
        ow = kc.older.written_end
        tr.p(f"The older seal's slot (counter {kc.older.counter}) holds the parity of log bytes 0 ..< {ow}: "
             f"{'equal' if kc.older.parity == chunk_parity(bytes(log[:ow])) else '**not equal**'} to the parity "
             f"computed from those bytes.")
    tr.h(3, "Result")
    tr.p(f"Newest commit: counter {kc.newest.counter}, E_w = E_c = {kc.committed_end}; older commit: "
         f"{'counter ' + str(kc.older.counter) + ', E_c = ' + str(kc.older.committed_end) if kc.older else 'none'}. "
         f"Both seals' heads equal the chain the replay computed at their E_c. Head ({kc.head[0]}, "
         f"`{kc.head[1].hex()}`); {len(kc.items)} live item(s): "
         + ", ".join(f"`{i.hex()}` ({K.CLASS_NAMES[it.cls]}, secret {json.dumps(it.secret.decode()) if K._is_text(it.secret) else it.secret.hex()})"
                     for i, it in sorted(kc.items.items())) + ". No remnant, nothing set aside, no repair.")
    if len(log) <= 4096:
        tr.h(3, f"The log ({len(log)} bytes, file offsets {PREFIX} ..< {physical(len(log))})")
        tr.p("Each row is prefixed by its log offset (decimal).")
        tr.code(K.hexdump_lines(log, base=0))
    return tr.text()


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------

EXIT_OK, EXIT_OTHER, EXIT_USAGE = 0, 1, 2
EXIT_CODES = {NotAKeychain: 3, UnsupportedVersion: 4, WrongCredentials: 5, Corrupted: 6, UnsupportedFeature: 7,
              RolledBack: 8}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="kcf_reference_v2.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command")
    d = sub.add_parser("dump", help="print the live items, the commits, repairs and tails as JSON")
    d.add_argument("file")
    d.add_argument("--password")
    d.add_argument("--key", metavar="HEX")
    t = sub.add_parser("trace", help="print the Markdown derivation of FILE (SPEC.md §29)")
    t.add_argument("file")
    t.add_argument("--password")
    t.add_argument("--key", metavar="HEX")
    args = ap.parse_args(argv)
    if args.command not in ("dump", "trace"):
        ap.print_usage(sys.stderr)
        return EXIT_USAGE
    if (args.password is None) == (args.key is None):
        print("give exactly one of --password and --key", file=sys.stderr)
        return EXIT_USAGE
    try:
        cred = {"password": args.password} if args.password is not None else {"key": bytes.fromhex(args.key)}
        if args.command == "trace":
            sys.stdout.write(trace(args.file, cred))
            return EXIT_OK
        kc = open_keychain(args.file, cred)
        json.dump(kc.to_json(), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return EXIT_OK
    except KCFError as err:
        out = {"error": type(err).__name__, "message": str(err)}
        if isinstance(err, (Corrupted, UnsupportedFeature)):
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

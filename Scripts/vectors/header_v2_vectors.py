#!/usr/bin/env python3
"""Writes Fixtures/healing/header-v2.json: format version 2 headers, key slots and header pages, following
the byte layouts of Docs/FormatVersion2.md §1 and §4 with Python's `cryptography` (OpenSSL: PBKDF2, HKDF, HMAC,
AES-GCM, Argon2id), `unicodedata` (NFC) and `reedsolo` (the page parity). Ids, salts and nonces are fixed, so
the check runs both ways: Swift encodes the same inputs to the same bytes, and opens this page with every
credential (Tests/KeychainFileTests/Format/HeaderV2VectorTests.swift). The same person wrote this script and the
Swift code: it shows the two agree with each other and with the text, not that a stranger would.

Usage: python3 Scripts/vectors/header_v2_vectors.py   (from the repository root; needs `pip install reedsolo`)
"""
import hashlib
import hmac
import json
import os
import struct
import unicodedata

import reedsolo
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUTPUT = os.path.join(ROOT, "Fixtures/healing/header-v2.json")
MAGIC = bytes([0x89, 0x4B, 0x43, 0x46, 0x0D, 0x0A, 0x1A, 0x0A])


def fill(label, count):
    """Deterministic bytes for the vectors' ids, salts and nonces (not random: the vectors must not change)."""
    out = b""
    counter = 0
    while len(out) < count:
        out += hashlib.sha256(f"{label}/{counter}".encode()).digest()
        counter += 1
    return out[:count]


def hkdf(ikm, salt, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def kek_of(kind, kdf, secret, salt, file_id):
    if kdf["id"] == 1:
        password = unicodedata.normalize("NFC", secret).encode()
        return PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=kdf["iterations"]).derive(password)
    if kdf["id"] == 2:
        return hkdf(secret, salt, b"KCF2 raw-key slot" + file_id)
    if kdf["id"] == 3:
        password = unicodedata.normalize("NFC", secret).encode()
        return Argon2id(salt=salt, length=32, iterations=kdf["passes"], lanes=kdf["lanes"],
                        memory_cost=kdf["memoryKiB"]).derive(password)
    raise ValueError(kdf)


def kdf_parameters(kdf):
    if kdf["id"] == 1:
        return struct.pack(">I", kdf["iterations"]) + bytes(8)
    if kdf["id"] == 2:
        return bytes(12)
    return struct.pack(">IIB", kdf["memoryKiB"], kdf["passes"], kdf["lanes"]) + bytes(3)


def committed_slot(kind, kdf, secret, master, file_id, label):
    slot_id, salt, nonce = fill(label + "/id", 16), fill(label + "/salt", 32), fill(label + "/nonce", 12)
    kek = kek_of(kind, kdf, secret, salt, file_id)
    assert len(kek) == 32
    commitment = hkdf(kek, None, b"KCF2 slot commitment" + file_id + slot_id)
    wrap_key = hkdf(kek, None, b"KCF2 slot wrap" + file_id + slot_id)
    params = bytes([kind, kdf["id"]]) + struct.pack(">H", 156) + slot_id + kdf_parameters(kdf) + salt + commitment
    sealed = AESGCM(wrap_key).encrypt(nonce, master, b"KCF2 key slot" + file_id + params)
    slot = params + nonce + sealed
    assert len(slot) == 156
    return slot


def legacy_slot(secret, iterations, master, file_id, label):
    """A version 1 password slot (SPEC.md §5), wrapped as a version 2 legacy slot: 3 ‖ 0 ‖ length ‖ slot."""
    slot_id, salt, nonce = fill(label + "/id", 16), fill(label + "/salt", 32), fill(label + "/nonce", 12)
    password = unicodedata.normalize("NFC", secret).encode()
    kek = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=iterations).derive(password)
    params = bytes([1, 0]) + struct.pack(">H", 116) + slot_id + struct.pack(">I", iterations) + salt
    v1 = params + nonce + AESGCM(kek).encrypt(nonce, master, b"KCF1 key slot" + file_id + params)
    return bytes([3, 0]) + struct.pack(">H", 4 + len(v1)) + v1


def header(file_id, epoch, epoch_salt, rewrite_end, head_sequence, head_chain, horizon, slots, header_key):
    body = b"".join(slots)
    length = 112 + len(body) + 48
    out = MAGIC + struct.pack(">HHI", 2, 0, length) + file_id + struct.pack(">Q", epoch) + epoch_salt
    out += struct.pack(">QQ", rewrite_end, head_sequence) + head_chain + struct.pack(">IB", horizon, len(slots)) + bytes(3)
    out += body
    out += hmac.new(header_key, out, "sha256").digest()
    out += hashlib.sha256(out).digest()[:16]
    assert len(out) == length
    return out


def page(header_bytes):
    """header ‖ zeros to 3,568 ‖ RS(255,223) parity interleaved 16 deep (symbol i of codeword j at i·16 + j) ‖ 16 zeros."""
    block = header_bytes + bytes(3568 - len(header_bytes))
    codec = reedsolo.RSCodec(32, nsize=255, fcr=0, prim=0x11D, generator=2)
    parity = bytearray(512)
    for j in range(16):
        message = bytes(block[i * 16 + j] for i in range(223))
        symbols = bytes(codec.encode(message))[223:]
        for i in range(32):
            parity[i * 16 + j] = symbols[i]
    return block + bytes(parity) + bytes(16)


def main():
    file_id, epoch_salt, master = fill("file id", 16), fill("epoch salt", 32), fill("master key", 32)
    epoch = 3
    raw_key = fill("application key", 32)
    credentials = [
        ("pbkdf2", 1, {"id": 1, "iterations": 1000}, "correct horse battery staple"),
        ("nfc", 1, {"id": 1, "iterations": 1000}, "\u0F40\u0F80\u0F73 caf\u0065\u0301"),
        ("argon2id", 1, {"id": 3, "memoryKiB": 64, "passes": 2, "lanes": 2}, "argon password"),
        ("hkdf", 2, {"id": 2}, raw_key),
    ]
    slots, slot_vectors = [], []
    for label, kind, kdf, secret in credentials:
        slot = committed_slot(kind, kdf, secret, master, file_id, label)
        slots.append(slot)
        slot_vectors.append({
            "label": label, "kind": kind, "kdf": kdf,
            "credential": {"key": secret.hex()} if kind == 2 else {"password": secret},
            "slotID": fill(label + "/id", 16).hex(), "salt": fill(label + "/salt", 32).hex(),
            "nonce": fill(label + "/nonce", 12).hex(), "slot": slot.hex()})
    legacy = legacy_slot("legacy password", 1000, master, file_id, "legacy")
    slots.append(legacy)
    slot_vectors.append({"label": "legacy", "kind": 3, "credential": {"password": "legacy password"}, "slot": legacy.hex()})

    epoch_bytes = struct.pack(">Q", epoch)
    header_key = hkdf(master, epoch_salt, b"KCF2 header" + file_id + epoch_bytes)
    record_key = hkdf(master, epoch_salt, b"KCF2 records" + file_id + epoch_bytes)
    c0 = hmac.new(header_key, b"KCF2 C0" + file_id + epoch_bytes + epoch_salt, "sha256").digest()[:16]
    head_chain = fill("rewrite head", 16)
    header_bytes = header(file_id, epoch, epoch_salt, 123_456, 42, head_chain, 90, slots, header_key)
    vectors = {
        "source": "Scripts/vectors/header_v2_vectors.py (Python cryptography, unicodedata, reedsolo), to Docs/FormatVersion2.md §4",
        "fileID": file_id.hex(), "epoch": epoch, "epochSalt": epoch_salt.hex(), "masterKey": master.hex(),
        "rewriteEnd": 123_456, "rewriteHeadSequence": 42, "rewriteHeadChain": head_chain.hex(), "tombstoneHorizonDays": 90,
        "headerKey": header_key.hex(), "recordKey": record_key.hex(), "initialChain": c0.hex(),
        "slots": slot_vectors, "header": header_bytes.hex(), "page": page(header_bytes).hex(),
    }
    with open(OUTPUT, "w") as file:
        json.dump(vectors, file, indent=1)
        file.write("\n")
    print(f"wrote {OUTPUT}: header {len(header_bytes)} bytes, {len(slots)} slots")


if __name__ == "__main__":
    main()

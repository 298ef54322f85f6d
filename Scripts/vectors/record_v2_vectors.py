#!/usr/bin/env python3
"""Writes Fixtures/healing/records-v2.json: two chained format version 2 records (pages of attributes after
their secret boxes, deletions and tombstones as page entries), following the byte layouts of
Docs/FormatVersion2.md §5 (frame and frame check, box fields, page plaintext, secret box digest, associated
data, chain) with Python's `cryptography` (AES-GCM, HKDF), hashlib (SHA-256, BLAKE2b) and the version 1
attributes encoder of Scripts/reference (a separate implementation of SPEC.md §7.3). Its nonces are fixed and
listed, so the check runs both ways: Swift decodes these records, and Swift's encoder, given the same entries
and nonces, writes the same bytes (Tests/KeychainFileTests/Format/RecordV2VectorTests.swift). The same person
wrote this script and the Swift code, both from §5: it shows the two agree with each other and with the text,
not that a stranger reading §5 would write the same.

Usage: python3 Scripts/vectors/record_v2_vectors.py   (from the repository root)
"""
import hashlib
import json
import os
import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "Scripts/reference"))
import kcf_reference as K  # noqa: E402

OUTPUT = os.path.join(ROOT, "Fixtures/healing/records-v2.json")
PAGE_LIMIT = 8192


def fill(label, count):
    out, counter = b"", 0
    while len(out) < count:
        out += hashlib.sha256(f"{label}/{counter}".encode()).digest()
        counter += 1
    return out[:count]


def entry_bytes(entry, tag=None):
    if entry["kind"] == 1:
        attributes = K.encode_attributes(entry["id"], K.GENERIC_PASSWORD, entry["attributes"])
        return b"\x01" + struct.pack(">I", len(attributes)) + attributes + struct.pack(">I", len(entry["secret"])) + (tag or bytes(16))
    return bytes([entry["kind"]]) + entry["id"] + struct.pack(">q", entry["time"])


def record(entries, sequence, kind, part, chain, file_id, epoch, page_key, secret_key, label):
    pages, start, size = [], 0, 3
    for index, entry in enumerate(entries):
        length = len(entry_bytes(entry))
        if index > start and size + length > PAGE_LIMIT:
            pages.append(entries[start:index])
            start, size = index, 3
        size += length
    pages.append(entries[start:])
    box_count = len(pages) + sum(1 for e in entries if e["kind"] == 1)
    boxes, box_index, nonce_counter, nonces = [], 0, 0, []
    for page in pages:
        plaintext = bytes([1]) + struct.pack(">H", len(page))
        for entry in page:
            tag = None
            if entry["kind"] == 1:
                nonce = fill(f"{label}/nonce", 12 * (nonce_counter + 1))[-12:]
                nonce_counter += 1
                nonces.append(nonce)
                aad = b"KCF2 secret box\x00" + file_id + b"\x00" + entry["id"]
                box = nonce + AESGCM(secret_key).encrypt(nonce, entry["secret"], aad)
                boxes.append(b"\x00\x02" + struct.pack(">I", len(box)) + box)
                box_index += 1
                tag = hashlib.blake2b(box, digest_size=16).digest()
            plaintext += entry_bytes(entry, tag)
        nonce = fill(f"{label}/nonce", 12 * (nonce_counter + 1))[-12:]
        nonce_counter += 1
        nonces.append(nonce)
        aad = (b"KCF2" + file_id + struct.pack(">QQBIIIIB", epoch, sequence, kind, part, len(entries), box_count, box_index, 0)
               + chain)
        box = nonce + AESGCM(page_key).encrypt(nonce, plaintext, aad)
        boxes.append(b"\x00\x01" + struct.pack(">I", len(box)) + box)
        box_index += 1
        chain = box[-16:]
    fields = b"".join(box[:6] for box in boxes)
    length = 21 + 4 + sum(len(box) for box in boxes)
    frame = struct.pack(">IIBQIII", length, length ^ 0xFFFFFFFF, kind, sequence, part, len(entries), box_count)
    check = hashlib.sha256(frame + fields).digest()[:4]
    record_bytes = frame + check + b"".join(boxes)
    assert len(record_bytes) == 8 + length
    return record_bytes, chain, nonces


def main():
    file_id, epoch, c0 = fill("file id", 16), 4, fill("c0", 16)
    page_key, master = fill("record key", 32), fill("master key", 32)
    secret_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"KCF2 secrets" + file_id).derive(master)
    first = []
    for n in range(120):
        entry_id = fill(f"item {n}", 16)
        if n % 10 == 7:
            first.append({"kind": 2 if n % 20 == 7 else 3, "id": entry_id, "time": 1_764_000_000_000 + n})
            continue
        first.append({"kind": 1, "id": entry_id, "secret": fill(f"secret {n}", n % 50),
                      "attributes": {"service": f"service {n % 5}", "account": f"account {n}", "label": "x" * (n * 3),
                                     "creationDate": 1_700_000_000_000 + n, "modificationDate": 1_700_000_000_000 + 2 * n}})
    second = [{"kind": 1, "id": fill("item big", 16), "secret": fill("big secret", 3000),
               "attributes": {"service": "big", "account": "b", "creationDate": 0, "modificationDate": -1}}]
    one, chain1, nonces1 = record(first, 1, 1, 0, c0, file_id, epoch, page_key, secret_key, "r1")
    two, chain2, nonces2 = record(second, 2, 3, 0, chain1, file_id, epoch, page_key, secret_key, "r2")

    def describe(entry):
        out = {"kind": entry["kind"], "id": entry["id"].hex()}
        if entry["kind"] == 1:
            out["secret"] = entry["secret"].hex()
            out["attributes"] = K.encode_attributes(entry["id"], K.GENERIC_PASSWORD, entry["attributes"]).hex()
        else:
            out["time"] = entry["time"]
        return out

    vectors = {
        "source": "Scripts/vectors/record_v2_vectors.py (Python cryptography, hashlib and Scripts/reference), to Docs/FormatVersion2.md §5",
        "fileID": file_id.hex(), "epoch": epoch, "initialChain": c0.hex(), "recordKey": page_key.hex(),
        "masterKey": master.hex(), "secretKey": secret_key.hex(),
        "records": [
            {"bytes": one.hex(), "kind": 1, "sequence": 1, "part": 0, "chain": chain1.hex(),
             "nonces": [n.hex() for n in nonces1], "entries": [describe(e) for e in first]},
            {"bytes": two.hex(), "kind": 3, "sequence": 2, "part": 0, "chain": chain2.hex(),
             "nonces": [n.hex() for n in nonces2], "entries": [describe(e) for e in second]},
        ],
    }
    with open(OUTPUT, "w") as file:
        json.dump(vectors, file, indent=1)
        file.write("\n")
    print(f"wrote {OUTPUT}: records of {len(one)} and {len(two)} bytes")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the structured-mode seeds of the open-v2 fuzz target (see Fuzz/OpenV2/StructuredMode.swift for the
layout): a few items of three classes, a compacted file with a tombstone and appends after the rewrite,
deletions and tombstones, a transaction in parts (committed, and one left without its commit), a duplicate
primary key, catching up, a crash remnant and a commit slot copied over the other. Scripts/fuzz.sh also turns
each into a whole version 2 file (FUZZ_WRITE_KEYCHAIN). Run from anywhere; writes next to itself."""
import os, struct, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "..", "Shared", "Keychain"))
from seed_entries import i64, put  # noqa: E402

def delete(item, days=20_000, tombstone=False): return bytes([0x12 if tombstone else 0x02, item]) + struct.pack(">H", days)

def record(*entries, part=False):
    return bytes([(len(entries) - 1) | (0x08 if part else 0)]) + b"".join(entries)

def seed(name, *records, compact_before=None, split=None, damage=b""):
    flags = (1 if compact_before is not None else 0) | (2 if damage else 0) | (4 if split is not None else 0)
    data = bytes([flags])
    if compact_before is not None: data += bytes([compact_before])
    if split is not None: data += bytes([split])
    data += b"".join(records)
    if damage: data += b"\xff" + damage
    with open(os.path.join(HERE, name + ".bin"), "wb") as f: f.write(data)

gp = lambda item, account, secret=b"s3cret": put(item, 1, [("account", account), ("service", "mail.example.com"), ("label", "Mail")], secret)
inet = put(1, 2, [("account", "ann"), ("server", "example.com"), ("protocol", i64(0x68747073)), ("port", i64(443)), ("path", "/")], b"pw")
key = put(3, 4, [("keyClass", i64(1)), ("applicationLabel", b"\x01" * 20), ("keyType", i64(73)), ("keySizeInBits", i64(256))], b"\x04" * 65)

seed("few-items", record(gp(0, "ann"), inet, key))
seed("compacted", record(gp(0, "ann"), gp(2, "bob")), record(delete(2)), record(gp(4, "carol", b"x" * 300)), compact_before=16)
seed("compact-then-append", record(gp(0, "ann"), gp(2, "bob")), record(delete(0), gp(5, "dave")), compact_before=1)
seed("deletions", record(gp(0, "ann")), record(gp(1, "bob")), record(delete(0), delete(6, tombstone=True)))
seed("transaction-parts", record(gp(0, "ann"), part=True), record(gp(1, "bob"), part=True), record(delete(0)))
seed("uncommitted-part", record(gp(0, "ann")), record(gp(1, "bob"), part=True))
seed("duplicate-primary-key", record(gp(0, "ann")), record(gp(1, "ann")))
seed("catch-up", record(gp(0, "ann")), record(gp(1, "bob"), delete(0)), record(key), split=1)
# Damage: 3 appends a remnant of n bytes; 4 copies slot 0 over slot 1.
seed("remnant", record(gp(0, "ann")), record(gp(1, "bob")), damage=b"\x03\x10" + b"\x00\x00\x00\x40\xff\xff\xff\xbf" + b"\x01" * 8)
seed("slot-copied", record(gp(0, "ann")), record(gp(1, "bob")), damage=b"\x04\x00")

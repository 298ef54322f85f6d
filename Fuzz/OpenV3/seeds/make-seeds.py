#!/usr/bin/env python3
"""Writes the open-v3 target's script seeds (layout in Fuzz/OpenV3/ScriptMode.swift). Scripts/fuzz.sh runs each
with FUZZ_WRITE_KEYCHAIN to make the whole version 3 files the fuzzer mutates."""
import os

DEFAULT, A, B, C = 0, 1, 2, 3
SCOPED_KEY, SCOPED_PASSWORD, FULL_PASSWORD = 0, 1, 2


def add(group, account, length=24, fill=0x41):
    return [0, group, account, length, fill]


def delete(group, account):
    return [2, group, account]


def update(group, account, length=40, fill=0x55):
    return [3, group, account, length, fill]


def compact():
    return [4]


def credential(which):
    return [5, which]


def batch(*items):
    return [6, len(items)] + [b for item in items for b in item[1:]]


def scoped_write(which, added, deleted):
    return [7, which] + added[1:] + deleted[1:]


def groups_with_items(per_group=3):
    ops = []
    for group in (DEFAULT, A, B, C):
        for account in range(per_group):
            ops += add(group, account, 16 + account, 0x30 + group * 4 + account)
    return ops


def all_credentials():
    return credential(SCOPED_KEY) + credential(SCOPED_PASSWORD) + credential(FULL_PASSWORD)


SEEDS = {
    # Items in four groups, every credential, deletions in two groups, a compaction, then more adds and a deletion.
    "groups-scoped-compacted": groups_with_items() + all_credentials() + delete(A, 1) + delete(C, 0)
    + compact() + add(A, 5, 33, 0x61) + add(B, 6, 8, 0x62) + delete(DEFAULT, 2) + update(B, 0),
    # The same without a compaction: deletions and updates as records after the credentials' rewrites.
    "groups-scoped": groups_with_items(2) + all_credentials() + delete(B, 1) + update(A, 0) + add(C, 9, 63, 0x63)
    + delete(DEFAULT, 0),
    # Writes by the scoped holders themselves, in their groups and (refused) outside them.
    "scoped-writes": groups_with_items(2) + all_credentials() + scoped_write(0, add(A, 7, 20, 0x71), delete(A, 0))
    + scoped_write(1, add(B, 8, 21, 0x72), delete(DEFAULT, 1)) + scoped_write(0, add(C, 9), delete(B, 0))
    + add(C, 10, 12, 0x73),
    # Batches across groups, a compaction last: the newest file is a rewrite's.
    "batches-compacted-last": batch(add(DEFAULT, 0), add(A, 0), add(B, 0), add(C, 0)) + all_credentials()
    + batch(add(A, 1), add(A, 2), add(B, 3)) + delete(A, 0) + delete(C, 0) + compact(),
    # Only the full credentials: groups, deletions, a compaction.
    "full-only": groups_with_items(2) + credential(FULL_PASSWORD) + delete(A, 0) + compact() + add(B, 4),
    # A scoped key added early, before other groups have many items, then groups added afterwards.
    "scoped-early": add(A, 0) + add(DEFAULT, 0) + credential(SCOPED_KEY) + add(B, 0) + add(C, 0) + credential(SCOPED_PASSWORD)
    + credential(FULL_PASSWORD) + add(A, 1) + delete(B, 0) + add(B, 1),
}

here = os.path.dirname(os.path.abspath(__file__))
for name, ops in SEEDS.items():
    with open(os.path.join(here, name + ".bin"), "wb") as f:
        f.write(bytes([0]) + bytes(ops))

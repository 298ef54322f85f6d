#!/usr/bin/env python3
"""Writes the seeds of the healing-log fuzz target (see DamagedLogMode.swift for the layout): logs of one to
eight records, across chunk boundaries and with transaction parts, undamaged and with each kind of damage.
Run from anywhere; writes next to itself."""
import os, struct

HERE = os.path.dirname(os.path.abspath(__file__))

def records(*specs):  # (size, committed, flush)
    out = bytes([len(specs) - 1])
    for size, committed, flush in specs:
        out += struct.pack(">H", size - 1) + bytes([(1 if committed else 0) | (2 if flush else 0)])
    return out

def u24(n): return struct.pack(">I", n)[1:]

def seed(name, recs, ops=b""):
    with open(os.path.join(HERE, name + ".bin"), "wb") as f: f.write(b"\x80" + recs + ops)

small = records((350, True, False), (8999, True, False))
across = records((8999, True, False), (8999, True, False), (8999, True, True), (8999, True, False), (8999, True, False), (8999, True, False), (8000, True, False), (5000, False, True))
seed("undamaged", small)
seed("across-chunks", across)
seed("flipped", across, bytes([0]) + u24(40000) + b"\x5a")
seed("zeroed-4k", across, bytes([1]) + u24(35000) + struct.pack(">H", 4096))
seed("cut-file", small, bytes([2]) + u24(40000))
seed("remnant", small, bytes([3]) + struct.pack(">H", 3000))
seed("unreadable", across, bytes([4]) + u24(50000) + struct.pack(">H", 8192))
seed("slot-copied", small, bytes([5, 0]))
seed("slot-scribbled", across, bytes([6, 1]) + struct.pack(">H", 100) + b"\x40")
seed("rewrite-end", small, bytes([7]) + u24(12000))
with open(os.path.join(HERE, "raw-zeros.bin"), "wb") as f: f.write(bytes(8192))

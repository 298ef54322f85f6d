#!/usr/bin/env python3
"""KeychainFile format version 3's key slots (Docs/FormatVersion3.md §2.2): an independent implementation.

Written from the design document's slot layout (and the layout table in the Swift type's documentation, which
repeats it), with Python's `cryptography` for PBKDF2, Argon2id, HKDF, HMAC, AES-GCM and X25519: the second implementation the
Swift slots are checked against (Tests/KeychainFileTests/Format/V3/KeySlotV3ReferenceTests.swift). Version 3 is a
design still; nothing here reads or writes a whole file.

CLI (hex in, JSON out), for the Swift tests:

    slots_v3.py open SLOT_HEX FILE_ID_HEX (--password P | --key HEX)
        prints {"keys": KEYSET, "grantsOpened": n} or {"result": "wrongCredentials"}; exit 6 when corrupted
    slots_v3.py make FILE_ID_HEX (--password P [--iterations N | --argon2id KIB,PASSES,LANES] | --key HEX)
                --keys KEYSET_JSON --root HEX --seed N
        prints {"slot": HEX}
    slots_v3.py grant SLOT_HEX FILE_ID_HEX --keys KEYSET_JSON --previous-root HEX --seed N
        prints {"slot": HEX}
    slots_v3.py attested SLOT_HEX FILE_ID_HEX --root HEX     prints {"attested": true|false}

KEYSET_JSON: {"logKey": HEX, "root": HEX or null, "rho": HEX (optional when root is given),
              "groups": [{"keyID": n, "name": S, "key": HEX}, ...]}
"""

from __future__ import annotations

import argparse
import hmac as _hmac
import hashlib
import json
import random
import struct
import sys
import unicodedata
from typing import Optional

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

MIN_LENGTH, MAX_LENGTH, MAX_GRANTS = 192, 8192, 32
# SPEC §21.1's Argon2id bounds for one slot (Swift: KDF.Argon2's maximumParallelism, maximumMemoryKiB,
# maximumIterations, maximumWorkKiB)
MAX_ARGON_LANES, MAX_ARGON_MEMORY_KIB, MAX_ARGON_PASSES, MAX_ARGON_WORK = 16, 1 << 22, 1 << 20, 1 << 26


class Corrupted(Exception):
    pass


def hkdf(ikm: bytes, info: bytes, salt: bytes = b"") -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt if salt else None, info=info).derive(ikm)


def x25519_public(private: bytes) -> bytes:
    key = X25519PrivateKey.from_private_bytes(private)
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def x25519(private: bytes, peer: bytes) -> bytes:
    # cryptography refuses an all-zero result (RFC 7748 §6.1) with ValueError.
    return X25519PrivateKey.from_private_bytes(private).exchange(X25519PublicKey.from_public_bytes(peer))


def rho_of(root: bytes, file_id: bytes) -> bytes:
    return x25519_public(hkdf(root, b"KCF3 root agreement" + file_id))


# --- key sets ---------------------------------------------------------------------------------------------

def encode_keyset(ks: dict) -> bytes:
    out = bytes(ks["logKey"]) + bytes(ks["rho"])
    out += bytes([1]) + bytes(ks["root"]) if ks.get("root") is not None else bytes([0])
    out += bytes([len(ks["groups"])])
    for g in ks["groups"]:
        name = g["name"].encode("utf-8")
        out += bytes([g["keyID"]]) + bytes(g["key"]) + bytes([len(name)]) + name
    return out


def decode_keyset(b: bytes, scope: list, file_id: bytes) -> dict:
    try:
        log_key, rho, flags = b[0:32], b[32:64], b[64]
        if len(b) < 65 or flags & 0xFE:
            raise Corrupted("key set flags")
        i = 65
        root = None
        if flags & 1:
            root = b[i:i + 32]
            i += 32
        count = b[i]
        i += 1
        groups = []
        for _ in range(count):
            key_id = b[i]
            key = b[i + 1:i + 33]
            n = b[i + 33]
            name = b[i + 34:i + 34 + n].decode("utf-8")
            if len(key) != 32 or len(b) < i + 34 + n:
                raise Corrupted("group truncated")
            if key_id == 0 or (groups and key_id <= groups[-1]["keyID"]):
                raise Corrupted("group key ids")
            groups.append({"keyID": key_id, "name": name, "key": key})
            i += 34 + n
        if i != len(b) or len(root or b"x" * 32) != 32:
            raise Corrupted("key set length")
    except (IndexError, UnicodeDecodeError) as e:
        raise Corrupted(f"key set: {e}")
    if not scope:
        if root is None or groups or rho_of(root, file_id) != rho:
            raise Corrupted("full slot's key set")
    elif root is not None or [g["keyID"] for g in groups] != scope:
        raise Corrupted("scoped slot's key set")
    return {"logKey": log_key, "rho": rho, "root": root, "groups": groups}


# --- slots ------------------------------------------------------------------------------------------------

def parse_slot(b: bytes) -> dict:
    try:
        return _parse_slot(b)
    except (IndexError, struct.error) as e:
        raise Corrupted(f"truncated: {e}")


def _parse_slot(b: bytes) -> dict:
    if len(b) < 4:
        raise Corrupted("truncated")
    stype, kdf_id, length = b[0], b[1], struct.unpack(">H", b[2:4])[0]
    if stype not in (1, 2) or not (MIN_LENGTH <= length <= MAX_LENGTH) or length > len(b):
        raise Corrupted("type or length")
    b = b[:length]
    params = b[20:32]
    if (stype, kdf_id) not in ((1, 1), (1, 3), (2, 2)):
        raise Corrupted("kdf")
    if kdf_id == 1:
        (iterations,) = struct.unpack(">I", params[:4])
        if not (1 <= iterations <= 10_000_000) or any(params[4:]):
            raise Corrupted("pbkdf2 parameters")
    elif kdf_id == 3:
        memory, passes, lanes = struct.unpack(">IIB", params[:9])
        # SPEC §21.1's bounds, each on its own as the Swift engine's SlotKDF.parse checks them (lanes 1 … 16, memory
        # 8 × lanes … 2²² KiB, passes 1 … 2²⁰, memory × passes ≤ 2²⁶ KiB), so that a hostile slot is refused
        # before any derivation; the header adds the sum over its slots (header_v3.parse_header). This module does
        # not apply a reader's own memory cap: it is a test tool.
        if (not 1 <= lanes <= MAX_ARGON_LANES or not 8 * lanes <= memory <= MAX_ARGON_MEMORY_KIB
                or not 1 <= passes <= MAX_ARGON_PASSES or memory * passes > MAX_ARGON_WORK or any(params[9:])):
            raise Corrupted(f"argon2id parameters (memory {memory} KiB, passes {passes}, lanes {lanes}) outside "
                            f"SPEC §21.1's bounds")
    elif any(params):
        raise Corrupted("hkdf parameters")
    i = 128
    n = b[i]
    scope = list(b[i + 1:i + 1 + n])
    if len(scope) != n or any(k == 0 for k in scope) or any(a >= c for a, c in zip(scope, scope[1:])):
        raise Corrupted("scope")
    i += 1 + n
    identity = b[0:2] + b[4:i]
    attestation = b[i:i + 32]
    i += 32

    def box(i):
        nonce = b[i:i + 12]
        (c,) = struct.unpack(">H", b[i + 12:i + 14])
        ct = b[i + 14:i + 14 + c]
        tag = b[i + 14 + c:i + 30 + c]
        if len(tag) != 16:
            raise Corrupted("box truncated")
        return (nonce, ct, tag), i + 30 + c

    anchor, i = box(i)
    grant_count = b[i]
    i += 1
    if grant_count > MAX_GRANTS:
        raise Corrupted("grants")
    grants = []
    for _ in range(grant_count):
        e = b[i:i + 32]
        g, i = box(i + 32)
        grants.append((e, g))
    if i != length:
        raise Corrupted("slot length")
    return {"type": stype, "kdf": kdf_id, "params": params, "slotID": b[4:20], "salt": b[32:64],
            "commitment": b[64:96], "P": b[96:128], "scope": scope, "identity": identity,
            "public": b[4:20] + b[96:128] + b[128:129 + n],
            "attestation": attestation, "anchor": anchor, "grants": grants}


def kek(s: dict, file_id: bytes, cred: dict) -> bytes:
    if "password" in cred:
        pw = unicodedata.normalize("NFC", cred["password"]).encode("utf-8")
        if s.get("kdf") == 3:
            from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
            memory, passes, lanes = struct.unpack(">IIB", s["params"][:9])
            return Argon2id(salt=s["salt"], length=32, iterations=passes, lanes=lanes, memory_cost=memory).derive(pw)
        (iterations,) = struct.unpack(">I", s["params"][:4])
        return PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=s["salt"], iterations=iterations).derive(pw)
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=s["salt"], info=b"KCF3 raw-key slot" + file_id).derive(cred["key"])


def open_box(box, key: bytes, aad: bytes):
    nonce, ct, tag = box
    try:
        return AESGCM(key).decrypt(nonce, ct + tag, aad)
    except InvalidTag:
        return None


def grant_key(s1: bytes, s2: bytes, e_pub: bytes, p: bytes, file_id: bytes, slot_id: bytes, number: int) -> bytes:
    return hkdf(s1 + s2, b"KCF3 slot grant" + file_id + slot_id + bytes([number]), salt=e_pub + p)


def open_slot(b: bytes, file_id: bytes, cred: dict):
    """(the newest key set, the number of grants read), or None when cred is not this slot's (§2.2 "Opening")."""
    opened = open_slot_anchored(b, file_id, cred)
    return None if opened is None else (opened["keys"], opened["grants"])


def open_slot_anchored(b: bytes, file_id: bytes, cred: dict):
    """open_slot, with what re-anchoring the slot takes: {"keys", "grants", "x" (the agreement key), "anchorKey"}."""
    s = parse_slot(b)
    if ("password" in cred) != (s["type"] == 1):
        return None
    k = kek(s, file_id, cred)
    sid = s["slotID"]
    if not _hmac.compare_digest(hkdf(k, b"KCF3 slot commitment" + file_id + sid), s["commitment"]):
        return None
    plain = open_box(s["anchor"], hkdf(k, b"KCF3 slot anchor" + file_id + sid), b"KCF3 slot anchor" + file_id + s["identity"])
    if plain is None or len(plain) < 32:
        raise Corrupted("anchor")
    x, anchor_key = plain[:32], hkdf(k, b"KCF3 slot anchor" + file_id + sid)
    if x25519_public(x) != s["P"]:
        raise Corrupted("public key")
    keys = decode_keyset(plain[32:], s["scope"], file_id)
    for index, (e_pub, box) in enumerate(s["grants"]):
        number = index + 1
        try:
            s1, s2 = x25519(x, e_pub), x25519(x, keys["rho"])
        except ValueError:
            raise Corrupted("small order")
        key = grant_key(s1, s2, e_pub, s["P"], file_id, sid, number)
        plain = open_box(box, key, b"KCF3 slot grant" + file_id + s["public"] + bytes([number]) + e_pub)
        if plain is None:
            raise Corrupted(f"grant {number}")
        keys = decode_keyset(plain, s["scope"], file_id)
    return {"keys": keys, "grants": len(s["grants"]), "x": x, "anchorKey": anchor_key}


def seal_box(plain: bytes, key: bytes, aad: bytes, rng: random.Random) -> bytes:
    nonce = rng.randbytes(12)
    sealed = AESGCM(key).encrypt(nonce, plain, aad)
    return nonce + struct.pack(">H", len(sealed) - 16) + sealed


def scope_bytes(ks: dict) -> bytes:
    if ks.get("root") is not None:
        return bytes([0])
    ids = [g["keyID"] for g in ks["groups"]]
    return bytes([len(ids)] + ids)


def assemble(head: bytes, rest: bytes) -> bytes:
    """head = type ‖ kdf id; rest = everything after the length field."""
    return head + struct.pack(">H", 4 + len(rest)) + rest


def make_slot(file_id: bytes, cred: dict, iterations: int, ks: dict, root: bytes, rng: random.Random,
              argon2id: Optional[tuple] = None) -> bytes:
    """argon2id: (memory KiB, passes, lanes) for an Argon2id password slot instead of PBKDF2 at `iterations`."""
    stype, kdf_id = (1, 1) if "password" in cred else (2, 2)
    params = struct.pack(">I", iterations) + bytes(8) if kdf_id == 1 else bytes(12)
    if argon2id is not None and stype == 1:
        kdf_id = 3
        params = struct.pack(">IIB", *argon2id) + bytes(3)
    sid, salt = rng.randbytes(16), rng.randbytes(32)
    s = {"params": params, "salt": salt, "kdf": kdf_id}
    k = kek(s, file_id, cred)
    commitment = hkdf(k, b"KCF3 slot commitment" + file_id + sid)
    x = rng.randbytes(32)
    p = x25519_public(x)
    identity = bytes([stype, kdf_id]) + sid + params + salt + commitment + p + scope_bytes(ks)
    public = sid + p + scope_bytes(ks)
    attestation = _hmac.new(hkdf(root, b"KCF3 slot attestation" + file_id), public, hashlib.sha256).digest()
    anchor = seal_box(x + encode_keyset(ks), hkdf(k, b"KCF3 slot anchor" + file_id + sid),
                      b"KCF3 slot anchor" + file_id + identity, rng)
    return assemble(identity[:2], identity[2:] + attestation + anchor + bytes([0]))


def reanchor(b: bytes, file_id: bytes, x: bytes, anchor_key: bytes, ks: dict, rng: random.Random) -> bytes:
    """The slot written again by its own holder (§2.2 "Writing it again"): the same identity and attestation, a new
    anchor sealed under its anchor key over x ‖ ks (the newest keys), and no grants. x and anchor_key come from
    opening this very slot (open_slot_anchored): only a holder that read every grant it holds may cut them."""
    s = parse_slot(b)
    anchor = seal_box(x + encode_keyset(ks), anchor_key, b"KCF3 slot anchor" + file_id + s["identity"], rng)
    return assemble(s["identity"][:2], s["identity"][2:] + s["attestation"] + anchor + bytes([0]))


def add_grant(b: bytes, file_id: bytes, ks: dict, previous_root: bytes, rng: random.Random) -> bytes:
    s = parse_slot(b)
    number = len(s["grants"]) + 1
    e = rng.randbytes(32)
    e_pub = x25519_public(e)
    r = hkdf(previous_root, b"KCF3 root agreement" + file_id)
    key = grant_key(x25519(e, s["P"]), x25519(r, s["P"]), e_pub, s["P"], file_id, s["slotID"], number)
    box = seal_box(encode_keyset(ks), key, b"KCF3 slot grant" + file_id + s["public"] + bytes([number]) + e_pub, rng)
    length = struct.unpack(">H", b[2:4])[0]
    # the grant count is the byte before the first grant: recompute the tail
    grants_start = length - sum(32 + 30 + len(g[1][1]) for g in s["grants"]) - 1
    rest = b[4:grants_start] + bytes([number]) + b[grants_start + 1:length] + e_pub + box
    return assemble(b[0:2], rest)


def is_attested(b: bytes, file_id: bytes, root: bytes) -> bool:
    s = parse_slot(b)
    expected = _hmac.new(hkdf(root, b"KCF3 slot attestation" + file_id), s["public"], hashlib.sha256).digest()
    return _hmac.compare_digest(expected, s["attestation"])


def attest(b: bytes, file_id: bytes, root: bytes) -> bytes:
    """The slot with its attestation made under root (what a rotating root holder writes)."""
    s = parse_slot(b)
    mac = _hmac.new(hkdf(root, b"KCF3 slot attestation" + file_id), s["public"], hashlib.sha256).digest()
    at = 4 + len(s["identity"]) - 2
    return b[:at] + mac + b[at + 32:]


# --- CLI --------------------------------------------------------------------------------------------------

def keyset_from_json(j: dict, file_id: bytes) -> dict:
    root = bytes.fromhex(j["root"]) if j.get("root") else None
    rho = bytes.fromhex(j["rho"]) if j.get("rho") else rho_of(root, file_id)
    groups = [{"keyID": g["keyID"], "name": g["name"], "key": bytes.fromhex(g["key"])} for g in j.get("groups", [])]
    return {"logKey": bytes.fromhex(j["logKey"]), "rho": rho, "root": root, "groups": groups}


def keyset_to_json(ks: dict) -> dict:
    return {"logKey": ks["logKey"].hex(), "rho": ks["rho"].hex(), "root": ks["root"].hex() if ks["root"] else None,
            "groups": [{"keyID": g["keyID"], "name": g["name"], "key": g["key"].hex()} for g in ks["groups"]]}


def main(argv) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["open", "make", "grant", "attested"])
    ap.add_argument("args", nargs="*")
    ap.add_argument("--password")
    ap.add_argument("--key")
    ap.add_argument("--iterations", type=int, default=1)
    ap.add_argument("--argon2id", help="MEMORY_KIB,PASSES,LANES: an Argon2id password slot")
    ap.add_argument("--keys")
    ap.add_argument("--root")
    ap.add_argument("--previous-root")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    cred = {"password": a.password} if a.password is not None else ({"key": bytes.fromhex(a.key)} if a.key else None)
    rng = random.Random(a.seed)
    try:
        if a.command == "open":
            slot, file_id = bytes.fromhex(a.args[0]), bytes.fromhex(a.args[1])
            opened = open_slot(slot, file_id, cred)
            if opened is None:
                print(json.dumps({"result": "wrongCredentials"}))
            else:
                print(json.dumps({"keys": keyset_to_json(opened[0]), "grantsOpened": opened[1]}))
        elif a.command == "make":
            file_id = bytes.fromhex(a.args[0])
            ks = keyset_from_json(json.loads(a.keys), file_id)
            argon = tuple(int(v) for v in a.argon2id.split(",")) if a.argon2id else None
            print(json.dumps({"slot": make_slot(file_id, cred, a.iterations, ks, bytes.fromhex(a.root), rng, argon).hex()}))
        elif a.command == "grant":
            slot, file_id = bytes.fromhex(a.args[0]), bytes.fromhex(a.args[1])
            ks = keyset_from_json(json.loads(a.keys), file_id)
            granted = add_grant(slot, file_id, ks, bytes.fromhex(a.previous_root), rng)
            if ks.get("root") is not None:       # a full rotation attests the slot under the new root
                granted = attest(granted, file_id, ks["root"])
            print(json.dumps({"slot": granted.hex()}))
        else:
            slot, file_id = bytes.fromhex(a.args[0]), bytes.fromhex(a.args[1])
            print(json.dumps({"attested": is_attested(slot, file_id, bytes.fromhex(a.root))}))
    except Corrupted as e:
        print(json.dumps({"result": "corrupted", "reason": str(e)}))
        return 6
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Writes the structured-mode seeds of the open-replay fuzz target (see StructuredMode.swift for the layout):
valid items of every class, a certificate with real DER, an identity, a transaction with a delete, a
replacement, a duplicate primary key, a torn tail, and catching up after the first record. Run from anywhere; writes next to itself."""
import json, os, struct, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "..", "Shared", "Keychain"))
from seed_entries import i64, put  # noqa: E402
CERTS = os.path.join(HERE, "..", "..", "..", "Fixtures", "certificates")

def delete(item): return bytes([0x02, item])

def record(*entries): return bytes([len(entries) - 1]) + b"".join(entries)

def seed(name, flags, *records, tail=b"", split=0):
    data = bytes([flags]) + (bytes([split]) if flags & 8 else b"") + b"".join(records)
    if flags & 2: data += b"\xff" + tail
    with open(os.path.join(HERE, name + ".bin"), "wb") as f: f.write(data)

gp = lambda item, account: put(item, 1, [("account", account), ("service", "mail.example.com"), ("label", "Mail")], b"s3cret")
cert_der = open(os.path.join(CERTS, "ec-p256-leaf-v3-no-ski.der"), "rb").read()
cert = json.load(open(os.path.join(CERTS, "ec-p256-leaf-v3-no-ski.json")))
cert_put = put(2, 3, [("certificateType", i64(3)), ("certificateEncoding", i64(3)),
                      ("subject", bytes.fromhex(cert["subject_der"])), ("issuer", bytes.fromhex(cert["issuer_der"])),
                      ("serialNumber", bytes.fromhex(cert["serial_content_octets"])),
                      ("publicKeyHash", bytes.fromhex(cert["public_key_hash"]))], cert_der)
key_put = put(3, 4, [("keyClass", i64(1)), ("applicationLabel", bytes.fromhex(cert["public_key_hash"])),
                     ("keyType", i64(73)), ("keySizeInBits", i64(256)), ("canSign", b"\x01")], b"\x04" * 65)

seed("generic-password", 0, record(gp(0, "ann")))
seed("internet-password", 0, record(put(1, 2, [("account", "ann"), ("server", "example.com"),
                                              ("protocol", i64(0x68747073)), ("port", i64(443)), ("path", "/")], b"pw")))
seed("certificate", 0, record(cert_put))
seed("identity", 1, record(cert_put), record(key_put))
seed("transaction-with-delete", 0, record(gp(0, "ann"), gp(1, "bob")), record(delete(0), gp(4, "carol")))
seed("replace-then-delete", 0, record(gp(0, "ann")), record(gp(0, "ann-renamed")), record(delete(0)))
seed("duplicate-primary-key", 0, record(gp(0, "ann")), record(gp(1, "ann")))
seed("torn-tail", 2, record(gp(0, "ann")), record(gp(1, "bob")), tail=b"\x00\x00\x00\x40\xff\xff\xff\xbf\x01")
seed("catch-up", 8, record(gp(0, "ann")), record(gp(1, "bob"), delete(0)), record(cert_put), split=1)

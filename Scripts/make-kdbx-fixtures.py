#!/usr/bin/env python3
"""Makes the KeePass KDBX 4 fixtures of Fixtures/kdbx/ with pykeepass (4.2.0), and the gzip/DEFLATE fixtures of
Fixtures/deflate/ with Python's zlib.

Every database is written by pykeepass; the KDF, the payload cipher, compression and the minor version are set
in the parsed header (pykeepass rebuilds the header from it when saving). KDF costs are small so that tests are
fast. Next to each NAME.kdbx, NAME.json holds what pykeepass reads back from the file: the entries kcf should
import (title, username, password, url, notes, group path, custom fields, attachments, history count, expiry,
OTP) and the entries in the recycle bin. The expected values are never produced by kcf.

Run from the repository root: python3 Scripts/make-kdbx-fixtures.py
"""
import datetime
import gzip
import hashlib
import json
import os
import random
import zlib

from construct import Container
from pykeepass import PyKeePass, create_database

OUT = os.path.join("Fixtures", "kdbx")
DEFLATE_OUT = os.path.join("Fixtures", "deflate")
PASSWORD = "correct horse ☃ battery"

ARGON2D = b'\xefcm\xdf\x8c)DK\x91\xf7\xa9\xa4\x03\xe3\n\x0c'
ARGON2ID = b'\x9e)\x8b\x19V\xdbGs\xb2=\xfc>\xc6\xf0\xa1\xe6'
AESKDF = b'\xc9\xd9\xf3\x9ab\x8aD`\xbft\r\x08\xc1\x8aO\xea'


def item(type_, key, value):
    return Container(type=type_, key=key, value=value, next_byte=1)


def set_kdf(kp, kdf):
    header = kp.kdbx.header.value.dynamic_header
    if kdf == "aes":
        entries = [item(0x42, "$UUID", AESKDF), item(0x05, "R", 1000), item(0x42, "S", os.urandom(32))]
    else:
        uuid = ARGON2D if kdf == "argon2d" else ARGON2ID
        entries = [item(0x42, "$UUID", uuid), item(0x05, "I", 2), item(0x05, "M", 64 * 1024),
                   item(0x04, "P", 2), item(0x42, "S", os.urandom(32)), item(0x04, "V", 0x13)]
    entries[-1].next_byte = 0
    header.kdf_parameters.data.dict = Container({e.key: e for e in entries})


def configure(kp, kdf, cipher, compressed, minor):
    kp.kdbx.header.value.minor_version = minor
    header = kp.kdbx.header.value.dynamic_header
    header.cipher_id.data = cipher
    header.compression_flags.data.compression = compressed
    set_kdf(kp, kdf)


def group_path(group):
    names = []
    while group is not None and not group.is_root_group:
        names.append(group.name or "")
        group = group.parentgroup
    return "/".join(reversed(names))


def describe(kp):
    recycle = kp.recyclebin_group
    entries, recycled = [], []
    for entry in kp.entries:
        record = {
            "title": entry.title or "", "username": entry.username or "", "password": entry.password or "",
            "url": entry.url or "", "notes": entry.notes or "", "group": group_path(entry.group),
            "customFields": sorted(k for k in entry.custom_properties if k != "otp"),
            "attachments": sorted(a.filename for a in entry.attachments),
            "historyCount": len(entry.history),
            "expires": bool(entry.expires),
            "otp": bool(entry.otp),
        }
        in_bin = False
        group = entry.group
        while group is not None:
            if recycle is not None and group.uuid == recycle.uuid:
                in_bin = True
            group = group.parentgroup
        (recycled if in_bin else entries).append(record)
    return {"password": PASSWORD, "version": "%d.%d" % kp.version, "cipher": kp.encryption_algorithm,
            "kdf": kp.kdf_algorithm if kp.version == (4, 0) else None,
            "compressed": bool(kp.kdbx.header.value.dynamic_header.compression_flags.data.compression),
            "entries": entries, "recycled": recycled}


def fill(kp):
    root = kp.root_group
    web = kp.add_group(root, "Web")
    mail = kp.add_group(web, "Mail ✉")
    kp.add_entry(root, "Plain", "ann", "s3cret", url="", notes="")
    kp.add_entry(web, "GitHub", "octo", "p@ss<&>\"'", url="https://github.com/login", notes="line one\nline two")
    kp.add_entry(mail, "Ünïcode Mail ☃", "jürgen", "pässwörd 🔑", url="https://mail.example.com:8443/inbox")
    custom = kp.add_entry(root, "With extras", "extra", "x", url="example.org")
    custom.set_custom_property("PIN", "1234", protect=True)
    custom.set_custom_property("Recovery", "words here")
    custom.expires = True
    custom.expiry_time = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    custom.otp = "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP"
    binary = kp.add_binary(b"attached bytes\x00\x01")
    custom.add_attachment(binary, "scan.pdf")
    history = kp.add_entry(root, "Changed", "bob", "old password")
    history.save_history()
    history.password = "new password"
    history.save_history()
    history.password = "newest password"
    gone = kp.add_entry(root, "Deleted one", "del", "deleted-password")
    kp.trash_entry(gone)


def make(name, kdf, cipher, compressed, minor=0, empty=False, password=PASSWORD, keyfile=None):
    path = os.path.join(OUT, name + ".kdbx")
    kp = create_database(path, password=password, keyfile=keyfile)
    configure(kp, kdf, cipher, compressed, minor)
    if not empty:
        fill(kp)
    kp.save()
    back = PyKeePass(path, password=password, keyfile=keyfile)
    description = describe(back)
    description["password"] = password or ""
    if keyfile:
        description["keyFile"] = os.path.basename(keyfile)
    with open(os.path.join(OUT, name + ".json"), "w", encoding="utf-8") as out:
        json.dump(description, out, indent=2, ensure_ascii=False, sort_keys=True)
        out.write("\n")


def deflate_fixtures():
    os.makedirs(DEFLATE_OUT, exist_ok=True)
    rng = random.Random(20261126)
    text = ("KeePass <Entry><String><Key>Title</Key><Value>GitHub</Value></String></Entry>\n" * 300).encode()
    noise = bytes(rng.randrange(256) for _ in range(70000))
    cases = {
        "stored": (text[:5000] + noise[:70000], dict(level=0)),
        "fixed": (text, dict(level=6, strategy=zlib.Z_FIXED)),
        "dynamic": (text + noise[:3000], dict(level=9)),
        "empty": (b"", dict(level=6)),
        "bomb": (bytes(8 << 20), dict(level=9)),
    }
    manifest = {}
    for name, (data, options) in cases.items():
        compressor = zlib.compressobj(wbits=31, **options)
        stream = compressor.compress(data) + compressor.flush()
        with open(os.path.join(DEFLATE_OUT, name + ".gz"), "wb") as out:
            out.write(stream)
        if name != "bomb":
            with open(os.path.join(DEFLATE_OUT, name + ".bin"), "wb") as out:
                out.write(data)
        assert gzip.decompress(stream) == data
        manifest[name] = {"bytes": len(data), "crc32": zlib.crc32(data)}
    with open(os.path.join(DEFLATE_OUT, "manifest.json"), "w") as out:
        json.dump(manifest, out, indent=2, sort_keys=True)
        out.write("\n")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    make("aeskdf-aes256-gzip", "aes", "aes256", True)
    make("aeskdf-aes256-plain", "aes", "aes256", False)
    make("argon2d-chacha20-gzip", "argon2d", "chacha20", True)
    make("argon2id-chacha20-plain-4.1", "argon2id", "chacha20", False, minor=1)
    make("argon2id-aes256-gzip-4.1", "argon2id", "aes256", True, minor=1)
    make("empty", "argon2d", "aes256", True, empty=True)
    key = os.urandom(32)
    with open(os.path.join(OUT, "v2.keyx"), "w") as out:
        data = key.hex().upper()
        out.write('<?xml version="1.0" encoding="utf-8"?>\n<KeyFile>\n\t<Meta>\n\t\t<Version>2.0</Version>\n\t</Meta>\n'
                  '\t<Key>\n\t\t<Data Hash="%s">\n\t\t\t%s %s %s %s\n\t\t\t%s %s %s %s\n\t\t</Data>\n\t</Key>\n</KeyFile>\n'
                  % ((hashlib.sha256(key).hexdigest()[:8].upper(),) + tuple(data[i:i + 8] for i in range(0, 64, 8))))
    with open(os.path.join(OUT, "hashed.key"), "wb") as out:
        out.write(b"any file at all, hashed with SHA-256 \x00\xff" * 3)
    make("keyfile-v2-and-password", "aes", "chacha20", True, keyfile=os.path.join(OUT, "v2.keyx"))
    make("keyfile-hashed-only", "aes", "aes256", True, password=None, keyfile=os.path.join(OUT, "hashed.key"))
    deflate_fixtures()

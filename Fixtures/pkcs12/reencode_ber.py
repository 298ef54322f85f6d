#!/usr/bin/env python3
"""Re-encodes a DER PKCS #12 file as BER, the way Java keytool, macOS and old OpenSSL write them, and
recomputes its MAC; written for the KeychainFile fixtures independently of KeychainFile's code.

    python3 Fixtures/pkcs12/reencode_ber.py IN.p12 OUT.p12 PASSWORD

Every constructed element gets an indefinite length (0x80 ... 00 00); every OCTET STRING longer than 16
bytes becomes a constructed OCTET STRING (tag 0x24) of three pieces, the middle one itself constructed of
two; the [0] IMPLICIT encryptedContent of an EncryptedData (tag 0x80) becomes constructed (0xa0) the same
way. The OCTET STRING of a `data` ContentInfo (the AuthenticatedSafe, and unencrypted SafeContents) is
re-encoded inside too, down to the PKCS #8 key of a plain keyBag; the content octets change, so the MacData's
HMAC (when the file has one) is recomputed: the key comes
from `openssl kdf PKCS12KDF` (ID 3, the MacData's digest, salt and iterations), the HMAC from Python's
hmac. Encrypted contents and certificates stay as they are (their bytes only split into pieces).
"""

import hashlib
import hmac
import subprocess
import sys

DATA = bytes.fromhex("2a864886f70d010701")  # 1.2.840.113549.1.7.1
SHA1 = bytes.fromhex("2b0e03021a")
SHA256 = bytes.fromhex("608648016503040201")


def parse(data, offset=0):
    """The DER elements of data: [(tag, content)] (definite lengths only, single-byte tags)."""
    elements = []
    while offset < len(data):
        tag = data[offset]
        first = data[offset + 1]
        offset += 2
        if first < 0x80:
            length = first
        else:
            count = first & 0x7f
            length = int.from_bytes(data[offset:offset + count], "big")
            offset += count
        elements.append((tag, data[offset:offset + length]))
        offset += length
    assert offset == len(data), "trailing bytes"
    return elements


def length(count):
    if count < 0x80:
        return bytes([count])
    raw = count.to_bytes((count.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw


def octets(content, constructed_tag=0x24):
    """An OCTET STRING (or [0] IMPLICIT one) as a constructed BER element of pieces."""
    if len(content) <= 16:
        return bytes([constructed_tag & ~0x20]) + length(len(content)) + content
    third = len(content) // 3
    pieces = [content[:third], content[third:2 * third], content[2 * third:]]
    half = len(pieces[1]) // 2
    middle = (b"\x24\x80" + b"\x04" + length(half) + pieces[1][:half]
              + b"\x04" + length(len(pieces[1]) - half) + pieces[1][half:] + b"\x00\x00")
    return (bytes([constructed_tag, 0x80]) + b"\x04" + length(len(pieces[0])) + pieces[0] + middle
            + b"\x04" + length(len(pieces[2])) + pieces[2] + b"\x00\x00")


def ber(tag, content, inside_data=False):
    """The BER re-encoding of one DER element."""
    if tag == 0x04:
        if inside_data:
            inner = b"".join(ber(t, c) for t, c in parse(content))
            return octets(inner)
        return octets(content)
    if tag == 0x80:
        return octets(content, 0xa0)
    if not tag & 0x20:
        return bytes([tag]) + length(len(content)) + content
    children = parse(content)
    is_data = tag == 0x30 and len(children) == 2 and children[0] == (0x06, DATA) and children[1][0] == 0xa0
    body = b""
    for index, (child_tag, child_content) in enumerate(children):
        if is_data and index == 1:
            (octet_tag, octet_content), = parse(child_content)
            body += b"\xa0\x80" + ber(octet_tag, octet_content, inside_data=True) + b"\x00\x00"
        else:
            body += ber(child_tag, child_content)
    return bytes([tag, 0x80]) + body + b"\x00\x00"


def pkcs12_kdf_mac_key(digest, password, salt, iterations):
    bmp = password.encode("utf-16-be") + b"\x00\x00"
    size = 20 if digest == "SHA1" else 32
    output = subprocess.run(["openssl", "kdf", "-keylen", str(size), "-kdfopt", f"digest:{digest}",
                             "-kdfopt", f"hexpass:{bmp.hex()}", "-kdfopt", f"hexsalt:{salt.hex()}",
                             "-kdfopt", f"iter:{iterations}", "-kdfopt", "id:3", "PKCS12KDF"],
                            check=True, capture_output=True, text=True).stdout
    return bytes.fromhex(output.strip().replace(":", ""))


def reencode(der, password):
    (tag, pfx), = parse(der)
    fields = parse(pfx)
    version, auth_safe = fields[:2]
    content_type, explicit = parse(auth_safe[1])
    (_, safe_octets), = parse(explicit[1])
    new_safe = b"".join(ber(t, c) for t, c in parse(safe_octets))
    if len(fields) == 2:  # no MacData
        return (b"\x30\x80" + b"\x02" + length(len(version[1])) + version[1]
                + b"\x30\x80" + b"\x06" + length(len(content_type[1])) + content_type[1]
                + b"\xa0\x80" + octets(new_safe) + b"\x00\x00" + b"\x00\x00" + b"\x00\x00")
    mac_data = fields[2]
    # The MAC covers the content octets, which are now the BER AuthenticatedSafe.
    mac_fields = parse(mac_data[1])
    (_, digest_info), (_, salt) = mac_fields[:2]
    iterations = mac_fields[2][1] if len(mac_fields) > 2 else b"\x01"  # DEFAULT 1
    algorithm, (_, old_mac) = parse(digest_info)
    oid = parse(algorithm[1])[0][1]
    digest = {SHA1: "SHA1", SHA256: "SHA256"}[oid]
    key = pkcs12_kdf_mac_key(digest, password, salt, int.from_bytes(iterations, "big"))
    assert hmac.new(key, safe_octets, digest.lower()).digest() == old_mac, "the input's MAC does not verify"
    new_mac = hmac.new(key, new_safe, digest.lower()).digest()
    mac_der = (b"\x30" + length(len(digest_info) - len(old_mac) - 2 + len(new_mac) + 2)
               + digest_info[:len(digest_info) - len(old_mac) - 2] + b"\x04" + length(len(new_mac)) + new_mac)
    mac_content = mac_der + b"\x04" + length(len(salt)) + salt
    if len(mac_fields) > 2:
        mac_content += b"\x02" + length(len(iterations)) + iterations
    return (b"\x30\x80" + b"\x02" + length(len(version[1])) + version[1]
            + b"\x30\x80" + b"\x06" + length(len(content_type[1])) + content_type[1]
            + b"\xa0\x80" + octets(new_safe) + b"\x00\x00" + b"\x00\x00"
            + ber(0x30, mac_content) + b"\x00\x00")


if __name__ == "__main__":
    source, target, password = sys.argv[1:4]
    with open(source, "rb") as handle:
        der = handle.read()
    with open(target, "wb") as handle:
        handle.write(reencode(der, password))

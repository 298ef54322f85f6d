#!/usr/bin/env python3
"""Generate the certificate fixtures for Tests/KeychainFileTests/Certificates/CertificateTests.swift.

Every NAME.der here is a real X.509 certificate made by OpenSSL through Python's `cryptography`
package, and NAME.json holds the fields KeychainFile must read from it, computed by `cryptography`
(never by KeychainFile):

    version                   X.509 version, 1 or 3 (cert.version)
    serial_content_octets     content octets of the serialNumber INTEGER: cert.serial_number as a
                              minimal two's-complement big-endian integer (checked to appear in the
                              TBS as 02 len content)
    subject_der, issuer_der   cert.subject.public_bytes(), cert.issuer.public_bytes()
    subject_key_identifier    SubjectKeyIdentifier extension's digest, or null when absent
    public_key_bits           the subjectPublicKey BIT STRING contents without the unused-bits byte:
                              RSA public_bytes(DER, PKCS1), EC public_bytes(X962, UncompressedPoint)
    public_key_hash           SHA-1 of public_key_bits (hashlib), Apple's kSecAttrPublicKeyHash

Run from the repository root:

    python3 Fixtures/certificates/generate.py          # (re)write the fixtures
    python3 Fixtures/certificates/generate.py --check  # exit 1 if any file would change

Deterministic: the RSA keys are committed as PEM in keys/ (RSA key generation cannot be seeded; the
script creates a missing key once), the EC keys are derived from fixed scalars, all dates and serials
are fixed, RSA signatures use PKCS #1 v1.5 and ECDSA signatures are deterministic (RFC 6979), so the same
script gives byte-identical files.

The v1 certificate is assembled by hand below (`cryptography` only builds v3 certificates): its TBS is
DER written here from RFC 5280 §4.1 without the [0] version field, signed with the RSA key, and then
loaded back with `cryptography`, which must report Version.v1.
"""

import datetime
import hashlib
import json
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = "--check" in sys.argv
changed = []

NOT_BEFORE = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
NOT_AFTER = datetime.datetime(2036, 1, 1, tzinfo=datetime.timezone.utc)


def write(name, data):
    path = os.path.join(HERE, name)
    old = open(path, "rb").read() if os.path.exists(path) else None
    if old == data:
        return
    changed.append(name)
    if not CHECK:
        with open(path, "wb") as f:
            f.write(data)


def rsa_key(name):
    path = os.path.join(HERE, "keys", name + ".pem")
    if os.path.exists(path):
        with open(path, "rb") as f:
            return serialization.load_pem_private_key(f.read(), password=None)
    if CHECK:
        sys.exit("missing committed key " + path)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return key


def ec_key(curve, seed):
    # A fixed private scalar derived from a label: deterministic, and far below the curve order.
    scalar = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:20], "big")
    return ec.derive_private_key(scalar, curve)


def name(*pairs):
    return x509.Name([x509.NameAttribute(oid, value) for oid, value in pairs])


def serial_content(n):
    return n.to_bytes((n.bit_length() + 8) // 8, "big", signed=True)


def key_bits(public_key):
    if isinstance(public_key, rsa.RSAPublicKey):
        return public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)
    return public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def sign(builder, key):
    if isinstance(key, rsa.RSAPrivateKey):
        return builder.sign(key, hashes.SHA256())
    return builder.sign(key, hashes.SHA256(), ecdsa_deterministic=True)


def tlv(tag, content):
    n = len(content)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + content


def emit(filename, cert, description):
    der = cert.public_bytes(serialization.Encoding.DER)
    # Re-load to read every field back from the DER itself.
    cert = x509.load_der_x509_certificate(der)
    try:
        ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest.hex()
    except x509.ExtensionNotFound:
        ski = None
    bits = key_bits(cert.public_key())
    serial = serial_content(cert.serial_number)
    tbs = cert.tbs_certificate_bytes
    assert tlv(0x02, serial) in tbs, filename
    # RFC 5280 §4.2.1.2 method (1): cryptography's SKI is SHA-1 of the BIT STRING contents, a second path
    # to the same public key hash.
    assert x509.SubjectKeyIdentifier.from_public_key(cert.public_key()).digest == hashlib.sha1(bits).digest()
    expected = {
        "description": description,
        "version": {x509.Version.v1: 1, x509.Version.v3: 3}[cert.version],
        "serial_content_octets": serial.hex(),
        "subject_der": cert.subject.public_bytes().hex(),
        "issuer_der": cert.issuer.public_bytes().hex(),
        "subject_key_identifier": ski,
        "public_key_bits": bits.hex(),
        "public_key_hash": hashlib.sha1(bits).hexdigest(),
    }
    write(filename + ".der", der)
    write(filename + ".json", (json.dumps(expected, indent=2) + "\n").encode())


def main():
    ca_key = rsa_key("rsa2048-ca")
    ca_name = name((NameOID.COUNTRY_NAME, "DE"), (NameOID.ORGANIZATION_NAME, "KeychainFile Test CA"),
                   (NameOID.COMMON_NAME, "KeychainFile Test Root"))

    # 1. RSA-2048 self-signed CA, v3, with a subject key identifier (computed from the key).
    builder = (x509.CertificateBuilder()
               .subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
               .serial_number(0x1000).not_valid_before(NOT_BEFORE).not_valid_after(NOT_AFTER)
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                            key_encipherment=False, data_encipherment=False,
                                            key_agreement=False, key_cert_sign=True, crl_sign=True,
                                            encipher_only=False, decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False))
    emit("rsa2048-ca-v3-ski", sign(builder, ca_key),
         "RSA-2048 self-signed CA, X.509 v3, basic constraints, key usage and subject key identifier")

    # 2. EC P-256 leaf issued by the RSA CA, v3 with extensions but no subject key identifier; the subject
    #    has a multi-valued RDN and a UTF8String with non-ASCII text.
    leaf_key = ec_key(ec.SECP256R1(), "ec-p256-leaf")
    subject = x509.Name([
        x509.RelativeDistinguishedName([x509.NameAttribute(NameOID.COUNTRY_NAME, "CH")]),
        x509.RelativeDistinguishedName([
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Zürich Example AG"),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Keys"),
        ]),
        x509.RelativeDistinguishedName([x509.NameAttribute(NameOID.COMMON_NAME, "leaf.example.com")]),
    ])
    builder = (x509.CertificateBuilder()
               .subject_name(subject).issuer_name(ca_name).public_key(leaf_key.public_key())
               .serial_number(0x5A17_C0DE_0042).not_valid_before(NOT_BEFORE).not_valid_after(NOT_AFTER)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.SubjectAlternativeName([x509.DNSName("leaf.example.com")]), critical=False))
    emit("ec-p256-leaf-v3-no-ski", sign(builder, ca_key),
         "EC P-256 leaf issued by the RSA CA, X.509 v3 without subject key identifier, multi-valued RDN")

    # 3. EC P-384 self-signed, v3, 20-octet serial (the RFC 5280 maximum), and a subject key identifier
    #    that is NOT derived from the key (8 chosen bytes), so it can only be read from the extension.
    p384_key = ec_key(ec.SECP384R1(), "ec-p384-long-serial")
    p384_name = name((NameOID.COMMON_NAME, "Long serial P-384"))
    builder = (x509.CertificateBuilder()
               .subject_name(p384_name).issuer_name(p384_name).public_key(p384_key.public_key())
               .serial_number(0x7EDC_BA98_7654_3210_0123_4567_89AB_CDEF_FEDC_BA98)
               .not_valid_before(NOT_BEFORE).not_valid_after(NOT_AFTER)
               .add_extension(x509.SubjectKeyIdentifier(bytes.fromhex("0102030405060708")), critical=False))
    emit("ec-p384-v3-long-serial-custom-ski", sign(builder, p384_key),
         "EC P-384 self-signed, X.509 v3, 20-octet serial, subject key identifier of 8 chosen bytes")

    # 4. EC P-256 self-signed, v3 without any extension, serial whose first byte has the high bit set, so
    #    its DER content octets start with 0x00.
    neg_key = ec_key(ec.SECP256R1(), "ec-p256-leading-zero")
    neg_name = name((NameOID.COMMON_NAME, "Serial with leading zero"))
    builder = (x509.CertificateBuilder()
               .subject_name(neg_name).issuer_name(neg_name).public_key(neg_key.public_key())
               .serial_number(0x80FF_0000_0000_0000_0000_0000_0000_0001)
               .not_valid_before(NOT_BEFORE).not_valid_after(NOT_AFTER))
    emit("ec-p256-v3-serial-leading-zero", sign(builder, neg_key),
         "EC P-256 self-signed, X.509 v3 with no extensions, serial 0x80FF…01 (content octets 00 80 FF …)")

    # 5. X.509 v1 (no version field), RSA-2048, self-signed; assembled by hand.
    v1_key = rsa_key("rsa2048-v1")
    v1_name = name((NameOID.ORGANIZATION_NAME, "KeychainFile"), (NameOID.COMMON_NAME, "Version 1"))
    sha256_with_rsa = tlv(0x30, tlv(0x06, bytes.fromhex("2a864886f70d01010b")) + b"\x05\x00")
    validity = tlv(0x30, tlv(0x17, b"260101000000Z") + tlv(0x17, b"360101000000Z"))
    spki = v1_key.public_key().public_bytes(serialization.Encoding.DER,
                                             serialization.PublicFormat.SubjectPublicKeyInfo)
    tbs = tlv(0x30, tlv(0x02, serial_content(0x0123_4567)) + sha256_with_rsa + v1_name.public_bytes()
              + validity + v1_name.public_bytes() + spki)
    signature = v1_key.sign(tbs, padding.PKCS1v15(), hashes.SHA256())
    der = tlv(0x30, tbs + sha256_with_rsa + tlv(0x03, b"\x00" + signature))
    v1 = x509.load_der_x509_certificate(der)
    assert v1.version == x509.Version.v1
    v1.public_key().verify(v1.signature, v1.tbs_certificate_bytes, padding.PKCS1v15(), hashes.SHA256())
    emit("rsa2048-v1", v1, "RSA-2048 self-signed, X.509 v1 (no version field, no extensions)")

    if CHECK and changed:
        sys.exit("would change: " + ", ".join(changed))
    print("unchanged" if not changed else ("checked" if CHECK else "wrote " + ", ".join(changed)))


main()

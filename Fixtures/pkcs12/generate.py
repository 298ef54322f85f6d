#!/usr/bin/env python3
"""PKCS #12 fixtures for kcf import, made by Python `cryptography` (OpenSSL), never by KeychainFile.

Each NAME.p12 holds one of the committed test identities (certificate and private key):

    rsa    Fixtures/certificates/rsa2048-v1.der with Fixtures/certificates/keys/rsa2048-v1.pem
    ec     Fixtures/certificates/ec-p256-leaf-v3-no-ski.der with its key (the fixed scalar that
           Fixtures/certificates/generate.py derives from "ec-p256-leaf")

written by pkcs12.serialize_key_and_certificates with:

    rsa-best-available.p12     BestAvailableEncryption(password)
    ec-pbes2-aes256-sha256.p12 the explicit builder: PBESv2SHA256AndAES256CBC, HMAC-SHA256 MAC, 2048 rounds
    ec-few-rounds.p12          the same with 1 round (for the bit-flip and truncation sweeps: fast to reject)
    ec-unencrypted.p12         NoEncryption(): plain certificate and key bags, no MAC
    rsa-legacy-3des.p12        PBESv1SHA1And3KeyTripleDESCBC, HMAC-SHA1 MAC

and by the `openssl pkcs12 -export` command (OpenSSL 3), for what cryptography does not write:

    ec-openssl-aes128-sha1mac.p12  -keypbe AES-128-CBC -certpbe AES-128-CBC -macalg sha1
    ec-openssl-nomac.p12           -nomac (AES-256-CBC, no MAC: a wrong password shows when decrypting)

and, with --legacy (which writes only these), by `openssl pkcs12 -export` with the legacy algorithms that
macOS, Windows and OpenSSL 1.x write (the legacy provider of OpenSSL 3), all with an HMAC-SHA1 MAC:

    ec-openssl-legacy.p12            -legacy: key pbeWithSHAAnd3-KeyTripleDES-CBC, certificate
                                     pbewithSHAAnd40BitRC2-CBC
    ec-openssl-legacy-few-rounds.p12 the same with -iter 1 (for the bit-flip and truncation sweeps)
    rsa-openssl-legacy-rc2-128.p12   -legacy -keypbe PBE-SHA1-3DES -certpbe PBE-SHA1-RC2-128
    ec-openssl-legacy-2des.p12       -legacy -keypbe PBE-SHA1-2DES -certpbe PBE-SHA1-2DES
    ec-openssl-pbes2-3des.p12        -keypbe DES-EDE3-CBC -certpbe DES-EDE3-CBC (PBES2, PBKDF2-HMAC-SHA256)
    ec-openssl-legacy-nomac.p12      -legacy -nomac (a wrong password shows as a padding that does not check)
    ec-openssl-legacy-rc4.p12        -legacy -keypbe PBE-SHA1-RC4-128 -certpbe PBE-SHA1-RC4-40 (refused: RC4 is not read)
    ec-ber-legacy.p12                ec-openssl-legacy-few-rounds.p12 re-encoded as BER (indefinite lengths,
                                     constructed OCTET STRINGs, MAC recomputed) by reencode_ber.py, as no
                                     tool here writes BER (Java keytool is absent)
    ec-ber-unencrypted.p12           ec-unencrypted.p12 (no MAC, plain bags) re-encoded the same way: BER down
                                     to the certificate bag and the PKCS #8 key of the keyBag

For each of these, openssl-info/NAME.txt is what `openssl pkcs12 -info -nodes -legacy` prints for it
(standard output, then standard error): the certificate and the decrypted PKCS #8 key as PEM, which the
Swift tests compare with what the library decodes.

manifest.json records, for each file, its password, friendly name, the certificate fixture it holds and the
key's PKCS #8 DER (hex) as cryptography writes it. The salts and IVs are random, so a rerun writes other
bytes; --check instead loads every committed file back with pkcs12.load_key_and_certificates and checks it
against the manifest, and also loads kcf-export.p12 with its password ("kcf export password") and checks it
holds the ec identity. kcf-export.p12 was written by kcf itself: `kcf import ec-pbes2-aes256-sha256.p12` into
a new keychain, then `kcf export -f pkcs12 --iterations 2048 -o kcf-export.p12`, the passphrase on stdin.

    python3 Fixtures/pkcs12/generate.py           # (re)write the fixtures
    python3 Fixtures/pkcs12/generate.py --legacy  # (re)write only the legacy and BER fixtures
    python3 Fixtures/pkcs12/generate.py --check   # check the committed files
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12

HERE = os.path.dirname(os.path.abspath(__file__))
CERTIFICATES = os.path.join(HERE, "..", "certificates")
PASSWORD = "pkcs12 fixture password"
EXPORT_PASSWORD = "kcf export password"


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def identities():
    rsa_key = serialization.load_pem_private_key(read(os.path.join(CERTIFICATES, "keys", "rsa2048-v1.pem")), None)
    scalar = int.from_bytes(hashlib.sha256(b"ec-p256-leaf").digest()[:20], "big")
    ec_key = ec.derive_private_key(scalar, ec.SECP256R1())
    return {
        "rsa": (rsa_key, "rsa2048-v1.der"),
        "ec": (ec_key, "ec-p256-leaf-v3-no-ski.der"),
    }


def builder(rounds, algorithm, mac):
    return (serialization.PrivateFormat.PKCS12.encryption_builder().kdf_rounds(rounds)
            .key_cert_algorithm(algorithm).hmac_hash(mac).build(PASSWORD.encode()))


FILES = {
    "rsa-best-available.p12": ("rsa", "RSA fixture", lambda: serialization.BestAvailableEncryption(PASSWORD.encode())),
    "ec-pbes2-aes256-sha256.p12": ("ec", "EC fixture",
                                   lambda: builder(2048, pkcs12.PBES.PBESv2SHA256AndAES256CBC, hashes.SHA256())),
    "ec-few-rounds.p12": ("ec", "EC few rounds", lambda: builder(1, pkcs12.PBES.PBESv2SHA256AndAES256CBC, hashes.SHA256())),
    "ec-unencrypted.p12": ("ec", "EC unencrypted", lambda: serialization.NoEncryption()),
    "rsa-legacy-3des.p12": ("rsa", "RSA legacy", lambda: builder(2048, pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC, hashes.SHA1())),
}


def pkcs8(key):
    return key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


LEGACY = [
    ("ec-openssl-legacy.p12", "ec", "EC openssl legacy", ["-legacy"]),
    ("ec-openssl-legacy-few-rounds.p12", "ec", "EC legacy few rounds", ["-legacy", "-iter", "1"]),
    ("rsa-openssl-legacy-rc2-128.p12", "rsa", "RSA openssl RC2-128",
     ["-legacy", "-keypbe", "PBE-SHA1-3DES", "-certpbe", "PBE-SHA1-RC2-128"]),
    ("ec-openssl-legacy-2des.p12", "ec", "EC openssl 2-key 3DES", ["-legacy", "-keypbe", "PBE-SHA1-2DES", "-certpbe", "PBE-SHA1-2DES"]),
    ("ec-openssl-pbes2-3des.p12", "ec", "EC openssl PBES2 3DES", ["-keypbe", "DES-EDE3-CBC", "-certpbe", "DES-EDE3-CBC"]),
    ("ec-openssl-legacy-nomac.p12", "ec", "EC openssl legacy no MAC", ["-legacy", "-nomac"]),
    ("ec-openssl-legacy-rc4.p12", "ec", "EC openssl RC4", ["-legacy", "-keypbe", "PBE-SHA1-RC4-128", "-certpbe", "PBE-SHA1-RC4-40"]),
]


def openssl_info(name, password=PASSWORD):
    result = subprocess.run(["openssl", "pkcs12", "-in", os.path.join(HERE, name), "-info", "-nodes", "-legacy",
                             "-passin", "pass:" + password], check=True, capture_output=True, text=True)
    with open(os.path.join(HERE, "openssl-info", name.replace(".p12", ".txt")), "w") as handle:
        handle.write(result.stdout + result.stderr)


def generate_legacy():
    keys = identities()
    with open(os.path.join(HERE, "manifest.json")) as handle:
        manifest = json.load(handle)
    with tempfile.TemporaryDirectory() as directory:
        for name, identity, friendly, options in LEGACY:
            key, certificate_file = keys[identity]
            key_path = os.path.join(directory, identity + "-key.pem")
            certificate_path = os.path.join(directory, identity + "-certificate.pem")
            with open(key_path, "wb") as handle:
                handle.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
            certificate = x509.load_der_x509_certificate(read(os.path.join(CERTIFICATES, certificate_file)))
            with open(certificate_path, "wb") as handle:
                handle.write(certificate.public_bytes(serialization.Encoding.PEM))
            subprocess.run(["openssl", "pkcs12", "-export", "-in", certificate_path, "-inkey", key_path, "-name", friendly,
                            "-passout", "pass:" + PASSWORD, "-out", os.path.join(HERE, name), *options], check=True)
            manifest[name] = {"password": PASSWORD, "friendly_name": friendly, "certificate": certificate_file,
                              "pkcs8": pkcs8(key).hex()}
    subprocess.run([sys.executable, os.path.join(HERE, "reencode_ber.py"), os.path.join(HERE, "ec-openssl-legacy-few-rounds.p12"),
                    os.path.join(HERE, "ec-ber-legacy.p12"), PASSWORD], check=True)
    manifest["ec-ber-legacy.p12"] = dict(manifest["ec-openssl-legacy-few-rounds.p12"])
    subprocess.run([sys.executable, os.path.join(HERE, "reencode_ber.py"), os.path.join(HERE, "ec-unencrypted.p12"),
                    os.path.join(HERE, "ec-ber-unencrypted.p12"), ""], check=True)
    manifest["ec-ber-unencrypted.p12"] = dict(manifest["ec-unencrypted.p12"])
    for name in [entry[0] for entry in LEGACY if "rc4" not in entry[0]] + ["ec-ber-legacy.p12", "rsa-legacy-3des.p12"]:
        openssl_info(name)
    openssl_info("ec-ber-unencrypted.p12", "")
    with open(os.path.join(HERE, "manifest.json"), "w") as handle:
        json.dump(manifest, handle, indent=1, sort_keys=True)
        handle.write("\n")
    print(f"wrote {len(LEGACY) + 2} legacy files, their openssl-info and manifest.json")


def generate():
    keys = identities()
    manifest = {}
    for name, (identity, friendly, encryption) in FILES.items():
        key, certificate_file = keys[identity]
        certificate = x509.load_der_x509_certificate(read(os.path.join(CERTIFICATES, certificate_file)))
        data = pkcs12.serialize_key_and_certificates(friendly.encode(), key, certificate, None, encryption())
        with open(os.path.join(HERE, name), "wb") as handle:
            handle.write(data)
        manifest[name] = {"password": "" if "unencrypted" in name else PASSWORD, "friendly_name": friendly,
                          "certificate": certificate_file, "pkcs8": pkcs8(key).hex()}
    ec_key, ec_certificate_file = keys["ec"]
    with tempfile.TemporaryDirectory() as directory:
        key_path = os.path.join(directory, "key.pem")
        certificate_path = os.path.join(directory, "certificate.pem")
        with open(key_path, "wb") as handle:
            handle.write(ec_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()))
        certificate = x509.load_der_x509_certificate(read(os.path.join(CERTIFICATES, ec_certificate_file)))
        with open(certificate_path, "wb") as handle:
            handle.write(certificate.public_bytes(serialization.Encoding.PEM))
        for name, friendly, options in [
            ("ec-openssl-aes128-sha1mac.p12", "EC openssl AES-128",
             ["-keypbe", "AES-128-CBC", "-certpbe", "AES-128-CBC", "-macalg", "sha1"]),
            ("ec-openssl-nomac.p12", "EC openssl no MAC", ["-nomac"]),
        ]:
            subprocess.run(["openssl", "pkcs12", "-export", "-in", certificate_path, "-inkey", key_path, "-name", friendly,
                            "-passout", "pass:" + PASSWORD, "-out", os.path.join(HERE, name), *options], check=True)
            manifest[name] = {"password": PASSWORD, "friendly_name": friendly, "certificate": ec_certificate_file,
                              "pkcs8": pkcs8(ec_key).hex()}
    with open(os.path.join(HERE, "manifest.json"), "w") as handle:
        json.dump(manifest, handle, indent=1, sort_keys=True)
        handle.write("\n")
    print(f"wrote {len(manifest)} files and manifest.json")


def check():
    with open(os.path.join(HERE, "manifest.json")) as handle:
        manifest = json.load(handle)
    for name, entry in manifest.items():
        password = entry["password"].encode() or None
        key, certificate, _ = pkcs12.load_key_and_certificates(read(os.path.join(HERE, name)), password)
        assert pkcs8(key).hex() == entry["pkcs8"], name
        assert certificate.public_bytes(serialization.Encoding.DER) == read(os.path.join(CERTIFICATES, entry["certificate"])), name
        print(f"ok {name}")
    export = os.path.join(HERE, "kcf-export.p12")
    if os.path.exists(export):
        loaded = pkcs12.load_pkcs12(read(export), EXPORT_PASSWORD.encode())
        assert pkcs8(loaded.key).hex() == manifest["ec-pbes2-aes256-sha256.p12"]["pkcs8"], "kcf-export.p12 key"
        assert loaded.cert.certificate.public_bytes(serialization.Encoding.DER) == read(
            os.path.join(CERTIFICATES, "ec-p256-leaf-v3-no-ski.der")), "kcf-export.p12 certificate"
        print(f"ok kcf-export.p12 (friendly name {loaded.cert.friendly_name!r})")
    else:
        print("kcf-export.p12 missing", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    if "--check" in sys.argv:
        check()
    elif "--legacy" in sys.argv:
        generate_legacy()
    else:
        generate()

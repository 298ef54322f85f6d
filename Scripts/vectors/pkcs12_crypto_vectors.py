#!/usr/bin/env python3
"""Differential vectors for the ciphers of PKCS #12 files, computed by OpenSSL (never by KeychainFile):

    Fixtures/crypto/openssl/aes_cbc_pkcs7.json  AES-128/192/256-CBC with PKCS #7 padding, from Python
                                                `cryptography` (OpenSSL), plaintexts of 0 to 70 bytes
    Fixtures/crypto/openssl/pkcs12_kdf.json     the PKCS #12 key derivation (RFC 7292 Appendix B.2), from
                                                `openssl kdf ... PKCS12KDF` (OpenSSL 3), SHA-256 and SHA-1,
                                                IDs 1-3, the password given as its BMPString with the two
                                                terminating zero bytes (`hexpass`), as RFC 7292 B.1 formats it
    Fixtures/crypto/openssl/des_ede3_cbc.json   Triple-DES CBC (three-key and two-key) with PKCS #7 padding, from
                                                `openssl enc -des-ede3-cbc` / `-des-ede-cbc`, 0 to 40 bytes
    Fixtures/crypto/openssl/rc2_cbc.json        RC2 CBC (RFC 2268) with PKCS #7 padding, from `openssl enc
                                                -rc2-40-cbc` / `-rc2-64-cbc` / `-rc2-cbc` (the legacy provider):
                                                5-, 8- and 16-byte keys with 40, 64 and 128 effective key bits

Inputs come from a seeded generator, so the files are the same on every run with the same OpenSSL.
Run from the repository root:

    python3 Scripts/vectors/pkcs12_crypto_vectors.py
"""

import json
import random
import subprocess

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

rng = random.Random(7292)


def rbytes(count):
    return bytes(rng.getrandbits(8) for _ in range(count))


def aes_cases():
    cases = []
    for index, length in enumerate(list(range(0, 34)) + [47, 48, 49, 63, 64, 65, 70]):
        key = rbytes([16, 24, 32][index % 3])
        iv = rbytes(16)
        plaintext = rbytes(length)
        padder = padding.PKCS7(128).padder()
        padded = padder.update(plaintext) + padder.finalize()
        encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        ciphertext = encryptor.update(padded) + encryptor.finalize()
        cases.append({"key": key.hex(), "iv": iv.hex(), "plaintext": plaintext.hex(), "ciphertext": ciphertext.hex()})
    return {"source": "Python cryptography (OpenSSL): AES-CBC with PKCS7(128) padding", "cases": cases}


def bmp(text):
    return text.encode("utf-16-be") + b"\x00\x00"


def kdf_cases():
    cases = []
    passwords = ["", "a", "password", "correct horse battery staple", "Ünïcødé ✓", "x" * 70]
    for index, password in enumerate(passwords * 3):
        digest = ["SHA256", "SHA1"][index % 2]
        purpose = 1 + index % 3
        salt = rbytes([0, 8, 16, 20, 64, 65][index % 6])
        iterations = [1, 2, 3, 100, 2048][index % 5]
        length = [32, 20, 16, 48, 70, 1][index % 6]
        options = ["-keylen", str(length), "-kdfopt", f"digest:{digest}", "-kdfopt", f"hexpass:{bmp(password).hex()}",
                   "-kdfopt", f"iter:{iterations}", "-kdfopt", f"id:{purpose}"]
        if salt:
            options += ["-kdfopt", f"hexsalt:{salt.hex()}"]
        else:
            options += ["-kdfopt", "salt:"]
        output = subprocess.run(["openssl", "kdf", *options, "PKCS12KDF"], check=True, capture_output=True, text=True).stdout
        cases.append({"hash": digest.lower(), "id": purpose, "password": password, "bmp_password": bmp(password).hex(),
                      "salt": salt.hex(), "iterations": iterations, "length": length,
                      "output": output.strip().replace(":", "").lower()})
    version = subprocess.run(["openssl", "version"], check=True, capture_output=True, text=True).stdout.strip()
    return {"source": f"openssl kdf PKCS12KDF ({version})", "cases": cases}


def openssl_enc(cipher, key, iv, plaintext):
    return subprocess.run(["openssl", "enc", "-" + cipher, "-e", "-K", key.hex(), "-iv", iv.hex(),
                           "-provider", "legacy", "-provider", "default"],
                          input=plaintext, check=True, capture_output=True).stdout


def legacy_cases(ciphers, lengths, seed):
    # A generator of its own, so that these files do not change the others' inputs.
    legacy = random.Random(seed)
    cases = []
    for index, length in enumerate(lengths):
        cipher, key_bytes, effective_bits = ciphers[index % len(ciphers)]
        key = bytes(legacy.getrandbits(8) for _ in range(key_bytes))
        iv = bytes(legacy.getrandbits(8) for _ in range(8))
        plaintext = bytes(legacy.getrandbits(8) for _ in range(length))
        case = {"cipher": cipher, "key": key.hex(), "iv": iv.hex(), "plaintext": plaintext.hex(),
                "ciphertext": openssl_enc(cipher, key, iv, plaintext).hex()}
        if effective_bits:
            case["effective_key_bits"] = effective_bits
        cases.append(case)
    version = subprocess.run(["openssl", "version"], check=True, capture_output=True, text=True).stdout.strip()
    return {"source": f"openssl enc, PKCS #7 padding ({version})", "cases": cases}


LENGTHS = list(range(0, 25)) + [31, 32, 33, 40]

for path, content in [("Fixtures/crypto/openssl/aes_cbc_pkcs7.json", aes_cases()),
                      ("Fixtures/crypto/openssl/pkcs12_kdf.json", kdf_cases()),
                      ("Fixtures/crypto/openssl/des_ede3_cbc.json",
                       legacy_cases([("des-ede3-cbc", 24, None), ("des-ede-cbc", 16, None)], LENGTHS, 6701)),
                      ("Fixtures/crypto/openssl/rc2_cbc.json",
                       legacy_cases([("rc2-40-cbc", 5, 40), ("rc2-64-cbc", 8, 64), ("rc2-cbc", 16, 128)], LENGTHS, 2268))]:
    with open(path, "w") as handle:
        json.dump(content, handle, indent=1)
        handle.write("\n")
    print(f"wrote {path}: {len(content['cases'])} cases")

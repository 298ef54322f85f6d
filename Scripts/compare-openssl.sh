#!/usr/bin/env bash
# Compares `kcf-bench crypto` with OpenSSL, whose hardware paths are masked, and prints our figure over
# theirs as ratios.
#
#   Scripts/compare-openssl.sh [ROUNDS] [SECONDS]      (defaults: 5 rounds, 1 second per figure)
#
# Shared virtual machines change speed from minute to minute, so the two sides are measured alternately,
# ROUNDS times each, and the best figure of each side is compared: both get the same chances at a quiet
# moment. The reference-loop figure printed with the results says how fast the machine was running.
#
# OpenSSL's paths are masked through OPENSSL_ia32cap (see OpenSSL's man page OPENSSL_ia32cap(3)):
#   SHA-NI masked:                      ~0x0:~0x20000000
#   AES-NI, PCLMULQDQ, VAES masked:     ~0x200000200000000:~0x60000000000      (leaves the SSSE3 vpaes path)
#   ... and SSSE3 masked too:           ~0x200020200000000:~0x60000000000      (the plain table path)
# PBKDF2 is compared with Python's hashlib.pbkdf2_hmac (OpenSSL underneath) with SHA-NI masked.
# X25519 is compared with `openssl speed ecdhx25519` (one shared secret per operation), unmasked: OpenSSL's
# x86-64 X25519 is its own 51-bit-limb assembly, and masking BMI2/ADX does not change its rate here.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
seconds=${2:-1}
swift build -c release --product kcf-bench >/dev/null
ROUNDS="$rounds" SECONDS_PER_FIGURE="$seconds" exec python3 - <<'PY'
import json, os, subprocess

rounds = int(os.environ["ROUNDS"])
seconds = os.environ["SECONDS_PER_FIGURE"]
bench = ".build/release/kcf-bench"
SHA_NI_MASKED = "~0x0:~0x20000000"
AESNI_MASKED = "~0x200000200000000:~0x60000000000"
TABLE_PATH = "~0x200020200000000:~0x60000000000"

def ours(name):
    out = subprocess.run([bench, "crypto", "--json", "--seconds", seconds, "--only", name],
                         check=True, capture_output=True, text=True).stdout
    figures = {}
    for f in json.loads(out)["figures"]:
        figures[(f["name"], f["unit"])] = f["value"]
    return figures

def openssl(mask, size, *algorithm):
    env = dict(os.environ, OPENSSL_ia32cap=mask)
    out = subprocess.run(["openssl", "speed", "-mr", "-seconds", seconds, "-bytes", str(size), *algorithm],
                         check=True, capture_output=True, text=True, env=env).stdout
    rate = [line.split(":")[3] for line in out.splitlines() if line.startswith("+F:")][-1]
    return float(rate) / 1e6  # MB/s

def hashlib_pbkdf2():
    env = dict(os.environ, OPENSSL_ia32cap=SHA_NI_MASKED)
    code = ("import hashlib,time\n"
            "s=time.perf_counter(); hashlib.pbkdf2_hmac('sha256', b'correct horse battery staple', b'Z'*32, 600000, 32)\n"
            "print(600000/(time.perf_counter()-s))")
    return float(subprocess.run(["python3", "-c", code], check=True, capture_output=True, text=True, env=env).stdout)

def openssl_x25519():
    out = subprocess.run(["openssl", "speed", "-mr", "-seconds", seconds, "ecdhx25519"],
                         check=True, capture_output=True, text=True).stdout
    return float([line.split(":")[3] for line in out.splitlines() if line.startswith("+F5:")][-1])  # ops/s

def best_of(measure):
    return max(measure() for _ in range(1))

comparisons = [
    # (label, our measurement, our figure key, their measurement, against, target)
    ("SHA-256 1 MiB (MB/s)", "SHA-256 1 MiB", ("SHA-256 1 MiB", "MB/s"),
     lambda: openssl(SHA_NI_MASKED, 1048576, "sha256"), "OpenSSL, SHA-NI masked", 0.75),
    ("SHA-256 64 B (MB/s)", "SHA-256 64 B", ("SHA-256 64 B", "MB/s"),
     lambda: openssl(SHA_NI_MASKED, 64, "sha256"), "OpenSSL, SHA-NI masked", None),
    ("PBKDF2-HMAC-SHA256 (iterations/s)", "PBKDF2", ("PBKDF2-HMAC-SHA256", "iterations/s"),
     hashlib_pbkdf2, "hashlib.pbkdf2_hmac, SHA-NI masked", 0.8),
    ("AES-256-GCM seal 16 KiB (MB/s)", "AES-256-GCM 16 KiB", ("AES-256-GCM seal 16 KiB", "MB/s"),
     lambda: openssl(TABLE_PATH, 16384, "-evp", "aes-256-gcm"), "OpenSSL table path (SSSE3 masked)", 1.0),
    ("AES-256-GCM open 16 KiB (MB/s)", "AES-256-GCM 16 KiB", ("AES-256-GCM open 16 KiB", "MB/s"),
     lambda: openssl(TABLE_PATH, 16384, "-evp", "aes-256-gcm"), "OpenSSL table path (SSSE3 masked)", 1.0),
    ("AES-256-GCM seal 256 B (MB/s)", "AES-256-GCM 256 B", ("AES-256-GCM seal 256 B", "MB/s"),
     lambda: openssl(TABLE_PATH, 256, "-evp", "aes-256-gcm"), "OpenSSL table path (SSSE3 masked)", None),
    ("AES-256-GCM seal 16 KiB vs vpaes (MB/s)", "AES-256-GCM 16 KiB", ("AES-256-GCM seal 16 KiB", "MB/s"),
     lambda: openssl(AESNI_MASKED, 16384, "-evp", "aes-256-gcm"), "OpenSSL vpaes path (AES-NI masked)", None),
    ("X25519 shared secret (ops/s)", "X25519", ("X25519 shared secret", "ops/s"),
     openssl_x25519, "openssl speed ecdhx25519", None),
]

machine = json.loads(subprocess.run([bench, "crypto", "--json", "--seconds", "0.2", "--only", "nothing"],
                                    check=True, capture_output=True, text=True).stdout)["machine"]
version = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip()
reference = []
results = []
seals_256 = 0.0
for label, our_name, key, theirs, against, target in comparisons:
    mine, their = 0.0, 0.0
    for _ in range(rounds):
        figures = ours(our_name)
        mine = max(mine, figures[key])
        if our_name == "AES-256-GCM 256 B":
            seals_256 = max(seals_256, figures[("AES-256-GCM seal 256 B", "ops/s")])
        their = max(their, theirs())
    reference.append(ours("reference loop")[("reference loop (dependent add + xor)", "GHz-equivalent")])
    results.append((label, mine, their, against, target))

print(f"compare-openssl — {machine} — {version}")
print(f"best of {rounds} alternating rounds per figure; reference loop {min(reference):.2f}–{max(reference):.2f} GHz-equivalent during the run")
print(f"{'figure':40} {'ours':>13} {'theirs':>13} {'ratio':>6}  {'target':11} against")
for label, mine, their, against, target in results:
    ratio = mine / their if their else float("nan")
    verdict = "" if target is None else (f"≥{target:<4} " + ("met" if ratio >= target else "MISSED"))
    print(f"{label:40} {mine:13,.1f} {their:13,.1f} {ratio:6.2f}  {verdict:11} {against}")
print(f"{'AES-256-GCM 256 B seals per second':40} {seals_256:13,.0f} {'':>13} {'':>6}  ≥250,000 {'met' if seals_256 >= 250000 else 'MISSED'}")
PY

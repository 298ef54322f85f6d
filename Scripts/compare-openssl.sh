#!/usr/bin/env bash
# Runs `kcf-bench crypto` and, in the same run, OpenSSL's own figures with its hardware paths masked, then
# prints our figure over theirs as ratios.
#
#   Scripts/compare-openssl.sh [SECONDS]      (default 2 seconds per figure)
#
# OpenSSL's paths are masked through OPENSSL_ia32cap (see OpenSSL's man page OPENSSL_ia32cap(3)):
#   SHA-NI masked:                      ~0x0:~0x20000000
#   AES-NI, PCLMULQDQ, VAES masked:     ~0x200000200000000:~0x60000000000      (leaves the SSSE3 vpaes path)
#   ... and SSSE3 masked too:           ~0x200020200000000:~0x60000000000      (the plain table path)
# PBKDF2 is compared with Python's hashlib.pbkdf2_hmac (OpenSSL underneath) with SHA-NI masked.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-2}

sha_ni_masked="~0x0:~0x20000000"
aesni_masked="~0x200000200000000:~0x60000000000"
table_path="~0x200020200000000:~0x60000000000"

swift build -c release --product kcf-bench >/dev/null
ours=$(.build/release/kcf-bench crypto --json --seconds "$seconds")

# Bytes per second from `openssl speed -mr` for one algorithm and one size.
openssl_rate() {  # mask, size, args...
    local mask=$1 size=$2; shift 2
    OPENSSL_ia32cap="$mask" openssl speed -mr -seconds "$seconds" -bytes "$size" "$@" 2>/dev/null \
        | awk -F: '/^\+F:/ { print $4 }' | tail -n 1
}

sha_1m=$(openssl_rate "$sha_ni_masked" 1048576 sha256)
sha_64=$(openssl_rate "$sha_ni_masked" 64 sha256)
gcm_table_16k=$(openssl_rate "$table_path" 16384 -evp aes-256-gcm)
gcm_table_256=$(openssl_rate "$table_path" 256 -evp aes-256-gcm)
gcm_vpaes_16k=$(openssl_rate "$aesni_masked" 16384 -evp aes-256-gcm)
pbkdf2=$(OPENSSL_ia32cap="$sha_ni_masked" python3 - <<'PY'
import hashlib, time
best = 0.0
for _ in range(3):
    start = time.perf_counter()
    hashlib.pbkdf2_hmac("sha256", b"correct horse battery staple", b"Z" * 32, 600_000, 32)
    best = max(best, 600_000 / (time.perf_counter() - start))
print(best)
PY
)

OURS="$ours" SHA_1M="$sha_1m" SHA_64="$sha_64" GCM_TABLE_16K="$gcm_table_16k" GCM_TABLE_256="$gcm_table_256" \
GCM_VPAES_16K="$gcm_vpaes_16k" PBKDF2="$pbkdf2" OPENSSL_VERSION="$(openssl version)" python3 - <<'PY'
import json, os
ours = json.loads(os.environ["OURS"])
fig = {}
for f in ours["figures"]:
    fig.setdefault(f["name"], {})[f["unit"]] = f["value"]
def mb(x): return float(x) / 1e6
rows = [
    ("SHA-256 1 MiB (MB/s)", fig["SHA-256 1 MiB"]["MB/s"], mb(os.environ["SHA_1M"]), "OpenSSL, SHA-NI masked", 0.75),
    ("SHA-256 64 B (MB/s)", fig["SHA-256 64 B"]["MB/s"], mb(os.environ["SHA_64"]), "OpenSSL, SHA-NI masked", None),
    ("PBKDF2-HMAC-SHA256 (iterations/s)", fig["PBKDF2-HMAC-SHA256"]["iterations/s"], float(os.environ["PBKDF2"]), "hashlib, SHA-NI masked", 0.8),
    ("AES-256-GCM seal 16 KiB (MB/s)", fig["AES-256-GCM seal 16 KiB"]["MB/s"], mb(os.environ["GCM_TABLE_16K"]), "OpenSSL table path (SSSE3 masked)", 1.0),
    ("AES-256-GCM open 16 KiB (MB/s)", fig["AES-256-GCM open 16 KiB"]["MB/s"], mb(os.environ["GCM_TABLE_16K"]), "OpenSSL table path (SSSE3 masked)", 1.0),
    ("AES-256-GCM seal 256 B (MB/s)", fig["AES-256-GCM seal 256 B"]["MB/s"], mb(os.environ["GCM_TABLE_256"]), "OpenSSL table path (SSSE3 masked)", None),
    ("AES-256-GCM seal 16 KiB (MB/s)", fig["AES-256-GCM seal 16 KiB"]["MB/s"], mb(os.environ["GCM_VPAES_16K"]), "OpenSSL vpaes path (AES-NI masked)", None),
]
print(f"compare-openssl — {ours['machine']} — {os.environ['OPENSSL_VERSION']}")
print(f"{'figure':38} {'ours':>14} {'theirs':>14} {'ratio':>7}  target  against")
for name, mine, theirs, against, target in rows:
    ratio = mine / theirs if theirs else float('nan')
    verdict = "" if target is None else (f"≥{target:<4} " + ("met" if ratio >= target else "MISSED"))
    print(f"{name:38} {mine:14,.1f} {theirs:14,.1f} {ratio:7.2f}  {verdict:11} {against}")
seals = fig["AES-256-GCM seal 256 B"]["ops/s"]
print(f"{'AES-256-GCM 256 B seals per second':38} {seals:14,.0f} {'':>14} {'':>7}  ≥250,000 {'met' if seals >= 250000 else 'MISSED'}")
PY

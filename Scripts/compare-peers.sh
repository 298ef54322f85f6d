#!/usr/bin/env bash
# Runs `kcf-bench store` and the same operations on SQLite (and KeePass, if pykeepass is installed) in one run
# on this machine, and prints our figures beside theirs with the ratios the targets are stated in.
#
#   Scripts/compare-peers.sh [N …]           default: 1000 10000 100000 1000000
#   KCF_PEERS_OPERATIONS=K                    durable adds, updates and deletes timed per size (default 200)
#   KCF_PEERS_FORMATS="2 1"                   the format versions of ours to measure (default 2, the version the
#                                             library writes), each in its own column
#   KCF_PEERS_KEEPASS=1                       also KeePass, at sizes up to 1,000 only: every add rewrites the
#                                             whole file (5.5 s per add at 1,000 entries here). Needs pykeepass:
#                                             python3 -m venv .build-peers && .build-peers/bin/pip install pykeepass
#   KCF_PEERS_PYTHON=PATH                     the Python that has pykeepass (default: .build-peers/bin/python
#                                             if it exists, else python3)
#
# Release builds only; figures from a loaded machine are not worth keeping.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000 1000000)
operations=${KCF_PEERS_OPERATIONS:-200}
read -r -a formats <<< "${KCF_PEERS_FORMATS:-2}"
keepass_python=${KCF_PEERS_PYTHON:-python3}
[ -z "${KCF_PEERS_PYTHON:-}" ] && [ -x .build-peers/bin/python ] && keepass_python=.build-peers/bin/python
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

scratch=${KCF_PEERS_SCRATCH_PATH:-.build}   # another build folder, if you keep one
swift build -c release --product kcf-bench --scratch-path "$scratch" >&2
bench=$(swift build -c release --scratch-path "$scratch" --show-bin-path)/kcf-bench

# Ours and SQLite alternate size by size, so that both see the machine (and its disk) in the same state.
documents=()
for size in "${sizes[@]}"; do
    for format in "${formats[@]}"; do
        # Version 1 bulk-loads in one record of at most 256 MiB (SPEC.md §11): about 700,000 items of this benchmark.
        if [ "$format" = 1 ] && [ "$size" -gt 500000 ]; then
            echo "compare-peers: format 1 skipped at $size items (one record holds at most 256 MiB)" >&2
            continue
        fi
        "$bench" store --json --skip-kdf --operations "$operations" --items "$size" --format "$format" > "$work/ours-$format-$size.json"
        documents+=("$work/ours-$format-$size.json")
    done
    python3 Scripts/compare-peers.py sqlite "$size" --operations "$operations" > "$work/sqlite-$size.json"
    documents+=("$work/sqlite-$size.json")
    if [ "${KCF_PEERS_KEEPASS:-0}" = 1 ] && [ "$size" -le 1000 ]; then
        "$keepass_python" Scripts/compare-peers.py keepass "$size" --operations 3 > "$work/keepass-$size.json"
        documents+=("$work/keepass-$size.json")
    fi
done
# The PBKDF2 cost of a password open, once.
"$bench" store --json --operations 1 --items 1 > "$work/kdf.json"
python3 - "$work/kdf.json" "$work/ours-${formats[0]}-${sizes[0]}.json" <<'PY'
import json, sys
kdf = json.load(open(sys.argv[1]))["password open (600,000 PBKDF2 rounds) ms"]
first = json.load(open(sys.argv[2]))
first["password open (600,000 PBKDF2 rounds) ms"] = kdf
json.dump(first, open(sys.argv[2], "w"))
PY
python3 Scripts/compare-peers.py report "${documents[@]}"

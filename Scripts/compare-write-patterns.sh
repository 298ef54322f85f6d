#!/usr/bin/env bash
# What one durable change costs in each way of committing it (kcf-bench write-pattern: one flush; record plus
# the lock file's acknowledgement, two flushes; record plus a commit slot, one flush — format version 2's
# design), beside SQLite's durable insert (WAL, synchronous=FULL, one transaction per row), alternated in one
# run so that both see the disk in the same state.
#
#   Scripts/compare-write-patterns.sh [OPERATIONS] [ROUNDS]     defaults: 300 operations, 3 rounds
set -euo pipefail
cd "$(dirname "$0")/.."
operations=${1:-300}
rounds=${2:-3}
scratch=${KCF_PEERS_SCRATCH_PATH:-.build}
swift build -c release --product kcf-bench --scratch-path "$scratch" >&2
bench=$(swift build -c release --scratch-path "$scratch" --show-bin-path)/kcf-bench

for round in $(seq 1 "$rounds"); do
    echo "round $round"
    "$bench" write-pattern --operations "$operations"
    python3 - "$operations" <<'PYTHON'
import os, sqlite3, statistics, sys, tempfile, time
operations = int(sys.argv[1])
directory = tempfile.mkdtemp(prefix="kcf-write-pattern-")
connection = sqlite3.connect(os.path.join(directory, "bench.sqlite"), isolation_level=None)
connection.execute("PRAGMA journal_mode=WAL")
connection.execute("PRAGMA synchronous=FULL")
connection.execute("CREATE TABLE items (rowid INTEGER PRIMARY KEY, service TEXT, account TEXT, secret BLOB, UNIQUE(service, account))")
samples = []
for index in range(operations + 10):
    start = time.perf_counter_ns()
    connection.execute("BEGIN")
    connection.execute("INSERT INTO items (service, account, secret) VALUES (?, ?, ?)", ("service", f"account {index}", os.urandom(32)))
    connection.execute("COMMIT")
    if index >= 10:
        samples.append(time.perf_counter_ns() - start)
print(f"  {'SQLite durable insert (WAL, synchronous=FULL)':<50}{statistics.mean(samples) / 1000:>10.1f}{statistics.median(samples) / 1000:>11.1f}")
PYTHON
done

#!/usr/bin/env python3
"""The peers of `kcf-bench store`, measured the same way: SQLite (Python's sqlite3) and, if pykeepass is
installed, KeePass. Prints one JSON document with the same figure names as kcf-bench where the operation is
the same.

SQLite is set up as a careful application would keep secrets in it: WAL, synchronous=FULL, one transaction
per durable operation, one transaction for the bulk load, UNIQUE(service, account). Rows hold the same
content as the keychain's items: a 16-byte persistent id, service, account, label, description, comment,
creator, access group, accessibility, synchronizable, creation and modification dates and a 32-byte secret
(in clear: SQLite has no encryption).

Usage: compare-peers.py sqlite N [--operations K]      (one size per process, so peak memory is its own)
       compare-peers.py keepass N [--operations K]
       compare-peers.py report FILE.json…                   (the table compare-peers.sh prints, from kcf-bench
                                                             store --json documents and this script's)
"""
import json
import os
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time


def item(index):
    """The item kcf-bench writes for `index` (secret bytes differ; only their size matters here)."""
    generator = random.Random(index + 0x9E3779B9)
    return (
        generator.randbytes(16),
        f"service-{index % 64}.example.com",
        f"user{index}@example.com",
        f"Benchmark item {index}",
        "benchmark password",
        "written by kcf-bench",
        0x6B636662,
        "",
        1,
        0,
        1_700_000_000_000,
        1_700_000_000_000,
        generator.randbytes(32),
    )


def bytes_written():
    """wchar of /proc/self/io: bytes passed to write(2) and pwrite(2) by this process."""
    with open("/proc/self/io") as io:
        for line in io:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


def peak_resident_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(body):
    start = time.perf_counter_ns()
    body()
    return time.perf_counter_ns() - start


def sqlite_run(count, operations):
    figures = []

    def add(name, value, unit):
        figures.append({"name": name, "value": value, "unit": unit})

    directory = tempfile.mkdtemp(prefix="kcf-peers-")
    path = os.path.join(directory, "bench.sqlite")
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute(
        """CREATE TABLE items (
            rowid INTEGER PRIMARY KEY, ref BLOB NOT NULL, service TEXT NOT NULL, account TEXT NOT NULL,
            label TEXT, description TEXT, comment TEXT, creator INTEGER, access_group TEXT NOT NULL,
            accessible INTEGER NOT NULL, synchronizable INTEGER NOT NULL, created INTEGER NOT NULL,
            modified INTEGER NOT NULL, secret BLOB NOT NULL, UNIQUE(service, account))"""
    )
    insert = (
        "INSERT INTO items (ref, service, account, label, description, comment, creator, access_group, "
        "accessible, synchronizable, created, modified, secret) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
    )
    rows = [item(index) for index in range(count)]

    def bulk():
        connection.execute("BEGIN")
        connection.executemany(insert, rows)
        connection.execute("COMMIT")

    elapsed = timed(bulk)
    add("bulk load (one batch)", elapsed / 1e6, "ms")
    add("bulk load per item", elapsed / 1e3 / count, "µs")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    add("file bytes per item after bulk load", os.path.getsize(path) / count, "B")
    connection.close()

    best = None
    for _ in range(3):
        start = time.perf_counter_ns()
        connection = sqlite3.connect(path, isolation_level=None)
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("SELECT count(*) FROM items").fetchone()
        elapsed = time.perf_counter_ns() - start
        best = elapsed if best is None else min(best, elapsed)
        if _ < 2:
            connection.close()
    add("open (connect and count; SQLite reads lazily)", best / 1e6, "ms")

    generator = random.Random(count)
    probes = [item(generator.randrange(count)) for _ in range(20_000)]
    find = connection.cursor()

    def lookups():
        for probe in probes:
            row = find.execute(
                "SELECT ref, label, description, comment, creator, access_group, accessible, synchronizable, "
                "created, modified FROM items WHERE service = ? AND account = ?", (probe[1], probe[2])).fetchone()
            assert row is not None

    add("find by service and account", timed(lookups) / 1e3 / len(probes), "µs")

    def secrets():
        for probe in probes:
            row = find.execute("SELECT secret FROM items WHERE service = ? AND account = ?", (probe[1], probe[2])).fetchone()
            assert len(row[0]) == 32

    add("read a secret by service and account", timed(secrets) / 1e3 / len(probes), "µs")

    written = bytes_written()
    times = []
    for index in range(operations):
        row = item(count + index)
        times.append(timed(lambda: connection.execute(insert, row)))
    written = bytes_written() - written
    add("durable add (mean)", statistics.mean(times) / 1e3, "µs")
    add("durable add (median)", statistics.median(times) / 1e3, "µs")
    add("bytes written per durable add", written / operations, "B")

    times = []
    for index in range(operations):
        row = item(index)
        times.append(timed(lambda: connection.execute(
            "UPDATE items SET secret = ?, modified = ? WHERE service = ? AND account = ?",
            (bytes(32), 1_700_000_000_001, row[1], row[2]))))
    add("durable update of the secret (mean)", statistics.mean(times) / 1e3, "µs")

    times = []
    for index in range(operations):
        row = item(count + index)
        times.append(timed(lambda: connection.execute(
            "DELETE FROM items WHERE service = ? AND account = ?", (row[1], row[2]))))
    add("durable delete (mean)", statistics.mean(times) / 1e3, "µs")

    live = connection.execute("SELECT count(*) FROM items").fetchone()[0]
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    add("file bytes per live item before compaction", os.path.getsize(path) / live, "B")
    add("compaction", timed(lambda: connection.execute("VACUUM")) / 1e6, "ms")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    add("file bytes per live item after compaction", os.path.getsize(path) / live, "B")
    add("peak resident memory", peak_resident_mib(), "MiB")
    connection.close()
    for name in os.listdir(directory):
        os.remove(os.path.join(directory, name))
    os.rmdir(directory)
    return figures


def keepass_run(count, operations):
    """KeePass (KDBX 4 via pykeepass): every change rewrites and re-encrypts the whole file."""
    from pykeepass import create_database

    figures = []

    def add(name, value, unit):
        figures.append({"name": name, "value": value, "unit": unit})

    directory = tempfile.mkdtemp(prefix="kcf-peers-")
    path = os.path.join(directory, "bench.kdbx")
    database = create_database(path, password="benchmark password")
    rows = [item(index) for index in range(count)]

    def bulk():
        for row in rows:
            database.add_entry(database.root_group, title=row[3], username=row[2], password=row[12].hex(), url=row[1],
                               notes=row[5])
        database.save()

    elapsed = timed(bulk)
    add("bulk load (one batch)", elapsed / 1e6, "ms")
    add("file bytes per item after bulk load", os.path.getsize(path) / count, "B")
    from pykeepass import PyKeePass

    add("open (password, its KDF included)", timed(lambda: PyKeePass(path, password="benchmark password")) / 1e6, "ms")
    database = PyKeePass(path, password="benchmark password")
    times = []
    for index in range(operations):
        row = item(count + index)

        def one():
            database.add_entry(database.root_group, title=row[3], username=row[2], password=row[12].hex(), url=row[1])
            database.save()

        times.append(timed(one))
    add("durable add (mean)", statistics.mean(times) / 1e3, "µs")
    add("peak resident memory", peak_resident_mib(), "MiB")
    for name in os.listdir(directory):
        os.remove(os.path.join(directory, name))
    os.rmdir(directory)
    return figures


# The targets: (figure, how ours must compare, bound). "ratio" bounds ours/SQLite at the same size;
# "absolute" bounds ours at 100,000 items.
# The targets each format version was built to, by the item count they are stated at: version 1's from the store's
# first issues (at 100,000 items), version 2's from issue 30.
TARGETS = {
    1: {100_000: [
        ("durable add (mean)", "ratio", 1.0),
        ("bytes written per durable add", "ratio", 1 / 8),
        ("bulk load (one batch)", "ratio", 2.0),
        ("file bytes per item after bulk load", "ratio", 1.5),
        ("open (raw key, every record verified)", "absolute", 150.0),
        ("find by service and account", "absolute", 2.0),
        ("read a secret by service and account", "absolute", 5.0),
        ("file bytes over live bytes after compaction", "absolute", 1.1),
        ("peak resident memory", "absolute", 64.0),
    ]},
    2: {
        100_000: [
            ("durable add (mean)", "ratio", 1.0),
            ("open (raw key, every record verified)", "absolute", 50.0),
            ("find by service and account", "absolute", 1.5),
            ("compaction", "ratio", 1.0),
        ],
        1_000_000: [
            ("durable add (mean)", "ratio", 1.0),
            ("bulk load (one batch)", "ratio", 1.0),
            ("open (raw key, every record verified)", "absolute", 600.0),
            ("find by service and account", "absolute", 1.5),
            ("compaction", "ratio", 1.0),
            ("peak resident memory", "absolute", 200.0),
        ],
    },
}


def report(paths):
    """Prints the table from kcf-bench's JSON documents (one per size and format version, or one with several
    sizes) and the peers'. Each format version of ours gets its own column and ratio to SQLite."""
    ours = {}
    peers = {}
    for path in paths:
        with open(path) as handle:
            document = json.load(handle)
        if document.get("benchmark") == "store":
            version = document.get("format", 1)
            if version not in ours:
                ours[version] = document
            else:
                ours[version]["runs"].extend(document["runs"])
        else:
            peers[(document["peer"], document["items"])] = {figure["name"]: figure["value"] for figure in document["figures"]}
    versions = sorted(ours)
    first = ours[versions[0]]
    print(f"kcf-bench store against its peers — {first['machine']}")
    if first.get("password open (600,000 PBKDF2 rounds) ms") is not None:
        print(f"  opening with a password costs {first['password open (600,000 PBKDF2 rounds) ms']:.0f} ms of PBKDF2 "
              "(600,000 rounds) on top of the raw-key open below")
    def label(version):
        return "ours" if len(versions) == 1 else f"ours v{version}"
    counts = sorted({run["items"] for version in versions for run in ours[version]["runs"]})
    for count in counts:
        sqlite = peers.get(("sqlite", count), {})
        keepass = peers.get(("keepass", count), {})
        columns = {version: next((r for r in ours[version]["runs"] if r["items"] == count), None) for version in versions}
        values = {version: {f["name"]: f["value"] for f in columns[version]["figures"]} if columns[version] else {} for version in versions}
        figures = next(columns[version]["figures"] for version in versions if columns[version])
        print()
        print(f"  {count:,} items")
        head = f"  {'figure':<46}"
        for version in versions:
            head += f" {label(version):>14} {label(version) + '/SQLite':>14}"
        print(head + f" {'SQLite':>14} {'KeePass':>14}")
        for figure in figures:
            name, unit = figure["name"], figure["unit"]
            peer = sqlite.get(name)
            line = f"  {name:<46}"
            for version in versions:
                value = values[version].get(name)
                line += f" {value:>11,.1f} {unit:<2}" if value is not None else f" {'':>14}"
                line += f" {value / peer:>13.2f}×" if peer and value is not None else f" {'':>14}"
            peer_text = f"{peer:,.1f} {unit}" if peer is not None else ""
            kp = keepass.get(name)
            kp_text = f"{kp:,.1f} {unit}" if kp is not None else ""
            print(line + f" {peer_text:>14} {kp_text:>14}")
    for version in versions:
        for count, targets in sorted(TARGETS.get(version, {}).items()):
            run = next((r for r in ours[version]["runs"] if r["items"] == count), None)
            if run is None:
                continue
            mine = {figure["name"]: figure["value"] for figure in run["figures"]}
            sqlite = peers.get(("sqlite", count), {})
            print()
            print(f"  targets of format version {version} at {count:,} items ({label(version)})")
            for name, kind, bound in targets:
                value = mine.get(name)
                if value is None:
                    continue
                if kind == "ratio":
                    if name not in sqlite:
                        continue
                    measured = value / sqlite[name]
                    text = f"ours/SQLite = {measured:.2f}, target ≤ {bound:.3g}"
                else:
                    measured = value
                    text = f"{measured:,.2f}, target ≤ {bound:g}"
                mark = "met" if measured <= bound else "NOT met"
                print(f"  {name:<46} {text:<40} {mark}")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "report":
        report(sys.argv[2:])
        return
    if len(sys.argv) < 3 or sys.argv[1] not in ("sqlite", "keepass"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    peer, count = sys.argv[1], int(sys.argv[2])
    operations = 200
    if "--operations" in sys.argv:
        operations = int(sys.argv[sys.argv.index("--operations") + 1])
    run = sqlite_run if peer == "sqlite" else keepass_run
    figures = run(count, operations)
    print(json.dumps({"peer": peer, "items": count, "sqlite": sqlite3.sqlite_version, "figures": figures}))


if __name__ == "__main__":
    main()

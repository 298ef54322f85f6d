#!/usr/bin/env bash
# Compares `kcf-bench crypto --only Argon2id` with argon2-cffi (the Argon2 reference C code, through
# `argon2.low_level.hash_secret_raw`) at the same parameters, and prints our figure over theirs as ratios.
#
#   Scripts/compare-argon2.sh [ROUNDS] [SECONDS]      (defaults: 5 rounds, 1 second per figure)
#
# Needs `pip install argon2-cffi` (for this comparison only; the library and its tests never use Python).
# As in compare-openssl.sh, the two sides are measured alternately, ROUNDS times each, and the best figure of
# each side is compared. Set KCF_BENCH to a kcf-bench binary already built in release mode to skip the build.
#
# Figures: the fill rate at m = 64 MiB and t = 1 in MiB·passes per second, with p = 1 (single-threaded on
# both sides; target ≥ 0.5×) and p = 4 (both sides run the lanes on up to 4 threads); and the time of one
# derivation at m = 64 MiB, t = 3, p = 4, where the ratio is theirs over ours (above 1: we are faster).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
seconds=${2:-1}
if [ -z "${KCF_BENCH:-}" ]; then
    swift build -c release --product kcf-bench >/dev/null
    KCF_BENCH=.build/release/kcf-bench
fi
ROUNDS="$rounds" SECONDS_PER_FIGURE="$seconds" BENCH="$KCF_BENCH" exec python3 - <<'PY'
import json, os, subprocess, sys, time
from importlib.metadata import version

rounds = int(os.environ["ROUNDS"])
seconds = os.environ["SECONDS_PER_FIGURE"]
bench = os.environ["BENCH"]

def ours():
    out = subprocess.run([bench, "crypto", "--json", "--seconds", seconds, "--only", "Argon2id"],
                         check=True, capture_output=True, text=True).stdout
    return {f["name"]: f["value"] for f in json.loads(out)["figures"]}

# argon2-cffi in a fresh process each round, like kcf-bench; best of several trials, as kcf-bench does.
THEIRS = r'''
import json, sys, time
from argon2.low_level import hash_secret_raw, Type
trials = max(3, int(float(sys.argv[1]) * 8))
pw, salt = b"correct horse battery staple", b"Z" * 32
def best(t, p, n):
    b = float("inf")
    for _ in range(n):
        s = time.perf_counter()
        hash_secret_raw(pw, salt, time_cost=t, memory_cost=65536, parallelism=p, hash_len=32, type=Type.ID)
        b = min(b, time.perf_counter() - s)
    return b
print(json.dumps({"p1": 64 / best(1, 1, trials), "p4": 64 / best(1, 4, trials),
                  "t3": best(3, 4, max(3, int(float(sys.argv[1]) * 3))) * 1000}))
'''

def theirs():
    out = subprocess.run([sys.executable, "-c", THEIRS, seconds], check=True, capture_output=True, text=True).stdout
    return json.loads(out)

def reference_loop():
    out = subprocess.run([bench, "crypto", "--json", "--seconds", "0.5", "--only", "reference loop"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["figures"][0]["value"]

rows = [  # label, our figure, their key, higher is better, target
    ("Argon2id 64 MiB t=1 p=1 (MiB·passes/s)", "Argon2id m = 64 MiB, t = 1, p = 1", "p1", True, 0.5),
    ("Argon2id 64 MiB t=1 p=4 (MiB·passes/s)", "Argon2id m = 64 MiB, t = 1, p = 4", "p4", True, None),
    ("Argon2id 64 MiB t=3 p=4 (ms)", "Argon2id m = 64 MiB, t = 3, p = 4", "t3", False, None),
]
mine = {r[1]: (0.0 if r[3] else float("inf")) for r in rows}
their = {r[2]: (0.0 if r[3] else float("inf")) for r in rows}
speeds = []
for _ in range(rounds):
    speeds.append(reference_loop())
    o, t = ours(), theirs()
    for label, name, key, higher, _target in rows:
        pick = max if higher else min
        mine[name] = pick(mine[name], o[name])
        their[key] = pick(their[key], t[key])

machine = json.loads(subprocess.run([bench, "crypto", "--json", "--seconds", "0.2", "--only", "nothing"],
                                    check=True, capture_output=True, text=True).stdout)["machine"]
print(f"compare-argon2 — {machine} — argon2-cffi {version('argon2-cffi')}, argon2-cffi-bindings {version('argon2-cffi-bindings')}")
print(f"best of {rounds} alternating rounds per figure; reference loop {min(speeds):.2f}–{max(speeds):.2f} GHz-equivalent during the run")
print(f"{'figure':40} {'ours':>10} {'theirs':>10} {'ratio':>6}  target")
for label, name, key, higher, target in rows:
    ratio = mine[name] / their[key] if higher else their[key] / mine[name]
    verdict = "" if target is None else (f"≥{target} " + ("met" if ratio >= target else "MISSED"))
    print(f"{label:40} {mine[name]:10,.1f} {their[key]:10,.1f} {ratio:6.2f}  {verdict}")
print(f"one derivation at m = 64 MiB, t = 3, p = 4 in ≤ 1 s: {'yes' if mine[rows[2][1]] <= 1000 else 'NO'} ({mine[rows[2][1]]:.0f} ms)")
PY

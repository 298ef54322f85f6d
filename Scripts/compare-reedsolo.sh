#!/usr/bin/env bash
# Runs `kcf-bench reed-solomon` and, in the same run, Python's reedsolo on the same work: RS(255,223)
# encoding, and decoding full codewords with 0, 1, 4 and 16 errors each. Rates count data bytes.
#
#   Scripts/compare-reedsolo.sh [SECONDS]      (default: 1 second per figure on our side)
#
# reedsolo is a test-only tool, never used by the library. Its C extension `creedsolo` is built from the
# source package with Cython when both are available (pip install reedsolo cython); otherwise, and
# always in addition, the pure-Python module is measured (on less data: it is slow).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1}
swift build -c release --product kcf-bench >/dev/null
.build/release/kcf-bench reed-solomon --seconds "$seconds"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip install --quiet reedsolo >/dev/null 2>&1 || true
if python3 -c 'import Cython' 2>/dev/null \
    && python3 -m pip download --quiet --no-binary :all: --no-deps reedsolo -d "$work" >/dev/null 2>&1; then
    (cd "$work" && tar xzf reedsolo-*.tar.gz && cd reedsolo-*/ \
        && python3 setup.py build_ext --inplace --cythonize >/dev/null 2>&1 \
        && cp creedsolo*.so "$work/") || echo "(creedsolo did not build; pure Python only)"
fi
PYTHONPATH="$work" exec python3 - <<'PY'
import importlib, random, time

def measure(module_name, megabytes, pool):
    try:
        rs = importlib.import_module(module_name)
    except ImportError:
        return
    codec = rs.RSCodec(32)  # nsize 255: RS(255,223); prim 0x11d, generator 2, fcr 0
    rng = random.Random(2026)
    data = bytes(rng.randrange(256) for _ in range(megabytes << 20))
    best = 0.0
    for _ in range(3):
        start = time.perf_counter()
        for offset in range(0, len(data), 223):
            codec.encode(data[offset:offset + 223])
        best = max(best, len(data) / (time.perf_counter() - start))
    print(f"  {module_name} RS(255,223) encode {megabytes} MiB  {best / 1e6:.3f} MB/s")
    originals = [bytes(codec.encode(data[i * 223:(i + 1) * 223])) for i in range(pool)]
    for errors in (0, 1, 4, 16):
        damaged = []
        for word in originals:
            word = bytearray(word)
            for p in rng.sample(range(255), errors):
                word[p] ^= rng.randrange(1, 256)
            damaged.append(word)
        best = 0.0
        for _ in range(3):
            start = time.perf_counter()
            for word in damaged:
                codec.decode(word)
            best = max(best, pool * 223 / (time.perf_counter() - start))
        label = "check, no errors" if errors == 0 else f"decode, {errors} error{'s' if errors > 1 else ''}/codeword"
        print(f"  {module_name} RS(255,223) {label}  {best / 1e6:.3f} MB/s  {best / 223:,.0f} codewords/s")

print("reedsolo (Python " + __import__("platform").python_version() + ")")
measure("creedsolo", 16, 2048)
measure("reedsolo", 2, 256)
PY

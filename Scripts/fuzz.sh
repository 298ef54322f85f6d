#!/usr/bin/env bash
# Fuzzes opening and replaying keychain files: a libFuzzer target (Fuzz/OpenReplay) built with
# -sanitize=fuzzer,address outside SwiftPM (Package.swift has no unsafe flags), run for SECONDS.
#
#   Scripts/fuzz.sh SECONDS [libFuzzer options...]     e.g. Scripts/fuzz.sh 600, Scripts/fuzz.sh 60 -seed=1
#   Scripts/fuzz.sh --target healing-log SECONDS ...    the same for format version 2's physical layer
#                                                       (Fuzz/HealingLog; --target also goes before --reproduce)
#   Scripts/fuzz.sh --target open-v2 SECONDS ...        opening and replaying format version 2 files
#                                                       through Keychain (Fuzz/OpenV2)
#   Scripts/fuzz.sh --target open-v3 SECONDS ...        opening format version 3 files (access groups, scoped
#                                                       credentials) with every credential (Fuzz/OpenV3)
#   Scripts/fuzz.sh --reproduce FILE...                 runs the target once on each FILE (a crash artifact);
#                                                       FUZZ_TRACE=1 prints what each open did;
#                                                       FUZZ_WRITE_KEYCHAIN=PATH saves the file a structured
#                                                       input describes (it opens with 32 bytes of 0x4B as
#                                                       key, or the password "fuzz"), for a regression fixture
#
# Everything it makes lives under .build-fuzz/ (git-ignored): the build (recompiled only when sources
# change), the working corpus (seeded from Fixtures/v1/*.kcf, Fixtures/fuzz-regressions/*.kcf and the
# structured-mode seeds in Fuzz/OpenReplay/seeds/, kept between runs) and crash artifacts
# (.build-fuzz/artifacts/). Prints the executions, coverage and any finding; exits non-zero if the fuzzer
# found a crash, a sanitizer report, a timeout, an out-of-memory or a broken invariant.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=.build-fuzz
objects=$work/obj
# The target: open-replay (Fuzz/OpenReplay, the default), healing-log (Fuzz/HealingLog), open-v2 (Fuzz/OpenV2) or
# open-v3 (Fuzz/OpenV3). All link the same instrumented libraries; each has its own harness build, binary and corpus.
target=open-replay
if [[ ${1:-} == --target ]]; then
  target=${2:?usage: Scripts/fuzz.sh --target open-replay|healing-log|open-v2|open-v3 ...}
  shift 2
fi
# max_len: open-replay's fixtures are under 2 KB but one (256 KB), and longer inputs only slow the fuzzer; a
# version 2 file is at least 32 KiB (header pages and commit slots), so open-v2 takes whole files up to 64 KiB.
max_len=8192
# harness_dirs: the target's own folder and the shared ones it compiles with it (each folder without its
# subfolders) — Fuzz/Shared for every target, Fuzz/Shared/Keychain for the two that open files through Keychain.
case $target in
  open-replay) harness_dirs=(Fuzz/OpenReplay Fuzz/Shared Fuzz/Shared/Keychain); module=OpenReplayFuzzer; corpus=$work/corpus
               harness_step=harness ;;
  healing-log) harness_dirs=(Fuzz/HealingLog Fuzz/Shared); module=HealingLogFuzzer; corpus=$work/corpus-healing-log
               harness_step=harness-healing-log ;;
  open-v2) harness_dirs=(Fuzz/OpenV2 Fuzz/Shared Fuzz/Shared/Keychain); module=OpenV2Fuzzer; corpus=$work/corpus-open-v2
           harness_step=harness-open-v2; max_len=65536 ;;
  # open-v3: a version 3 file of four groups and four credentials is under 40 KiB (header runs, commit slots, log).
  open-v3) harness_dirs=(Fuzz/OpenV3 Fuzz/Shared Fuzz/Shared/Keychain); module=OpenV3Fuzzer; corpus=$work/corpus-open-v3
           harness_step=harness-open-v3; max_len=65536 ;;
  *) echo "fuzz.sh: unknown target $target (open-replay, healing-log, open-v2 or open-v3)" >&2; exit 2 ;;
esac
binary=$work/$target-fuzzer
artifacts=$work/artifacts
mkdir -p "$objects" "$corpus" "$artifacts"

# -O: the crypto runs 20-40x slower unoptimised. -enable-testing: the harness uses internal API
# (@testable import) — the in-memory file system, the record sealer, salvage into memory. -package-name:
# `package` declarations (the Reed–Solomon codec, which kcf-bench times) need one outside SwiftPM too.
flags=(-O -wmo -num-threads 2 -parse-as-library -enable-testing -g -package-name keychainfile)

# Rebuilds $1 (a stamp name) with the rest of the command when the hash of its inputs ($inputs) changed.
build_step() {
  local name=$1; shift
  local stamp=$work/$name.stamp
  local hash
  hash=$( (printf '%s\n' "$*"; cat $inputs) | sha256sum | cut -d' ' -f1)
  if [[ -f $stamp && $(cat "$stamp") == "$hash" && -f $work/$name.done ]]; then return; fi
  echo "fuzz.sh: building $name" >&2
  rm -f "$work/$name.done"
  local start=$SECONDS
  # The linker's warnings about the sanitizer's local symbols are noise; anything else is shown.
  if ! "$@" > "$work/$name.log" 2>&1; then
    grep -v 'Cannot export local symbol' "$work/$name.log" >&2
    echo "fuzz.sh: building $name failed" >&2
    exit 1
  fi
  grep -v 'Cannot export local symbol' "$work/$name.log" >&2 || true
  echo "$hash" > "$stamp"
  touch "$work/$name.done"
  echo "fuzz.sh: built $name in $((SECONDS - start)) s" >&2
}

build() {
  local crypto_sources file_sources harness_sources
  crypto_sources=$(find Sources/KeychainCrypto -name '*.swift' | sort)
  file_sources=$(find Sources/KeychainFile -name '*.swift' | sort)
  harness_sources=$(find "${harness_dirs[@]}" -maxdepth 1 -name '*.swift' | sort)
  # KeychainCrypto: address sanitizer only — coverage of constant-time block loops would only slow the
  # fuzzer and guide it nowhere.
  inputs="$crypto_sources"
  build_step crypto swiftc "${flags[@]}" -sanitize=address -module-name KeychainCrypto \
    -emit-module -emit-module-path "$objects/KeychainCrypto.swiftmodule" \
    -emit-library -static -o "$objects/libKeychainCrypto.a" $crypto_sources
  inputs="$crypto_sources $file_sources"
  build_step keychainfile swiftc "${flags[@]}" -sanitize=fuzzer,address -module-name KeychainFile -I "$objects" \
    -emit-module -emit-module-path "$objects/KeychainFile.swiftmodule" \
    -emit-library -static -o "$objects/libKeychainFile.a" $file_sources
  inputs="$crypto_sources $file_sources $harness_sources"
  # Run in $objects: linking an executable with -g leaves the module's .swiftmodule in the current directory.
  build_step "$harness_step" env -C "$objects" swiftc "${flags[@]}" -sanitize=fuzzer,address -module-name "$module" \
    -I . -o "$root/$binary" $(printf "$root/%s " $harness_sources) libKeychainFile.a libKeychainCrypto.a
}

# libFuzzer options. max_len: see above. timeout: one execution takes milliseconds; 10 s is a hang.
# rss_limit: a hostile length field that makes the reader allocate hundreds of megabytes is a finding.
options=(-max_len=$max_len -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1
         -artifact_prefix="$artifacts/")
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
# The address sanitizer prints the stack of a finding; Swift's own backtracer, started on the abort as well, can
# outlive the fuzzer holding its output open, and the script then waits on it.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"

if [[ ${1:-} == --reproduce ]]; then
  shift
  build
  exec "$binary" "${options[@]}" -runs=1 "$@"
fi

seconds=${1:?usage: Scripts/fuzz.sh SECONDS [libFuzzer options...]}
shift
build
case $target in
  open-replay) seeds=(Fixtures/v1/*.kcf Fixtures/fuzz-regressions/*.kcf Fuzz/OpenReplay/seeds/*.bin) ;;
  healing-log) seeds=(Fuzz/HealingLog/seeds/*.bin) ;;
  open-v2) seeds=(Fuzz/OpenV2/seeds/*.bin) ;;
  open-v3) seeds=(Fuzz/OpenV3/seeds/*.bin) ;;
esac
for seed in "${seeds[@]}"; do
  [[ -f $seed ]] && cp -n "$seed" "$corpus/seed-$(basename "$seed")"
done
if [[ $target == open-v2 || $target == open-v3 ]]; then
  # Whole version 2 or 3 files, written by the harness from the structured seeds (FUZZ_WRITE_KEYCHAIN): the
  # library's own layout to mutate — header pages, commit slots, parity, a rewrite's records; in version 3 also
  # key slots scoped to groups, the key table and each group's pages. Written again every run, so that a kept
  # corpus never goes on mutating files of a layout the library no longer writes.
  for seed in "${harness_dirs[0]}"/seeds/*.bin; do
    file=$corpus/seed-file-$(basename "$seed" .bin)
    rm -f "$file"
    FUZZ_WRITE_KEYCHAIN=$file "$binary" "${options[@]}" -runs=1 "$seed" > /dev/null 2>&1 \
      || { echo "fuzz.sh: the seed $seed fails: Scripts/fuzz.sh --target $target --reproduce $seed" >&2; exit 1; }
  done
fi

# Every structured seed builds a keychain that opens, but those named in the seeds' refused.txt (built to be
# refused, e.g. a duplicate primary key): a writer that falls behind the format would otherwise leave the fuzzer
# mutating files that never get past the first check, and every run would still pass.
if [[ $target != healing-log ]]; then
  for seed in "${harness_dirs[0]}"/seeds/*.bin; do
    name=$(basename "$seed")
    opened=$(FUZZ_TRACE=1 "$binary" "${options[@]}" -runs=1 "$seed" 2>&1 | grep -c ': opened' || true)
    if grep -qx "$name" "${harness_dirs[0]}/seeds/refused.txt" 2>/dev/null; then
      [[ $opened -eq 0 ]] || { echo "fuzz.sh: the seed $seed opened, but refused.txt says it is refused" >&2; exit 1; }
    else
      [[ $opened -gt 0 ]] || { echo "fuzz.sh: the seed $seed does not open (FUZZ_TRACE=1 Scripts/fuzz.sh --target $target --reproduce $seed says why): the harness's writer no longer follows the format" >&2; exit 1; }
    fi
  done
fi

log=$work/last-run.log
set +e
"$binary" "${options[@]}" -max_total_time="$seconds" "$@" "$corpus" 2>&1 | tee "$log" \
  | grep -E --line-buffered '^(#[0-9]+.*(INITED|DONE|pulse)|==[0-9]+==ERROR|fuzz invariant|SUMMARY|artifact_prefix|Test unit written|stat::|ALARM|.*Fatal error)'
status=${PIPESTATUS[0]}
set -e

executions=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || true)
coverage=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
echo "fuzz.sh: ${executions:-?} executions in ${seconds} s; ${coverage:-no coverage line}; corpus $(ls "$corpus" | wc -l) inputs; status $status"
if [[ $status -ne 0 ]]; then
  echo "fuzz.sh: FINDING — see $log; artifacts:" >&2
  ls -1 "$artifacts" >&2 || true
  exit "$status"
fi

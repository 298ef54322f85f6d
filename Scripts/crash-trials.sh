#!/usr/bin/env bash
# Runs N crash trials (Tests/KeychainFileTests/Concurrency/CrashTrialTests.swift) outside the unit-test budget: a
# kcf-worker child adds, updates, deletes, batches, compacts and changes the password while it is killed with
# SIGKILL at random moments; after each kill the file is reopened and checked against what was acknowledged.
# N trials run on files of format version 1 and N on format version 2 (--format V: only version V). Ends with
# a line "format V: N trials, K lost operations" for each; exits non-zero if any trial failed.
#
#   Scripts/crash-trials.sh 1000
#   Scripts/crash-trials.sh --format 2 1000                # version 2 files only
#   KCF_CRASH_BASE_SEED=123 Scripts/crash-trials.sh --format 1 1000   # the same steps and kill plans as an earlier run
#   KCF_CRASH_FORMAT=2 KCF_CRASH_SEED=456 Scripts/crash-trials.sh     # replay one trial (its failure names both)
#
# Builds the tests in release mode (as CI does), then runs a copy of the test binary and of kcf-worker, so
# that rebuilding the tree during a long run does not change the binaries under it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --format ]]; then
  [[ ${2:-} == 1 || ${2:-} == 2 ]] || { echo "usage: Scripts/crash-trials.sh [--format 1|2] N" >&2; exit 1; }
  export KCF_CRASH_FORMAT=$2
  shift 2
fi
trials="${1:-100}"
[[ "$trials" =~ ^[0-9]+$ ]] || { echo "usage: Scripts/crash-trials.sh [--format 1|2] N" >&2; exit 1; }

swift build -c release -Xswiftc -enable-testing --build-tests >&2
products="$(swift build -c release -Xswiftc -enable-testing --show-bin-path)"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cp "$products/kcf-worker" "$copy/"
log="$copy/trials.log"
status=0
if [[ -f "$products/KeychainFilePackageTests.xctest" ]]; then
  # Linux: the test product is an executable.
  cp "$products/KeychainFilePackageTests.xctest" "$copy/tests"
  KCF_WORKER="$copy/kcf-worker" KCF_CRASH_TRIALS="$trials" \
    "$copy/tests" --testing-library swift-testing --filter CrashTrialTests >"$log" 2>&1 || status=$?
else
  KCF_WORKER="$copy/kcf-worker" KCF_CRASH_TRIALS="$trials" \
    swift test -c release -Xswiftc -enable-testing --skip-build --filter CrashTrialTests >"$log" 2>&1 || status=$?
fi

if [[ $status -ne 0 ]]; then
  # The failures, each with its trial seed and the worker's last lines.
  grep -v -e '^crash-trials: ' -e '◇' -e '↳' "$log" >&2 || true
fi
grep '^crash-trials: ' "$log" | sed 's/^crash-trials: //' | grep -v ' lost operations$' || true
summary="$(grep '^crash-trials: .* lost operations$' "$log" | sed 's/^crash-trials: //' || true)"
if [[ -z "$summary" ]]; then
  cat "$log" >&2
  echo "$trials trials, unknown lost operations (the test did not finish)"
  exit 1
fi
echo "$summary"
exit $status

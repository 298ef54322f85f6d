#!/usr/bin/env bash
# Runs N crash trials (Tests/KeychainFileTests/Concurrency/CrashTrialTests.swift) outside the unit-test budget: a
# kcf-worker child adds, updates, deletes, batches, compacts and changes the password while it is killed with
# SIGKILL at random moments; after each kill the file is reopened and checked against what was acknowledged.
# Ends with the line "N trials, K lost operations"; exits non-zero if any trial failed.
#
#   Scripts/crash-trials.sh 1000
#   KCF_CRASH_BASE_SEED=123 Scripts/crash-trials.sh 1000   # the same steps and kill plans as an earlier run
#   KCF_CRASH_SEED=456 Scripts/crash-trials.sh              # replay one trial (its seed is in its failure)
#
# Builds the tests in release mode (as CI does), then runs a copy of the test binary and of kcf-worker, so
# that rebuilding the tree during a long run does not change the binaries under it.
set -euo pipefail
cd "$(dirname "$0")/.."
trials="${1:-100}"
[[ "$trials" =~ ^[0-9]+$ ]] || { echo "usage: Scripts/crash-trials.sh N" >&2; exit 1; }

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

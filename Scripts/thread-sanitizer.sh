#!/usr/bin/env bash
# Runs the thread-stress and multi-process suites under the thread sanitizer (a debug build with TSan; the
# first build takes several minutes). Any data race TSan reports fails the run: TSan makes the test process
# exit non-zero, and a report in a kcf-worker child fails the test through the worker's stderr.
#
#   Scripts/thread-sanitizer.sh            # ThreadStress and MultiProcess suites
#   Scripts/thread-sanitizer.sh FILTER     # any other --filter
set -euo pipefail
cd "$(dirname "$0")/.."
filter="${1:-ThreadStress|MultiProcess}"
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
  swift test --sanitize=thread --scratch-path .build/tsan --filter "$filter"

#!/usr/bin/env bash
# Runs meson test suites again and again while the machine is busy, to find tests that wait for
# time instead of for the state they check (issue 43: such a test passed alone and failed 1 run
# in 6-10 at load 4 in a fresh clone's test run).
#
#   scripts/repeat-under-load.sh BUILD_DIR REPEATS [meson test arguments...]
#
# One busy-loop per core runs beside the tests, and the tests run two at a time, so the load is
# about twice the cores, as in `scripts/test.sh` with another build beside it. Exits as meson
# test does: non-zero when any run of any test failed.
set -euo pipefail
build=${1:?usage: repeat-under-load.sh BUILD_DIR REPEATS [meson test arguments...]}
repeats=${2:?usage: repeat-under-load.sh BUILD_DIR REPEATS [meson test arguments...]}
shift 2
hogs=()
stopHogs() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stopHogs EXIT
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  hogs+=($!)
done
meson test -C "$build" --no-rebuild --print-errorlogs --num-processes 2 --repeat "$repeats" "$@"

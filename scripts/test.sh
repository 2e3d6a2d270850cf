#!/usr/bin/env bash
# Builds and runs every test: the unit and loopback suites in a release build and again under
# AddressSanitizer + UndefinedBehaviorSanitizer. FLEETSCHED_SKIP_SANITIZE=1 skips the second
# pass while iterating.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
jobs=$(nproc)

[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build -j "$jobs"
meson test -C build --print-errorlogs --num-processes "$jobs"

if [ "${FLEETSCHED_SKIP_SANITIZE:-0}" != 1 ]; then
  [ -f build-asan/build.ninja ] || meson setup build-asan --buildtype=debug \
    -Db_sanitize=address,undefined -Db_lundef=false -Dmimalloc=disabled -Dbenchmarks=disabled >/dev/null
  ninja -C build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes "$jobs" --timeout-multiplier 4
fi

#!/usr/bin/env bash
# Builds and runs every test:
#   1. the unit, golden and loopback suites in a release build;
#   2. fleetsched-scheduler (kube-scheduler with the in-process Fleetsched plugin) and its Go tests;
#   3. the end-to-end suite: a real etcd, kube-apiserver and kube-scheduler (built from the Go
#      module proxy and cached per machine) calling fleetsched as an extender, and
#      fleetsched-scheduler deciding in process;
#   4. a small benchmark comparison against the Go peer extenders (runs, reports; asserts nothing);
#   5. the deploy checks (helm lint/template, manifest rules);
#   6. the unit suites again under AddressSanitizer + UndefinedBehaviorSanitizer (without the
#      published-table replay guard, which needs an optimised build);
#   7. the suites whose code runs on several threads (plugins, the extender service, the off-loop
#      worker, the C ABI) under ThreadSanitizer;
#   8. the loopback suites again and again beside busy-loops (scripts/repeat-under-load.sh): a
#      test that waits for time instead of for the state it checks fails here first;
#   9. the libFuzzer targets (tests/fuzz), 60 s each on their corpus, built with clang
#      (scripts/fuzz.sh; about 9 min on 2 cores, 3.5 of them the clang build from cold).
# While iterating (README.md, "While changing code"): FLEETSCHED_SKIP_SCHEDULER=1 (no
# fleetsched-scheduler, no Go tests; implies FLEETSCHED_SKIP_E2E), FLEETSCHED_SKIP_E2E=1,
# FLEETSCHED_SKIP_BENCH=1, FLEETSCHED_SKIP_DEPLOY=1, FLEETSCHED_SKIP_SANITIZE=1,
# FLEETSCHED_SKIP_TSAN=1, FLEETSCHED_SKIP_REPEAT=1, FLEETSCHED_SKIP_FUZZ=1.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
jobs=$(nproc)
# Go >= 1.26 (the Kubernetes components, helm and the Go peers are built with it) first on PATH.
. scripts/go-env.sh
fleetsched_go_env
# The trace-replay tests read the public openb trace from the shared data folder when present.
if [ -z "${FLEETSCHED_OPENB_DIR:-}" ] && [ -d ../shared/data/openb ]; then
  export FLEETSCHED_OPENB_DIR="$PWD/../shared/data/openb"
fi

step() { printf '\n== %s (%ds)\n' "$1" "$SECONDS" >&2; }

step "release build"
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build -j "$jobs"
step "unit, golden and loopback tests"
meson test -C build --print-errorlogs --num-processes "$jobs"

if [ "${FLEETSCHED_SKIP_SCHEDULER:-0}" = 1 ]; then
  FLEETSCHED_SKIP_E2E=1  # its plugin deployment needs fleetsched-scheduler
else
  step "fleetsched-scheduler (in-process plugin): build, Go tests"
  scripts/build-scheduler.sh build
  export FLEETSCHED_SCHEDULER_BIN="$PWD/build/scheduler/fleetsched-scheduler"
  capiLib="$PWD/build/capi"
  for module in capi/go scheduler; do
    (cd "$module" && GOTOOLCHAIN=local CGO_ENABLED=1 CGO_LDFLAGS="-L$capiLib" \
      go test -mod=readonly -count=1 ./...)
  done
fi

if [ "${FLEETSCHED_SKIP_E2E:-0}" != 1 ]; then
  step "end-to-end tests"
  FLEETSCHED_BIN="$PWD/build/cmd/fleetsched/fleetsched" tests/e2e/run.sh
fi

if [ "${FLEETSCHED_SKIP_BENCH:-0}" != 1 ]; then
  # A small side-by-side run of fleetsched and the Go peers: it must run and write its report;
  # numbers are not asserted here (this machine is shared and noisy).
  step "small benchmark comparison"
  bench/compare.sh --small --build build --out build/compare-small
  if [ "$(nproc)" -ge 2 ]; then
    step "small transport floor run"
    build/cmd/fleetsched/fleetsched gen-fleet -q -o build/floor-small -n 500 -p 64
    python3 bench/transport_floor.py --corpus build/floor-small --build build --rounds 1 --duration 2
  fi
fi

if [ "${FLEETSCHED_SKIP_DEPLOY:-0}" != 1 ]; then
  step "deploy checks"
  deploy/check.sh
fi

if [ "${FLEETSCHED_SKIP_SANITIZE:-0}" != 1 ]; then
  step "sanitizer build"
  [ -f build-asan/build.ninja ] || meson setup build-asan --buildtype=debug \
    -Db_sanitize=address,undefined -Db_lundef=false -Dmimalloc=disabled -Dbenchmarks=disabled >/dev/null
  ninja -C build-asan -j "$jobs"
  step "unit tests under ASan/UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes "$jobs" --timeout-multiplier 4 --no-suite published
fi
if [ "${FLEETSCHED_SKIP_TSAN:-0}" != 1 ]; then
  # Plugins are immutable and shared by every thread (the loop, the off-loop worker, the binder;
  # kube-scheduler's goroutines through the C ABI); these suites run them on several threads.
  step "ThreadSanitizer build (plugins, service, off-loop, C ABI)"
  [ -f build-tsan/build.ninja ] || meson setup build-tsan --buildtype=debugoptimized \
    -Db_sanitize=thread -Db_lundef=false -Dmimalloc=disabled -Dbenchmarks=disabled >/dev/null
  ninja -C build-tsan -j "$jobs" tests/plugins/plugins_test \
    tests/engine/service/engine_extender_service tests/engine/service/engine_off_loop \
    tests/capi/capi_test
  step "those suites under ThreadSanitizer"
  # The two 500- and 5,000-node request tests are single-threaded and take minutes under TSan.
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 meson test -C build-tsan --no-rebuild --print-errorlogs \
    --num-processes "$jobs" --timeout-multiplier 4 \
    --test-args='--gtest_filter=-ServiceTest.FiveThousandNodeNamesFilterThenPrioritize:ServiceTest.FiveHundredFullNodesEchoTheInputObjects' \
    plugins engine_extender_service engine_off_loop capi/capi_test
fi
if [ "${FLEETSCHED_SKIP_REPEAT:-0}" != 1 ]; then
  step "loopback suites repeated under load"
  scripts/repeat-under-load.sh build 3 --suite engine --suite tools --suite apiclient --suite capi
fi
if [ "${FLEETSCHED_SKIP_FUZZ:-0}" != 1 ]; then
  step "fuzz targets, 60 s each"
  scripts/fuzz.sh 60
fi
step "all tests passed"

#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, meson option -Dfuzz=true) with clang in build-fuzz and
# runs each for SECONDS (default 60) on its corpus, as many at a time as there are cores; fails
# when any target finds something (a crash, an ASan/UBSan report, a leak, a trapped property, an
# input slower than 25 s or a run above 2 GB). What the runs discover goes to
# build-fuzz/fuzz/<target>/corpus (tests/fuzz/corpus/<target> is read, never written); a finding
# is saved there as crash-*, leak-*, timeout-* or oom-* and its log is printed.
#   scripts/fuzz.sh [SECONDS [TARGET...]]
# Needs clang-14 and libclang-rt-14-dev (scripts/bootstrap.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
root=$PWD
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 meson setup "$build" --buildtype=debugoptimized -Dfuzz=true -Dtests=false \
    -Dmimalloc=disabled -Dbenchmarks=disabled -Db_lundef=false >/dev/null
fi
ninja -C "$build" -j "$(nproc)" fuzz

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi

run_one() {
  local t=$1 dir="$root/$build/fuzz/$1" dict=()
  case $t in
    fuzz_request_parser) dict=(-dict="$root/tests/fuzz/http.dict") ;;
    fuzz_profile_yaml) dict=(-dict="$root/tests/fuzz/profile.dict") ;;
    fuzz_quantity) ;;
    *) dict=(-dict="$root/tests/fuzz/kubernetes.dict") ;;
  esac
  mkdir -p "$dir/corpus"
  if FLEETSCHED_TEST_DATA="$root/tests/data" UBSAN_OPTIONS=print_stacktrace=1 "$root/$build/tests/fuzz/$t" -max_total_time="$seconds" \
      -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" -artifact_prefix="$dir/" \
      "$dir/corpus" "$root/tests/fuzz/corpus/$t" >"$dir/log" 2>&1; then
    echo "fuzz: $t: $(grep -E '^#[0-9]+[[:space:]]+DONE' "$dir/log" | tail -1)"
  else
    echo "fuzz: $t: FINDING, log $build/fuzz/$t/log:" >&2
    grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$dir/log" | tail -60 >&2
    return 1
  fi
}
export -f run_one
export root build seconds
echo "fuzz: ${#targets[@]} targets, ${seconds}s each, $(nproc) at a time" >&2
printf '%s\n' "${targets[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_one {}'

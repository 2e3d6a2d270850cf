#!/usr/bin/env bash
# kube-scheduler's own benchmark, test/integration/scheduler_perf of the pinned k8s.io/kubernetes,
# stock against the Fleetsched plugin, one command (not part of scripts/test.sh):
#
#   bench/scheduler-perf.sh                      # SchedulingBasic at 1,000 nodes, 1 round
#   bench/scheduler-perf.sh --workloads basic-1000,basic-5000,gpu-1000 --rounds 3
#   bench/scheduler-perf.sh --workloads smoke    # 10 nodes, both cases: checks the harness (~1 min)
#
# Workloads (scheduler/perf/performance-config.yaml): basic-1000 and basic-5000 are upstream's
# SchedulingBasic (createNodes, createPods init, createPods measured) at 1,000 nodes (1,000 + 2,000
# pods) and 5,000 nodes (1,000 + 5,000 pods); gpu-1000 is 1,000 8-GPU nodes with 1,000 + 2,000 pods
# of 1 or 2 GPUs; smoke is both at 10 nodes. Each workload runs once per round with kube-scheduler's
# default profile (stock) and once with Fleetsched enabled (scheduler/README.md's profile);
# gpu-1000 also with the pods asking Fleetsched to spread their GPUs (its default is binpack,
# stock spreads). The order alternates from round to round; every run is its own process with its own etcd and
# kube-apiserver (in process), as upstream runs it.
#
# It compiles the benchmark (go test -c -tags schedulerperf in scheduler/; ~3 min the first time,
# kube-apiserver is compiled in), takes etcd from tests/e2e/build-components.sh, and writes under
# --out (default build/scheduler-perf): data/<round>-<case>-<workload>/ upstream's JSON data items
# (BenchmarkPerfScheduling_benchmark_fleetsched_<time>.json), logs/ each run's output, summary.txt
# the table it prints: SchedulingThroughput average and p50 per configuration (median over
# rounds), Fleetsched ÷ stock, and Fleetsched's own plugin time per extension point.
#
# Options: --workloads LIST, --rounds N (default 1), --out DIR, --build DIR (meson build folder
#          holding capi/libfleetsched_capi.a; default build), --cpuprofile (a CPU profile per
#          run next to its data), --skip-build (reuse the compiled benchmark).
# Environment: GO_PARALLEL (go test -c -p, default 2).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

workloads=basic-1000 rounds=1 out="" build=build cpuprofile=0 skip_build=0
while [ $# -gt 0 ]; do
  case "$1" in
    --workloads) workloads="$2"; shift ;;
    --rounds) rounds="$2"; shift ;;
    --out) out="$2"; shift ;;
    --build) build="$2"; shift ;;
    --cpuprofile) cpuprofile=1 ;;
    --skip-build) skip_build=1 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "scheduler-perf: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $build = /* ]] || build="$root/$build"
out=${out:-$build/scheduler-perf}
[[ $out = /* ]] || out="$root/$out"

# workload → "workload name, stock case, Fleetsched case(s)" in performance-config.yaml
cases() {
  case "$1" in
    smoke) echo "10Nodes SchedulingBasic SchedulingBasic_Fleetsched"
      echo "10Nodes SchedulingGPU SchedulingGPU_Fleetsched" ;;
    basic-1000) echo "1000Nodes SchedulingBasic SchedulingBasic_Fleetsched" ;;
    basic-5000) echo "5000Nodes SchedulingBasic SchedulingBasic_Fleetsched" ;;
    gpu-1000) echo "1000Nodes SchedulingGPU SchedulingGPU_Fleetsched SchedulingGPU_FleetschedSpread" ;;
    *) echo "scheduler-perf: unknown workload $1 (smoke, basic-1000, basic-5000, gpu-1000)" >&2
      return 2 ;;
  esac
}
IFS=, read -r -a selected <<<"$workloads"
for w in "${selected[@]}"; do cases "$w" >/dev/null; done

# etcd: the e2e suite's (built once into the per-user cache).
eval "$(tests/e2e/build-components.sh --print-env)"
if [[ ! -x $FLEETSCHED_E2E_ETCD_BIN/etcd ]]; then
  eval "$(tests/e2e/build-components.sh)"
fi
export PATH="$FLEETSCHED_E2E_ETCD_BIN:$PATH"

. scripts/go-env.sh
fleetsched_go_env
mkdir -p "$out"
binary="$out/perf.test"
if [[ $skip_build = 0 || ! -x $binary ]]; then
  [[ -f $build/build.ninja ]] || meson setup "$build" --buildtype=release >/dev/null
  ninja -C "$build" capi/libfleetsched_capi.a >/dev/null
  start=$SECONDS
  (cd scheduler && GOTOOLCHAIN=local CGO_ENABLED=1 CGO_LDFLAGS="-L$build/capi" \
    nice -n 10 go test -p "${GO_PARALLEL:-2}" -mod=readonly -tags schedulerperf -c \
    -o "$binary" ./perf)
  echo "scheduler-perf: $binary in $((SECONDS - start)) s" >&2
fi

# This run's results only: data/ and logs/ start empty.
rm -rf "$out/data" "$out/logs"
mkdir -p "$out/data" "$out/logs"
echo "scheduler-perf: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at start" \
  | tee "$out/machine.txt" >&2

run() { # round case workload
  local name="$1-$2-$3" dir="$out/data/$1-$2-$3"
  mkdir -p "$dir"
  local args=(-test.run '^$' -test.bench "^BenchmarkPerfScheduling\$/^$2\$/^$3\$" -test.benchtime 1x
    -test.timeout 60m -perf-scheduling-label-filter= -data-items-dir "$dir")
  [[ $cpuprofile = 0 ]] || args+=(-test.cpuprofile "$dir/cpu.prof")
  echo "scheduler-perf: round $1: $2/$3 (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  # From the package folder: the config's template paths are relative to it. ARTIFACTS sends
  # kube-scheduler's and kube-apiserver's log to a per-test file, kept only if the test fails.
  if ! (cd scheduler/perf && ARTIFACTS="$out/logs" KUBE_CACHE_MUTATION_DETECTOR=false \
    "$binary" "${args[@]}") >"$out/logs/$name.txt" 2>&1; then
    echo "scheduler-perf: $name failed; see $out/logs/$name.txt" >&2
    tail -20 "$out/logs/$name.txt" >&2
    return 1
  fi
}

for ((r = 1; r <= rounds; r++)); do
  for w in "${selected[@]}"; do
    while read -r workload configs; do
      # Alternate the order (ABBA over rounds) so no configuration always runs first.
      read -r -a order <<<"$configs"
      if ((r % 2 == 0)); then
        for ((i = 0, j = ${#order[@]} - 1; i < j; i++, j--)); do
          c=${order[i]} order[i]=${order[j]} order[j]=$c
        done
      fi
      for c in "${order[@]}"; do run "$r" "$c" "$workload"; done
    done < <(cases "$w")
  done
done

python3 bench/scheduler_perf_table.py "$out/data" | tee "$out/summary.txt"

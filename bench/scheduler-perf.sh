#!/usr/bin/env bash
# kube-scheduler's own benchmark, test/integration/scheduler_perf of the pinned k8s.io/kubernetes,
# stock against the Fleetsched plugin and against fleetsched serve as an extender, one command
# (not part of scripts/test.sh):
#
#   bench/scheduler-perf.sh                      # SchedulingBasic at 1,000 nodes, 1 round
#   bench/scheduler-perf.sh --workloads basic-1000,basic-5000,gpu-1000 --rounds 3
#   bench/scheduler-perf.sh --workloads smoke    # 10 nodes, every case: checks the harness (~7 min)
#   bench/scheduler-perf.sh --configs stock,extender,extender-full --rounds 2
#
# Workloads (scheduler/perf/performance-config.yaml): basic-1000 and basic-5000 are upstream's
# SchedulingBasic (createNodes, createPods init, createPods measured) at 1,000 nodes (1,000 + 2,000
# pods) and 5,000 nodes (1,000 + 5,000 pods); gpu-1000 is 1,000 8-GPU nodes with 1,000 + 2,000 pods
# of 1 or 2 GPUs; gpu-mixed-1000 is 300 8-GPU nodes among 700 CPU nodes with 500 + 1,000 such pods;
# smoke is each at 10 nodes.
#
# Configurations (--configs, default stock,fleetsched,extender):
#   stock          kube-scheduler's default profile
#   fleetsched     the Fleetsched plugin enabled (scheduler/README.md's profile); gpu-1000 also
#                  with the pods asking Fleetsched to spread their GPUs (its default is binpack,
#                  stock spreads)
#   extender       fleetsched serve as an extender in NodeNames mode, started by the benchmark
#                  against the harness's API server (scheduler/perf/extender_test.go), with
#                  deploy/kubernetes/sidecar.yaml's stanza (managedResources nvidia.com/gpu), and
#                  for SchedulingBasic, whose pods ask for no GPU, also without managedResources
#                  (ExtenderAll: every pod through filter, prioritize and bind)
#   extender-full  SchedulingBasic with every pod sent to fleetsched in full-Nodes mode
#                  (nodeCacheCapable: false); not in the default
# The order alternates from round to round; every run is its own process with its own etcd and
# kube-apiserver (in process), as upstream runs it. An extender run's process ends about 90 s
# after its last pod: upstream's goroutine-leak check (framework.GoleakCheck) waits that long for
# a client-go TLS transport goroutine of the test API server to end; it is outside the measured
# window.
#
# It compiles the benchmark (go test -c -tags schedulerperf in scheduler/; ~3 min the first time,
# kube-apiserver is compiled in) and fleetsched (ninja), takes etcd from
# tests/e2e/build-components.sh, and writes under --out (default build/scheduler-perf):
# data/<round>-<case>-<workload>/ upstream's JSON data items
# (BenchmarkPerfScheduling_benchmark_fleetsched_<time>.json) and, for the extender, fleetsched's
# final /metrics and log; logs/ each run's output; summary.txt the table it prints:
# SchedulingThroughput average and p50 per configuration (median over rounds), the median of
# the rounds' ratios to stock, Fleetsched's own plugin time per extension point, and the
# extender's calls and latency.
#
# Options: --workloads LIST, --configs LIST, --rounds N (default 1), --out DIR, --build DIR (meson
#          build folder holding capi/libfleetsched_capi.a and cmd/fleetsched/fleetsched; default
#          build), --cpuprofile (a CPU profile per run next to its data), --skip-build (reuse the
#          compiled benchmark).
# Environment: GO_PARALLEL (go test -c -p, default 2).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

workloads=basic-1000 configs=stock,fleetsched,extender rounds=1 out="" build=build cpuprofile=0 skip_build=0
while [ $# -gt 0 ]; do
  case "$1" in
    --workloads) workloads="$2"; shift ;;
    --configs) configs="$2"; shift ;;
    --rounds) rounds="$2"; shift ;;
    --out) out="$2"; shift ;;
    --build) build="$2"; shift ;;
    --cpuprofile) cpuprofile=1 ;;
    --skip-build) skip_build=1 ;;
    -h|--help) sed -n '2,49p' "$0"; exit 0 ;;
    *) echo "scheduler-perf: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $build = /* ]] || build="$root/$build"
out=${out:-$build/scheduler-perf}
[[ $out = /* ]] || out="$root/$out"

# workload → lines "workload name, configuration:case ..." in performance-config.yaml
cases() {
  local basic="stock:SchedulingBasic fleetsched:SchedulingBasic_Fleetsched"
  basic+=" extender:SchedulingBasic_Extender extender:SchedulingBasic_ExtenderAll"
  basic+=" extender-full:SchedulingBasic_ExtenderFullNodes"
  local gpu="stock:SchedulingGPU fleetsched:SchedulingGPU_Fleetsched extender:SchedulingGPU_Extender"
  local mixed="stock:SchedulingGPUMixed fleetsched:SchedulingGPUMixed_Fleetsched"
  case "$1" in
    smoke) echo "10Nodes $basic"; echo "10Nodes $gpu"; echo "10Nodes $mixed" ;;
    basic-1000) echo "1000Nodes $basic" ;;
    basic-5000) echo "5000Nodes $basic" ;;
    gpu-1000) echo "1000Nodes $gpu fleetsched:SchedulingGPU_FleetschedSpread" ;;
    gpu-mixed-1000) echo "1000Nodes $mixed" ;;
    *) echo "scheduler-perf: unknown workload $1 (smoke, basic-1000, basic-5000, gpu-1000, gpu-mixed-1000)" >&2
      return 2 ;;
  esac
}
IFS=, read -r -a selected <<<"$workloads"
for w in "${selected[@]}"; do cases "$w" >/dev/null; done
IFS=, read -r -a configList <<<"$configs"
for c in "${configList[@]}"; do
  case "$c" in
    stock|fleetsched|extender|extender-full) ;;
    *) echo "scheduler-perf: unknown configuration $c (stock, fleetsched, extender, extender-full)" >&2
      exit 2 ;;
  esac
done
wanted() { [[ ",$configs," == *",$1,"* ]]; }

# The extender's port: the one the scheduler configs' urlPrefix names (extender_test.go starts
# fleetsched serve there). It must be free; a second run of this script at the same time would
# clash, so the extender runs hold a lock.
extenderPort=$(sed -n 's|^- urlPrefix: http://127\.0\.0\.1:\([0-9]*\).*|\1|p' \
  scheduler/perf/scheduler-config-extender.yaml)
for f in scheduler/perf/scheduler-config-extender-*.yaml; do
  grep -q "urlPrefix: http://127.0.0.1:$extenderPort\$" "$f" || {
    echo "scheduler-perf: $f names another extender port than $extenderPort" >&2; exit 2; }
done
portFree() {
  # SO_REUSEADDR as a server sets it: the last run's connections in TIME_WAIT do not count.
  python3 -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1"
}

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

# The extender configurations run this fleetsched (extender_test.go reads FLEETSCHED_BIN).
if wanted extender || wanted extender-full; then
  [[ -f $build/build.ninja ]] || meson setup "$build" --buildtype=release >/dev/null
  ninja -C "$build" cmd/fleetsched/fleetsched >/dev/null
  export FLEETSCHED_BIN="$build/cmd/fleetsched/fleetsched"
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
  if [[ $2 == *_Extender* ]]; then
    exec {lock}>"${TMPDIR:-/tmp}/fleetsched-scheduler-perf-$extenderPort.lock"
    flock -w 600 "$lock" || { echo "scheduler-perf: port $extenderPort is locked by another run" >&2; return 1; }
    portFree "$extenderPort" || {
      echo "scheduler-perf: 127.0.0.1:$extenderPort (the extender's urlPrefix) is in use" >&2; return 1; }
  fi
  # From the package folder: the config's template paths are relative to it. ARTIFACTS sends
  # kube-scheduler's and kube-apiserver's log to a per-test file, kept only if the test fails.
  if ! (cd scheduler/perf && ARTIFACTS="$out/logs" KUBE_CACHE_MUTATION_DETECTOR=false \
    "$binary" "${args[@]}") >"$out/logs/$name.txt" 2>&1; then
    echo "scheduler-perf: $name failed; see $out/logs/$name.txt" >&2
    tail -20 "$out/logs/$name.txt" >&2
    return 1
  fi
  if [[ -n ${lock:-} ]]; then exec {lock}>&-; lock=""; fi
}

for ((r = 1; r <= rounds; r++)); do
  for w in "${selected[@]}"; do
    while read -r workload entries; do
      # The selected configurations' cases, in the listed order.
      order=()
      for e in $entries; do
        if wanted "${e%%:*}"; then order+=("${e#*:}"); fi
      done
      # Alternate the order (ABBA over rounds) so no configuration always runs first.
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

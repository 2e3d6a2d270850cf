#!/usr/bin/env bash
# A replay whose plot cannot be drawn fails (exit 1) and says why, after writing its CSVs;
# --no-plot skips the plot and succeeds. Matplotlib is made missing with a stand-in module that
# fails to import, so the check holds whether or not this machine has it; nothing is installed.
# Usage: plot_test.sh PATH-TO-fleetsched SOURCE-ROOT
set -uo pipefail
bin=${1:?usage: plot_test.sh PATH-TO-fleetsched SOURCE-ROOT}
src=${2:?usage: plot_test.sh PATH-TO-fleetsched SOURCE-ROOT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

cat >"$tmp/nodes.csv" <<'CSV'
sn,cpu_milli,memory_mib,gpu,model
node-0,64000,262144,2,P100
node-1,64000,262144,8,V100M16
CSV
cat >"$tmp/pods.csv" <<'CSV'
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
pod-0,12000,16384,1,1000,,LS,Running,0,100,0
pod-1,6000,12288,1,460,,LS,Running,1,100,1
pod-2,4000,8192,2,1000,,LS,Running,2,100,2
CSV
mkdir -p "$tmp/no-matplotlib/matplotlib"
echo 'raise ImportError("matplotlib is hidden by plot_test.sh")' >"$tmp/no-matplotlib/matplotlib/__init__.py"

# replay PLOT-SCRIPT ARGS...
replay() {
  local script=$1; shift
  PYTHONPATH="$tmp/no-matplotlib" "$bin" replay --nodes "$tmp/nodes.csv" --traces "$tmp/pods.csv" \
    --policies fgd --seeds 42 -j 1 --no-progress --plot-script "$script" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
}

replay "$src/replay/plot_allocation.py" -o "$tmp/out-plot"
rc=$?
[ "$rc" -eq 1 ] || fail "replay without matplotlib exited $rc, want 1"
grep -q "python3-matplotlib" "$tmp/stderr" || fail "replay without matplotlib does not name python3-matplotlib"
grep -qi "pip" "$tmp/stderr" && fail "replay without matplotlib mentions pip"
[ -s "$tmp/out-plot/runs.csv" ] || fail "replay without matplotlib did not write runs.csv"

replay "$src/replay/plot_allocation.py" -o "$tmp/out-noplot" --no-plot
rc=$?
[ "$rc" -eq 0 ] || fail "replay --no-plot exited $rc, want 0 ($(cat "$tmp/stderr"))"
[ -s "$tmp/out-noplot/runs.csv" ] || fail "replay --no-plot did not write runs.csv"

replay "$tmp/missing.py" -o "$tmp/out-noscript"
rc=$?
[ "$rc" -eq 1 ] || fail "replay with a missing plot script exited $rc, want 1"

if [ "$failures" -ne 0 ]; then
  cat "$tmp/stderr" >&2
  exit 1
fi
echo "replay plot checks passed"

#!/usr/bin/env bash
# Filter and prioritize latency over loopback against a static fleet and with churn, one build,
# in kube-scheduler's node order, alternated (A B B A ..., ROUNDS of each) so that a noisy
# machine's drift lands on both:
#   static  serve --nodes CORPUS/nodes.json; loadgen sends filter and prioritize (no bind), so
#           every pod is decided against the same charges;
#   churn   serve --kubeconfig --bind watching loadgen's fake kube-apiserver; loadgen --churn
#           creates each pod there, binds it to the node the scores select, and the API server
#           deletes it POD_LIFETIME s after its Binding (the pod watch charges, then uncharges);
#   watch   (MODES="static watch churn") serve watching loadgen's fake API server as in churn,
#           loadgen as in static: what the source alone costs, no pod ever created.
# serve gets CPU 0, the load generator CPU 1 (in churn with its API server's thread).
#   bench/loadgen_churn.sh CORPUS_DIR [BIN]      (corpus: fleetsched gen-fleet -o DIR -n 5000)
# Closed loop, one connection; RATE=N: open loop at N pods/s instead (the same load on serve in
# every mode). MODES run forward, then backward, ROUNDS times in all (static churn, churn static, ...).
# One line per run: mode, load average at its start, filter / prioritize / bind p50 and p99 (µs),
# pods/s (churn: pods bound, filter to bind's reply), unschedulable pods, pods bound and live at
# the end, loadgen's exit status.
set -euo pipefail
corpus=${1:?corpus folder}; bin=${2:-build/cmd/fleetsched/fleetsched}
port=${PORT:-18890}; api=${API_PORT:-18891}; seconds=${SECONDS_PER_RUN:-10}
lifetime=${POD_LIFETIME:-5}; rounds=${ROUNDS:-3}; read -ra modes <<<"${MODES:-static churn}"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
run() {
  local mode=$1 load pid lg rc=0
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  local common=(-t 127.0.0.1:$port --corpus "$corpus" -m nodenames -c 1 -D "$seconds" -w 2 --cpu 1
                -r "${RATE:-0}" --json "$dir/run.json" -q)
  rm -f "$dir/run.json" "$dir/kubeconfig"
  if [ "$mode" != static ]; then
    local churn=(--apiserver-port "$api" --kubeconfig-out "$dir/kubeconfig") bind=()
    [ "$mode" = churn ] && churn+=(--churn --pod-lifetime "$lifetime") && bind=(--bind)
    # loadgen first: it serves the API and starts once serve's /readyz answers.
    "$bin" loadgen "${common[@]}" "${churn[@]}" 2>"$dir/loadgen.err" &
    lg=$!
    for _ in $(seq 300); do [ -f "$dir/kubeconfig" ] && break; sleep 0.1; done
    taskset -c 0 "$bin" serve --listen 127.0.0.1:$port --kubeconfig "$dir/kubeconfig" "${bind[@]}" >/dev/null 2>&1 &
    pid=$!
    wait "$lg" || rc=$?
  else
    taskset -c 0 "$bin" serve --listen 127.0.0.1:$port --nodes "$corpus/nodes.json" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do curl -sf localhost:$port/readyz >/dev/null && break; sleep 0.2; done
    "$bin" loadgen "${common[@]}" 2>"$dir/loadgen.err" || rc=$?
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
  [ -f "$dir/run.json" ] || { echo "$mode: no result (loadgen exit $rc)"; cat "$dir/loadgen.err"; return; }
  python3 - "$dir/run.json" "$mode" "$load" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); v = d["verbs"]
print("%-6s load %-14s filter p50 %4.0f p99 %5.0f  prioritize p50 %4.0f p99 %5.0f  bind p50 %4.0f p99 %5.0f"
      "  pods/s %4d  unschedulable %4d  live %4d  exit %s" % (
    sys.argv[2], sys.argv[3], v["filter"]["p50Us"], v["filter"]["p99Us"], v["prioritize"]["p50Us"],
    v["prioritize"]["p99Us"], v["bind"]["p50Us"], v["bind"]["p99Us"], d["podsPerSecond"],
    d["podsUnschedulable"], d["apiLiveBound"], sys.argv[4]))
PY
}
for r in $(seq 0 $((rounds - 1))); do
  if ((r % 2 == 0)); then order=("${modes[@]}"); else order=(); for m in "${modes[@]}"; do order=("$m" "${order[@]}"); done; fi
  for m in "${order[@]}"; do run "$m"; done
done

#!/usr/bin/env bash
# Filter and prioritize latency over loopback in kube-scheduler's node order and in the old
# repeated order, for one or two fleetsched binaries, alternated (A B B A per order) so that a
# noisy machine's drift lands on both. serve gets CPU 0, the load generator CPU 1.
#   bench/loadgen_order.sh CORPUS_DIR BIN_A [BIN_B]      (corpus: fleetsched gen-fleet -o DIR -n 5000 ...)
# The load generator is BIN_B's (give the binary that knows --order last).
# Prints one line per run: binary, order, filter p50/p99, prioritize p50/p99 (µs), pods/s.
set -euo pipefail
corpus=${1:?corpus folder}; a=${2:?fleetsched binary}; b=${3:-$2}
port=${PORT:-18890}; seconds=${SECONDS_PER_RUN:-4}
json=$(mktemp); trap 'rm -f "$json"' EXIT
run() {
  local bin=$1 label=$2 order=$3
  taskset -c 0 "$bin" serve --listen 127.0.0.1:$port --nodes "$corpus/nodes.json" --pods "$corpus/bound-pods.json" \
    >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -sf localhost:$port/readyz >/dev/null && break; sleep 0.2; done
  "$b" loadgen -t 127.0.0.1:$port --corpus "$corpus" -m nodenames -c 1 -D "$seconds" -w 1 --cpu 1 \
    --order "$order" --json "$json" -q
  python3 - "$json" "$label" "$order" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); v = d["verbs"]
print("%-2s %-15s filter p50 %5.0f p99 %6.0f  prioritize p50 %5.0f p99 %6.0f  pods/s %5d" % (
    sys.argv[2], sys.argv[3], v["filter"]["p50Us"], v["filter"]["p99Us"],
    v["prioritize"]["p50Us"], v["prioritize"]["p99Us"], d["podsPerSecond"]))
PY
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
for order in kube-scheduler repeated; do
  run "$a" A $order; run "$b" B $order; run "$b" B $order; run "$a" A $order
done

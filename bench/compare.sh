#!/usr/bin/env bash
# fleetsched vs the Go seed extender, one command:
#
#   bench/compare.sh            # NodeNames 5,000 nodes and full Nodes 500 x ~12 KB, 10 s per run
#   bench/compare.sh --small    # 500 / 100 nodes, 3 s per run: under a minute once built (CI)
#
# It builds fleetsched and the Go peers, writes one corpus with `fleetsched gen-fleet`,
# then for each mode runs each server pinned to core 0 and the load generator pinned to core 1
# (same corpus, same load), and prints throughput and latency with fleetsched ÷ peer ratios.
# Results (JSON per run, SVG plots, summary.txt, and PNG when python3 has matplotlib) go to
# --out (default build-compare/results). Until `fleetsched serve` exists, only the peers run.
#
# Options: --small, --out DIR, --build DIR, --duration S, --warmup S, --connections N,
#          --depth N, --rate PODS_PER_S (open loop instead of closed), --skip-build,
#          --rt (run servers and load generator SCHED_FIFO via chrt: on a shared, busy machine
#          this removes most of the scheduling noise; needs root; opt-in, as it starves other
#          work on those cores for the run),
#          --ceiling (also run `fleetsched null-extender`: what the harness itself can drive)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

small=0 out="" build="build-compare" duration=10 warmup=2 connections=4 depth=1 rate=0 skip_build=0 rt=0 ceiling=0
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small=1 ;;
    --out) out="$2"; shift ;;
    --build) build="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --warmup) warmup="$2"; shift ;;
    --connections) connections="$2"; shift ;;
    --depth) depth="$2"; shift ;;
    --rate) rate="$2"; shift ;;
    --skip-build) skip_build=1 ;;
    --rt) rt=1 ;;
    --ceiling) ceiling=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "compare: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [ "$small" = 1 ]; then
  nn_nodes=500 full_nodes=100 duration=3 warmup=1
else
  nn_nodes=5000 full_nodes=500
fi
out="${out:-$build/results}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

server_cpu=0 loadgen_cpu=1
if [ "$(nproc)" -lt 2 ]; then
  echo "compare: needs 2 CPUs to pin server and load generator apart; running unpinned" >&2
  server_cpu="" loadgen_cpu=""
fi
# --rt: SCHED_FIFO for the server and the load generator, each on its core, so neither queues
# behind other work on a shared machine (the kernel's RT throttling still leaves 5 % to others).
rt_prefix=()
[ "$rt" = 1 ] && rt_prefix=(chrt -f 10)
server_prefix=("${rt_prefix[@]}")
[ -n "$server_cpu" ] && server_prefix+=(taskset -c "$server_cpu")

# --- build -------------------------------------------------------------------------------------
if [ "$skip_build" = 0 ]; then
  scripts/bootstrap.sh
  [ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=release -Dtests=false >/dev/null
  nice -n 10 ninja -C "$build" -j"$(nproc)" cmd/fleetsched/fleetsched >/dev/null
  bench/peers/build.sh "$build/peers"
fi
fleetsched="$build/cmd/fleetsched/fleetsched"
have_serve=0
if "$fleetsched" --help 2>/dev/null | grep -qE '^ +serve( |$)'; then have_serve=1; else
  echo "compare: this fleetsched has no 'serve' yet: measuring the Go peers only" >&2
fi

# --- corpus ------------------------------------------------------------------------------------
# Node objects of 10-13 KB (mean ~12 KB): the full-mode bodies carry the first $full_nodes.
corpus="$out/corpus"
"$fleetsched" gen-fleet -q -o "$corpus" -n "$nn_nodes" -p 256 --min-node-bytes 10240 --max-node-bytes 13312

# --- runs --------------------------------------------------------------------------------------
server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  server_pid=""
}
trap stop_server EXIT

port_free() {  # addr: refuse to measure whatever stale process still holds the port
  ! curl -s -o /dev/null --max-time 1 "http://$1/healthz"
}

wait_ready() {  # addr
  for _ in $(seq 1 300); do
    curl -sf "http://$1/healthz" >/dev/null 2>&1 && return 0
    [ -n "$server_pid" ] && ! kill -0 "$server_pid" 2>/dev/null && return 1
    sleep 0.1
  done
  return 1
}

run() {  # label mode addr fullnodes -- server command...
  local label="$1" mode="$2" addr="$3" fullnodes="$4"; shift 5
  if ! port_free "$addr"; then
    echo "compare: something already answers on $addr; not measuring $label" >&2
    return 1
  fi
  # No function or subshell in between: $! must be the server itself (taskset execs it), so
  # stop_server really stops it.
  "${server_prefix[@]}" "$@" >"$out/$label.server.log" 2>&1 &
  server_pid=$!
  if ! wait_ready "$addr"; then
    echo "compare: $label did not become ready; see $out/$label.server.log" >&2
    stop_server
    return 1
  fi
  local cpu_flag=()
  [ -n "$loadgen_cpu" ] && cpu_flag=(--cpu "$loadgen_cpu")
  # Latency as kube-scheduler sees it (one scheduling cycle at a time: 1 connection), then
  # throughput with --connections x --depth pods in flight, against the same server process.
  "${rt_prefix[@]}" "$fleetsched" loadgen -q -t "$addr" -m "$mode" --corpus "$corpus" --full-mode-nodes "$fullnodes" \
    -c 1 -d 1 -r "$rate" -D "$duration" -w "$warmup" "${cpu_flag[@]}" \
    --label "$label" --json "$out/$label.json" --svg "$out/$label.svg" || true
  "${rt_prefix[@]}" "$fleetsched" loadgen -q -t "$addr" -m "$mode" --corpus "$corpus" --full-mode-nodes "$fullnodes" \
    -c "$connections" -d "$depth" -D "$duration" -w "$warmup" "${cpu_flag[@]}" \
    --label "$label-tput" --json "$out/$label.tput.json" || true
  stop_server
}

fs_addr=127.0.0.1:${FLEETSCHED_PORT:-18888}
seed_addr=127.0.0.1:${SEED_PEER_PORT:-18889}
nn_addr=127.0.0.1:${NODENAMES_PEER_PORT:-18890}
null_addr=127.0.0.1:${NULL_EXTENDER_PORT:-18999}

if [ "$ceiling" = 1 ]; then
  run null-nodenames nodenames "$null_addr" "$full_nodes" -- "$fleetsched" null-extender "$null_addr" || true
  run null-full full "$null_addr" "$full_nodes" -- "$fleetsched" null-extender "$null_addr" || true
fi

if [ "$have_serve" = 1 ]; then
  run fleetsched-nodenames nodenames "$fs_addr" "$full_nodes" -- "$fleetsched" serve --listen "$fs_addr" --nodes "$corpus/nodes.json" || true
fi
run go-nodenames nodenames "$nn_addr" "$full_nodes" -- "$build/peers/go-nodenames-extender" --listen "$nn_addr" --nodes "$corpus/nodes.json" || true
if [ "$have_serve" = 1 ]; then
  run fleetsched-full full "$fs_addr" "$full_nodes" -- "$fleetsched" serve --listen "$fs_addr" --nodes "$corpus/nodes.json" || true
fi
run go-seed-full full "$seed_addr" "$full_nodes" -- "$build/peers/go-seed-extender" --listen "$seed_addr" || true

# --- summary -----------------------------------------------------------------------------------
python3 - "$out" "$nn_nodes" "$full_nodes" "$connections" "$depth" "$rate" "$rt" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out, nn, full, conns, depth, rate, rt = sys.argv[1:]
def load(label, suffix=".json"):
    p = os.path.join(out, label + suffix)
    return json.load(open(p)) if os.path.exists(p) else None
def tput(label):
    r = load(label, ".tput.json")
    return r["podsPerSecond"] if r else float("nan")
loop = (f"latency: open loop {rate} pods/s" if float(rate) > 0 else "latency: 1 connection") + \
    f"; throughput: {conns} conn x depth {depth}"
sched = ", both SCHED_FIFO" if rt == "1" else ""
print(f"fleetsched vs Go seed peer ({loop}; server on core 0, load generator on core 1{sched})")
def row(r):
    v = r["verbs"]
    return (f"  {r['label']:<22} {tput(r['label']):>9.0f} pods/s  filter p50 {v['filter']['p50Us']:>9.0f} µs"
            f"  p99 {v['filter']['p99Us']:>9.0f} µs  prioritize p50 {v['prioritize']['p50Us']:>9.0f} µs"
            f"  p99 {v['prioritize']['p99Us']:>9.0f} µs  errors {v['filter']['errors'] + v['prioritize']['errors']:.0f}")
for label in ("null-nodenames", "null-full"):
    r = load(label)
    if r: print("harness ceiling (null extender)\n" + row(r))
for mode, title, fs, peer in [("nodenames", f"NodeNames, {nn} nodes", "fleetsched-nodenames", "go-nodenames"),
                              ("full", f"full Nodes, {full} nodes x ~12 KB", "fleetsched-full", "go-seed-full")]:
    a, b = load(fs), load(peer)
    print(title)
    for r in (a, b):
        if r: print(row(r))
    if a and b:
        ratio = lambda x, y: x / y if y else float("nan")
        print(f"  ratio fleetsched/peer: throughput {ratio(tput(fs), tput(peer)):.2f}x", end="")
        for verb in ("filter", "prioritize"):
            for p in ("p50Us", "p99Us"):
                r = ratio(a["verbs"][verb][p], b["verbs"][verb][p])
                print(f"  {verb} {p[:-2]} {r:.3f} ({1 / r if r else float('nan'):.1f}x faster)", end="")
        print()
PY

if python3 -c "import matplotlib" 2>/dev/null; then
  python3 bench/plot_latency.py -o "$out/latency.png" $(ls "$out"/*.json | grep -v '\.tput\.json$') >/dev/null && echo "compare: plot $out/latency.png"
fi
echo "compare: results in $out"

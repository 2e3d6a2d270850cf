#!/usr/bin/env python3
"""How much of a NodeNames pod's server core is transport, and how much is fleetsched.

    bench/transport_floor.py --corpus DIR [--build build] [--rounds 3] [--duration 5]

DIR is a gen-fleet corpus (nodes.json, pods.json, corpus.json). The script

1. starts `fleetsched serve` on the fleet and records, for the pod whose filter and prioritize
   replies are closest in size to the corpus's mean (pods whose filter keeps two nodes or more,
   the ones the load generator counts), both replies;
2. then, round after round, runs the same 4-connection `fleetsched loadgen -m nodenames` load
   against `fleetsched null-extender` answering those recorded bytes for every request, and
   against `fleetsched serve`, each server pinned to CPU 0 and the load generator to CPU 1;
3. reads CPU 0's time from /proc/stat over each run's middle and prints it per pod: user,
   system, softirq and idle microseconds, next to the run's pods/s.

The null extender moves the same bytes (the same requests in, replies of the recorded size
out) and does no scheduling work, so its core time per pod is the floor any extender on this
machine pays for the transport: kernel copies, TCP over loopback, reads and writes. Rounds
alternate the two servers, so both see the same host. Needs 2 CPUs; `nice -n -10` when
permitted.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

# /proc/stat cpu fields (after the name): user nice system idle iowait irq softirq steal
USER, NICE, SYSTEM, IDLE, IOWAIT, IRQ, SOFTIRQ, STEAL = range(8)


def cpu_ticks(cpu):
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(f"cpu{cpu} "):
                return [int(x) for x in line.split()[1:]]
    raise SystemExit(f"transport_floor: no cpu{cpu} in /proc/stat")


def post(url, body):
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def wait_ready(url, proc, what):
    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit(f"transport_floor: {what} exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    raise SystemExit(f"transport_floor: {what} did not answer {url}")


def prefix(cpu, nice):
    return (["nice", "-n", "-10"] if nice else []) + ["taskset", "-c", str(cpu)]


def record_replies(args, fleetsched, out_dir):
    """Records the filter and prioritize replies of the pod nearest the mean reply sizes."""
    addr = f"127.0.0.1:{args.port}"
    server = subprocess.Popen(prefix(args.server_cpu, False) + [fleetsched, "serve", "--listen", addr, "--nodes",
                                                                  os.path.join(args.corpus, "nodes.json")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://{addr}/readyz", server, "fleetsched serve")
        with open(os.path.join(args.corpus, "nodes.json")) as f:
            names = [n["metadata"]["name"] for n in json.load(f)["items"]]
        with open(os.path.join(args.corpus, "pods.json")) as f:
            pods = json.load(f)["items"]
        counted = []  # (pod index, filter reply bytes, prioritize reply bytes)
        for i, pod in enumerate(pods):
            reply = post(f"http://{addr}/filter", json.dumps({"Pod": pod, "NodeNames": names}).encode())
            kept = json.loads(reply).get("NodeNames") or []
            if len(kept) < 2:
                continue
            scores = post(f"http://{addr}/prioritize", json.dumps({"Pod": pod, "NodeNames": kept}).encode())
            counted.append((i, len(reply), len(scores)))
        if not counted:
            raise SystemExit("transport_floor: no pod of the corpus keeps two nodes or more")
        mean_f = statistics.mean(c[1] for c in counted)
        mean_p = statistics.mean(c[2] for c in counted)
        i = min(counted, key=lambda c: abs(c[1] - mean_f) / mean_f + abs(c[2] - mean_p) / mean_p)[0]
        reply = post(f"http://{addr}/filter", json.dumps({"Pod": pods[i], "NodeNames": names}).encode())
        kept = json.loads(reply)["NodeNames"]
        scores = post(f"http://{addr}/prioritize", json.dumps({"Pod": pods[i], "NodeNames": kept}).encode())
    finally:
        server.terminate()
        server.wait()
    paths = (os.path.join(out_dir, "filter.json"), os.path.join(out_dir, "prioritize.json"))
    for path, data in zip(paths, (reply, scores)):
        with open(path, "wb") as f:
            f.write(data)
    print(f"recorded pod {i}'s replies: filter {len(reply):,} B ({len(kept):,} kept), prioritize "
          f"{len(scores):,} B; corpus means over {len(counted)} pods: {mean_f:,.0f} B and {mean_p:,.0f} B")
    return paths


def run(args, kind, command, loadgen):
    addr = f"127.0.0.1:{args.port}"
    server = subprocess.Popen(prefix(args.server_cpu, args.nice) + command + ([addr] if kind == "null" else
                                                                                ["--listen", addr]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://{addr}/healthz", server, kind)
        with tempfile.NamedTemporaryFile(suffix=".json") as result:
            gen = subprocess.Popen(prefix(args.loadgen_cpu, args.nice) + [
                loadgen, "loadgen", "-t", addr, "--corpus", args.corpus, "-m", "nodenames", "-c",
                str(args.connections), "-d", "1", "-D", str(args.duration), "-w", "1", "--cpu",
                str(args.loadgen_cpu), "-q", "--json", result.name])
            time.sleep(1.5)  # warm-up, plus a margin
            t0, a = time.monotonic(), cpu_ticks(args.server_cpu)
            time.sleep(args.duration - 1)
            t1, b = time.monotonic(), cpu_ticks(args.server_cpu)
            if gen.wait() != 0:
                raise SystemExit(f"transport_floor: loadgen against {kind} failed")
            with open(result.name) as f:
                pps = json.load(f)["podsPerSecond"]
            if pps <= 0:
                raise SystemExit(f"transport_floor: no pod completed against {kind}")
    finally:
        server.terminate()
        server.wait()
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    pods = pps * (t1 - t0)
    d = [y - x for x, y in zip(a, b)]
    per_pod = lambda *fields: sum(d[f] for f in fields) * tick_us / pods
    return {"kind": kind, "pods_per_s": pps, "user": per_pod(USER, NICE), "system": per_pod(SYSTEM),
            "softirq": per_pod(SOFTIRQ, IRQ), "idle": per_pod(IDLE, IOWAIT), "steal": per_pod(STEAL)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True, help="gen-fleet output folder")
    ap.add_argument("--build", default="build", help="meson build folder")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=5, help="measured seconds per run")
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--port", type=int, default=18890)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--loadgen-cpu", type=int, default=1)
    ap.add_argument("--json", help="write every run as JSON to this file")
    args = ap.parse_args()
    if args.duration < 2:
        ap.error("--duration must be at least 2 s")
    cpus = os.sched_getaffinity(0)
    if args.server_cpu == args.loadgen_cpu or not {args.server_cpu, args.loadgen_cpu} <= cpus:
        ap.error(f"needs two distinct CPUs for server and load generator; this process may use {sorted(cpus)}")
    fleetsched = os.path.join(args.build, "cmd", "fleetsched", "fleetsched")
    if not os.access(fleetsched, os.X_OK):
        raise SystemExit(f"transport_floor: {fleetsched} not built (ninja -C {args.build})")
    args.nice = os.geteuid() == 0  # raising priority needs root
    with tempfile.TemporaryDirectory() as tmp:
        filter_reply, prioritize_reply = record_replies(args, fleetsched, tmp)
        servers = {
            "null": [fleetsched, "null-extender", "--filter-reply", filter_reply, "--prioritize-reply", prioritize_reply],
            "fleetsched": [fleetsched, "serve", "--nodes", os.path.join(args.corpus, "nodes.json")],
        }
        runs = []
        print(f"{'round':>5} {'server':<10} {'pods/s':>7}   CPU {args.server_cpu} per pod, µs: "
              f"{'busy':>5} {'user':>5} {'system':>6} {'softirq':>7} {'idle':>5}")
        for r in range(1, args.rounds + 1):
            for kind, command in servers.items():
                x = run(args, kind, command, fleetsched)
                x["round"] = r
                runs.append(x)
                busy = x["user"] + x["system"] + x["softirq"]
                print(f"{r:>5} {kind:<10} {x['pods_per_s']:>7.0f}   {'':>14}{busy:>5.0f} {x['user']:>5.0f} "
                      f"{x['system']:>6.0f} {x['softirq']:>7.0f} {x['idle']:>5.0f}")
    print("medians:")
    for kind in servers:
        xs = [x for x in runs if x["kind"] == kind]
        med = lambda k: statistics.median(x[k] for x in xs)
        busy = statistics.median(x["user"] + x["system"] + x["softirq"] for x in xs)
        print(f"{'':>5} {kind:<10} {med('pods_per_s'):>7.0f}   {'':>14}{busy:>5.0f} {med('user'):>5.0f} "
              f"{med('system'):>6.0f} {med('softirq'):>7.0f} {med('idle'):>5.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

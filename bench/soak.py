#!/usr/bin/env python3
"""Soak: fleetsched serve for a long time at 80 % of its peak, with watch churn and binds;
its resident memory and open files must stay flat.

On a throwaway control plane (tests/e2e/cluster.py: etcd, kube-apiserver, kube-scheduler with
fleetsched as its extender, bind and preempt verbs on) holding a gen-fleet fleet:

  1. peak: `fleetsched loadgen` closed loop (NodeNames filter + prioritize over every node) for
     --peak-seconds; its pods/s is the peak;
  2. soak: loadgen open loop at --load x peak for --duration seconds while a churn thread keeps
     the watches busy: a GPU pod created every --pod-interval s (kube-scheduler filters it
     through fleetsched, which binds it), the oldest deleted beyond --live-pods, a node's labels
     patched every second (MODIFIED), a node deleted and created again every 15 s (DELETED,
     ADDED); fleetsched audits its cache every 60 s (a paged pod list);
  3. every --interval s: VmRSS and the number of entries in /proc/PID/fd of fleetsched.

Verdict: after --warmup s, the median of the last quarter of the samples must be within
--tolerance (5 %) of the first quarter's, for RSS and for open files; fleetsched must still be
running, loadgen must have seen no error and binds must have happened. Writes soak.json (every
sample, the counts, the verdict) and soak.md (a summary) to --out; exits 1 when not flat.

    bench/soak.py --build build --duration 1800            # 30 min, after warm-up
    bench/soak.py --duration 120 --warmup 30 --nodes 100   # a quick try

Needs the e2e components (tests/e2e/build-components.sh) and a release build. Not in
scripts/test.sh: it takes the machine for the whole run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cluster import ControlPlane, Extender, HarnessError, componentPaths, removeWorkdir  # noqa: E402

NAMESPACE = "soak"


def log(msg: str) -> None:
    print(f"soak: {msg}", file=sys.stderr, flush=True)


def cleanNode(item: dict) -> dict:
    """A list item as a create body: what the API server assigns removed."""
    meta = item["metadata"]
    for key in ("resourceVersion", "uid", "creationTimestamp", "managedFields"):
        meta.pop(key, None)
    return item


def gpuPod(name: str) -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "soak"},
                     "annotations": {"fleetsched.io/spot-tolerant": "true"}},
        "spec": {
            "containers": [{"name": "c", "image": "registry.invalid/soak:1",
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi",
                                                       "nvidia.com/gpu": "1"},
                                          "limits": {"nvidia.com/gpu": "1"}}}],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }


class Churn(threading.Thread):
    """Pods created (and bound by kube-scheduler through fleetsched) and deleted, node labels
    patched, nodes replaced: watch events of every type for both reflectors."""

    def __init__(self, plane: ControlPlane, nodes: list[dict], args):
        super().__init__(daemon=True)
        self.kube = plane.kube
        self.nodes = nodes
        self.args = args
        self.stopping = threading.Event()
        self.counts = {"podsCreated": 0, "podsDeleted": 0, "podsBound": 0, "nodePatches": 0,
                       "nodesReplaced": 0, "errors": 0}
        self.lastError = ""
        self.live: list[str] = []

    def call(self, fn, *a) -> bool:
        try:
            fn(*a)
            return True
        except (HarnessError, OSError) as e:
            self.counts["errors"] += 1
            self.lastError = str(e)[:300]
            return False

    def deleteOldest(self) -> None:
        name = self.live.pop(0)
        pod = {}
        try:
            pod = self.kube.getPod(NAMESPACE, name)
        except (HarnessError, OSError):
            pass
        if pod.get("spec", {}).get("nodeName"):
            self.counts["podsBound"] += 1
        if self.call(self.kube.request, "DELETE",
                     f"/api/v1/namespaces/{NAMESPACE}/pods/{name}?gracePeriodSeconds=0"):
            self.counts["podsDeleted"] += 1

    def run(self) -> None:
        rng = random.Random(7)
        n = 0
        nextPatch = nextReplace = time.monotonic()
        while not self.stopping.is_set():
            name = f"soak-{n}"
            n += 1
            if self.call(self.kube.createPod, NAMESPACE, gpuPod(name)):
                self.counts["podsCreated"] += 1
                self.live.append(name)
            while len(self.live) > self.args.live_pods:
                self.deleteOldest()
            now = time.monotonic()
            if now >= nextPatch:
                nextPatch = now + 1.0
                node = rng.choice(self.nodes)["metadata"]["name"]
                patch = {"metadata": {"labels": {"soak.fleetsched.io/tick": str(n)}}}
                if self.call(self.kube.request, "PATCH", f"/api/v1/nodes/{node}", patch,
                             "application/strategic-merge-patch+json"):
                    self.counts["nodePatches"] += 1
            if now >= nextReplace:
                nextReplace = now + 15.0
                node = rng.choice(self.nodes)
                name_ = node["metadata"]["name"]
                if (self.call(self.kube.request, "DELETE", f"/api/v1/nodes/{name_}")
                        and self.call(self.kube.createNode, json.loads(json.dumps(node)))):
                    self.counts["nodesReplaced"] += 1
            self.stopping.wait(self.args.pod_interval)
        while self.live:
            self.deleteOldest()


class Sampler(threading.Thread):
    def __init__(self, pid: int, interval: float):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.stopping = threading.Event()
        self.samples: list[dict] = []
        self.t0 = time.monotonic()

    def sample(self) -> None:
        rss = 0
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
        fds = sockets = 0
        for fd in os.listdir(f"/proc/{self.pid}/fd"):
            fds += 1
            try:
                sockets += os.readlink(f"/proc/{self.pid}/fd/{fd}").startswith("socket:")
            except OSError:  # closed meanwhile
                pass
        self.samples.append({"t": round(time.monotonic() - self.t0, 1), "rssKiB": rss, "fds": fds,
                             "sockets": sockets})

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.sample()
            except OSError:  # the process ended: the verdict says so
                return
            self.stopping.wait(self.interval)


def drift(samples: list[dict], key: str, warmup: float) -> dict:
    """Medians of the first and last quarter of the samples after the warm-up."""
    kept = [s[key] for s in samples if s["t"] >= warmup]
    q = len(kept) // 4
    if q < 2:
        return {"samples": len(kept), "first": None, "last": None, "drift": None}
    first, last = statistics.median(kept[:q]), statistics.median(kept[-q:])
    return {"samples": len(kept), "first": first, "last": last, "drift": (last - first) / first,
            "min": min(kept), "max": max(kept)}


def loadgen(binary: Path, port: int, corpus: Path, out: Path, rate: float, seconds: float,
            connections: int) -> dict:
    argv = [str(binary), "loadgen", "-t", f"127.0.0.1:{port}", "--url-prefix", "/scheduler",
            "--corpus", str(corpus), "-c", str(connections), "-D", str(seconds), "-w", "2",
            "-q", "--json", str(out)]
    if rate > 0:
        argv += ["-r", f"{rate:.0f}"]
    subprocess.run(argv, check=True)
    return json.loads(out.read_text())


def verbErrors(run: dict) -> int:
    return int(sum(v.get("errors", 0) for v in run.get("verbs", {}).values()))


def bindRequests(port: int) -> float:
    """fleetsched_http_requests_total{verb="bind"} on fleetsched's /metrics."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return sum(float(line.split()[1]) for line in text.splitlines()
               if line.startswith("fleetsched_http_requests_total{") and 'verb="bind"' in line)


def writeSummary(out: Path, result: dict) -> None:
    (out / "soak.json").write_text(json.dumps(result, indent=1) + "\n")
    a = result["args"]
    lines = [
        f"# Soak: {'PASS' if result['pass'] else 'FAIL'}", "",
        f"{a['nodes']} nodes, {a['duration']:.0f} s at {a['load']:.0%} of peak "
        f"({result['peakPodsPerSecond']:.0f} pods/s measured over {a['peak_seconds']:.0f} s; "
        f"soak rate {result['ratePodsPerSecond']:.0f} pods/s, achieved "
        f"{result['soak'].get('podsPerSecond', 0):.0f}), warm-up {a['warmup']:.0f} s, "
        f"a sample every {a['interval']:.0f} s.", "",
        "| | first quarter (median) | last quarter (median) | drift | min | max |",
        "|---|---|---|---|---|---|",
    ]
    for key, label in (("rssKiB", "RSS (KiB)"), ("fds", "open files")):
        d = result["drift"][key]
        if d["drift"] is None:
            lines.append(f"| {label} | too few samples ({d['samples']}) | | | | |")
            continue
        lines.append(f"| {label} | {d['first']:.0f} | {d['last']:.0f} | {d['drift']:+.2%} | "
                     f"{d['min']} | {d['max']} |")
    c = result["churn"]
    lines += ["", f"Churn: {c['podsCreated']} pods created, {c['podsBound']} of those deleted "
              f"seen bound, {c['podsDeleted']} deleted, {c['nodePatches']} node patches, "
              f"{c['nodesReplaced']} nodes replaced, {c['errors']} API errors. "
              f"fleetsched: {result['bindRequests']:.0f} bind requests. loadgen errors: "
              f"{result['loadgenErrors']}.", ""]
    if result["problems"]:
        lines += ["Problems:", ""] + [f"- {p}" for p in result["problems"]] + [""]
    (out / "soak.md").write_text("\n".join(lines))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build", help="release build folder (default: build)")
    p.add_argument("--out", default="build/soak", help="results and the cluster's logs")
    p.add_argument("--duration", type=float, default=1800, help="soak seconds after the peak run")
    p.add_argument("--warmup", type=float, default=120, help="seconds of samples left out first")
    p.add_argument("--interval", type=float, default=5, help="seconds between samples")
    p.add_argument("--tolerance", type=float, default=0.05, help="allowed drift (0.05: 5 %%)")
    p.add_argument("--load", type=float, default=0.8, help="share of the measured peak")
    p.add_argument("--peak-seconds", type=float, default=15)
    p.add_argument("--nodes", type=int, default=500)
    p.add_argument("--connections", type=int, default=2, help="loadgen keep-alive connections")
    p.add_argument("--live-pods", type=int, default=200, help="soak pods kept; older ones deleted")
    p.add_argument("--pod-interval", type=float, default=0.2, help="seconds between pod creates")
    args = p.parse_args()

    build = (ROOT / args.build).resolve()
    binary = build / "cmd" / "fleetsched" / "fleetsched"
    out = (ROOT / args.out).resolve()
    if out.exists():
        removeWorkdir(out)
    out.mkdir(parents=True)
    corpus = out / "corpus"
    subprocess.run([str(binary), "gen-fleet", "-q", "--compact", "-o", str(corpus),
                    "-n", str(args.nodes), "-p", "256"], check=True)
    nodes = [cleanNode(n) for n in json.loads((corpus / "nodes.json").read_text())["items"]]

    plane = ControlPlane(out / "cluster", componentPaths())
    plane.workdir.mkdir()
    problems: list[str] = []
    try:
        plane.start()
        log(f"creating {len(nodes)} nodes")
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda n: plane.kube.createNode(json.loads(json.dumps(n))), nodes))
        plane.kube.createNamespace(NAMESPACE)
        extender = Extender("fleetsched", [
            str(binary), "serve", "--listen", "127.0.0.1:{port}", "--url-prefix", "/scheduler",
            "--kubeconfig", "{workdir}/kubeconfig", "--bind", "--audit-interval", "60"])
        plane.startExtender(extender)
        plane.startScheduler(binder=True)
        pid = plane.extenderProcess.popen.pid

        log(f"peak: closed loop for {args.peak_seconds:.0f} s")
        peak = loadgen(binary, extender.port, corpus, out / "peak.json", 0, args.peak_seconds,
                       args.connections)
        rate = max(1.0, args.load * peak["podsPerSecond"])
        log(f"peak {peak['podsPerSecond']:.0f} pods/s; soak at {rate:.0f} pods/s for "
            f"{args.duration:.0f} s")
        churn, sampler = Churn(plane, nodes, args), Sampler(pid, args.interval)
        churn.start()
        sampler.start()
        soak: dict = {}
        try:
            soak = loadgen(binary, extender.port, corpus, out / "loadgen.json", rate, args.duration,
                           args.connections)
        except subprocess.CalledProcessError as e:
            problems.append(f"loadgen failed: {e}")
        sampler.stopping.set()
        sampler.join()
        churn.stopping.set()
        churn.join(timeout=120)
        binds = 0.0
        if plane.extenderProcess.alive():
            binds = bindRequests(extender.port)
        else:
            problems.append(f"fleetsched exited: {plane.extenderProcess.logTail(20)}")
    finally:
        plane.stop()

    result = {
        "args": vars(args),
        "peakPodsPerSecond": peak["podsPerSecond"],
        "ratePodsPerSecond": rate,
        "soak": {k: soak.get(k) for k in ("seconds", "pods", "podsPerSecond", "requests")},
        "loadgenErrors": verbErrors(soak) + verbErrors(peak),
        "churn": churn.counts,
        "churnLastError": churn.lastError,
        "bindRequests": binds,
        "samples": sampler.samples,
        "drift": {k: drift(sampler.samples, k, args.warmup) for k in ("rssKiB", "fds")},
    }
    for key, d in result["drift"].items():
        if d["drift"] is None:
            problems.append(f"{key}: too few samples after the warm-up ({d['samples']})")
        elif abs(d["drift"]) > args.tolerance:
            problems.append(f"{key}: last quarter {d['last']:.0f} vs first {d['first']:.0f} "
                            f"({d['drift']:+.2%}, allowed ±{args.tolerance:.0%})")
    if result["loadgenErrors"]:
        problems.append(f"loadgen saw {result['loadgenErrors']} errors")
    if churn.counts["podsBound"] == 0 or binds == 0:
        problems.append(f"binds: {binds:.0f} bind requests, {churn.counts['podsBound']} soak pods seen bound")
    result["problems"] = problems
    result["pass"] = not problems
    writeSummary(out, result)
    print((out / "soak.md").read_text())
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""Scale run: kube-scheduler alone vs. fleetsched vs. the Go seed extender.

For each configuration, on a fresh control plane (cluster.py): create N fake
nodes concurrently (plain Node objects the size of real EKS GPU nodes: status
capacity/allocatable incl. nvidia.com/gpu, GPU feature-discovery labels, a
kubelet's list of cached images; one in ten is a CPU-only node), start the
extender and kube-scheduler, create M bare pods concurrently (a quarter want
1/2/4/8 GPUs, the rest are small CPU pods), and wait until kube-scheduler has
bound them all.

  none          kube-scheduler, no extender
  fleetsched    fleetsched serve --kubeconfig (watch mode) as extender
  plugin        fleetsched-scheduler: kube-scheduler with fleetsched's engine as the
                in-process Fleetsched plugin (scheduler/), no extender; the same
                KubeSchedulerConfiguration otherwise, less the default scores the shipped
                plugin configuration turns off (deploy/kubernetes/plugin.yaml)
  go-seed       bench/peers/go-seed-extender: the seed's Go extender, full Node
                objects in every request (nodeCacheCapable: false) as it was
                written to run
  go-nodenames  bench/peers/go-nodenames-extender --nodes <dump of the API's
                nodes>: the same logic given node names only (not run by default)
  floor         fleetsched with a one-plugin profile (Spot: this fleet has no spot
                nodes, so it accepts every node and scores each 0) and no audit:
                replies as large as fleetsched's for next to no work, i.e. what
                calling any extender costs kube-scheduler and the machine (not run
                by default)
  baseline      another fleetsched binary (--baseline, e.g. an earlier commit's
                build) run exactly as `fleetsched` is, to compare two builds on
                the same control plane and host (not run by default)

Every extender gets the same stanza (filterVerb + prioritizeVerb,
managedResources nvidia.com/gpu, the weight of deploy/kubernetes/sidecar.yaml;
nodeCacheCapable true but for go-seed); kube-scheduler runs with qps/burst 5000/10000 and
percentageOfNodesToScore 100 (cluster.py). The Go peers schedule only the
first --peer-pods pods (default 1,000): at their rate all 10,000 would take
most of an hour, and pods/s is a rate either way.

pods/s = bound pods / (kube-scheduler ready, with all M pods already created and
pending -> its scheduler_schedule_attempts_total{result="scheduled"} reaching M,
polled every 0.1-2 s: a quarter of the expected remaining time). Creating the
pods first measures the scheduler, not the harness's create rate (with
--create-while-scheduling the clock starts at the first create instead).
Scheduling latency p50/p99 come from kube-scheduler's own histograms
(attempt duration of scheduled attempts; pod scheduling SLI, which includes
time queued behind other pods); extender latency from fleetsched's
fleetsched_http_request_duration_seconds (the Go peer exports no metrics).
Each component's CPU time over the burst (/proc, all threads) is reported
per scheduled pod: on a shared machine it varies far less than wall time.
Percentiles from histograms interpolate linearly inside a bucket (as
Prometheus' histogram_quantile does), so they are only as fine as the buckets.

Not part of the default test run: tests/e2e/scale.sh runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import http.client
import json
import os
import platform
import random
import re
import ssl
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster import (ControlPlane, Extender, HarnessError, Plugin, componentPaths,  # noqa: E402
                     log, removeWorkdir, waitFor)
from fleet import A100, H100, NodeShape, nodeObject, pod  # noqa: E402

CONFIGS = ("none", "fleetsched", "plugin", "go-seed", "go-nodenames", "floor", "baseline")
DEFAULT_CONFIGS = ("none", "fleetsched", "plugin", "go-seed")
PEERS = ("go-seed", "go-nodenames")
# GPUs per GPU pod and relative weights: many small jobs, few whole-node ones (mean 2.13).
POD_MIX = ((1, 8), (2, 4), (4, 2), (8, 1))
CPU_NODE_EVERY = 10  # node i is CPU-only when i % 10 == 9
NAMESPACE = "scale"
LOADGEN_PODS = 256  # pods loadgen cycles through beside the scale run (a body per pod and order)
# The floor configuration's profile: one plugin that decides nothing in this fleet.
FLOOR_PROFILE = """apiVersion: fleetsched.io/v1alpha1
kind: FleetschedConfiguration
profiles:
- name: default
  plugins:
  - {name: Spot, weight: 1}
"""


# ---- fleet and pods -------------------------------------------------------

def isCpuNode(i: int) -> bool:
    return i % CPU_NODE_EVERY == CPU_NODE_EVERY - 1


def nodeGpus(name: str, gpusPerNode: int) -> int:
    return 0 if name.startswith("cpu-") else gpusPerNode


def scaleNode(i: int, gpusPerNode: int, imageCount: int) -> dict:
    """Node i of the fleet: H100 / A100 alternating with every tenth a CPU node,
    zones a/b/c, all on-demand (spot nodes would make fleetsched refuse capacity
    the other two use)."""
    zone = "zone-" + "abc"[i % 3]
    if isCpuNode(i):
        shape = NodeShape(f"cpu-{i:05d}", zone)
    else:
        h100 = i % 2 == 0
        shape = NodeShape(f"gpu-{i:05d}", zone, gpusPerNode,
                          H100 if h100 else A100, gpuMemoryMiB=81920 if h100 else 40960)
    node = nodeObject(shape)
    labels = node["metadata"]["labels"]
    if shape.gpus:
        # The Go peers score by this label (the seed extender's choice).
        labels["gpu.nvidia.com/memory"] = str(shape.gpuMemoryMiB)
        labels.update({f"nvidia.com/{k}": v for k, v in (
            ("cuda.driver.major", "550"), ("cuda.driver.minor", "90"), ("cuda.runtime.major", "12"),
            ("cuda.runtime.minor", "4"), ("gpu.family", "hopper" if "H100" in shape.product
                                          else "ampere"),
            ("gpu.machine", "p5.48xlarge" if "H100" in shape.product else "p4d.24xlarge"),
            ("gpu.replicas", "1"), ("gpu.sharing-strategy", "none"), ("mig.capable", "true"),
            ("gpu.compute.major", "9" if "H100" in shape.product else "8"),
            ("gpu.compute.minor", "0"))})
    labels.update({
        "node.kubernetes.io/instance-type": labels.get("nvidia.com/gpu.machine", "m6i.24xlarge"),
        "eks.amazonaws.com/nodegroup": "gpu" if shape.gpus else "general",
        "feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true",
        "feature.node.kubernetes.io/kernel-version.full": "6.1.112-124.190.amzn2023.x86_64",
        "feature.node.kubernetes.io/pci-10de.present": str(bool(shape.gpus)).lower(),
    })
    # What a kubelet reports after pulling a few ML images: most of a real node's
    # bytes, and what kube-scheduler re-sends in full-Nodes mode.
    rng = random.Random(i)
    node["status"]["images"] = [{
        "names": [f"ml/{name}@sha256:{rng.getrandbits(256):064x}", f"ml/{name}:v{k}.{i % 7}"],
        "sizeBytes": rng.randrange(50_000_000, 9_000_000_000)}
        for k, name in ((k, ("pytorch-training", "triton-server", "vllm-openai", "nccl-tests",
                             "dcgm-exporter", "k8s-device-plugin", "aws-node", "kube-proxy")[k % 8]
                         + f"-{k // 8}") for k in range(imageCount))]
    node["status"]["nodeInfo"] = {
        "architecture": "amd64", "containerRuntimeVersion": "containerd://1.7.22",
        "kernelVersion": "6.1.112-124.190.amzn2023.x86_64", "kubeletVersion": "v1.36.3",
        "kubeProxyVersion": "v1.36.3", "operatingSystem": "linux",
        "osImage": "Amazon Linux 2023.6.20241031", "machineID": f"{rng.getrandbits(128):032x}",
        "systemUUID": f"ec2{rng.getrandbits(116):029x}", "bootID": f"{rng.getrandbits(128):032x}"}
    return node


def scalePods(count: int, seed: int, gpuShare: float) -> list[dict]:
    rng = random.Random(seed)
    sizes = [g for g, _ in POD_MIX]
    weights = [w for _, w in POD_MIX]
    return [pod(f"p-{i:06d}", rng.choices(sizes, weights)[0] if rng.random() < gpuShare else 0)
            for i in range(count)]


def podGpus(p: dict) -> int:
    return int(p["spec"]["containers"][0]["resources"].get("limits", {}).get("nvidia.com/gpu", 0))


# ---- keep-alive REST client for the bursts ---------------------------------

class Burst:
    """POSTs many objects concurrently, one keep-alive TLS connection per thread
    (cluster.Kube opens a connection per request: too slow for thousands)."""

    def __init__(self, plane: ControlPlane, threads: int):
        self.host, self.port = "127.0.0.1", plane.apiserverPort
        self.token = plane.token
        ca = plane.workdir / "pki" / "apiserver.crt"
        self.context = ssl.create_default_context(cafile=str(ca))
        self.context.check_hostname = False  # cert names may not include 127.0.0.1
        self.threads = threads
        self.local = threading.local()

    def _conn(self) -> http.client.HTTPSConnection:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                               timeout=60)
            self.local.conn = conn
        return conn

    def _post(self, path: str, body: bytes) -> None:
        for attempt in range(3):
            conn = self._conn()
            try:
                conn.request("POST", path, body, {"Authorization": "Bearer " + self.token,
                                                  "Content-Type": "application/json",
                                                  "Accept": "application/json"})
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                continue
            if resp.status == 429 and attempt < 2:  # apiserver inflight limit: back off
                time.sleep(0.2)
                continue
            if resp.status >= 300:
                raise HarnessError(f"POST {path}: HTTP {resp.status}: {data[:300]!r}")
            return

    def post(self, path: str, objects: list[dict]) -> None:
        bodies = [json.dumps(o).encode() for o in objects]
        with ThreadPoolExecutor(self.threads) as pool:
            list(pool.map(lambda b: self._post(path, b), bodies))


# ---- Prometheus text ------------------------------------------------------

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parseMetrics(text: str) -> list[tuple[str, dict, float]]:
    out = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m:
            out.append((m.group(1), dict(_LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return out


def counterSum(samples, name: str, **labels) -> float:
    return sum(v for n, l, v in samples
               if n == name and all(l.get(k) == want for k, want in labels.items()))


def histogram(samples, name: str, **labels) -> tuple[list[tuple[float, float]], float, float]:
    """Cumulative buckets [(le, count)] summed over matching series, plus count and sum."""
    buckets: dict[float, float] = {}
    for n, l, v in samples:
        if n == name + "_bucket" and all(l.get(k) == want for k, want in labels.items()):
            le = float("inf") if l["le"] == "+Inf" else float(l["le"])
            buckets[le] = buckets.get(le, 0.0) + v
    return (sorted(buckets.items()), counterSum(samples, name + "_count", **labels),
            counterSum(samples, name + "_sum", **labels))


def quantile(buckets: list[tuple[float, float]], q: float) -> float | None:
    if not buckets or buckets[-1][1] == 0:
        return None
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float("inf"):
                return lower  # beyond the last finite bucket: its bound is all we know
            return lower + (le - lower) * (rank - below) / max(count - below, 1e-12)
        lower, below = le, count
    return lower


def latencySummary(samples, name: str, **labels) -> dict:
    buckets, count, total = histogram(samples, name, **labels)
    return {"count": int(count), "mean_s": total / count if count else None,
            "p50_s": quantile(buckets, 0.50), "p99_s": quantile(buckets, 0.99)}


def fetchText(url: str) -> str:
    with urllib.request.urlopen(url, context=ssl._create_unverified_context(), timeout=10) as r:
        return r.read().decode()


def cpuSeconds(pid: int) -> float:
    """User + system CPU of a process, all threads (/proc/PID/stat fields 14, 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loadAverage() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def machineTicks() -> tuple[int, int]:
    """(all, steal) jiffies of every CPU since boot (/proc/stat). Steal is time the hypervisor
    gave this VM's vCPUs to someone else: a configuration that ran while it was high ran on a
    slower machine, which per-pod CPU times do not show."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields[:8]), fields[7]


# ---- one configuration ----------------------------------------------------

def extenderFor(config: str, args) -> Extender | None:
    if config in ("none", "plugin"):
        return None
    if config in ("fleetsched", "baseline"):
        binary = args.fleetsched if config == "fleetsched" else args.baseline
        return Extender("fleetsched", [binary, "serve", "--listen", "127.0.0.1:{port}",
                                       "--url-prefix", "/scheduler", "--kubeconfig",
                                       "{workdir}/kubeconfig", *args.fleetsched_arg])
    if config == "floor":
        return Extender("fleetsched", [args.fleetsched, "serve", "--listen", "127.0.0.1:{port}",
                                       "--url-prefix", "/scheduler", "--kubeconfig",
                                       "{workdir}/kubeconfig", "--config", "{workdir}/floor.yaml",
                                       "--audit-interval", "0"])
    if config == "go-seed":
        return Extender("go-seed-extender", [args.go_seed, "--listen", "127.0.0.1:{port}",
                                             "--url-prefix", "/scheduler"],
                        healthPath="/healthz", nodeCacheCapable=False)
    return Extender("go-nodenames-extender",
                    [args.go_nodenames, "--listen", "127.0.0.1:{port}", "--url-prefix",
                     "/scheduler", "--nodes", "{workdir}/nodes.json"], healthPath="/healthz")


def runConfig(config: str, args, paths: dict, pods: list[dict]) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix=f"fleetsched-scale-{config}-", dir=args.workdir))
    plane = ControlPlane(workdir, paths)
    result: dict = {"config": config, "nodes": args.nodes, "pods": len(pods),
                    "load_before": loadAverage()}
    log(f"[{config}] work folder {workdir}, load {result['load_before']}")
    ok = False
    try:
        started = time.monotonic()
        plane.start()
        burst = Burst(plane, args.threads)
        t = time.monotonic()
        burst.post("/api/v1/nodes", [scaleNode(i, args.gpus_per_node, args.node_images)
                                     for i in range(args.nodes)])
        result["node_create_s"] = time.monotonic() - t
        log(f"[{config}] {args.nodes} nodes created in {result['node_create_s']:.1f} s")
        extender = extenderFor(config, args)
        if extender is not None:
            if config == "floor":
                (workdir / "floor.yaml").write_text(FLOOR_PROFILE)
            if config == "go-nodenames":
                (workdir / "nodes.json").write_text(plane.kubectl("get", "nodes", "-o", "json",
                                                                  timeout=300))
            plane.extender = extender
            plane.startExtender(extender)
        plane.kube.createNamespace(NAMESPACE)
        createPods = lambda: result.update(  # noqa: E731
            pod_create_s=_timed(lambda: burst.post(f"/api/v1/namespaces/{NAMESPACE}/pods", pods)))
        if not args.create_while_scheduling:
            createPods()
            log(f"[{config}] {len(pods)} pods created in {result['pod_create_s']:.1f} s")
        plane.startScheduler(plugin=Plugin(args.scheduler) if config == "plugin" else None)
        result["control_plane_up_s"] = time.monotonic() - started
        schedMetrics = f"https://127.0.0.1:{plane.schedulerPort}/metrics"

        # Waiting on kube-scheduler's counter adds no load to the API server (a
        # pod watch or list would), but its /metrics is ~220 KB of text: each
        # scrape costs the scheduler CPU, so scrape rarely while far from done
        # and every 0.1 s only near the end.
        def scheduled() -> float:
            text = fetchText(schedMetrics)
            lines = "\n".join(line for line in text.splitlines()
                              if line.startswith("scheduler_schedule_attempts_total"))
            return counterSum(parseMetrics(lines), "scheduler_schedule_attempts_total",
                              result="scheduled")

        # Pods created first: t0 is kube-scheduler's readiness and the count
        # starts at 0 (it may already have bound a few, which count as its work).
        base = scheduled() if args.create_while_scheduling else 0.0
        creator = threading.Thread(target=createPods)
        cpuBefore = {p.name: cpuSeconds(p.pid) for p in plane.processes}
        ticksBefore = machineTicks()
        t0 = time.monotonic()
        if args.create_while_scheduling:
            creator.start()
        deadline = t0 + args.timeout
        last = base
        while time.monotonic() < deadline:
            for proc in plane.processes:
                if not proc.alive():
                    raise HarnessError(f"{proc.name} exited ({proc.popen.returncode}): "
                                       f"{proc.logTail()}")
            last = scheduled()
            if last - base >= len(pods):
                break
            elapsed = time.monotonic() - t0
            rate = (last - base) / elapsed if last > base else 0.0
            eta = (len(pods) - (last - base)) / rate if rate else 2.0
            time.sleep(min(max(eta / 4, 0.1), 2.0))
            result["scrapes"] = result.get("scrapes", 0) + 1
        tEnd = time.monotonic()
        # CPU time each component spent on the burst: far less sensitive than
        # wall time to what else the shared machine runs.
        result["cpu_s"] = {p.name: cpuSeconds(p.pid) - cpuBefore[p.name] for p in plane.processes}
        ticksAfter = machineTicks()
        result["steal_pct"] = 100.0 * (ticksAfter[1] - ticksBefore[1]) / max(ticksAfter[0] - ticksBefore[0], 1)
        if args.create_while_scheduling:
            creator.join()
        if "pod_create_s" not in result:
            raise HarnessError("pod creation failed (see above)")
        boundCount = int(last - base)
        result.update(first_create_to_last_scheduled_s=tEnd - t0, scheduled=boundCount,
                      pods_per_s=boundCount / (tEnd - t0))
        log(f"[{config}] {boundCount}/{len(pods)} scheduled in {tEnd - t0:.1f} s "
            f"(creates took {result['pod_create_s']:.1f} s)")

        samples = parseMetrics(fetchText(schedMetrics))
        result["attempt"] = latencySummary(samples, "scheduler_scheduling_attempt_duration_seconds",
                                           result="scheduled")
        result["sli"] = latencySummary(samples, "scheduler_pod_scheduling_sli_duration_seconds")
        result["unschedulable_attempts"] = int(counterSum(
            samples, "scheduler_schedule_attempts_total", result="unschedulable"))
        result["error_attempts"] = int(counterSum(
            samples, "scheduler_schedule_attempts_total", result="error"))
        if config in ("fleetsched", "floor", "baseline"):
            ext = parseMetrics(fetchText(f"http://127.0.0.1:{plane.extender.port}/metrics"))
            result["extender"] = {verb: latencySummary(
                ext, "fleetsched_http_request_duration_seconds", verb=verb)
                for verb in ("filter", "prioritize")}
        if config == "plugin":
            # The plugin's own time, in the extender columns: kube-scheduler's per-plugin
            # histogram (it samples 10 % of scheduling cycles), PreFilter and PreScore being
            # where the engine decides every node and scores the feasible ones.
            result["extender"] = {verb: latencySummary(
                samples, "scheduler_plugin_execution_duration_seconds", plugin="Fleetsched",
                extension_point=point, status="Success")
                for verb, point in (("filter", "PreFilter"), ("prioritize", "PreScore"))}
        result["signatures_disabled"] = signaturesDisabled(plane)
        result["check"] = checkPlacements(plane, args.gpus_per_node)
        result["load_after"] = loadAverage()
        ok = boundCount >= len(pods) and result["check"]["over_allocated_nodes"] == 0
        if not ok:
            log(f"[{config}] incomplete or inconsistent: {result['check']}")
        return result
    finally:
        plane.stop()
        if ok and not args.keep:
            removeWorkdir(workdir)
        else:
            log(f"[{config}] logs kept in {workdir}")


def loadgenBeside(args, pods: list[dict]) -> dict:
    """fleetsched's latency from its own load generator on this run's fleet, after the rounds:
    serve --nodes on the same Node objects (no pods bound: a static fleet) and loadgen sending
    the first LOADGEN_PODS of the pods kube-scheduler calls the extender for (GPU pods: the
    stanza's managedResources), in kube-scheduler's order (new per pod) and as one repeated
    list, serve and loadgen pinned to their own CPUs when there are two. Every node goes to
    every filter, where kube-scheduler sends only those its own filters kept."""
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="fleetsched-scale-loadgen-", dir=args.workdir) as tmp:
        nodes, podList = Path(tmp) / "nodes.json", Path(tmp) / "pods.json"
        nodes.write_text(json.dumps({"apiVersion": "v1", "kind": "NodeList", "items": [
            scaleNode(i, args.gpus_per_node, args.node_images) for i in range(args.nodes)]}))
        podList.write_text(json.dumps({"apiVersion": "v1", "kind": "PodList",
                                       "items": [p for p in pods if podGpus(p)][:LOADGEN_PODS]}))
        pinned = (os.cpu_count() or 1) >= 2
        for order in ("kube-scheduler", "repeated"):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            serve = subprocess.Popen(
                [args.fleetsched, "serve", "--listen", f"127.0.0.1:{port}", "--nodes", str(nodes)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=(lambda: os.sched_setaffinity(0, {0})) if pinned else None)
            try:
                waitFor("fleetsched serve --nodes",
                        lambda: fetchText(f"http://127.0.0.1:{port}/readyz") is not None, timeout=120)
                report = Path(tmp) / f"{order}.json"
                subprocess.run([args.fleetsched, "loadgen", "-t", f"127.0.0.1:{port}",
                                "--nodes-file", str(nodes), "--pods-file", str(podList),
                                "--order", order, "-c", "1", "-D", str(args.loadgen_seconds),
                                "-w", "1", "--json", str(report), "-q",
                                *(["--cpu", "1"] if pinned else [])], check=True, timeout=600)
                out[order] = json.loads(report.read_text())["verbs"]
            finally:
                serve.terminate()
                serve.wait(timeout=30)
    return out


def loadgenTable(results: list[dict], lg: dict) -> str:
    """fleetsched's own histograms in the scale run (median over rounds) next to the load
    generator's percentiles on the same fleet, µs."""
    def us(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.0f}"
    rows = ["| fleetsched, same fleet | filter p50 / p99 µs | prioritize p50 / p99 µs |",
            "|---|---|---|"]
    own = [r["extender"] for r in results if r["config"] == "fleetsched" and r.get("extender")]
    ownP50 = None
    if own:
        def med(verb: str, q: str) -> float | None:
            vals = [e[verb][q] for e in own if e[verb].get(q) is not None]
            return statistics.median(vals) * 1e6 if vals else None
        ownP50 = med("filter", "p50_s")
        rows.append(f"| scale run, its own histogram (median of {len(own)} rounds) | "
                    f"{us(ownP50)} / {us(med('filter', 'p99_s'))} | "
                    f"{us(med('prioritize', 'p50_s'))} / {us(med('prioritize', 'p99_s'))} |")
    for order, label in (("kube-scheduler", "loadgen, kube-scheduler's order"),
                         ("repeated", "loadgen, one repeated list")):
        v = lg.get(order)
        if v:
            rows.append(f"| {label} | {us(v['filter']['p50Us'])} / {us(v['filter']['p99Us'])} | "
                        f"{us(v['prioritize']['p50Us'])} / {us(v['prioritize']['p99Us'])} |")
    rows.append("")
    faithful, repeated = lg.get("kube-scheduler"), lg.get("repeated")
    if faithful and repeated and repeated["filter"]["p50Us"]:
        rows.append(f"loadgen filter p50, kube-scheduler's order ÷ repeated: "
                    f"{faithful['filter']['p50Us'] / repeated['filter']['p50Us']:.2f} (target ≤ 1.25)")
    if faithful and ownP50 and faithful["filter"]["p50Us"]:
        rows.append(f"filter p50, fleetsched's own in the scale run ÷ loadgen's in kube-scheduler's "
                    f"order: {ownP50 / faithful['filter']['p50Us']:.2f} (target ≤ 2; the histogram's "
                    "buckets make the first coarse)")
    return "\n".join(rows)


def signaturesDisabled(plane: ControlPlane) -> bool:
    """kube-scheduler 1.36 logs this line when a profile cannot batch pods by signature
    (OpportunisticBatching): any extender configured, or a plugin without SignPod
    (pkg/scheduler/framework/runtime/framework.go, computeBatchablePlugins)."""
    proc = next(p for p in plane.processes if p.name == "kube-scheduler")
    return "Disabling signatures for profile" in proc.logPath.read_text(errors="replace")


def _timed(fn) -> float:
    t = time.monotonic()
    fn()
    return time.monotonic() - t


def checkPlacements(plane: ControlPlane, gpusPerNode: int) -> dict:
    """After the run: every pod bound, no node over its GPUs (one list, off the clock)."""
    items = plane.kube.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods",
                               timeout=300).get("items") or []
    use: dict[str, int] = {}
    for p in items:
        node = p["spec"].get("nodeName")
        if node:
            use[node] = use.get(node, 0) + podGpus(p)
    return {"bound": sum(1 for p in items if p["spec"].get("nodeName")),
            "nodes_used": len(use), "gpus_used": sum(use.values()),
            "over_allocated_nodes": sum(1 for n, g in use.items()
                                        if g > nodeGpus(n, gpusPerNode))}


# ---- report ---------------------------------------------------------------

def ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 1000:.1f}"


def cpuPerPod(r: dict) -> str:
    cpu, n = r.get("cpu_s") or {}, max(r["scheduled"], 1)
    ext = next((v for k, v in cpu.items() if k not in ("etcd", "kube-apiserver", "kube-scheduler")),
               None)
    parts = [cpu.get("kube-scheduler"), ext, cpu.get("kube-apiserver")]
    return " / ".join("–" if v is None else f"{v * 1000 / n:.2f}" for v in parts)


def table(results: list[dict]) -> str:
    rows = ["| round | config | scheduled | s to schedule all | pods/s | vs none | "
            "attempt p50 / p99 ms | SLI p50 / p99 ms | extender filter p50 / p99 ms | "
            "prioritize p50 / p99 ms | CPU ms/pod: scheduler / extender / apiserver | "
            "steal % | creates s | load before → after |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        base = next((b for b in results
                     if b["config"] == "none" and b.get("round") == r.get("round")), None)
        vs = f"{r['pods_per_s'] / base['pods_per_s']:.2f}×" if base else "–"
        ext = r.get("extender") or {}
        f, p = ext.get("filter", {}), ext.get("prioritize", {})
        rows.append(
            f"| {r.get('round', 1)} | {r['config']} | {r['scheduled']}/{r['pods']} | "
            f"{r['first_create_to_last_scheduled_s']:.1f} | {r['pods_per_s']:.0f} | {vs} | "
            f"{ms(r['attempt']['p50_s'])} / {ms(r['attempt']['p99_s'])} | "
            f"{ms(r['sli']['p50_s'])} / {ms(r['sli']['p99_s'])} | "
            f"{ms(f.get('p50_s'))} / {ms(f.get('p99_s'))} | "
            f"{ms(p.get('p50_s'))} / {ms(p.get('p99_s'))} | {cpuPerPod(r)} | "
            f"{r.get('steal_pct', 0):.1f} | {r['pod_create_s']:.1f} | "
            f"{r['load_before']} → {r['load_after']} |")
    rows.append("")
    for mine, other, target in (("fleetsched", "none", " (target ≥ 0.90)"),
                                ("plugin", "none", " (target ≥ 0.95)"), ("plugin", "fleetsched", ""),
                                ("fleetsched", "go-seed", " (target ≥ 5)"),
                                ("fleetsched", "go-nodenames", ""), ("floor", "none", ""),
                                ("fleetsched", "floor", ""), ("baseline", "none", ""),
                                ("fleetsched", "baseline", "")):
        ratios = roundRatios(results, mine, other)
        if ratios:
            each = ", ".join(f"{x:.2f}" for x in ratios)
            rows.append(f"{mine} ÷ {other}: {statistics.median(ratios):.2f}{target}"
                        + (f" — median of {len(ratios)} rounds: {each}" if len(ratios) > 1 else ""))
    sli = roundRatios(results, "plugin", "none", key=lambda r: r["sli"]["p50_s"] or 0.0)
    if sli:
        rows.append(f"scheduling SLI p50: plugin ÷ none = {statistics.median(sli):.2f} "
                    "(target ≤ 1.10)")
    disabled = sorted({r["config"] for r in results if r.get("signatures_disabled")})
    rows.append("kube-scheduler turned pod signatures off in: " + (", ".join(disabled) or "none"))
    for mine in ("fleetsched", "plugin", "floor", "baseline"):
        cpuRatios = roundRatios(results, mine, "none", key=podsPerCpuSecond)
        if cpuRatios:
            rows.append(f"pods per CPU-second of all components: {mine} ÷ none = "
                        f"{statistics.median(cpuRatios):.2f} (what pods/s would be on a machine "
                        "that runs nothing else)")
    return "\n".join(rows)


def podsPerCpuSecond(r: dict) -> float:
    """Scheduled pods per CPU second of every component: a rate, like pods/s."""
    cpu = sum((r.get("cpu_s") or {}).values())
    return r["scheduled"] / cpu if cpu else 0.0


def roundRatios(results: list[dict], a: str, b: str,
                key=lambda r: r["pods_per_s"]) -> list[float]:
    """key (pods/s) of config a over config b, one ratio per round that ran both: the
    two ran minutes apart, so a ratio within a round is steadier on a shared
    machine than one across rounds."""
    out = []
    for rnd in sorted({r.get("round", 1) for r in results}):
        x = next((r for r in results if r["config"] == a and r.get("round", 1) == rnd), None)
        y = next((r for r in results if r["config"] == b and r.get("round", 1) == rnd), None)
        if x and y and key(y) > 0:
            out.append(key(x) / key(y))
    return out


def roundOrder(configs: list[str], rnd: int, peerRounds: int) -> list[str]:
    """Configurations of round rnd (1-based): the given order in odd rounds and
    reversed in even ones (ABBA), peers only in the first peerRounds rounds."""
    order = [c for c in configs if c not in PEERS or rnd <= peerRounds]
    return order if rnd % 2 else order[::-1]


@contextlib.contextmanager
def exclusiveLock(path: str):
    if not path:
        yield
        return
    with open(path, "a") as f:
        t = time.monotonic()
        fcntl.flock(f, fcntl.LOCK_EX)
        if time.monotonic() - t > 1:
            log(f"waited {time.monotonic() - t:.0f} s for {path}")
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--peer-pods", type=int, default=1000,
                    help="pods the Go peers schedule (the first ones of the same list)")
    ap.add_argument("--gpu-pod-share", type=float, default=0.25,
                    help="fraction of pods that want GPUs (the rest: 100m CPU)")
    ap.add_argument("--node-images", type=int, default=64,
                    help="images in each node's status (~190 B each; 64 make a ~12 KB node)")
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--configs", default=",".join(DEFAULT_CONFIGS),
                    help=f"comma-separated, in run order, from {', '.join(CONFIGS)} "
                         f"(default {','.join(DEFAULT_CONFIGS)})")
    ap.add_argument("--threads", type=int, default=16, help="concurrent creates")
    ap.add_argument("--create-while-scheduling", action="store_true",
                    help="start kube-scheduler first and create pods during the run (pods/s "
                         "then includes the harness's create rate); default: create every pod, "
                         "then start kube-scheduler and time it draining the queue")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per configuration")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1,
                    help="run the configurations this many times, interleaved (even rounds in "
                         "reverse order, so a machine that drifts slower or faster during the "
                         "run favours no configuration); ratios are medians of per-round ratios")
    ap.add_argument("--peer-rounds", type=int, default=1,
                    help="rounds the Go peers take part in (the first ones); they are ~20x "
                         "slower, so more rounds of them mostly lengthen the run")
    ap.add_argument("--lock", default="",
                    help="hold an exclusive flock on this file while each configuration runs, "
                         "so cooperating benchmarks on a shared machine wait in between")
    ap.add_argument("--json", default="scale-results.json")
    ap.add_argument("--fleetsched", default=os.environ.get("FLEETSCHED_BIN", ""))
    ap.add_argument("--fleetsched-arg", action="append", default=[], metavar="ARG",
                    help="one more argument for fleetsched serve (repeat for several), e.g. "
                         "--fleetsched-arg=--audit-interval=0")
    ap.add_argument("--scheduler", default=os.environ.get("FLEETSCHED_SCHEDULER_BIN", ""),
                    help="fleetsched-scheduler, for the plugin config")
    ap.add_argument("--baseline", default=os.environ.get("FLEETSCHED_BASELINE_BIN", ""),
                    help="the fleetsched binary of the baseline config")
    ap.add_argument("--go-seed", default=os.environ.get("FLEETSCHED_GO_SEED", ""))
    ap.add_argument("--go-nodenames", default=os.environ.get("FLEETSCHED_GO_NODENAMES", ""))
    ap.add_argument("--workdir", default=os.environ.get("FLEETSCHED_E2E_WORKDIR") or None)
    ap.add_argument("--keep", action="store_true", help="keep every work folder")
    ap.add_argument("--loadgen-seconds", type=float, default=10,
                    help="after the rounds, when fleetsched ran: measure it with its own load "
                         "generator on the same fleet for this long per node order (0: skip)")
    args = ap.parse_args()
    # The components run in their work folders: binaries given relative to here must still resolve.
    for key in ("fleetsched", "scheduler", "baseline", "go_seed", "go_nodenames"):
        if getattr(args, key):
            setattr(args, key, os.path.abspath(getattr(args, key)))
    configs = [c for c in args.configs.split(",") if c]
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"unknown config {c}; expected one of {', '.join(CONFIGS)}")
    if {"fleetsched", "floor"} & set(configs) and not os.access(args.fleetsched, os.X_OK):
        ap.error("fleetsched and floor configs need --fleetsched or FLEETSCHED_BIN")
    if "plugin" in configs and not os.access(args.scheduler, os.X_OK):
        ap.error("the plugin config needs --scheduler or FLEETSCHED_SCHEDULER_BIN")
    if "baseline" in configs and not os.access(args.baseline, os.X_OK):
        ap.error("the baseline config needs --baseline or FLEETSCHED_BASELINE_BIN")
    if "go-nodenames" in configs and not os.access(args.go_nodenames, os.X_OK):
        ap.error("go-nodenames config needs --go-nodenames or FLEETSCHED_GO_NODENAMES")
    if "go-seed" in configs and not os.access(args.go_seed, os.X_OK):
        ap.error("go-seed config needs --go-seed or FLEETSCHED_GO_SEED")
    pods = scalePods(args.pods, args.seed, args.gpu_pod_share)
    gpuNodes = sum(1 for i in range(args.nodes) if not isCpuNode(i))
    demand, supply = sum(podGpus(p) for p in pods), gpuNodes * args.gpus_per_node
    if demand > 0.9 * supply:
        # Pods that cannot fit would keep retrying and there would be no "last
        # scheduled pod": the run measures throughput, not overflow.
        ap.error(f"{args.pods} pods need {demand} GPUs; {gpuNodes} GPU nodes × "
                 f"{args.gpus_per_node} hold {supply}: keep demand ≤ 90 % (more nodes, "
                 "fewer pods, a lower --gpu-pod-share or --gpus-per-node up to 16)")
    paths = componentPaths()
    results = []
    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "machine": platform.node(),
            "cpus": os.cpu_count(), "kernel": platform.release(),
            "k8s": paths.get("FLEETSCHED_E2E_K8S_VERSION"),
            "etcd": paths.get("FLEETSCHED_E2E_ETCD_VERSION"),
            "nodes": args.nodes, "gpu_nodes": gpuNodes, "pods": args.pods,
            "peer_pods": min(args.peer_pods, args.pods), "gpu_pod_share": args.gpu_pod_share,
            "node_images": args.node_images, "gpus_per_node": args.gpus_per_node,
            "pod_gpus_mix": dict(POD_MIX), "pod_gpus_total": demand, "threads": args.threads,
            "argv": sys.argv[1:]}
    for rnd in range(1, args.rounds + 1):
        for config in roundOrder(configs, rnd, args.peer_rounds):
            mine = pods[:args.peer_pods] if config in PEERS else pods
            with exclusiveLock(args.lock):
                result = runConfig(config, args, paths, mine)
            result["round"] = rnd
            results.append(result)
            Path(args.json).write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    print(f"{meta['date']}, {args.nodes} nodes ({gpuNodes} × {args.gpus_per_node} GPUs), "
          f"{args.pods} pods ({demand} GPUs; peers: the first {meta['peer_pods']}), "
          f"k8s {meta['k8s']}, etcd {meta['etcd']}")
    print(table(results))
    if args.loadgen_seconds > 0 and "fleetsched" in configs:
        lg = loadgenBeside(args, pods)
        Path(args.json).write_text(json.dumps({"meta": meta, "results": results, "loadgen": lg},
                                              indent=2))
        print()
        print(loadgenTable(results, lg))
    log(f"results written to {args.json}")
    complete = all(r["scheduled"] >= r["pods"] and r["check"]["over_allocated_nodes"] == 0
                   for r in results)
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())

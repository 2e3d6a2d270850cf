#!/usr/bin/env python3
"""Live replay: one replay experiment submitted to a real kube-scheduler with fleetsched as its
extender, scored on the replay's own metric.

`fleetsched replay --write-plan` gives the experiment's pods in submission order (seeded
shuffle, tuning to 130 % of GPU capacity) and its nodes under their seeded names. Here a fresh
control plane from the e2e harness (tests/e2e/cluster.py: etcd, kube-apiserver, kube-scheduler
built from the Go module proxy) gets those nodes as Node objects, fleetsched serves filter,
prioritize and bind from its watch cache with the given profile, and the pods are created one
at a time, each waiting until it is bound or kube-scheduler reports it Unschedulable, as the
simulator places them. An unschedulable pod is deleted, as the simulator drops it. Allocation
at each arrival bin is computed as the replay computes it (spec/gpu-scheduling.md §3.4), and
printed next to the replay's number for the same profile (`replay --config`) and, if named,
a built-in policy.

At the end every bound pod's fleetsched.io/gpu-index is checked: no GPU may hold more than
1000 milli, and the pods' milli must add up to the allocation counted.

    bench/replay/live.sh                      # deploy/profiles/fragmentation-aware.yaml
    bench/replay/live.py --fleetsched build/cmd/fleetsched/fleetsched --trace default --seed 42 \\
        --config my-profiles.yaml --profile default --max-pods 2000

The kube-scheduler configuration follows the profile: --gpu-fit says who judges nvidia.com/gpu
(shared GPUs need fleetsched alone: `ignore`), and --no-scheduler-scores turns kube-scheduler's
own score plugins off so the extender alone ranks.
"""
from __future__ import annotations

import argparse
import csv
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from cluster import ControlPlane, Extender, HarnessError, componentPaths, log, removeWorkdir  # noqa: E402

NAMESPACE = "replay"
GPU = "nvidia.com/gpu"
PRODUCT_LABEL = "nvidia.com/gpu.product"
MILLI_ANNOTATION = "fleetsched.io/gpu-milli"
MODELS_ANNOTATION = "fleetsched.io/gpu-models"
INDEX_ANNOTATION = "fleetsched.io/gpu-index"
MAX_BIN = 130
# kube-scheduler's default score plugins, off with --no-scheduler-scores: the extender then
# ranks alone, as the policy does in the replay.
SCORE_OFF = """  plugins:
    score:
      disabled:
      - name: "*"
"""
# --gpu-fit ignore: kube-scheduler's resource fit leaves nvidia.com/gpu to the extender, which
# judges per-GPU shares, and no managedResources stanza names it, because an extender with one
# is asked only about pods that request those resources: CPU-only pods would be placed at random.
GPU_FIT_IGNORED = """  pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: [nvidia.com/gpu]
"""


class Api:
    """One keep-alive HTTPS connection per thread to kube-apiserver (JSON in and out)."""

    def __init__(self, plane: ControlPlane):
        self.port, self.token = plane.apiserverPort, plane.token
        self.context = ssl.create_default_context(cafile=str(plane.workdir / "pki" / "apiserver.crt"))
        self.context.check_hostname = False
        self.local = threading.local()

    def call(self, method: str, path: str, body: object | None = None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(3):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPSConnection("127.0.0.1", self.port,
                                                                     context=self.context, timeout=60)
            try:
                conn.request(method, path, data, {"Authorization": "Bearer " + self.token,
                                                  "Content-Type": "application/json",
                                                  "Accept": "application/json"})
                resp = conn.getresponse()
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else {})
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def readCsv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def nodeObject(row: dict) -> dict:
    resources = {"cpu": f"{row['cpu_milli']}m", "memory": f"{row['memory_mib']}Mi", "pods": "1001",
                 GPU: row["gpu"]}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": row["sn"], "labels": {"kubernetes.io/hostname": row["sn"],
                                                   PRODUCT_LABEL: row["model"]}},
        "spec": {},
        "status": {"capacity": resources, "allocatable": resources,
                   "conditions": [{"type": "Ready", "status": "True", "reason": "Replay",
                                   "message": "replayed trace node"}]},
    }


def podObject(row: dict) -> dict:
    annotations = {}
    requests = {"cpu": f"{row['cpu_milli']}m", "memory": f"{row['memory_mib']}Mi"}
    gpus, milli = int(row["num_gpu"]), int(row["gpu_milli"])
    if gpus > 0:
        requests[GPU] = str(gpus)
        if milli < 1000:
            annotations[MILLI_ANNOTATION] = str(milli)
        if row["gpu_spec"]:
            annotations[MODELS_ANNOTATION] = row["gpu_spec"]
    # Kubernetes names are lowercase DNS labels; the trace's are already.
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": row["name"], "annotations": annotations},
        "spec": {"containers": [{"name": "main", "image": "pause",
                                 "resources": {"requests": dict(requests),
                                               "limits": {GPU: requests[GPU]} if gpus else {}}}],
                 "terminationGracePeriodSeconds": 0},
    }


def outcome(pod: dict) -> str | None:
    """'bound', 'unschedulable', or None while kube-scheduler has not decided."""
    if pod.get("spec", {}).get("nodeName"):
        return "bound"
    for c in pod.get("status", {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return "unschedulable"
    return None


def round2(x: float) -> float:
    return round(x, 2)  # the reference analysis rounds with Python's round()


def allocationCurve(attempts: list[tuple[int, int]], capacity: int) -> dict[int, float]:
    """attempts: (arrived milli so far, allocated milli after the attempt). The replay's binning:
    each attempt goes to bin round(arrived %), the bin's value is the mean allocation % of its
    attempts, an empty bin takes its neighbours' attempts."""
    sums, counts = [0.0] * (MAX_BIN + 2), [0] * (MAX_BIN + 2)
    for arrived, used in attempts:
        b = round(arrived * 100 / capacity)
        if 0 <= b <= MAX_BIN + 1:
            sums[b] += round2(used * 100 / capacity)
            counts[b] += 1
    curve = {}
    for b in range(MAX_BIN + 1):
        s, c = sums[b], counts[b]
        if c == 0:
            for nb in (b - 1, b + 1):
                if nb >= 0:
                    s, c = s + sums[nb], c + counts[nb]
        if c:
            curve[b] = round2(s / c)
    return curve


def replaySummary(path: Path) -> dict[str, tuple[float | None, float | None]]:
    """Per policy: allocation at 100 % and 130 % (None when a short run never gets there)."""
    value = lambda s: float(s) if s else None  # noqa: E731
    return {r["policy"]: (value(r["alloc_100"]), value(r["alloc_130"])) for r in readCsv(path)}


def run(args) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="fleetsched-live-replay-", dir=args.workdir))
    config = Path(args.config).resolve()
    replayCmd = [args.fleetsched, "replay", "--trace-dir", args.trace_dir, "--traces", args.trace,
                 "--seeds", str(args.seed), "--config", str(config), "--write-plan", str(workdir / "plan"),
                 "-o", str(workdir / "replay"), "--no-plot", "--no-progress"]
    if args.policy:
        replayCmd += ["--policies", args.policy]
    if args.max_pods:
        replayCmd += ["--max-pods", str(args.max_pods)]
    log("replay: " + " ".join(replayCmd))
    subprocess.run(replayCmd, check=True, stdout=subprocess.DEVNULL)
    replayed = replaySummary(workdir / "replay" / "summary.csv")
    if args.profile not in replayed:
        log(f"{config} has no profile {args.profile!r} (profiles: {', '.join(replayed)})")
        return 2
    stem = workdir / "plan" / f"{Path(args.trace).stem.removeprefix('openb_pod_list_')}-{args.seed}"
    nodes, pods = readCsv(Path(f"{stem}-nodes.csv")), readCsv(Path(f"{stem}-pods.csv"))
    capacity = sum(int(n["gpu"]) for n in nodes) * 1000

    plane = ControlPlane(workdir, componentPaths())
    ok = False
    try:
        plane.start()
        api = Api(plane)
        t = time.monotonic()
        with ThreadPoolExecutor(args.threads) as pool:
            for status, body in pool.map(lambda n: api.call("POST", "/api/v1/nodes", nodeObject(n)), nodes):
                if status >= 300:
                    raise HarnessError(f"node create: HTTP {status}: {body}")
        log(f"{len(nodes)} nodes created in {time.monotonic() - t:.1f} s")
        plane.kube.createNamespace(NAMESPACE)
        extender = Extender("fleetsched", [args.fleetsched, "serve", "--listen", "127.0.0.1:{port}",
                                           "--url-prefix", "/scheduler", "--kubeconfig", "{workdir}/kubeconfig",
                                           "--bind", "--config", str(config), "--audit-interval", "0"])
        plane.extender = extender
        plane.startExtender(extender)
        plane.startScheduler(ignoredByScheduler=args.gpu_fit == "managed-ignored", binder=True,
                             extenderWeight=args.extender_weight,
                             profile=("" if args.scheduler_scores else SCORE_OFF) +
                             (GPU_FIT_IGNORED if args.gpu_fit == "ignore" else ""),
                             managedResource=None if args.gpu_fit == "ignore" else "nvidia.com/gpu")

        attempts: list[tuple[int, int]] = []
        arrived = used = failed = 0
        started = time.monotonic()
        base = f"/api/v1/namespaces/{NAMESPACE}/pods"
        for i, row in enumerate(pods):
            gpus, milli = int(row["num_gpu"]), int(row["gpu_milli"])
            status, body = api.call("POST", base, podObject(row))
            if status >= 300:
                raise HarnessError(f"pod {row['name']}: HTTP {status}: {body}")
            deadline = time.monotonic() + args.pod_timeout
            result = None
            while result is None:
                if time.monotonic() > deadline:
                    raise HarnessError(f"pod {row['name']} neither bound nor unschedulable after "
                                       f"{args.pod_timeout} s")
                time.sleep(0.002)
                status, body = api.call("GET", f"{base}/{row['name']}")
                result = outcome(body) if status == 200 else None
            arrived += gpus * milli
            if result == "bound":
                used += gpus * milli
            else:
                failed += 1
                api.call("DELETE", f"{base}/{row['name']}?gracePeriodSeconds=0")
            attempts.append((arrived, used))
            if (i + 1) % 1000 == 0:
                rate = (i + 1) / (time.monotonic() - started)
                log(f"{i + 1}/{len(pods)} pods, {failed} unschedulable, allocation "
                    f"{100 * used / capacity:.2f} %, {rate:.0f} pods/s")
        seconds = time.monotonic() - started

        # The ledger kube-apiserver holds: every bound pod's GPUs, per GPU.
        status, listing = api.call("GET", base)
        perGpu: dict[tuple[str, int], int] = {}
        ledger = 0
        for pod in listing.get("items") or []:
            if not pod["spec"].get("nodeName"):
                continue
            ann = pod["metadata"].get("annotations") or {}
            req = pod["spec"]["containers"][0]["resources"]["requests"]
            gpus = int(req.get(GPU, "0"))
            if gpus == 0:
                continue
            milli = int(ann.get(MILLI_ANNOTATION, "1000"))
            index = [int(x) for x in ann.get(INDEX_ANNOTATION, "").split("-") if x]
            if len(index) != gpus:
                raise HarnessError(f"{pod['metadata']['name']}: {INDEX_ANNOTATION}={index}, wants {gpus} GPUs")
            for g in index:
                key = (pod["spec"]["nodeName"], g)
                perGpu[key] = perGpu.get(key, 0) + milli
            ledger += gpus * milli
        over = {k: v for k, v in perGpu.items() if v > 1000}
        curve = allocationCurve(attempts, capacity)
        report = {
            "trace": args.trace, "seed": args.seed, "config": str(config), "profile": args.profile,
            "pods": len(pods), "unschedulable": failed, "seconds": round(seconds, 1),
            "live": {"alloc_100": curve.get(100), "alloc_130": curve.get(130)},
            "replay_profile": dict(zip(("alloc_100", "alloc_130"), replayed[args.profile])),
            "replay_policy": ({"policy": args.policy, **dict(zip(("alloc_100", "alloc_130"), replayed[args.policy]))}
                              if args.policy else None),
            "ledger_milli": ledger, "counted_milli": used, "overcommitted_gpus": len(over),
            "scheduler": {"gpuFit": args.gpu_fit, "scores": args.scheduler_scores,
                          "extenderWeight": args.extender_weight},
        }
        out = Path(args.out) if args.out else workdir / "live.json"
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
        if over or ledger != used:
            log(f"GPU ledger check failed: {len(over)} GPUs over 1000 milli, ledger {ledger} vs counted {used}")
            return 1
        ok = True
        return 0
    finally:
        plane.stop()
        if ok and not args.keep:
            removeWorkdir(workdir)
        else:
            log(f"logs kept in {workdir}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--fleetsched", default=str(ROOT / "build" / "cmd" / "fleetsched" / "fleetsched"))
    ap.add_argument("--trace-dir", default=os.environ.get("FLEETSCHED_OPENB_DIR", str(ROOT.parent / "shared" / "data" / "openb")))
    ap.add_argument("--trace", default="default", help="pod list: a name (default, cpu100, ...) or a CSV path")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--config", required=True, help="FleetschedConfiguration fleetsched serves (and the replay replays)")
    ap.add_argument("--profile", default="default", help="the config's profile pods get (default: default)")
    ap.add_argument("--policy", default="", help="also replay this built-in policy for comparison (e.g. fleet)")
    ap.add_argument("--max-pods", type=int, default=0, help="stop after this many pods (0: the whole experiment)")
    ap.add_argument("--gpu-fit", choices=("counted", "managed-ignored", "ignore"), default="counted",
                    help="how kube-scheduler treats nvidia.com/gpu: counted (managedResources, whole units, "
                         "as the README's stanza), managed-ignored (managedResources ignoredByScheduler: only "
                         "GPU pods reach the extender), ignore (NodeResourcesFit ignoredResources, no "
                         "managedResources: every pod reaches the extender; shared GPUs work)")
    ap.add_argument("--no-scheduler-scores", dest="scheduler_scores", action="store_false",
                    help="turn kube-scheduler's own score plugins off")
    ap.add_argument("--scheduler-scores", dest="scheduler_scores", action="store_true",
                    help="keep kube-scheduler's own score plugins (the default; overrides an earlier --no-...)")
    ap.add_argument("--extender-weight", type=int, default=1)
    ap.add_argument("--pod-timeout", type=float, default=60)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", default="", help="write the JSON report here (default: the work folder)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder and logs")
    return run(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())

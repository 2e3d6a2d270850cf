"""fleetsched's watch cache against a real kube-apiserver at size, on a control
plane of its own (no kube-scheduler: every pod is created already bound):

- initial sync of 1,000 nodes and 20,000 bound pods: /readyz only once both
  lists are in, and then every node's free GPUs and CPU exactly as the pods
  leave them;
- a forced 410: kube-apiserver is stopped, etcd compacted past every
  resourceVersion fleetsched has seen, the API server started again and pods
  deleted and created; fleetsched's resumed watch must be told "too old",
  relist, and end with the cluster's exact accounting again.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from conftest import Cluster
from cluster import ControlPlane, Extender, HarnessError, componentPaths, log, removeWorkdir, waitFor
from fleet import pod
from scale import Burst, isCpuNode, nodeGpus, scaleNode

pytestmark = pytest.mark.fleetsched

NODES = 1000
PODS = 20000
GPUS_PER_NODE = 8
NAMESPACE = "sync"
MILLI_CPU_PER_NODE = 96000


def nodeName(i: int) -> str:
    return f"cpu-{i:05d}" if isCpuNode(i) else f"gpu-{i:05d}"  # as scaleNode names them


def boundPod(i: int) -> dict:
    """Pod i, created bound to node i % NODES: 20 per node, and on GPU nodes the
    first three of them hold 2 GPUs each (6 of 8 taken)."""
    node = nodeName(i % NODES)
    p = pod(f"b-{i:06d}", 2 if i // NODES < 3 and nodeGpus(node, GPUS_PER_NODE) else 0)
    p["spec"]["nodeName"] = node
    return p


def expectedFree(pods: list[dict]) -> dict[str, tuple[int, int]]:
    free = {nodeName(i): [nodeGpus(nodeName(i), GPUS_PER_NODE), MILLI_CPU_PER_NODE]
            for i in range(NODES)}
    for p in pods:
        res = p["spec"]["containers"][0]["resources"]
        free[p["spec"]["nodeName"]][0] -= int(res.get("limits", {}).get("nvidia.com/gpu", 0))
        free[p["spec"]["nodeName"]][1] -= 100  # pod() asks 100m
    return {n: (g, c) for n, (g, c) in free.items()}


class Fleetsched:
    """The conftest Cluster's views of fleetsched, plus waits on them."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.metric = cluster.metric
        self.audit = cluster.audit

    def free(self) -> dict[str, tuple[int, int]]:
        return {n: (v["gpusFree"], v["milliCpuFree"])
                for n, v in self.cluster.fleetschedView().items()}

    def waitGauges(self, nodes: int, pods: int, process) -> None:
        """cache_nodes and cache_pods (refreshed once a second) reach these counts."""
        waitFor(f"fleetsched's cache gauges to show {nodes} nodes and {pods} pods",
                lambda: (self.metric("cache_nodes"), self.metric("cache_pods")) == (nodes, pods),
                timeout=5, interval=0.2, process=process)

    def waitFree(self, expected: dict, what: str, process) -> None:
        last: dict = {}

        def matches():
            last.clear()
            last.update(self.free())
            return last == expected
        try:
            waitFor(what, matches, timeout=60, interval=0.2, process=process)
        except HarnessError as e:
            wrong = {n: (last.get(n), want) for n, want in expected.items() if last.get(n) != want}
            raise HarnessError(f"{e}\n{len(wrong)} nodes differ (fleetsched, expected), e.g. "
                               f"{dict(list(wrong.items())[:5])}") from None


@pytest.fixture(scope="module")
def plane():
    if os.environ.get("FLEETSCHED_E2E_EXTENDER") == "stub":
        pytest.skip("needs fleetsched")
    parent = os.environ.get("FLEETSCHED_E2E_WORKDIR") or None
    workdir = Path(tempfile.mkdtemp(prefix="fleetsched-e2e-sync-", dir=parent))
    p = ControlPlane(workdir, componentPaths())
    ok = False
    try:
        p.start()
        yield p
        ok = True
    finally:
        p.stop()
        if ok and os.environ.get("FLEETSCHED_E2E_KEEP") != "1":
            removeWorkdir(workdir)
        else:
            log(f"sync: logs kept in {workdir}")


def test_sync_and_forced_relist(plane):
    burst = Burst(plane, threads=16)
    t = time.monotonic()
    burst.post("/api/v1/nodes", [scaleNode(i, GPUS_PER_NODE, 0) for i in range(NODES)])
    plane.kube.createNamespace(NAMESPACE)
    pods = [boundPod(i) for i in range(PODS)]
    burst.post(f"/api/v1/namespaces/{NAMESPACE}/pods", pods)
    created = time.monotonic() - t

    binary = os.environ.get("FLEETSCHED_BIN", str(Path(__file__).resolve().parents[2] / "build"
                                                  / "cmd" / "fleetsched" / "fleetsched"))
    t = time.monotonic()
    plane.startExtender(Extender("fleetsched", [binary, "serve", "--listen", "127.0.0.1:{port}",
                                                "--kubeconfig", "{workdir}/kubeconfig",
                                                "--audit-interval", "2", "--enable-debug-handlers"]))
    ready = time.monotonic() - t  # startExtender returns once /readyz answers 200
    fs = Fleetsched(Cluster(plane, "sync"))
    proc = plane.extenderProcess
    fs.waitGauges(NODES, PODS, proc)
    fs.waitFree(expectedFree(pods), "fleetsched's accounting after the initial sync", proc)
    log(f"sync: {NODES} nodes + {PODS} bound pods created in {created:.1f} s; fleetsched "
        f"ready {ready:.2f} s after start")

    expiredBefore = fs.metric("watch_expired_total", resource="pods")
    relistsBefore = fs.metric("relists_total", resource="pods")
    revision = []
    plane.restartApiserver(downSeconds=1, whileDown=lambda: revision.append(plane.compactEtcd()))
    # Changes after the restart: fleetsched sees them only through the relist
    # (or a watch that somehow resumed, which the 410 counter would rule out).
    deleted, added = pods[:500], [boundPod(PODS + i) for i in range(300)]
    for p in deleted:
        plane.kube.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/"
                           f"{p['metadata']['name']}?gracePeriodSeconds=0")
    burst = Burst(plane, threads=16)  # the old connections died with the API server
    burst.post(f"/api/v1/namespaces/{NAMESPACE}/pods", added)
    now = pods[500:] + added
    waitFor("fleetsched to be told its pod watch is too old",
            lambda: fs.metric("watch_expired_total", resource="pods") > expiredBefore,
            timeout=60, interval=0.2, process=proc)
    fs.waitFree(expectedFree(now), "fleetsched's accounting after the forced relist", proc)
    assert fs.metric("relists_total", resource="pods") > relistsBefore
    fs.waitGauges(NODES, len(now), proc)
    waitFor("fleetsched's audit against a fresh list to be clean",
            lambda: (a := fs.audit()).get("comparedWithApiServer")
            and a.get("clean") and a.get("checkedPods") == len(now),
            timeout=30, interval=0.3, process=proc)
    log(f"sync: etcd compacted at {revision[0]}; pods relisted "
        f"{fs.metric('relists_total', resource='pods') - relistsBefore:.0f}× after "
        f"{fs.metric('watch_expired_total', resource='pods') - expiredBefore:.0f} 410s, "
        "accounting and audit exact")

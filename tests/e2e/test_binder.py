"""fleetsched as the binder (`serve --bind`, kube-scheduler `bindVerb: bind`), on the
binder cluster: fleetsched picks the GPU indexes, reserves them and posts the Binding
with `fleetsched.io/gpu-index`. Checked from the API (annotations never overlap on a
node, never name a GPU the node lacks) and from fleetsched's own /debug/audit, also
across a crash of fleetsched and a restart of kube-apiserver. Every scenario also runs
against the plugin deployment (fleetsched-scheduler binds GPU pods itself; its crash is
kube-scheduler's, and its audit the engine's gauges against the API)."""

import collections
import threading
import time

import pytest

from cluster import waitFor
from conftest import isBound, podGpus, unschedulableMessage
from fleet import FLEET, H100, pod, shapeByName

pytestmark = pytest.mark.fleetsched

TOLERANT = {"fleetsched.io/spot-tolerant": "true"}
GPU_CAPACITY = {s.name: s.gpus for s in FLEET}
TOTAL_GPUS = sum(GPU_CAPACITY.values())


def assertWithinCapacity(use: dict[str, int]) -> None:
    for node, used in use.items():
        assert used <= GPU_CAPACITY[node], f"{node}: {used} GPUs bound, {GPU_CAPACITY[node]} allocatable"


def waitWorkConserved(cluster, namespace: str, timeout: float = 90) -> None:
    """Eventually no waiting pod of the namespace fits in any node's free GPUs
    (waiting pods are retried with backoff, so the queue needs time to drain)."""
    def noWaitingPodFits():
        use = cluster.nodeUse()
        assertWithinCapacity(use)
        maxFree = max(GPU_CAPACITY[n] - use.get(n, 0) for n in GPU_CAPACITY)
        waiting = [podGpus(p) for p in cluster.kube.listPods(namespace) if not isBound(p)]
        return not waiting or min(waiting) > maxFree

    waitFor("no waiting pod to fit in the free GPUs", noWaitingPodFits, timeout=timeout, interval=1,
            watch=cluster.plane.processes)


def test_binder_200_pods_at_once(bindingCluster, bindingNamespace):
    # Also against the plugin deployment, whose Bind posts the Binding with the indexes its
    # Reserve picked.
    cluster, namespace = bindingCluster, bindingNamespace
    sizes = [1, 2, 4, 8]
    pods = [pod(f"burst-{i:03d}", sizes[i % 4], annotations=TOLERANT) for i in range(200)]
    binds = None if cluster.plugin else cluster.metric("http_requests_total", verb="bind")
    started = time.monotonic()
    cluster.createPods(namespace, pods)
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in pods], timeout=120)
    bound = sum(1 for p in settled.values() if isBound(p))
    cluster.report(f"binder: 200 pods created at once settled in {time.monotonic() - started:.1f} s "
                   f"({bound} bound)")
    assert bound > 0
    waitWorkConserved(cluster, namespace)
    # Every bound pod went through fleetsched's binder: the default binder would
    # leave no gpu-index annotation, which assertGpuIndexesSound rejects.
    checked = cluster.assertGpuIndexesSound()
    assert checked == sum(1 for p in cluster.kube.listPods(namespace) if isBound(p))
    assert binds is None or cluster.metric("http_requests_total", verb="bind") - binds >= checked
    assertWithinCapacity(cluster.nodeUse())
    audit = cluster.waitAuditClean()
    assert audit["gpuOvercommits"] == 0, audit
    cluster.syncExtender()


def test_fleetsched_killed_mid_run(bindingCluster, bindingNamespace):
    # fleetsched is SIGKILLed while kube-scheduler is binding a burst through it,
    # then started again: it must relist, learn the indexes already handed out
    # from the bound pods' annotations, and never hand one out twice. In the plugin
    # deployment fleetsched is inside kube-scheduler: that process is killed, with
    # its reservations and any Binding in flight.
    cluster, namespace = bindingCluster, bindingNamespace
    sizes = [1, 2, 1, 4]
    pods = [pod(f"crash-{i:03d}", sizes[i % 4], annotations=TOLERANT) for i in range(60)]
    def create():
        # A steady stream (about 2.5 s for all), so the kill below lands mid-run
        # however fast kube-scheduler drains the queue.
        for p in pods:
            cluster.kube.createPod(namespace, p)
            time.sleep(0.04)

    creator = threading.Thread(target=create)
    creator.start()
    waitFor("a few pods to be bound", lambda: sum(isBound(p) for p in cluster.kube.listPods(namespace)) >= 3,
            timeout=60, interval=0.05, watch=cluster.plane.processes)
    boundBefore = sum(1 for p in cluster.kube.listPods(namespace) if isBound(p))
    if cluster.plugin:
        cluster.plane.killScheduler()
        time.sleep(1)
        cluster.plane.restartScheduler()
    else:
        cluster.plane.killExtender()
        time.sleep(1)
        cluster.plane.restartExtender()
    creator.join()
    cluster.report(f"{'fleetsched-scheduler' if cluster.plugin else 'fleetsched'} killed with "
                   f"{boundBefore} of {len(pods)} pods bound, restarted")
    assert boundBefore < len(pods), "every pod was bound before the kill: nothing was mid-run"
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in pods], timeout=90)
    assert sum(1 for p in settled.values() if isBound(p)) > boundBefore
    waitWorkConserved(cluster, namespace)
    cluster.assertGpuIndexesSound()
    assertWithinCapacity(cluster.nodeUse())
    cluster.waitAuditClean()
    cluster.syncExtender()


def test_apiserver_restarted(bindingCluster, bindingNamespace):
    cluster, namespace = bindingCluster, bindingNamespace
    first = [pod(f"before-{i:02d}", 1, annotations=TOLERANT) for i in range(TOTAL_GPUS - 4)]
    cluster.createPods(namespace, first)
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in first], timeout=60)
    assert all(isBound(p) for p in settled.values()), \
        [unschedulableMessage(p) for p in settled.values() if not isBound(p)][:3]

    # The plugin's informers are kube-scheduler's: it has no relist counters of its own.
    relists = None if cluster.plugin else cluster.metric("relists_total")
    failures = None if cluster.plugin else cluster.metric("watch_failures_total")
    cluster.plane.restartApiserver(downSeconds=2)
    # Free 20 GPUs after the restart: the second wave (22 pods, 4 GPUs were left)
    # binds in full only if fleetsched's watch saw these deletions.
    for p in first[:20]:
        cluster.kube.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{p['metadata']['name']}"
                             "?gracePeriodSeconds=0")
    second = [pod(f"after-{i:02d}", 1, annotations=TOLERANT) for i in range(22)]
    cluster.createPods(namespace, second)
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in second], timeout=60)
    waiting = {n: unschedulableMessage(p) for n, p in settled.items() if not isBound(p)}
    assert not waiting, waiting
    cluster.assertGpuIndexesSound()
    assertWithinCapacity(cluster.nodeUse())
    cluster.waitAuditClean()
    cluster.syncExtender()
    if relists is None:
        cluster.report("kube-apiserver restarted: fleetsched-scheduler bound the second wave in full")
    else:
        cluster.report(f"kube-apiserver restarted: fleetsched relists +{cluster.metric('relists_total') - relists:.0f}, "
                       f"watch failures +{cluster.metric('watch_failures_total') - failures:.0f}")


def test_zone_pack_keeps_a_workload_in_one_zone(bindingCluster, bindingNamespace):
    # The default Zone policy spreads a workload's replicas (test_zone.py); the pod
    # annotation fleetsched.io/zone-policy: pack turns that around. Candidates are
    # the three on-demand H100 nodes, one per zone, so spreading would use all three.
    cluster, namespace = bindingCluster, bindingNamespace
    zones = collections.Counter()
    for i in range(6):
        name = f"packed-{i}"
        cluster.kube.createPod(namespace, pod(name, 1, labels={"fleetsched.io/workload": "packed"},
                                              annotations={"fleetsched.io/gpu-models": H100,
                                                           "fleetsched.io/zone-policy": "pack"}))
        p = cluster.waitSettled(namespace, [name], timeout=60)[name]
        assert isBound(p), unschedulableMessage(p)
        zones[shapeByName(p["spec"]["nodeName"]).zone] += 1
    assert len(zones) == 1, f"replicas over zones: {dict(zones)}"
    cluster.assertGpuIndexesSound()

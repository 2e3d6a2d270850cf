"""GPU placement through kube-scheduler and fleetsched: feasibility, capacity, models."""

import time

import pytest

from cluster import waitFor
from conftest import isBound, podGpus, tooFewGpus, unschedulableMessage
from fleet import A100, FLEET, H100, L4, pod, shapeByName

pytestmark = pytest.mark.fleetsched

TOLERANT = {"fleetsched.io/spot-tolerant": "true"}
GPU_CAPACITY = {s.name: s.gpus for s in FLEET}


def assertWithinCapacity(use: dict[str, int]) -> None:
    for node, used in use.items():
        assert used <= GPU_CAPACITY[node], f"{node}: {used} GPUs bound, {GPU_CAPACITY[node]} allocatable"


def test_gpu_pods_land_only_on_gpu_nodes(cluster, namespace):
    pods = [pod(f"gpu-{i}", 1 + i % 2, annotations=TOLERANT) for i in range(6)]
    pods += [pod(f"cpu-{i}") for i in range(2)]
    cluster.createPods(namespace, pods)
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in pods])
    for name, p in settled.items():
        assert isBound(p), f"{name}: {unschedulableMessage(p)}"
        if name.startswith("gpu-"):
            assert shapeByName(p["spec"]["nodeName"]).gpus > 0, f"{name} on {p['spec']['nodeName']}"


def test_never_more_gpus_than_allocatable_one_by_one(cluster, namespace):
    # 50 one-GPU pods on 44 GPUs, created one at a time with fleetsched's view
    # refreshed after each: exactly 44 bind, the rest wait, and no node is
    # oversubscribed at any step.
    total = sum(GPU_CAPACITY.values())
    started = time.monotonic()
    for i in range(50):
        name = f"one-{i:02d}"
        cluster.kube.createPod(namespace, pod(name, 1, annotations=TOLERANT))
        p = cluster.waitSettled(namespace, [name], timeout=60)[name]
        assert isBound(p) == (i < total), f"pod {i}: bound={isBound(p)} {unschedulableMessage(p)}"
        if not isBound(p):
            assert tooFewGpus(cluster) in unschedulableMessage(p), unschedulableMessage(p)
        assertWithinCapacity(cluster.nodeUse())
        cluster.syncExtender()
    cluster.report(f"50 pods one by one (fleetsched synced and checked after each) took "
                   f"{time.monotonic() - started:.1f} s")
    assert cluster.nodeUse() == {n: c for n, c in GPU_CAPACITY.items() if c}


def test_never_more_gpus_than_allocatable_200_at_once(cluster, namespace):
    sizes = [1, 2, 4, 8]
    pods = [pod(f"burst-{i:03d}", sizes[i % 4], annotations=TOLERANT) for i in range(200)]
    started = time.monotonic()
    cluster.createPods(namespace, pods)
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in pods], timeout=180)
    bound = sum(1 for p in settled.values() if isBound(p))
    cluster.report(f"200 pods created at once settled in {time.monotonic() - started:.1f} s "
                   f"({bound} bound)")
    assertWithinCapacity(cluster.nodeUse())
    assert bound > 0

    # Work conservation: eventually no waiting pod fits in any node's free GPUs.
    # (Waiting pods are retried with backoff, so allow the queue to drain.)
    def noWaitingPodFits():
        podsNow = cluster.kube.listPods(namespace)
        use = cluster.nodeUse()
        assertWithinCapacity(use)
        maxFree = max(GPU_CAPACITY[n] - use.get(n, 0) for n in GPU_CAPACITY)
        waiting = [podGpus(p) for p in podsNow if not isBound(p)]
        return not waiting or min(waiting) > maxFree

    waitFor("no waiting pod to fit in the free GPUs", noWaitingPodFits, timeout=120, interval=1,
            watch=cluster.plane.processes)


def test_gpu_product_node_selector_is_honoured(cluster, namespace):
    pods = [pod(f"a100-{i}", 1, annotations=TOLERANT,
                nodeSelector={"nvidia.com/gpu.product": A100}) for i in range(6)]
    cluster.createPods(namespace, pods)
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in pods])
    for name, p in settled.items():
        assert isBound(p), f"{name}: {unschedulableMessage(p)}"
        assert shapeByName(p["spec"]["nodeName"]).product == A100, name


def test_gpu_models_annotation_is_honoured(cluster, namespace):
    # The annotation is fleetsched's own: kube-scheduler alone would use any GPU node.
    pods = [pod(f"h100-{i}", 2, annotations={**TOLERANT, "fleetsched.io/gpu-models": H100})
            for i in range(6)]
    pods += [pod(f"a100-or-h100-{i}", 1,
                 annotations={**TOLERANT, "fleetsched.io/gpu-models": f"{L4}|{A100}"})
             for i in range(4)]
    cluster.createPods(namespace, pods)
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in pods])
    for name, p in settled.items():
        assert isBound(p), f"{name}: {unschedulableMessage(p)}"
        want = H100 if name.startswith("h100-") else A100
        assert shapeByName(p["spec"]["nodeName"]).product == want, f"{name} on {p['spec']['nodeName']}"


def test_pod_asking_for_an_absent_model_waits_with_fleetsched_reason(cluster, namespace):
    cluster.kube.createPod(namespace, pod("l4-only", 1, annotations={
        **TOLERANT, "fleetsched.io/gpu-models": L4}))
    p = cluster.waitSettled(namespace, ["l4-only"], timeout=60)["l4-only"]
    assert not isBound(p)
    message = unschedulableMessage(p)
    # Every GPU node passed kube-scheduler's own filters, so the rejection, and
    # the reason the user reads, come from fleetsched.
    assert "not allowed" in message, message


def test_invalid_annotation_is_reported_not_ignored(cluster, namespace):
    # docs/annotations.md: an invalid value makes the pod unschedulable with a
    # reason naming the annotation, rather than being silently ignored.
    cluster.kube.createPod(namespace, pod("bad-policy", 1, annotations={
        **TOLERANT, "fleetsched.io/gpu-policy": "sideways"}))
    p = cluster.waitSettled(namespace, ["bad-policy"], timeout=60)["bad-policy"]
    assert not isBound(p)
    assert "fleetsched.io/gpu-policy" in unschedulableMessage(p), unschedulableMessage(p)

"""Spot capacity: only pods that tolerate it go there, and those prefer it."""

import pytest

from conftest import isBound, unschedulableMessage
from fleet import FLEET, pod, shapeByName

pytestmark = pytest.mark.fleetsched

TOLERANT = {"fleetsched.io/spot-tolerant": "true"}
ON_DEMAND_GPUS = sum(s.gpus for s in FLEET if not s.spot)


def test_pods_without_spot_tolerance_never_land_on_spot(cluster, namespace):
    # More one-GPU pods than on-demand GPUs: the overflow must wait rather than
    # spill onto spot nodes, which have free GPUs the whole time.
    count = ON_DEMAND_GPUS + 4
    pods = [pod(f"regular-{i:02d}", 1) for i in range(count)]
    cluster.createPods(namespace, pods)
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in pods], timeout=180)
    bound = [p for p in settled.values() if isBound(p)]
    for p in bound:
        assert not shapeByName(p["spec"]["nodeName"]).spot, p["metadata"]["name"]
    assert len(bound) == ON_DEMAND_GPUS
    waiting = [p for p in settled.values() if not isBound(p)]
    assert len(waiting) == 4
    for p in waiting:
        # The spot nodes passed kube-scheduler's filters; fleetsched rejected them.
        assert "spot" in unschedulableMessage(p).lower(), unschedulableMessage(p)


def test_spot_tolerant_pods_prefer_spot(cluster, namespace):
    spotGpus = sum(s.gpus for s in FLEET if s.spot)
    for i in range(spotGpus):
        name = f"tolerant-{i:02d}"
        cluster.kube.createPod(namespace, pod(name, 1, annotations=TOLERANT))
        p = cluster.waitSettled(namespace, [name], timeout=60)[name]
        assert isBound(p), unschedulableMessage(p)
        assert shapeByName(p["spec"]["nodeName"]).spot, f"{name} on {p['spec']['nodeName']}"
        cluster.syncExtender()

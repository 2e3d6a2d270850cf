"""Zones: replicas of one workload (pods sharing fleetsched.io/workload) spread
over zones (the Zone plugin's default policy). The replicas ask for H100s and do
not tolerate spot, so the candidates are the three on-demand H100 nodes, which
differ only in their zone: GPU bin-packing alone would stack them on one node.
Needs bound-pod knowledge, which the file-fed fleetsched gets from --pods after
each syncExtender()."""

import collections

import pytest

from conftest import isBound, unschedulableMessage
from fleet import H100, pod, shapeByName

pytestmark = pytest.mark.fleetsched


def test_workload_replicas_spread_over_zones(cluster, namespace):
    zones = collections.Counter()
    for i in range(9):
        name = f"w1-{i}"
        cluster.kube.createPod(namespace, pod(name, 1, labels={"fleetsched.io/workload": "w1"},
                                              annotations={"fleetsched.io/gpu-models": H100}))
        p = cluster.waitSettled(namespace, [name], timeout=60)[name]
        assert isBound(p), unschedulableMessage(p)
        zones[shapeByName(p["spec"]["nodeName"]).zone] += 1
        cluster.syncExtender()
        counts = [zones[z] for z in ("zone-a", "zone-b", "zone-c")]
        assert max(counts) - min(counts) <= 1, f"after {i + 1} replicas: {dict(zones)}"

"""Zones: replicas of one workload (pods sharing fleetsched.io/workload) spread
over zones. The pods do not tolerate spot, so only the on-demand nodes (12,
8 and 4 GPUs in zones a, b, c) count and GPU bin-packing pulls against the
spread. Needs bound-pod knowledge, which the file-fed fleetsched gets from
--pods after each syncExtender()."""

import collections

import pytest

from conftest import isBound, unschedulableMessage
from fleet import pod, shapeByName

pytestmark = pytest.mark.fleetsched


def test_workload_replicas_spread_over_zones(cluster, namespace):
    zones = collections.Counter()
    for i in range(9):
        name = f"w1-{i}"
        cluster.kube.createPod(namespace, pod(name, 1, labels={"fleetsched.io/workload": "w1"}))
        p = cluster.waitSettled(namespace, [name], timeout=60)[name]
        assert isBound(p), unschedulableMessage(p)
        zones[shapeByName(p["spec"]["nodeName"]).zone] += 1
        cluster.syncExtender()
    assert zones == {"zone-a": 3, "zone-b": 3, "zone-c": 3}, dict(zones)

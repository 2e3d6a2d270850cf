"""The control plane itself: what every scenario silently relies on."""

import json
import urllib.request

import pytest

from conftest import isBound, unschedulableMessage
from fleet import FLEET, pod, shapeByName


def test_nodes_keep_the_gpu_status_given_at_create(cluster):
    # Without a kubelet the only source of node capacity is the status posted
    # at create time; if the apiserver dropped it, no GPU pod could ever fit.
    nodes = {n["metadata"]["name"]: n for n in cluster.kube.listNodes()}
    assert sorted(nodes) == sorted(s.name for s in FLEET)
    for shape in FLEET:
        alloc = nodes[shape.name]["status"].get("allocatable") or {}
        assert alloc.get("nvidia.com/gpu", "0") == str(shape.gpus), shape.name
        # TaintNodesByCondition is off: a not-ready taint would block everything.
        assert not nodes[shape.name]["spec"].get("taints"), shape.name


def test_cpu_pod_is_bound_without_gpus(cluster, namespace):
    cluster.kube.createPod(namespace, pod("cpu-only"))
    pods = cluster.waitSettled(namespace, ["cpu-only"], timeout=60)
    assert isBound(pods["cpu-only"]), unschedulableMessage(pods["cpu-only"])


def test_gpu_pod_is_bound_to_a_gpu_node_through_the_extender(cluster, namespace):
    before = _extenderCalls(cluster)
    cluster.kube.createPod(namespace, pod("one-gpu", 1, annotations={
        "fleetsched.io/spot-tolerant": "true"}))
    pods = cluster.waitSettled(namespace, ["one-gpu"], timeout=60)
    p = pods["one-gpu"]
    assert isBound(p), unschedulableMessage(p)
    assert shapeByName(p["spec"]["nodeName"]).gpus >= 1
    after = _extenderCalls(cluster)
    if before is not None:
        # managedResources: nvidia.com/gpu routes exactly the GPU pods to the extender.
        assert after["filter"] > before["filter"]


@pytest.mark.stub
def test_extender_reasons_reach_the_pod_condition(cluster, namespace):
    # The scenarios read fleetsched's reasons from PodScheduled's message; this
    # checks that plumbing with the stand-in, whose reason is known. Seen (8 nodes):
    # "0/8 nodes are available: 2 Insufficient nvidia.com/gpu, 6 stub says no. ..."
    cluster.kube.createPod(namespace, pod("rejected", 1, annotations={
        "e2e.fleetsched.io/stub-reject": "stub says no"}))
    p = cluster.waitSettled(namespace, ["rejected"], timeout=60)["rejected"]
    assert not isBound(p)
    message = unschedulableMessage(p)
    gpuNodes = sum(1 for s in FLEET if s.gpus)
    assert f"{gpuNodes} stub says no" in message, message


def _extenderCalls(cluster):
    if not cluster.stub:
        return None
    port = cluster.plane.extender.port
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/calls", timeout=5) as resp:
        return json.loads(resp.read())


@pytest.mark.fleetsched
def test_fleetsched_sees_the_fleet_as_created(cluster):
    # Zone, capacity type, GPU model and GPU count are what the plugins decide
    # on; this is the node path (kubectl JSON or watch -> codec -> cache) end to end.
    if cluster.plugin:
        # The plugin's cache reads nodes with the same C++ code; it has no /debug/nodes.
        assert cluster.plane.schedulerMetric("fleetsched_plugin_cache_nodes") == len(FLEET)
        return
    view = cluster.fleetschedView()
    assert sorted(view) == sorted(s.name for s in FLEET)
    for s in FLEET:
        v = view[s.name]
        assert v["zone"] == s.zone, s.name
        assert v["capacity"] == ("spot" if s.spot else "on-demand"), s.name
        assert v["gpusTotal"] == s.gpus, s.name
        if s.gpus:
            assert v["model"] == s.product, s.name

"""The control plane itself: what every scenario silently relies on."""

import json
import urllib.request

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


def _extenderCalls(cluster):
    if not cluster.stub:
        return None
    port = cluster.plane.extender.port
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/calls", timeout=5) as resp:
        return json.loads(resp.read())

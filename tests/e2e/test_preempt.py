"""Preemption, in both deployments: a full fleet of low-priority one-GPU pods, then a
high-priority pod.
- extender (`preemptVerb: preempt`, binder cluster): kube-scheduler finds victims by its
  own dry run, passes them through fleetsched's preempt verb, deletes them, and schedules
  the preemptor on the node it chose (fleetsched binds it);
- plugin: kube-scheduler's DefaultPreemption asks the Fleetsched plugin's Filter with the
  candidate victims removed (RemovePod / AddPod), and the plugin binds the preemptor.

No controller manager and no kubelet run here. kube-scheduler deletes the victims
itself with the pod's own grace period: with terminationGracePeriodSeconds 0 (the
harness's pods) they vanish at once; with a grace period they would stay
Terminating, holding their GPUs, since no kubelet confirms the deletion."""

import time

import pytest

from cluster import waitFor
from conftest import isBound, unschedulableMessage
from fleet import A100, FLEET, H100, pod

pytestmark = pytest.mark.fleetsched

TOLERANT = {"fleetsched.io/spot-tolerant": "true"}
TOTAL_GPUS = sum(s.gpus for s in FLEET)


def ensurePriorityClass(cluster, name: str, value: int) -> None:
    path = "/apis/scheduling.k8s.io/v1/priorityclasses"
    if any(pc["metadata"]["name"] == name for pc in cluster.kube.request("GET", path).get("items", [])):
        return
    cluster.kube.request("POST", path, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                        "metadata": {"name": name}, "value": value,
                                        "preemptionPolicy": "PreemptLowerPriority"})


def withPriority(p: dict, className: str) -> dict:
    p["spec"]["priorityClassName"] = className
    return p


def placeAll(cluster, namespace: str, pods: list[dict]) -> dict[str, str]:
    """Creates the pods and waits until every one is bound: pod name -> node."""
    cluster.createPods(namespace, pods)
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in pods], timeout=60)
    waiting = {n: unschedulableMessage(p) for n, p in settled.items() if not isBound(p)}
    assert not waiting, waiting
    return {n: p["spec"]["nodeName"] for n, p in settled.items()}


def waitBound(cluster, namespace: str, name: str) -> dict:
    return waitFor(f"{name} to be bound",
                   lambda: (lambda p: p if isBound(p) else None)(cluster.kube.getPod(namespace, name)),
                   timeout=60, interval=0.2, watch=cluster.plane.processes)


def assertEvictedOn(cluster, namespace: str, placed: dict[str, str], node: str, count: int) -> None:
    """Exactly `count` of the placed pods are gone, all from `node`; the GPU indexes stay sound."""
    remaining = {p["metadata"]["name"] for p in cluster.kube.listPods(namespace)}
    evicted = sorted(set(placed) - remaining)
    assert len(evicted) == count and all(placed[n] == node for n in evicted), \
        {n: placed[n] for n in evicted}
    cluster.assertGpuIndexesSound()
    cluster.waitAuditClean()


def test_high_priority_pod_preempts_only_what_it_needs(bindingCluster, bindingNamespace):
    cluster, namespace = bindingCluster, bindingNamespace
    ensurePriorityClass(cluster, "e2e-low", 100)
    ensurePriorityClass(cluster, "e2e-high", 100000)
    low = [withPriority(pod(f"low-{i:02d}", 1, annotations=TOLERANT), "e2e-low") for i in range(TOTAL_GPUS)]
    placed = placeAll(cluster, namespace, low)
    cluster.waitAuditClean()  # fleetsched has seen every low pod bound

    preempts = None if cluster.plugin else cluster.metric("http_requests_total", verb="preempt")
    started = time.monotonic()
    cluster.kube.createPod(namespace, withPriority(pod("high", 2, annotations=TOLERANT), "e2e-high"))
    high = waitBound(cluster, namespace, "high")
    node = high["spec"]["nodeName"]
    cluster.report(f"preemption: high-priority pod bound on {node} after "
                   f"{time.monotonic() - started:.1f} s")

    assert preempts is None or cluster.metric("http_requests_total", verb="preempt") > preempts, \
        "kube-scheduler preempted without asking fleetsched's preempt verb"
    remaining = {p["metadata"]["name"]: p for p in cluster.kube.listPods(namespace)}
    evicted = sorted(set(placed) - set(remaining))
    # Exactly the two one-GPU pods the preemptor needs, both from its node.
    assert len(evicted) == 2, f"evicted {evicted}"
    assert all(placed[n] == node for n in evicted), {n: placed[n] for n in evicted}
    for name, was in placed.items():
        if name in remaining:
            assert remaining[name]["spec"].get("nodeName") == was, f"{name} moved or lost its node"
    cluster.assertGpuIndexesSound()
    cluster.waitAuditClean()
    cluster.syncExtender()


def test_preemption_skips_nodes_fleetsched_rejects(bindingCluster, bindingNamespace):
    # kube-scheduler's preemption dry run knows nothing of fleetsched's rules. Here
    # each H100 node needs one victim (a 4-GPU pod) and each A100 node four (one-GPU
    # pods), so by its tie-breaks (lowest sum of victim priorities) it prefers an
    # H100 node, although the preemptor allows only A100s (fleetsched.io/gpu-models)
    # and does not tolerate spot. fleetsched's preempt verb must drop the nodes its
    # filter rejects whatever is evicted; otherwise each H100 node loses a pod in
    # turn and the preemptor still does not fit there.
    cluster, namespace = bindingCluster, bindingNamespace
    ensurePriorityClass(cluster, "e2e-low", 100)
    ensurePriorityClass(cluster, "e2e-high", 100000)
    low = []
    for s in FLEET:
        if s.product == H100:
            low += [withPriority(pod(f"low-{s.name}-{i}", 4, annotations=TOLERANT,
                                     nodeSelector={"kubernetes.io/hostname": s.name}), "e2e-low")
                    for i in range(s.gpus // 4)]
        elif s.product == A100:
            low += [withPriority(pod(f"low-{s.name}-{i}", 1, annotations=TOLERANT,
                                     nodeSelector={"kubernetes.io/hostname": s.name}), "e2e-low")
                    for i in range(s.gpus)]
    placed = placeAll(cluster, namespace, low)
    cluster.waitAuditClean()

    cluster.kube.createPod(namespace, withPriority(
        pod("high-a100", 4, annotations={"fleetsched.io/gpu-models": A100}), "e2e-high"))
    high = waitBound(cluster, namespace, "high-a100")
    node = high["spec"]["nodeName"]
    assert node in ("a100-a-0", "a100-c-0"), node
    assertEvictedOn(cluster, namespace, placed, node, 4)


def test_preemption_looks_past_the_only_node_with_free_gpus(bindingCluster, bindingNamespace):
    # One node has the preemptor's two GPUs free but its node affinity excludes that node; every
    # other GPU node is full of low-priority pods. kube-scheduler's preemption looks for victims
    # only on nodes no filter marked unresolvable, and every node a PreFilterResult leaves out
    # counts as unresolvable: the plugin must not leave out the nodes that are only full.
    cluster, namespace = bindingCluster, bindingNamespace
    ensurePriorityClass(cluster, "e2e-low", 100)
    ensurePriorityClass(cluster, "e2e-high", 100000)
    spare = "a100-a-0"
    low = [withPriority(pod(f"low-{s.name}-{i}", 1, annotations=TOLERANT,
                            nodeSelector={"kubernetes.io/hostname": s.name}), "e2e-low")
           for s in FLEET for i in range(s.gpus - (2 if s.name == spare else 0))]
    placed = placeAll(cluster, namespace, low)
    cluster.waitAuditClean()

    high = withPriority(pod("high-elsewhere", 2, annotations=TOLERANT), "e2e-high")
    high["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": [spare]}]}]}}}
    cluster.kube.createPod(namespace, high)
    bound = waitBound(cluster, namespace, "high-elsewhere")
    node = bound["spec"]["nodeName"]
    assert node != spare, node
    assertEvictedOn(cluster, namespace, placed, node, 2)


def test_victims_with_a_grace_period_hold_their_gpus_until_gone(bindingCluster, bindingNamespace):
    # With a grace period, kube-scheduler's delete only marks the victims
    # Terminating; a kubelet would confirm later, none runs here. Meanwhile the
    # preemptor is nominated and must not be bound onto GPUs the victims still
    # hold, by kube-scheduler or by fleetsched's binder. The harness then does the
    # kubelet's part (deletion with grace 0) and the preemptor binds there.
    cluster, namespace = bindingCluster, bindingNamespace
    ensurePriorityClass(cluster, "e2e-low", 100)
    ensurePriorityClass(cluster, "e2e-high", 100000)
    low = []
    for i in range(TOTAL_GPUS):
        p = withPriority(pod(f"low-{i:02d}", 1, annotations=TOLERANT), "e2e-low")
        p["spec"]["terminationGracePeriodSeconds"] = 30
        low.append(p)
    cluster.createPods(namespace, low)
    settled = cluster.waitSettled(namespace, [p["metadata"]["name"] for p in low], timeout=60)
    assert all(isBound(p) for p in settled.values())
    cluster.waitAuditClean()

    cluster.kube.createPod(namespace, withPriority(pod("high", 2, annotations=TOLERANT), "e2e-high"))

    def nominatedWithVictims():
        high = cluster.kube.getPod(namespace, "high")
        node = (high.get("status") or {}).get("nominatedNodeName")
        victims = [p for p in cluster.kube.listPods(namespace) if p["metadata"].get("deletionTimestamp")]
        return (node, victims) if node and len(victims) == 2 else None

    node, victims = waitFor("the preemptor to be nominated and two victims terminating", nominatedWithVictims,
                            timeout=30, interval=0.2, watch=cluster.plane.processes)
    assert all(v["spec"]["nodeName"] == node for v in victims), [v["spec"]["nodeName"] for v in victims]
    time.sleep(3)  # several scheduling retries of the preemptor
    assert not isBound(cluster.kube.getPod(namespace, "high"))
    assert len([p for p in cluster.kube.listPods(namespace) if p["metadata"].get("deletionTimestamp")]) == 2
    # Every GPU of the fleet is held (the plugin's gauge sums them; the extender shows the node).
    free = cluster.plane.schedulerMetric("fleetsched_plugin_cache_gpus_free") if cluster.plugin \
        else cluster.fleetschedView()[node]["gpusFree"]
    assert free == 0, "fleetsched freed GPUs of terminating pods"

    for v in victims:
        cluster.kube.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{v['metadata']['name']}",
                             {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})
    high = waitBound(cluster, namespace, "high")
    assert high["spec"]["nodeName"] == node
    assert len(cluster.kube.listPods(namespace)) == TOTAL_GPUS - 1
    cluster.assertGpuIndexesSound()
    cluster.waitAuditClean()

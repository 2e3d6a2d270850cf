"""A user's profile reaches fleetsched's cache: what the GPU plugin's resourceNames
and productLabel and the Zone plugin's workloadLabels say is how fleetsched reads
nodes and pods, not only how its plugins judge them.

Own control plane per node source (fixture profileCluster): four AMD nodes with
allocatable amd.com/gpu: 8 (three MI300X, one per zone, and an MI250X in zone-a),
labelled as AMD's node labeller does, fleetsched started with PROFILE, and a
kube-scheduler whose managedResources is amd.com/gpu. Before the cache was built
from the profile, /debug/nodes showed every node with 0/0 GPUs and fleetsched
rejected each one with "node has no amd.com/gpu", and pods named by
app.kubernetes.io/name were counted under no workload, so Zone scored every zone
alike and GPU bin-packing stacked replicas in one zone.

Against the plugin deployment (fleetsched-scheduler with PROFILE as the Fleetsched
plugin's args) the same placements are asserted; its cache is checked through its
gauges (GPUs allocatable and free, summed) instead of /debug/nodes."""

import collections

import pytest

from conftest import _extenderChoice, _namespaceFor, _pluginChoice, _runCluster, _sources, isBound, \
    newWorkdir, tooFewGpus, unschedulableMessage
from fleet import NodeShape, pod

pytestmark = pytest.mark.fleetsched

AMD_GPU = "amd.com/gpu"
PRODUCT_LABEL = "amd.com/gpu.product-name"
MI300X = "AMD_Instinct_MI300X_OAM"
MI250X = "AMD_Instinct_MI250X"
WORKLOAD_LABEL = "app.kubernetes.io/name"

AMD_FLEET: tuple[NodeShape, ...] = tuple(
    NodeShape(name, zone, 8, product, gpuResource=AMD_GPU, productLabel=PRODUCT_LABEL)
    for name, zone, product in (("amd-a-0", "zone-a", MI300X), ("amd-b-0", "zone-b", MI300X),
                                ("amd-c-0", "zone-c", MI300X), ("amd-a-1", "zone-a", MI250X)))

PROFILE = f"""\
apiVersion: fleetsched.io/v1alpha1
kind: FleetschedConfiguration
profiles:
- name: default
  plugins:
  - {{name: GPU, weight: 10}}
  - {{name: Spot, weight: 5}}
  - {{name: Zone, weight: 3}}
  pluginConfig:
  - name: GPU
    args: {{resourceNames: [{AMD_GPU}], productLabel: {PRODUCT_LABEL}}}
  - name: Zone
    args: {{workloadLabels: [{WORKLOAD_LABEL}]}}
"""


@pytest.fixture(scope="module", params=_sources())
def profileCluster(request):
    if request.param == "stub":
        pytest.skip("profile scenarios need fleetsched")
    label = f"profile-{request.param}"
    workdir = newWorkdir(label)
    config = workdir / "profile.yaml"
    config.write_text(PROFILE)
    if request.param == "plugin":
        yield from _runCluster("plugin", None, plugin=_pluginChoice(config), fleet=AMD_FLEET,
                               gpuResource=AMD_GPU, workdir=workdir, label=label)
        return
    yield from _runCluster(request.param, _extenderChoice(request.param, config), fleet=AMD_FLEET,
                           gpuResource=AMD_GPU, workdir=workdir, label=label)


@pytest.fixture
def profileNamespace(profileCluster, request):
    yield from _namespaceFor(profileCluster, request)


def test_amd_gpu_resource_reaches_the_cache(profileCluster, profileNamespace):
    cluster, ns = profileCluster, profileNamespace
    if cluster.plugin:
        cluster.syncExtender()  # the plugin's gauges: 4 nodes, 32 amd.com/gpu, all free
    else:
        view = cluster.fleetschedView()
        for shape in AMD_FLEET:
            got = view[shape.name]
            assert (got["gpusFree"], got["gpusTotal"], got["model"], got["zone"]) == \
                (8, 8, shape.product, shape.zone), f"{shape.name} in fleetsched's /debug/nodes: {got}"
        filtersBefore = cluster.metric("http_requests_total", verb="filter")
    # The model comes from the profile's productLabel: only fleetsched reads this annotation.
    cluster.kube.createPod(ns, pod("mi250x", 1, gpuResource=AMD_GPU,
                                   annotations={"fleetsched.io/gpu-models": MI250X}))
    p = cluster.waitSettled(ns, ["mi250x"], timeout=60)["mi250x"]
    assert isBound(p), unschedulableMessage(p)
    assert p["spec"]["nodeName"] == "amd-a-1"
    cluster.syncExtender()

    # Whole-node pods: one on each MI300X node (the MI250X node has 7 left); a fourth waits.
    names = [f"train-{i}" for i in range(4)]
    for name in names:
        cluster.kube.createPod(ns, pod(name, 8, gpuResource=AMD_GPU))
        p = cluster.waitSettled(ns, [name], timeout=60)[name]
        if name != names[-1]:
            assert isBound(p), f"{name}: {unschedulableMessage(p)}"
        else:
            assert not isBound(p), f"{name} bound to {p['spec']['nodeName']}: no node has 8 free"
            assert tooFewGpus(cluster, AMD_GPU) in unschedulableMessage(p), unschedulableMessage(p)
        cluster.syncExtender()  # also checks /debug/nodes against the bound pods
    placed = sorted(p["spec"]["nodeName"] for p in cluster.kube.listPods(ns)
                    if isBound(p) and p["metadata"]["name"] in names)
    assert placed == ["amd-a-0", "amd-b-0", "amd-c-0"]
    # (The plugin is asked about every pod; the extender only about pods of managedResources.)
    assert cluster.plugin or cluster.metric("http_requests_total", verb="filter") > filtersBefore, \
        "kube-scheduler never asked fleetsched: managedResources is not amd.com/gpu"


def test_workload_labels_reach_the_zone_counts(profileCluster, profileNamespace):
    # Replicas named only by app.kubernetes.io/name, on the three MI300X nodes (one per zone):
    # the Zone plugin spreads them only if the cache counts them under that label.
    cluster, ns = profileCluster, profileNamespace
    zoneOf = {s.name: s.zone for s in AMD_FLEET}
    zones = collections.Counter()
    for i in range(9):
        name = f"web-{i}"
        cluster.kube.createPod(ns, pod(name, 1, gpuResource=AMD_GPU, labels={WORKLOAD_LABEL: "web"},
                                       annotations={"fleetsched.io/gpu-models": MI300X}))
        p = cluster.waitSettled(ns, [name], timeout=60)[name]
        assert isBound(p), unschedulableMessage(p)
        zones[zoneOf[p["spec"]["nodeName"]]] += 1
        cluster.syncExtender()
        counts = [zones[z] for z in ("zone-a", "zone-b", "zone-c")]
        assert max(counts) - min(counts) <= 1, f"after {i + 1} replicas: {dict(zones)}"

"""deploy/: every manifest and the Helm chart in its three shapes are accepted by a real
kube-apiserver (`kubectl apply --dry-run=server`: defaulting, validation, admission,
RBAC escalation checks; nothing is created). The chart is rendered by
`deploy/check.sh --render-dir`, which also runs the offline checks and builds helm
once (cached). Manifests of kinds the API server does not serve (CRDs such as
ServiceMonitor) are skipped, naming the missing kind. The plugin shape's scheduler
configuration is also run by fleetsched-scheduler against the API server."""

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from cluster import SOURCE_ROOT, freePort, waitFor
from conftest import isBound, unschedulableMessage
from fleet import pod

DEPLOY = SOURCE_ROOT / "deploy"
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))
OPTIONAL = sorted((DEPLOY / "kubernetes" / "optional").glob("*.yaml"))
CHART_SHAPES = ["chart-sidecar.yaml", "chart-standalone.yaml", "chart-plugin.yaml"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("deploy-render")
    res = subprocess.run([str(DEPLOY / "check.sh"), "--render-dir", str(out)],
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, f"deploy/check.sh failed:\n{res.stdout}\n{res.stderr}"
    return out


def missingKinds(cluster, path: Path) -> list[str]:
    """apiVersion/kind pairs in the file that the API server does not serve."""
    missing = []
    for doc in yaml.safe_load_all(path.read_text()):
        if not doc:
            continue
        group = doc["apiVersion"]
        base = "/api/v1" if group == "v1" else f"/apis/{group}"
        try:
            kinds = {r["kind"] for r in cluster.kube.request("GET", base).get("resources", [])}
        except Exception:  # 404: the group/version is not served at all
            kinds = set()
        if doc["kind"] not in kinds:
            missing.append(f"{group} {doc['kind']}")
    return missing


def dryRun(cluster, path: Path) -> None:
    out = cluster.plane.kubectl("apply", "--dry-run=server", "-f", str(path))
    assert "(server dry run)" in out, out


@pytest.mark.parametrize("name", [p.name for p in MANIFESTS])
def test_manifest_passes_server_dry_run(binderCluster, name):
    dryRun(binderCluster, DEPLOY / "kubernetes" / name)


@pytest.mark.parametrize("name", [p.name for p in OPTIONAL])
def test_optional_manifest_passes_server_dry_run(binderCluster, name):
    path = DEPLOY / "kubernetes" / "optional" / name
    missing = missingKinds(binderCluster, path)
    if missing:
        pytest.skip(f"{name}: the API server does not serve {', '.join(missing)} (CRD not installed)")
    dryRun(binderCluster, path)


@pytest.mark.parametrize("shape", CHART_SHAPES)
def test_helm_chart_passes_server_dry_run(binderCluster, rendered, shape):
    dryRun(binderCluster, rendered / shape)


@pytest.mark.parametrize("source", ["chart", "manifest"])
def test_plugin_config_schedules(binderCluster, binderNamespace, rendered, source):
    """The plugin shape's KubeSchedulerConfiguration, as the chart renders it and as
    deploy/kubernetes/plugin.yaml holds it, run by fleetsched-scheduler against a real
    kube-apiserver: it takes its Lease, places and binds a GPU pod named to its scheduler
    (Fleetsched binds it with its GPU index), runs Fleetsched's Filter before the default filters
    (a pod no node fits gets Fleetsched's reasons, not NodeResourcesFit's), and its log never says
    it turns signatures off."""
    binary = os.environ.get("FLEETSCHED_SCHEDULER_BIN",
                            str(SOURCE_ROOT / "build" / "scheduler" / "fleetsched-scheduler"))
    if not os.access(binary, os.X_OK):
        pytest.skip(f"no fleetsched-scheduler at {binary} (FLEETSCHED_SCHEDULER_BIN)")
    plane = binderCluster.plane
    manifest = rendered / "chart-plugin.yaml" if source == "chart" else DEPLOY / "kubernetes" / "plugin.yaml"
    docs = [d for d in yaml.safe_load_all(manifest.read_text()) if d]
    configMap = next(d for d in docs if d["kind"] == "ConfigMap"
                     and "scheduler-config.yaml" in d.get("data", {}))
    config = yaml.safe_load(configMap["data"]["scheduler-config.yaml"])
    election = config["leaderElection"]
    schedulerName = config["profiles"][0]["schedulerName"]
    # How to reach this API server (in a pod, the ServiceAccount's token), and a Lease per source:
    # the one of the run before is still held until it expires.
    config["clientConnection"] = {"kubeconfig": str(plane.kubeconfig)}
    election["resourceName"] += f"-{source}"
    path = plane.workdir / f"{source}-plugin-scheduler.yaml"
    path.write_text(yaml.safe_dump(config))
    port = freePort()
    proc = plane._spawn(f"{source}-plugin-scheduler", [
        binary, f"--config={path}", "--bind-address=127.0.0.1", f"--secure-port={port}",
        f"--cert-dir={plane.workdir / (source + '-plugin-certs')}", "-v=2"])
    try:
        lease = (f"/apis/coordination.k8s.io/v1/namespaces/{election['resourceNamespace']}"
                 f"/leases/{election['resourceName']}")
        waitFor(f"the {source}'s Lease held", lambda: binderCluster.kube.request("GET", lease)
                .get("spec", {}).get("holderIdentity"), timeout=60, process=proc)
        name = f"{source}-plugin-gpu"
        gpuPod = pod(name, gpus=1)
        gpuPod["spec"]["schedulerName"] = schedulerName
        binderCluster.kube.createPod(binderNamespace, gpuPod)
        waitFor("the GPU pod bound", lambda: isBound(
            binderCluster.kube.getPod(binderNamespace, name)), timeout=60, process=proc)
        bound = binderCluster.kube.getPod(binderNamespace, name)
        assert "fleetsched.io/gpu-index" in bound["metadata"].get("annotations", {}), bound["metadata"]
        tooBig = pod(f"{source}-plugin-16-gpus", gpus=16)
        tooBig["spec"]["schedulerName"] = schedulerName
        binderCluster.kube.createPod(binderNamespace, tooBig)
        message = waitFor("the 16-GPU pod reported unschedulable", lambda: unschedulableMessage(
            binderCluster.kube.getPod(binderNamespace, tooBig["metadata"]["name"])), timeout=60, process=proc)
        assert "pod needs 16" in message and "Insufficient nvidia.com/gpu" not in message, message
        logText = proc.logPath.read_text(errors="replace")
        assert "Disabling signatures" not in logText, \
            [line for line in logText.splitlines() if "Disabling signatures" in line]
    finally:
        proc.stop()
        plane.processes.remove(proc)

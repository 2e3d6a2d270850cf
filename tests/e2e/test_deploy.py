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
from conftest import isBound
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


def test_plugin_chart_config_schedules(binderCluster, binderNamespace, rendered):
    """The plugin shape's KubeSchedulerConfiguration, as the chart renders it, run by
    fleetsched-scheduler against a real kube-apiserver: it takes the chart's Lease, places and binds
    a GPU pod named to its scheduler (Fleetsched binds it with its GPU index), and its log never
    says it turns signatures off."""
    binary = os.environ.get("FLEETSCHED_SCHEDULER_BIN",
                            str(SOURCE_ROOT / "build" / "scheduler" / "fleetsched-scheduler"))
    if not os.access(binary, os.X_OK):
        pytest.skip(f"no fleetsched-scheduler at {binary} (FLEETSCHED_SCHEDULER_BIN)")
    plane = binderCluster.plane
    docs = [d for d in yaml.safe_load_all((rendered / "chart-plugin.yaml").read_text()) if d]
    configMap = next(d for d in docs if d["kind"] == "ConfigMap"
                     and d["metadata"]["name"].endswith("-scheduler-config"))
    config = yaml.safe_load(configMap["data"]["scheduler-config.yaml"])
    election = config["leaderElection"]
    schedulerName = config["profiles"][0]["schedulerName"]
    # The one addition: how to reach this API server (in a pod, the ServiceAccount's token).
    config["clientConnection"] = {"kubeconfig": str(plane.kubeconfig)}
    path = plane.workdir / "chart-plugin-scheduler.yaml"
    path.write_text(yaml.safe_dump(config))
    port = freePort()
    proc = plane._spawn("chart-plugin-scheduler", [
        binary, f"--config={path}", "--bind-address=127.0.0.1", f"--secure-port={port}",
        f"--cert-dir={plane.workdir / 'chart-plugin-certs'}", "-v=2"])
    try:
        lease = (f"/apis/coordination.k8s.io/v1/namespaces/{election['resourceNamespace']}"
                 f"/leases/{election['resourceName']}")
        waitFor("the chart's Lease held", lambda: binderCluster.kube.request("GET", lease)
                .get("spec", {}).get("holderIdentity"), timeout=60, process=proc)
        gpuPod = pod("chart-plugin-gpu", gpus=1)
        gpuPod["spec"]["schedulerName"] = schedulerName
        binderCluster.kube.createPod(binderNamespace, gpuPod)
        waitFor("the GPU pod bound", lambda: isBound(
            binderCluster.kube.getPod(binderNamespace, "chart-plugin-gpu")), timeout=60, process=proc)
        bound = binderCluster.kube.getPod(binderNamespace, "chart-plugin-gpu")
        assert "fleetsched.io/gpu-index" in bound["metadata"].get("annotations", {}), bound["metadata"]
        logText = proc.logPath.read_text(errors="replace")
        assert "Disabling signatures" not in logText, \
            [line for line in logText.splitlines() if "Disabling signatures" in line]
    finally:
        proc.stop()
        plane.processes.remove(proc)

"""deploy/: every manifest and the Helm chart in both shapes are accepted by a real
kube-apiserver (`kubectl apply --dry-run=server`: defaulting, validation, admission,
RBAC escalation checks; nothing is created). The chart is rendered by
`deploy/check.sh --render-dir`, which also runs the offline checks and builds helm
once (cached). Manifests of kinds the API server does not serve (CRDs such as
ServiceMonitor) are skipped, naming the missing kind."""

import subprocess
from pathlib import Path

import pytest
import yaml

from cluster import SOURCE_ROOT

DEPLOY = SOURCE_ROOT / "deploy"
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))
OPTIONAL = sorted((DEPLOY / "kubernetes" / "optional").glob("*.yaml"))
CHART_SHAPES = ["chart-sidecar.yaml", "chart-standalone.yaml"]


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

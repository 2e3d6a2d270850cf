"""The small GPU fleet every scenario runs on, and pod builders.

Nodes are plain Node objects with nvidia.com/gpu in status (no kubelet or KWOK
needed: nothing here ever runs a container). The labels are the ones fleetsched's
plugins read: GPU feature discovery's nvidia.com/gpu.*, the well-known zone
label and Karpenter's capacity type. A shape may name another GPU resource and
product label (test_profile.py's AMD fleet, under a profile that says so).
"""

from __future__ import annotations

from dataclasses import dataclass

H100 = "NVIDIA-H100-80GB-HBM3"
A100 = "NVIDIA-A100-SXM4-80GB"
L4 = "NVIDIA-L4"


@dataclass(frozen=True)
class NodeShape:
    name: str
    zone: str
    gpus: int = 0
    product: str = ""
    spot: bool = False
    gpuMemoryMiB: int = 81920
    gpuResource: str = "nvidia.com/gpu"
    productLabel: str = "nvidia.com/gpu.product"


# 44 GPUs: 32 on-demand and 12 spot, in three zones, plus two CPU-only nodes.
# The three on-demand H100 nodes are identical but for their zone, so zone
# preferences show without GPU scores pulling elsewhere.
FLEET: tuple[NodeShape, ...] = (
    NodeShape("h100-a-0", "zone-a", 8, H100),
    NodeShape("h100-b-0", "zone-b", 8, H100),
    NodeShape("h100-c-0", "zone-c", 8, H100),
    NodeShape("a100-a-0", "zone-a", 4, A100),
    NodeShape("a100-c-0", "zone-c", 4, A100),
    NodeShape("a100-spot-b-0", "zone-b", 4, A100, spot=True),
    NodeShape("h100-spot-c-0", "zone-c", 8, H100, spot=True),
    NodeShape("cpu-a-0", "zone-a"),
    NodeShape("cpu-b-0", "zone-b"),
)


def shapeByName(name: str) -> NodeShape:
    return next(s for s in FLEET if s.name == name)


def nodeObject(shape: NodeShape) -> dict:
    labels = {
        "kubernetes.io/hostname": shape.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/zone": shape.zone,
        "topology.kubernetes.io/region": "region-1",
        "karpenter.sh/capacity-type": "spot" if shape.spot else "on-demand",
    }
    resources = {"cpu": "96", "memory": "1Ti", "pods": "110", "ephemeral-storage": "1Ti"}
    if shape.gpus and shape.gpuResource == "nvidia.com/gpu":
        labels.update({
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.count": str(shape.gpus),
            "nvidia.com/gpu.memory": str(shape.gpuMemoryMiB),
        })
    if shape.gpus:
        labels[shape.productLabel] = shape.product
        resources[shape.gpuResource] = str(shape.gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": shape.name, "labels": labels},
        "spec": {},
        # Status given at create time is kept, as when a kubelet registers.
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True", "reason": "E2E",
                            "message": "static e2e node"}],
        },
    }


def pod(name: str, gpus: int = 0, *, annotations: dict | None = None,
        labels: dict | None = None, nodeSelector: dict | None = None,
        cpu: str = "100m", gpuResource: str = "nvidia.com/gpu") -> dict:
    """A bare pod (no controller manager runs); GPUs go in limits, as users write them."""
    resources: dict = {"requests": {"cpu": cpu, "memory": "64Mi"}}
    if gpus:
        resources["limits"] = {gpuResource: str(gpus)}
    spec: dict = {
        "containers": [{"name": "main", "image": "pause", "resources": resources}],
        "terminationGracePeriodSeconds": 0,
    }
    if nodeSelector:
        spec["nodeSelector"] = nodeSelector
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}},
        "spec": spec,
    }

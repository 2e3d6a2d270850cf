"""One Binding, whichever deployment posts it: the same pod bound through the extender's bind
verb (binder cluster) and through fleetsched-scheduler's Fleetsched plugin carries the same
fleetsched annotations, field by field, with assume-time on one clock (wall-clock Unix
nanoseconds, docs/annotations.md). Both post what the engine returns with its reservation
(cache::bindingAnnotations); before that, the extender wrote uv_hrtime() (monotonic, since boot)
and the plugin time.Now().UnixNano(), so a device plugin on the node comparing the value with its
clock got nonsense from one of them."""

import re
import time

import pytest

from cluster import waitFor
from conftest import _namespaceFor, isBound
from fleet import pod

pytestmark = pytest.mark.fleetsched

TOLERANT = {"fleetsched.io/spot-tolerant": "true"}


def bindThrough(cluster, namespace: str) -> tuple[dict, int, int]:
    """Creates one 2-GPU pod, waits until it is bound, returns its fleetsched annotations and
    the wall-clock nanoseconds around its scheduling."""
    before = time.time_ns()
    cluster.kube.createPod(namespace, pod("same", 2, annotations=TOLERANT))
    bound = waitFor("the pod bound", lambda: (p := cluster.kube.getPod(namespace, "same")) and isBound(p) and p,
                    timeout=60, watch=cluster.plane.processes)
    after = time.time_ns()
    written = {k: v for k, v in bound["metadata"].get("annotations", {}).items()
               if k.startswith("fleetsched.io/") and k not in TOLERANT}
    return written, before, after


def test_both_deployments_post_the_same_binding(binderCluster, binderNamespace, pluginCluster, request):
    plugin = _namespaceFor(pluginCluster, request)
    pluginNamespace = next(plugin)
    try:
        viaExtender, extBefore, extAfter = bindThrough(binderCluster, binderNamespace)
        viaPlugin, plugBefore, plugAfter = bindThrough(pluginCluster, pluginNamespace)
    finally:
        next(plugin, None)
    assert sorted(viaExtender) == sorted(viaPlugin) == ["fleetsched.io/assume-time", "fleetsched.io/gpu-index"], \
        (viaExtender, viaPlugin)
    for written in (viaExtender, viaPlugin):
        assert re.fullmatch(r"\d+-\d+", written["fleetsched.io/gpu-index"]), written
    # An empty fleet, one pod, one engine: the same GPUs.
    assert viaExtender["fleetsched.io/gpu-index"] == viaPlugin["fleetsched.io/gpu-index"]
    # One clock: wall-clock nanoseconds taken while the pod was being scheduled.
    for name, written, before, after in (("extender", viaExtender, extBefore, extAfter),
                                         ("plugin", viaPlugin, plugBefore, plugAfter)):
        assumed = int(written["fleetsched.io/assume-time"])
        assert before <= assumed <= after, \
            f"{name}: assume-time {assumed} is not wall-clock ns between {before} and {after}"

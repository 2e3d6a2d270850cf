"""The scale run's second table (scale.py, after its rounds): fleetsched measured by its own
load generator on the run's fleet and pods, next to the run's own histograms. Needs only the
fleetsched binary, no control plane, so the report cannot rot between scale runs."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from scale import loadgenBeside, loadgenTable, scalePods

SOURCE_ROOT = Path(__file__).resolve().parents[2]


def test_loadgen_beside_the_scale_run_reports_both_orders(tmp_path):
    binary = os.environ.get("FLEETSCHED_BIN",
                            str(SOURCE_ROOT / "build" / "cmd" / "fleetsched" / "fleetsched"))
    if not os.access(binary, os.X_OK):
        pytest.skip(f"no fleetsched binary at {binary}")
    args = argparse.Namespace(workdir=str(tmp_path), nodes=40, gpus_per_node=8, node_images=2,
                              fleetsched=binary, loadgen_seconds=0.5)
    lg = loadgenBeside(args, scalePods(400, 1, 0.25))
    assert set(lg) == {"kube-scheduler", "repeated"}
    for verbs in lg.values():
        assert verbs["filter"]["count"] > 0 and verbs["filter"]["p50Us"] > 0
        assert verbs["prioritize"]["p50Us"] > 0
    own = {"filter": {"p50_s": 0.0004, "p99_s": 0.004}, "prioritize": {"p50_s": 0.0003,
                                                                      "p99_s": 0.003}}
    text = loadgenTable([{"config": "fleetsched", "extender": own},
                         {"config": "none"}], lg)
    assert "| scale run, its own histogram (median of 1 rounds) | 400 / 4000 | 300 / 3000 |" in text
    assert "| loadgen, kube-scheduler's order |" in text
    assert "| loadgen, one repeated list |" in text
    ratio = 400 / lg["kube-scheduler"]["filter"]["p50Us"]
    assert f"order: {ratio:.2f} (target ≤ 2" in text
    assert "kube-scheduler's order ÷ repeated:" in text

#!/usr/bin/env python3
"""The CI guard on `fleet` against `fgd` beyond the five visible traces.

Builds sample 1 of every variant family (bench/replay/variants.py --seed 1: cpu050..cpu250,
gpushare20..100, gpuspec20..50, multigpu30..50), replays each with `fgd` and `fleet` over seeds
42-51, and fails when `fleet`'s mean lands more than TOLERANCE points below `fgd`'s at 100 % or
130 % arrived workload on any of them. The reference is `fgd` of the same run, which the
published guard holds to the paper's table on the visible traces.

Everything is seeded, so the result is a fixed function of the code: a change moves it, noise
does not. TOLERANCE is about three standard errors of one sample's 10-seed mean (the paired
difference's seed-to-seed SD is 0.05-0.11 points, bench/replay/README.md): a change that costs
`fleet` a real 0.1 point on a family fails, a reshuffle of equally good placements does not.

Usage: variant_guard.py PATH-TO-fleetsched SOURCE-ROOT. The trace comes from
FLEETSCHED_OPENB_DIR, else ../shared/data/openb beside SOURCE-ROOT; without it the test is
skipped (exit 77).
"""
import csv
import os
import subprocess
import sys
import tempfile

TOLERANCE = 0.10
SAMPLE_SEED = 1
FAMILIES = 15


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: variant_guard.py PATH-TO-fleetsched SOURCE-ROOT")
    fleetsched, src = sys.argv[1], sys.argv[2]
    openb = os.environ.get("FLEETSCHED_OPENB_DIR") or os.path.join(src, "..", "shared", "data", "openb")
    if not os.path.exists(os.path.join(openb, "openb_node_list_gpu_node.csv")):
        print(f"SKIP: openb trace not found in {openb}")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        variants = os.path.join(tmp, "variants")
        subprocess.run([sys.executable, os.path.join(src, "bench", "replay", "variants.py"), "--trace-dir", openb,
                        "--out", variants, "--seed", str(SAMPLE_SEED)], check=True, stdout=subprocess.DEVNULL)
        traces = sorted(os.path.join(variants, f) for f in os.listdir(variants) if f.endswith(".csv"))
        if len(traces) != FAMILIES:
            print(f"FAIL: variants.py wrote {len(traces)} variants, expected {FAMILIES}")
            return 1
        out = os.path.join(tmp, "out")
        subprocess.run([fleetsched, "replay", "--trace-dir", openb, "--traces", *traces, "--policies", "fgd,fleet",
                        "--seeds", "42-51", "--no-plot", "--no-progress", "-o", out], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "summary.csv"), newline="") as f:
            rows = {(r["trace"], r["policy"]): r for r in csv.DictReader(f)}

    failures = 0
    names = sorted({t for t, _ in rows})
    if len(names) != FAMILIES:
        print(f"FAIL: the summary has {len(names)} traces, expected {FAMILIES}")
        return 1
    print(f"{'variant':12s} {'fgd@100':>8s} {'fleet':>8s} {'diff':>6s} {'fgd@130':>8s} {'fleet':>8s} {'diff':>6s}")
    total = [0.0, 0.0]
    for name in names:
        fgd, fleet = rows[(name, "fgd")], rows[(name, "fleet")]
        if int(fgd["runs"]) != 10 or int(fleet["runs"]) != 10:
            print(f"FAIL: {name}: expected 10 runs per policy")
            failures += 1
            continue
        line = f"{name:12s}"
        for i, col in enumerate(("alloc_100", "alloc_130")):
            a, b = float(fgd[col]), float(fleet[col])
            total[i] += b - a
            line += f" {a:8.2f} {b:8.2f} {b - a:+6.2f}"
            if b < a - TOLERANCE:
                failures += 1
                line += "  <- fleet below fgd"
        print(line)
    print(f"sum of fleet - fgd: {total[0]:+.2f} / {total[1]:+.2f}; tolerance {TOLERANCE} per variant")
    if failures:
        print(f"FAIL: fleet more than {TOLERANCE} points below fgd in {failures} place(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

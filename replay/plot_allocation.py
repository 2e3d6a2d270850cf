#!/usr/bin/env python3
"""Plots GPU allocation vs arrived workload from a replay output folder (curves.csv):
one panel per trace, one line per policy (mean over seeds). Writes allocation.png there.
Needs matplotlib (Debian: python3-matplotlib, which scripts/bootstrap.sh installs); without it
this exits with status 3 and says so, installing nothing."""
import csv
import sys
from collections import defaultdict
from pathlib import Path


MISSING_MATPLOTLIB = 3


def ensure_matplotlib():
    try:
        import matplotlib
    except ImportError:
        print(f"plot_allocation.py: matplotlib is not installed for {sys.executable}: install the Debian "
              "package python3-matplotlib (scripts/bootstrap.sh does), or pass --no-plot to replay",
              file=sys.stderr)
        sys.exit(MISSING_MATPLOTLIB)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "replay-out")
    curves = defaultdict(lambda: defaultdict(list))  # (trace, policy) -> bin -> values
    traces, policies = [], []
    with open(out / "curves.csv") as f:
        for row in csv.DictReader(f):
            t, p = row["trace"], row["policy"]
            if t not in traces:
                traces.append(t)
            if p not in policies:
                policies.append(p)
            curves[(t, p)][int(row["arrival_pct"])].append(float(row["alloc_pct"]))
    if not traces:
        sys.exit(f"{out}/curves.csv has no rows")
    plt = ensure_matplotlib()
    cols = min(3, len(traces))
    rows = (len(traces) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.2 * rows), squeeze=False)
    for i, trace in enumerate(traces):
        ax = axes[i // cols][i % cols]
        for policy in policies:
            bins = curves.get((trace, policy))
            if not bins:
                continue
            xs = sorted(bins)
            ys = [sum(bins[x]) / len(bins[x]) for x in xs]
            ax.plot(xs, ys, label=policy, linewidth=1.4)
        ax.set_title(trace)
        ax.set_xlabel("arrived GPU workload (% of capacity)")
        ax.set_ylabel("GPU allocation (%)")
        ax.set_xlim(60, 130)
        ax.set_ylim(60, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    for j in range(len(traces), rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.tight_layout()
    fig.savefig(out / "allocation.png", dpi=110)
    print(f"wrote {out / 'allocation.png'}")


if __name__ == "__main__":
    main()

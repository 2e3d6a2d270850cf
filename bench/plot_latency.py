#!/usr/bin/env python3
"""Overlay latency percentile spectra from `loadgen --json` result files into one PNG (and SVG).

    python3 bench/plot_latency.py -o latency.png results/*.json [--verb filter]

Needs matplotlib (Debian: python3-matplotlib, from scripts/bootstrap.sh). One line per run and verb; x is the percentile on a
log scale of 1/(1-q) (p90, p99, p99.9 ... evenly spaced), y the latency, log scale so a Go peer
in milliseconds and fleetsched in microseconds fit one chart.
"""
import argparse
import json
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="loadgen JSON files")
    ap.add_argument("-o", "--output", default="latency.png")
    ap.add_argument("--verb", action="append", help="verbs to plot (default: filter and prioritize)")
    args = ap.parse_args()
    verbs = args.verb or ["filter", "prioritize"]
    runs = [json.load(open(p)) for p in args.results if p.endswith(".json") and os.path.getsize(p)]
    modes = sorted({r["mode"] for r in runs}, key=lambda m: m != "nodenames")
    fig, axes = plt.subplots(1, len(modes), figsize=(6.5 * len(modes), 4.6), squeeze=False)
    for ax, mode in zip(axes[0], modes):
        for r in (r for r in runs if r["mode"] == mode):
            for verb in verbs:
                v = r["verbs"][verb]
                if not v["count"]:
                    continue
                xs = [-math.log10(1 - q / 100) if q < 100 else 4 for q, _ in v["spectrum"]]
                ys = [max(us, 0.1) for _, us in v["spectrum"]]
                style = "-" if verb == "filter" else "--"
                ax.plot(xs, ys, style, label=f"{r['label']} {verb} ({r['podsPerSecond']:.0f} pods/s)")
        ax.set_yscale("log")
        fmt = matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}")
        ax.yaxis.set_major_formatter(fmt)
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks([0, 1, 2, 3, 4], ["p0", "p90", "p99", "p99.9", "p99.99"])
        ax.set_xlabel("percentile")
        ax.set_ylabel("latency (µs)")
        ax.set_title("NodeNames mode" if mode == "nodenames" else "full Nodes mode")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    fig.savefig(os.path.splitext(args.output)[0] + ".svg")
    print(args.output)


if __name__ == "__main__":
    main()

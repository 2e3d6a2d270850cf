#!/usr/bin/env python3
"""Draw `transport_floor.py --json` runs: the server core's time per pod, split into user,
system and softirq, for the null extender and fleetsched side by side, round by round.

    python3 bench/plot_floor.py -o floor.png runs1.json [runs2.json ...] [--budget 200]

Needs matplotlib (Debian: python3-matplotlib, from scripts/bootstrap.sh). Rounds are numbered across the files in the order
given; the dashed line is the per-pod budget of a pods/s target (200 µs = 5,000 pods/s).
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PARTS = (("user", "user (the server's own work)", "#4c72b0"), ("system", "system (syscalls, copies)", "#dd8452"),
         ("softirq", "softirq (loopback delivery)", "#c44e52"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="transport_floor.py --json files")
    ap.add_argument("-o", "--output", default="floor.png")
    ap.add_argument("--budget", type=float, default=200, help="per-pod budget line, µs (0: none)")
    args = ap.parse_args()
    rounds = []  # per round: {kind: run}
    for path in args.runs:
        with open(path) as f:
            runs = json.load(f)
        by_round = {}
        for r in runs:
            by_round.setdefault(r["round"], {})[r["kind"]] = r
        rounds += [by_round[k] for k in sorted(by_round)]
    kinds = [k for k in ("null", "fleetsched") if any(k in r for r in rounds)]
    width = 0.8 / len(kinds)
    fig, ax = plt.subplots(figsize=(max(6.5, 0.5 * len(rounds) + 2), 4.6))
    for j, kind in enumerate(kinds):
        xs = [i + (j - (len(kinds) - 1) / 2) * width for i, r in enumerate(rounds) if kind in r]
        runs = [r[kind] for r in rounds if kind in r]
        bottom = [0.0] * len(runs)
        for part, label, color in PARTS:
            ys = [x[part] for x in runs]
            ax.bar(xs, ys, width * 0.95, bottom=bottom, color=color, alpha=1.0 if kind == "fleetsched" else 0.45,
                   label=f"{label}" if j == len(kinds) - 1 else None, edgecolor="white", linewidth=0.3)
            bottom = [b + y for b, y in zip(bottom, ys)]
    if args.budget > 0:
        ax.axhline(args.budget, color="black", linestyle="--", linewidth=1,
                   label=f"budget: {args.budget:.0f} µs per pod = {1e6 / args.budget:,.0f} pods/s")
    ax.set_xticks(range(len(rounds)))
    ax.set_xticklabels([str(i + 1) for i in range(len(rounds))], fontsize=7)
    ax.set_xlabel("round (pale: null extender sending fleetsched's recorded replies; solid: fleetsched)")
    ax.set_ylabel("server core per pod (µs)")
    ax.set_title("NodeNames pod, 4 connections: where the server core goes", fontsize=10)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.25)  # room for the legend above the bars
    ax.legend(fontsize=8, loc="upper left", ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

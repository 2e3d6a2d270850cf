#!/usr/bin/env python3
"""Summarises bench/scheduler-perf.sh's runs: stock against Fleetsched.

Reads upstream scheduler_perf's JSON data items under DATA_DIR (one folder per run, named
<round>-<case>-<workload>) and prints, per workload, SchedulingThroughput average and p50 of the
stock case (X) and each Fleetsched case (X_Fleetsched, X_Fleetsched<variant>), each the median over
rounds, their ratio,
every round's pair, kube-scheduler's scheduling attempt duration, and the time kube-scheduler
measured in Fleetsched's own extension points (scheduler_plugin_execution_duration_seconds,
sampled in 10 % of cycles).

Usage: bench/scheduler_perf_table.py DATA_DIR
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

SUFFIX = "_Fleetsched"
POINTS = ("PreFilter", "Filter", "PreScore", "Score", "Reserve", "Bind")


def load(dataDir: Path):
    """{(case, workload): {round: {"throughput": data, "attempt": data, "plugin": {point: data}}}}"""
    runs = defaultdict(dict)
    for folder in sorted(p for p in dataDir.iterdir() if p.is_dir()):
        round_ = int(folder.name.split("-", 1)[0])
        for f in sorted(folder.glob("BenchmarkPerfScheduling_*.json")):
            for item in json.loads(f.read_text()).get("dataItems", []):
                labels, data = item.get("labels", {}), item.get("data") or {}
                parts = labels.get("Name", "").split("/")
                if len(parts) < 3:
                    continue
                run = runs[(parts[1], parts[2])].setdefault(round_, {"plugin": {}})
                metric = labels.get("Metric")
                if metric == "SchedulingThroughput":
                    run["throughput"] = data
                elif metric == "scheduler_scheduling_attempt_duration_seconds" \
                        and labels.get("result") == "scheduled":
                    run["attempt"] = data
                elif metric == "scheduler_plugin_execution_duration_seconds" \
                        and labels.get("plugin") == "Fleetsched":
                    run["plugin"][labels.get("extension_point")] = data
    return runs


def median(runs: dict, pick) -> float | None:
    values = [v for v in (pick(r) for r in runs.values()) if v is not None]
    return statistics.median(values) if values else None


def fmt(v, digits=1) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def ratio(a, b) -> str:
    return "—" if a is None or not b else f"{a / b:.3f}"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    runs = load(Path(sys.argv[1]))
    # (stock case, workload, Fleetsched case) for every Fleetsched case beside a stock one
    rows = sorted((c[:c.index(SUFFIX)], w, c) for c, w in runs
                  if SUFFIX in c and (c[:c.index(SUFFIX)], w) in runs)
    if not rows:
        print("scheduler_perf_table: no stock and Fleetsched pair found", file=sys.stderr)
        return 1

    def tp(key):
        return lambda r: r.get("throughput", {}).get(key)

    print("SchedulingThroughput, pods/s (median over rounds; Fleetsched ÷ stock)\n")
    print("| workload | Fleetsched case | rounds | stock avg | Fleetsched avg | ratio "
          "| stock p50 | Fleetsched p50 | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case, workload, fcase in rows:
        s, f = runs[(case, workload)], runs[(fcase, workload)]
        sa, fa = median(s, tp("Average")), median(f, tp("Average"))
        s5, f5 = median(s, tp("Perc50")), median(f, tp("Perc50"))
        print(f"| {case}/{workload} | {fcase} | {min(len(s), len(f))} | {fmt(sa)} | {fmt(fa)} "
              f"| {ratio(fa, sa)} | {fmt(s5)} | {fmt(f5)} | {ratio(f5, s5)} |")

    print("\nPer round (average pods/s): stock / Fleetsched = ratio")
    for case, workload, fcase in rows:
        s, f = runs[(case, workload)], runs[(fcase, workload)]
        cells = []
        for r in sorted(set(s) | set(f)):
            a, b = tp("Average")(s.get(r, {})), tp("Average")(f.get(r, {}))
            cells.append(f"r{r} {fmt(a)} / {fmt(b)} = {ratio(b, a)}")
        print(f"  {fcase}/{workload}: " + "; ".join(cells))

    print("\nScheduling attempt (scheduled), ms average: stock / Fleetsched; "
          "Fleetsched's own time per call, ms average (sampled)")
    for case, workload, fcase in rows:
        s, f = runs[(case, workload)], runs[(fcase, workload)]
        att = lambda r: r.get("attempt", {}).get("Average")
        own = ", ".join(f"{p} {fmt(median(f, lambda r, p=p: r['plugin'].get(p, {}).get('Average')), 3)}"
                        for p in POINTS)
        print(f"  {fcase}/{workload}: attempt {fmt(median(s, att), 2)} / {fmt(median(f, att), 2)}; {own}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

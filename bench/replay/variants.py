#!/usr/bin/env python3
"""Builds variants of the openb pod lists from the public ones, the way the FGD paper's trace
family was derived from its default trace (Weng et al., ATC '23, §6; the clusterdata README:
"sampled from the default one, emphasizing certain types of workloads").

What the published files show, and what each family here does (all draws seeded):
- cpuNNN: the GPU pods of `default` unchanged; CPU-only pods drawn from `default`'s until they
  are NNN/10 % of the tasks (the artifact's plots label cpu050..cpu250 "5 %".."25 %" of tasks;
  cpu100 keeps 789 of default's 1,088 CPU-only pods: 10.0 %). Without replacement while there
  are enough, then with.
- gpushareNN: CPU-only pods unchanged; as many GPU pods as `default`, redrawn from its GPU pods
  so that shared-GPU pods (one GPU, < 1000 milli) carry NN % of the GPU request (gpushare40:
  40.1 %; default: 28.5 %).
- gpuspecNN: `default` with GPU pods given a GPU-model list (gpu_spec) until they carry NN % of
  the GPU request, each list drawn from those gpuspec10 gives pods of the same shape (shared,
  one whole GPU, k GPUs).
- multigpuNN: `default` plus multi-GPU pods drawn from its own until they carry NN % of the GPU
  request (multigpu20 appends 172 such pods: 20.4 %).

    python3 bench/replay/variants.py --trace-dir ../shared/data/openb --out build/variants
    python3 bench/replay/variants.py --trace-dir DIR --out DIR --only gpushare60,multigpu30 --seed 7

Writes openb_pod_list_<variant>.csv (the 11-column shape) into --out, one per variant.
"""
import argparse
import csv
import os
import random
import sys
from collections import defaultdict

COLUMNS = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
           "creation_time", "deletion_time", "scheduled_time"]
DEFAULT_VARIANTS = ["cpu050", "cpu150", "cpu200", "cpu250",
                    "gpushare20", "gpushare60", "gpushare80", "gpushare100",
                    "gpuspec20", "gpuspec25", "gpuspec33", "gpuspec50",
                    "multigpu30", "multigpu40", "multigpu50"]


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for c in COLUMNS:
            r.setdefault(c, "")
        if r["gpu_spec"] == "nan":
            r["gpu_spec"] = ""
    return rows


def gpus(r):
    return int(r["num_gpu"])


def milli(r):
    return gpus(r) * min(1000, int(r["gpu_milli"] or 0))


def shared(r):
    return gpus(r) == 1 and int(r["gpu_milli"]) < 1000


def multi(r):
    return gpus(r) > 1


def shape(r):
    return "shared" if shared(r) else f"{gpus(r)}gpu"


def renamed(rows):
    """Fresh sequential names: the replay orders pods by name before its seeded shuffle."""
    out = []
    for i, r in enumerate(rows):
        r = dict(r)
        r["name"] = f"openb-pod-{i:04d}"
        out.append(r)
    return out


def cpu_variant(default, level, rng):
    gpu_pods = [r for r in default if gpus(r) > 0]
    pool = [r for r in default if gpus(r) == 0]
    share = level / 1000
    count = round(share * len(gpu_pods) / (1 - share))
    order = pool[:]
    rng.shuffle(order)
    return gpu_pods + [order[i] if i < len(order) else rng.choice(pool) for i in range(count)]


def gpushare_variant(default, level, rng):
    cpu_pods = [r for r in default if gpus(r) == 0]
    gpu_pods = [r for r in default if gpus(r) > 0]
    share = [r for r in gpu_pods if shared(r)]
    whole = [r for r in gpu_pods if not shared(r)]
    chosen, s_milli, all_milli = [], 0, 0
    for _ in gpu_pods:
        # Keep the shared pods' part of the GPU request at the target as the list grows.
        take_shared = not whole or (share and s_milli < level / 100 * (all_milli + 1))
        r = rng.choice(share if take_shared else whole)
        chosen.append(r)
        all_milli += milli(r)
        s_milli += milli(r) if take_shared else 0
    return cpu_pods + chosen


def gpuspec_variant(default, gpuspec10, level, rng):
    specs = defaultdict(list)
    for r in gpuspec10:
        if gpus(r) > 0 and r["gpu_spec"]:
            specs[shape(r)].append(r["gpu_spec"])
    fallback = specs["1gpu"]
    out = [dict(r) for r in default]
    gpu_idx = [i for i, r in enumerate(out) if gpus(r) > 0]
    rng.shuffle(gpu_idx)
    target = level / 100 * sum(milli(out[i]) for i in gpu_idx)
    constrained = 0
    for i in gpu_idx:
        if constrained >= target:
            break
        out[i]["gpu_spec"] = rng.choice(specs.get(shape(out[i])) or fallback)
        constrained += milli(out[i])
    return out


def multigpu_variant(default, level, rng):
    pool = [r for r in default if multi(r)]
    total = sum(milli(r) for r in default)
    multi_milli = sum(milli(r) for r in pool)
    out = list(default)
    while multi_milli < level / 100 * total:
        r = rng.choice(pool)
        out.append(r)
        total += milli(r)
        multi_milli += milli(r)
    return out


def build(name, traces, rng):
    for family in ("gpushare", "gpuspec", "multigpu", "cpu"):
        if name.startswith(family) and name[len(family):].isdigit():
            level = int(name[len(family):])
            break
    else:
        raise SystemExit(f"variants: unknown variant {name!r} (want cpuNNN, gpushareNN, gpuspecNN or multigpuNN)")
    d = traces["default"]
    if family == "cpu":
        return cpu_variant(d, level, rng)
    if family == "gpushare":
        return gpushare_variant(d, level, rng)
    if family == "gpuspec":
        return gpuspec_variant(d, traces["gpuspec10"], level, rng)
    return multigpu_variant(d, level, rng)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace-dir", required=True, help="folder with the public openb pod lists")
    ap.add_argument("--out", required=True, help="folder for the variant CSVs")
    ap.add_argument("--only", default="", help="comma-separated variants (default: %s)" % ",".join(DEFAULT_VARIANTS))
    ap.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    a = ap.parse_args()
    traces = {}
    for t in ("default", "gpuspec10"):
        path = os.path.join(a.trace_dir, f"openb_pod_list_{t}.csv")
        if not os.path.exists(path):
            print(f"variants: {path} not found", file=sys.stderr)
            return 1
        traces[t] = read(path)
    os.makedirs(a.out, exist_ok=True)
    for name in (a.only.split(",") if a.only else DEFAULT_VARIANTS):
        rng = random.Random(f"{a.seed}/{name}")
        rows = renamed(build(name, traces, rng))
        path = os.path.join(a.out, f"openb_pod_list_{name}.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        g = [r for r in rows if gpus(r) > 0]
        gm = sum(milli(r) for r in g)
        print(f"{name:12} pods {len(rows):5}  "
              f"shared {100 * sum(milli(r) for r in g if shared(r)) / gm:5.1f} %  "
              f"multi {100 * sum(milli(r) for r in g if multi(r)) / gm:5.1f} %  "
              f"spec {100 * sum(milli(r) for r in g if r['gpu_spec']) / gm:5.1f} %  "
              f"cpu-only {100 * (len(rows) - len(g)) / len(rows):5.1f} % of pods  GPU {gm / 62120:5.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())

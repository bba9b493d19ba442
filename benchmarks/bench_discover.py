"""Schema discovery benchmark: a release with a DP-discovered schema vs the same release with the public one.

Run (nice, it is CPU-bound)::

    nice -n 10 python -m benchmarks.bench_discover --runs 3              # adult, nltcs, kddcup99
    nice -n 10 python -m benchmarks.bench_discover adult --algorithms laplace mwem --discover-epsilon 0.1 0.2

For each table and algorithm, two releases at the same total ε = 1 (δ = 1e-6):

* **public**: ``configs/<table>.yaml`` (the hand-written public schema), the algorithm's default
  parameters, all 2-way marginals as the workload;
* **discovered**: the same config with ``schema: {discover: {epsilon: e, delta: 1e-7}}`` and *no hints*
  (every type, category list, null flag, bound and bin is learned), so discovery spends ``e`` and the
  release the rest, in one ledger; all 2-way marginals of the discovered schema;
* **hinted** (when ``configs/hints/<table>.yaml`` exists): the same with those public hints (types, null
  columns, documented binary category lists, a documented top code).

Utility is measured on one common discretization, the public schema with ``unknown: other`` and
``missing: category`` everywhere (so the discovered release's ``__other__`` values, clamped numbers and
nulls can be counted): the average over all 2-way
marginals of the L1 distance between the real and the synthetic marginal distributions (0 = identical,
2 = disjoint).  These figures read the private data and are NOT differentially private.
"""

from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
TABLES = {
    "adult": ROOT / "sample_data" / "adult.csv",
    "nltcs": ROOT / "sample_data" / "nltcs.csv",
    "kddcup99": SHARED / "kddcup99" / "kddcup99_10pct.csv.gz",
}
PARAMS = {"laplace": {}, "mwem": {"iterations": 30}}


def _raw(name: str, algorithm: str) -> dict:
    raw = yaml.safe_load((ROOT / "configs" / f"{name}.yaml").read_text())
    raw["algorithm"] = {"name": algorithm, "params": dict(PARAMS[algorithm])}
    raw["privacy"] = {"epsilon": 1.0, "delta": 1e-6, "neighboring": "add-remove", "n": "public"}
    raw["workload"] = {"marginals": {"k": 2}}
    raw["output"] = {"rows": "n", "numeric": "uniform"}
    return raw


def _avg_l1(cfg, real, synthetic) -> float:
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.data.discretize import encode
    from dpsynth.nonprivate.metrics import l1_distance

    t = ArrayCounts(encode(real, cfg.domain, unknown="other"), cfg.domain)
    s = ArrayCounts(encode(synthetic, cfg.domain, unknown="other"), cfg.domain)
    return float(np.mean([l1_distance(t.marginal(m), s.marginal(m)) for m in cfg.marginals]))


def run(name: str, algorithm: str, discover_eps: float, runs: int, rows: int | None) -> list[dict]:
    import dpsynth
    from dpsynth.config import parse_config
    from dpsynth.data.io import read_table

    raw = _raw(name, algorithm)
    public = parse_config(raw)
    evaluation = parse_config({**raw, "schema": {"unknown": "other", "columns": {
        name: {**spec, "missing": "category"} for name, spec in raw["schema"]["columns"].items()}}})
    strings = [c.name for c in public.domain.columns if c.kind == "categorical"]
    table = read_table(TABLES[name], string_columns=strings)
    if rows is not None and rows < len(table):
        table = table.sample(rows, random_state=0).reset_index(drop=True)
    disc_raw = copy.deepcopy(raw)
    disc_raw["schema"] = {"discover": {"epsilon": discover_eps, "delta": 1e-7}}
    variants = [("public", public), ("discovered", parse_config(disc_raw))]
    hints = ROOT / "configs" / "hints" / f"{name}.yaml"
    if hints.exists():  # public facts (types, null columns, documented category lists) as hints
        disc_raw["schema"]["discover"]["columns"] = yaml.safe_load(hints.read_text())["columns"]
        variants.append(("hinted", parse_config(disc_raw)))
    out = []
    for seed in range(runs):
        for label, cfg in variants:
            t0 = time.perf_counter()
            res = dpsynth.release(table, cfg, rng=np.random.default_rng(seed))
            secs = time.perf_counter() - t0
            p = res.report["privacy"]
            row = {"table": name, "algorithm": algorithm, "schema": label, "seed": seed,
                   "discover_epsilon": discover_eps if label != "public" else 0.0,
                   "epsilon_spent": p["epsilon_spent"], "cells": int(sum(c["size"] for c in res.report["domain"])),
                   "avg_l1_2way": _avg_l1(evaluation, table, res.synthetic), "seconds": secs}
            out.append(row)
            print(f"{name:9s} {algorithm:8s} {label:10s} eps_d={row['discover_epsilon']:<4g} seed={seed} "
                  f"spent={row['epsilon_spent']:.6f} cells={row['cells']:4d} L1={row['avg_l1_2way']:.4f} "
                  f"({secs:.1f} s)", flush=True)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables", nargs="*", default=list(TABLES), choices=list(TABLES))
    ap.add_argument("--algorithms", nargs="+", default=["laplace", "mwem"], choices=list(PARAMS))
    ap.add_argument("--discover-epsilon", nargs="+", type=float, default=[0.2])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rows", type=int, default=None, help="sample this many rows of each table (seed 0)")
    ap.add_argument("--csv", type=Path, default=None, help="append the rows to this CSV")
    args = ap.parse_args(argv)
    rows = []
    for name in args.tables:
        if not TABLES[name].exists():
            print(f"{name}: {TABLES[name]} not found, skipped")
            continue
        for alg in args.algorithms:
            for eps in args.discover_epsilon:
                rows += run(name, alg, eps, args.runs, args.rows)
    import pandas as pd

    df = pd.DataFrame(rows)
    if df.empty:
        return
    summary = df.groupby(["table", "algorithm", "schema", "discover_epsilon"])["avg_l1_2way"].agg(["mean", "std"])
    print(summary.round(4).to_string())
    if args.csv:
        df.to_csv(args.csv, mode="a", header=not args.csv.exists(), index=False)


if __name__ == "__main__":
    main()

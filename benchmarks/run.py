"""The benchmark entry point: run a declared grid, write benchmarks/results/<grid>.csv and PNG plots.

    nice python -m benchmarks.run --grid quick            # make bench-quick: under 5 minutes on 2 cores
    nice python -m benchmarks.run --grid full             # make bench: hours
    nice python -m benchmarks.run --grid full --datasets adult --epsilons 1 --out /tmp/x   # a slice
    nice python -m benchmarks.run --scaling rows          # time and memory as Adult is resampled to 10^4..10^6 rows

Each dataset runs in one worker process (benchmarks/worker.py) that forks one
child per release.  Datasets under ../shared/data are skipped with a notice
when absent.  Everything measured here reads the real data: the figures are
NOT differentially private (they are for choosing an algorithm, not for publishing).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .grid import ALL, DATASETS, GRIDS, ROOT, SCALING, SCALING_PARAMS, Grid, cells

RESULTS = ROOT / "benchmarks" / "results"
COLUMNS = [
    "grid", "dataset", "algorithm", "epsilon", "delta", "seed", "status", "n", "columns",
    "seconds", "child_seconds", "peak_mb", "base_mb",
    "l1_3way", "l1_3way_max", "max_cell_error", "cell_error", "relative_error", "re_full",
    "epsilon_spent", "delta_spent", "warnings", "marginals_evaluated", "marginals_total",
    "scale_by", "scale", "params", "workload", "error",
]
THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_worker(spec: dict, on_row) -> None:
    """Run benchmarks.worker on ``spec`` in a fresh interpreter; ``on_row`` gets every result."""
    env = os.environ | THREAD_ENV
    with subprocess.Popen([sys.executable, "-m", "benchmarks.worker"], cwd=ROOT, env=env, text=True,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        proc.stdin.write(json.dumps(spec))
        proc.stdin.close()
        for line in proc.stdout:  # one JSON line per result, as they come
            on_row(json.loads(line))
    if proc.returncode != 0:
        _log(f"  worker for {spec['dataset']} exited with status {proc.returncode}")


def _n_columns(dataset) -> int:
    from dpsynth.config import load_config

    return len(load_config(dataset.config).domain)


def _progress(row: dict) -> None:
    if row["status"] == "baseline":
        _log(f"  {row['dataset']:9s} {row['algorithm']:10s} baseline          3-way L1 {row['l1_3way']:.3f}")
        return
    err = f"3-way L1 {row['l1_3way']:.3f}" if "l1_3way" in row else row.get("error", "")
    secs = f"{row['seconds']:7.2f} s" if "seconds" in row else " " * 9
    n = f" {row['scale_by']}={row['scale']}" if row.get("scale") else ""
    _log(f"  {row['dataset']:9s} {row['algorithm']:10s} eps={row['epsilon']:<5g} seed={row['seed']}{n} "
         f"{row['status']:7s} {secs} {row.get('peak_mb', 0):7.0f} MB  {err}")


def run_grid(grid: Grid, *, datasets=None, algorithms=None, epsilons=None, seeds=None, params=None,
             timeout=None) -> pd.DataFrame:
    """Every cell of ``grid`` (optionally restricted), one worker per dataset; the result rows."""
    if algorithms:
        grid = dataclasses.replace(grid, algorithms=tuple(a for a in grid.algorithms if a in algorithms))
    if epsilons:
        grid = dataclasses.replace(grid, epsilons={"*": tuple(epsilons)})
    if seeds:
        grid = dataclasses.replace(grid, seeds=tuple(seeds))
    if timeout:
        grid = dataclasses.replace(grid, timeout=timeout)
    rows: list[dict] = []
    for name in grid.datasets:
        if datasets and name not in datasets:
            continue
        ds = DATASETS[name]
        if not ds.available:
            _log(f"skipping {name}: {ds.data} not found")
            continue
        todo = [dataclasses.replace(c, params=_merge(c.params, _params_for(params or {}, c.algorithm)))
                for c in cells(grid, ds, _n_columns(ds))]
        _log(f"{name}: {len(todo)} releases")
        spec = {"dataset": name, "cells": [dataclasses.asdict(c) for c in todo], "timeout": grid.timeout}

        def keep(row, _rows=rows):
            _rows.append(row | {"grid": grid.name})
            _progress(row)

        run_worker(spec, keep)
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def _params_for(params: dict, algorithm: str) -> dict:
    """``--params``: either one mapping for every algorithm, or one per algorithm name."""
    if params and set(params) <= set(ALL):
        return params.get(algorithm, {})
    return params


def _merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merge(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


def run_scaling(name: str, *, seeds=None, sizes=None) -> pd.DataFrame:
    """Row or column scaling: each size in its own worker (the table is built once per size)."""
    sc = SCALING[name]
    ds = DATASETS[sc["dataset"]]
    rows: list[dict] = []
    for n in sizes or sc["sizes"]:
        grid = dataclasses.replace(GRIDS["quick"], name=name, algorithms=sc["algorithms"],
                                   epsilons={"*": (1.0,)}, seeds=tuple(seeds or sc["seeds"]),
                                   timeout=sc["timeout"])
        by_rows = sc["by"] == "rows"
        n_cols = _n_columns(ds) if by_rows else n
        todo = [dataclasses.replace(c, params=c.params | SCALING_PARAMS.get(c.algorithm, {}))
                for c in cells(grid, ds, n_cols)]
        _log(f"{ds.name} with {n} {sc['by']}: {len(todo)} releases")
        spec = {"dataset": ds.name, "rows": n if by_rows else sc["rows"], "columns": None if by_rows else n,
                "cells": [dataclasses.asdict(c) for c in todo], "timeout": sc["timeout"],
                "baselines": False, "score": False}

        def keep(row, _rows=rows, _n=n):
            row = row | {"grid": name, "scale_by": sc["by"], "scale": _n}
            _rows.append(row)
            _progress(row)

        run_worker(spec, keep)
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def summary(df: pd.DataFrame, epsilon: float = 1.0) -> pd.DataFrame:
    """Per dataset and algorithm at ``epsilon``: mean ± sd of the 3-way L1 over seeds, median time, max peak."""
    ok = df[(df["status"] == "ok") & np.isclose(df["epsilon"].astype(float), epsilon)]
    g = ok.groupby(["dataset", "algorithm"], sort=False)
    out = pd.DataFrame({
        "runs": g.size(),
        "l1_3way_mean": g["l1_3way"].mean(),
        "l1_3way_sd": g["l1_3way"].std(ddof=1),
        "max_cell_error": g["max_cell_error"].mean(),
        "relative_error": g["relative_error"].mean(),
        "seconds_median": g["seconds"].median(),
        "peak_mb_max": g["peak_mb"].max(),
    })
    base = df[df["status"] == "baseline"].set_index(["dataset", "algorithm"])
    base = pd.DataFrame({"runs": 0, "l1_3way_mean": base["l1_3way"], "max_cell_error": base["max_cell_error"],
                         "relative_error": base["relative_error"]})
    return pd.concat([out, base]).sort_index(level=0, sort_remaining=False)


def write(df: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False, float_format="%.6g")
    _log(f"wrote {path} ({len(df)} rows)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--grid", choices=sorted(GRIDS), default="quick")
    p.add_argument("--scaling", choices=sorted(SCALING), help="run a scaling curve instead of a grid")
    p.add_argument("--datasets", type=lambda s: s.split(","), help="comma-separated subset")
    p.add_argument("--algorithms", type=lambda s: s.split(","), help="comma-separated subset")
    p.add_argument("--epsilons", type=lambda s: [float(x) for x in s.split(",")], help="override ε values")
    p.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], help="override seeds")
    p.add_argument("--params", type=json.loads, help='JSON merged into every release\'s params, e.g. \'{"T": 170}\', or per algorithm: '
                   '\'{"dualquery": {"best_response": "local"}}\'')
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], help="override scaling sizes")
    p.add_argument("--timeout", type=float, help="seconds before a release is killed (default: the grid's)")
    p.add_argument("--out", type=Path, default=RESULTS, help="output directory (default benchmarks/results)")
    p.add_argument("--name", help="output file stem (default: the grid or scaling name)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--from-csv", type=Path, help="re-plot and summarise an existing results CSV (runs nothing)")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    if args.from_csv:
        df = pd.read_csv(args.from_csv).reindex(columns=COLUMNS)
        stem = args.name or args.from_csv.stem
        args.scaling = args.scaling or (df["scale"].notna().any() and stem)
    elif args.scaling:
        df = run_scaling(args.scaling, seeds=args.seeds, sizes=args.sizes)
        stem = args.name or args.scaling
    else:
        df = run_grid(GRIDS[args.grid], datasets=args.datasets, algorithms=args.algorithms,
                      epsilons=args.epsilons, seeds=args.seeds, params=args.params, timeout=args.timeout)
        stem = args.name or args.grid
    if not args.from_csv:
        write(df, args.out / f"{stem}.csv")
    if not args.no_plots and len(df):
        from . import plots

        for path in plots.make_plots(df, args.out, stem):
            _log(f"wrote {path}")
    if not args.scaling and len(df):
        with pd.option_context("display.width", 160, "display.max_rows", 200):
            print(summary(df).round(4).to_string())
    elif len(df):
        from .plots import fit_slopes

        print(fit_slopes(df).round(3).to_string())
    _log(f"total {time.perf_counter() - t0:.0f} s")
    bad = df[df["status"].isin(["error", "timeout", "infeasible"])]
    for _, r in bad.iterrows():
        _log(f"  {r['status']}: {r['dataset']} {r['algorithm']} eps={r['epsilon']:g} seed={int(r['seed'])}: {r['error']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

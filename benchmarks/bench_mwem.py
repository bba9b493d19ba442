"""MWEM benchmarks: Adult and NLTCS 3-way marginals, the paper's Figure 3, parameter sweeps.

Run (nice, it is CPU-bound)::

    nice python -m benchmarks.bench_mwem adult          # time, peak memory, avg 3-way L1 vs laplace
    nice python -m benchmarks.bench_mwem nltcs          # eps in {0.1, 0.5, 1, 2}: time and error
    nice python -m benchmarks.bench_mwem fig3 --runs 10 # RE(B||A) vs eps, optimized vs unoptimized
    nice python -m benchmarks.bench_mwem sweep --runs 3 # the measurements behind the defaults

Error metric (Adult, NLTCS): the average over all 3-way marginals of the L1
distance between the true marginal distribution and that of the synthetic rows
(:func:`dpsynth.nonprivate.metrics.l1_distance`; 0 = identical, 2 = disjoint).  Figure 3
uses RE(B‖A) (:func:`dpsynth.nonprivate.metrics.relative_entropy`) of the full table
against MWEM's output distribution (the model, not sampled rows, as in the paper).

Time and memory of a release are measured in a fresh child process (spawn):
wall time of ``dpsynth.release`` (encode, algorithm, decode; not CSV reading)
and the child's peak resident set size (``ru_maxrss``, which includes the
interpreter, numpy, pandas and the table).  These figures read the private
data and are NOT differentially private.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import multiprocessing as mp
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
TABLES = {"mildew": "mildew/mildew.csv", "rochdale": "rochdale/rochdale.csv", "czech": "czech_autoworkers/czech.csv"}


# ------------------------------------------------------------------------ helpers
def _config(name: str, algorithm: str, epsilon: float, params: dict, k: int = 3):
    """configs/<name>.yaml with algorithm, ε and an all-k-way workload replaced."""
    import yaml

    from dpsynth.config import parse_config

    raw = yaml.safe_load((ROOT / "configs" / f"{name}.yaml").read_text())
    raw["algorithm"] = {"name": algorithm, "params": params}
    raw["privacy"]["epsilon"] = epsilon
    raw["workload"] = {"marginals": {"k": k}}
    return parse_config(raw)


def _read(cfg, path: Path) -> pd.DataFrame:
    cats = {c.name: str for c in cfg.domain.columns if c.kind == "categorical"}
    return pd.read_csv(path, dtype=cats)


def avg_l1(domain, true_codes, syn_codes, marginals) -> float:
    """Mean over ``marginals`` of the L1 distance between true and synthetic marginal distributions."""
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.nonprivate.metrics import l1_distance

    t, s = ArrayCounts(true_codes, domain), ArrayCounts(syn_codes, domain)
    return float(np.mean([l1_distance(t.marginal(m), s.marginal(m)) for m in marginals]))


def _child(conn, name, csv, algorithm, epsilon, params, seed):
    import dpsynth
    from dpsynth.data.discretize import encode

    cfg = _config(name, algorithm, epsilon, params)
    table = _read(cfg, csv)
    t0 = time.perf_counter()
    res = dpsynth.release(table, cfg, rng=np.random.default_rng(seed))
    elapsed = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    true = encode(table, cfg.domain, unknown=cfg.unknown)
    syn = encode(res.synthetic, cfg.domain, unknown=cfg.unknown)
    err = avg_l1(cfg.domain, true, syn, cfg.marginals)
    conn.send((elapsed, peak_mb, err, res.report["privacy"]["epsilon_spent"]))
    conn.close()


def release_in_child(name, csv, algorithm, epsilon, params=None, seed=0):
    """(seconds, peak MB, avg 3-way L1, ε spent) of one release in a fresh process."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, name, csv, algorithm, epsilon, params or {}, seed))
    proc.start()
    out = parent.recv()
    proc.join()
    return out


# --------------------------------------------------------------------- benchmarks
def bench_adult(runs: int) -> None:
    csv = ROOT / "sample_data" / "adult.csv"
    print("Adult (sample_data/adult.csv, configs/adult.yaml schema), all 3-way marginals (455), eps = 1")
    print(f"{'algorithm':10} {'seed':>4} {'time s':>7} {'peak MB':>8} {'avg 3-way L1':>13}")
    for alg in ("mwem", "laplace"):
        errs = []
        for seed in range(runs):
            sec, mb, err, spent = release_in_child("adult", csv, alg, 1.0, seed=seed)
            errs.append(err)
            print(f"{alg:10} {seed:>4} {sec:7.1f} {mb:8.0f} {err:13.4f}   (eps spent {spent:.6g})", flush=True)
        print(f"{alg:10} mean avg 3-way L1 {np.mean(errs):.4f} ± {np.std(errs):.4f}")


def bench_nltcs(runs: int) -> None:
    csv = ROOT / "sample_data" / "nltcs.csv"
    print("NLTCS (16 binary columns), all 3-way marginals (560)")
    print(f"{'eps':>5} {'seed':>4} {'mwem s':>7} {'peak MB':>8} {'mwem L1':>8} {'laplace L1':>11}")
    for eps in (0.1, 0.5, 1.0, 2.0):
        for seed in range(runs):
            sec, mb, err, _ = release_in_child("nltcs", csv, "mwem", eps, seed=seed)
            _, _, lerr, _ = release_in_child("nltcs", csv, "laplace", eps, seed=seed)
            print(f"{eps:5.1f} {seed:>4} {sec:7.2f} {mb:8.0f} {err:8.4f} {lerr:11.4f}", flush=True)


def _small_ctx(codes, names, epsilon, k=3):
    from dpsynth.algorithms.base import AlgorithmContext
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.data.schema import CategoricalColumn, Domain
    from dpsynth.privacy import Neighbouring
    from dpsynth.privacy.accountant import Ledger

    domain = Domain(tuple(CategoricalColumn(n, (0, 1)) for n in names))
    counts = ArrayCounts(codes, domain)
    return AlgorithmContext(domain=domain, counts=counts, ledger=Ledger(epsilon), neighbouring=Neighbouring.ADD_REMOVE,
                            n=float(counts.n), rows=counts.n,
                            workload=tuple(itertools.combinations(range(len(names)), k)))


FIG3_VARIANTS = {
    # Figure 1 as printed: uniform A0, one MW step per round, average of the iterates.
    "unoptimized": {"init": "uniform", "mw_passes": 0, "output": "average"},
    # the §2.3.2 improvements (our defaults): noisy 1-way A0, MW passes, final iterate.
    "optimized": {},
    # ... plus a noise tolerance of one standard deviation (helps when n·eps is small).
    "optimized+tol1": {"tolerance": 1.0},
}


def bench_fig3(runs: int) -> None:
    from dpsynth.algorithms import mwem
    from dpsynth.nonprivate.metrics import relative_entropy

    print("Figure 3: RE(B||A) of MWEM's distribution vs the true table, all 3-way cuboids, T = 10,")
    print(f"mean ± sd over {runs} runs (seeds 0..{runs - 1})")
    epsilons = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
    for name, rel in TABLES.items():
        path = SHARED / rel
        if not path.exists():
            print(f"{name}: {path} not available, skipped")
            continue
        df = pd.read_csv(path)
        codes, names = df.to_numpy(dtype=np.int64), list(df.columns)
        shape = (2,) * len(names)
        true = np.bincount(np.ravel_multi_index(codes.T, shape), minlength=2 ** len(names)).reshape(shape)
        print(f"\n{name} (n = {len(df)}, {len(names)} binary columns)")
        print(f"{'eps':>5} " + " ".join(f"{v:>20}" for v in FIG3_VARIANTS))
        for eps in epsilons:
            cells = []
            for extra in FIG3_VARIANTS.values():
                params = mwem.parse_params({"iterations": 10, **extra})
                res = []
                for seed in range(runs):
                    fit = mwem.fit(_small_ctx(codes, names, eps), params, rng=np.random.default_rng(seed))
                    res.append(relative_entropy(true, fit.project(tuple(range(len(names))))))
                cells.append(f"{np.mean(res):9.4f} ± {np.std(res):7.4f}")
            print(f"{eps:5.1f} " + " ".join(f"{c:>20}" for c in cells), flush=True)


SWEEP = [
    ("paper Figure 1 (uniform, no passes, average)", {"init": "uniform", "mw_passes": 0, "output": "average"}),
    ("uniform A0, final, 20 passes", {"init": "uniform"}),
    ("defaults (noisy 0.2, T 20, 20 passes)", {}),
    ("T 10", {"iterations": 10}),
    ("T 30", {"iterations": 30}),
    ("5 passes", {"mw_passes": 5}),
    ("50 passes", {"mw_passes": 50}),
    ("init_fraction 0.1", {"init_fraction": 0.1}),
    ("init_fraction 0.3", {"init_fraction": 0.3}),
    ("select_fraction 0.3", {"select_fraction": 0.3}),
    ("bias_cells", {"bias_cells": True}),
    ("tolerance 0.5 sd", {"tolerance": 0.5}),
    ("tolerance 1 sd", {"tolerance": 1.0}),
    ("no clipping to [0, n]", {"clip": False}),
    ("cell queries", {"marginal_queries": "cells"}),
    ("max_factor_cells 1e5", {"max_factor_cells": 100_000}),
    ("max_factor_cells 1e7", {"max_factor_cells": 10_000_000}),
]


def bench_sweep(runs: int, which: str) -> None:
    """Avg 3-way L1 of synthetic rows for parameter variants (seeds 0..runs-1), in-process."""
    import dpsynth
    from dpsynth.data.discretize import encode

    for name in which.split(","):
        csv = ROOT / "sample_data" / f"{name}.csv"
        base = _config(name, "mwem", 1.0, {})
        table = _read(base, csv)
        true = encode(table, base.domain, unknown=base.unknown)
        print(f"\nsweep on {name}, all 3-way marginals, eps = 1, {runs} seeds")
        for label, params in SWEEP:
            cfg = dataclasses.replace(base, params=dataclasses.replace(base.params, **params))
            errs, secs = [], []
            for seed in range(runs):
                t0 = time.perf_counter()
                res = dpsynth.release(table, cfg, rng=np.random.default_rng(seed))
                secs.append(time.perf_counter() - t0)
                errs.append(avg_l1(base.domain, true, encode(res.synthetic, base.domain), base.marginals))
            print(f"{label:48} L1 {np.mean(errs):.4f} ± {np.std(errs):.4f}   {np.mean(secs):5.1f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["adult", "nltcs", "fig3", "sweep", "all"])
    ap.add_argument("--runs", type=int, default=None, help="seeds per setting")
    ap.add_argument("--data", default="adult,nltcs", help="sweep: comma-separated sample_data names")
    args = ap.parse_args()
    if args.what in ("adult", "all"):
        bench_adult(args.runs or 3)
    if args.what in ("nltcs", "all"):
        bench_nltcs(args.runs or 1)
    if args.what in ("fig3", "all"):
        bench_fig3(args.runs or 10)
    if args.what == "sweep":
        bench_sweep(args.runs or 3, args.data)


if __name__ == "__main__":
    main()

"""iReduct PickQueries for the MAXIMUM relative error (Xiao et al. 2011, §4.3) vs the default, on Adult.

    nice .venv/bin/python -m benchmarks.bench_ireduct_pick                  # 1-way 30 runs, 2-way 3 runs
    nice .venv/bin/python -m benchmarks.bench_ireduct_pick --runs1 5 --runs2 1 --epsilons 1
    nice .venv/bin/python -m benchmarks.bench_ireduct_pick --k 2 --runs2 10 --epsilons 1 --seeds 5000,17

For all 1-way and all 2-way marginals of Adult (/work/shared/data/adult/adult_train.csv, else
sample_data/adult.csv) and each ε, the mean over runs of the MAXIMUM relative error over every cell of
every marginal, max |y − q|/max(q, δ) with δ = 10⁻⁴·n (Equation 1), and of the overall error
(Definition 6), for iReduct with ``pick: average`` (the default, §5.3), iReduct with ``pick: max``,
TwoPhase (ε₁/ε = 0.07 for 1-way, 0.025 for 2-way, §6.2/§6.4), Dwork (equal Laplace noise) and Oracle
(NOT private: true counts set the scales).  Everything here reads the real data: nothing printed is private.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np

from benchmarks.bench_ireduct import context
from dpsynth.algorithms import ireduct
from dpsynth.algorithms.ireduct import twophase
from dpsynth.algorithms.laplace import measure_marginals
from dpsynth.config import load_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.discretize import encode
from dpsynth.data.io import read_table
from dpsynth.nonprivate import oracle
from dpsynth.nonprivate.metrics import max_relative_error, overall_relative_error

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path("/work/shared/data/adult/adult_train.csv")
METHODS = ("ireduct", "ireduct-max", "twophase", "dwork", "oracle")


def load():
    cfg = load_config(ROOT / "configs" / "adult.yaml")
    path = SHARED if SHARED.exists() else ROOT / "sample_data" / "adult.csv"
    table = read_table(str(path), string_columns=cfg.domain.text_columns)
    return cfg, ArrayCounts(encode(table, cfg.domain, unknown=cfg.unknown), cfg.domain), path


def run(method: str, cfg, counts, workload, eps: float, k: int, rng) -> list[np.ndarray]:
    ctx = context(cfg, counts, workload, eps)
    if method == "oracle":  # NOT private
        values, _ = oracle.oracle_marginals(counts.marginals(workload), sensitivity=1.0, epsilon=eps,
                                            sanity_bound=1e-4 * counts.n, rng=rng)
        return values
    if method == "dwork":
        out = measure_marginals(ctx, workload, eps, rng=rng, noise="continuous")
    elif method.startswith("ireduct"):
        params = ireduct.Params(pick="max" if method == "ireduct-max" else "average")
        out, _, _ = ireduct.measure(ctx, params, rng=rng)
    else:
        out, _, _ = twophase.measure(ctx, twophase.Params(epsilon1_fraction=0.07 if k == 1 else 0.025,
                                                          noise="continuous"), rng=rng)
    assert ctx.ledger.spent()[0] <= eps
    return [m.values for m in out]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs1", type=int, default=30)
    ap.add_argument("--runs2", type=int, default=3)
    ap.add_argument("--epsilons", default="0.1,1")
    ap.add_argument("--k", default="1,2")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--seeds", default="1000,11", help="run r uses seed A*r + B (A,B)")
    args = ap.parse_args()
    methods = args.methods.split(",")
    step, offset = (int(x) for x in args.seeds.split(","))
    cfg, counts, path = load()
    delta = 1e-4 * counts.n
    print(f"data: {path}, n = {counts.n}, delta = {delta:g}")
    for k in (int(x) for x in args.k.split(",")):
        workload = list(itertools.combinations(range(len(cfg.domain)), k))
        true = counts.marginals(workload)
        runs = args.runs1 if k == 1 else args.runs2
        print(f"\n## all {k}-way marginals ({len(workload)}), {runs} runs: mean MAX relative error "
              "[median] sd / mean overall error (Def. 6)")
        print(f"{'epsilon':>8} " + " ".join(f"{m:>39}" for m in methods))
        for eps in (float(e) for e in args.epsilons.split(",")):
            cells = []
            for method in methods:
                mx, ov = [], []
                for r in range(runs):
                    noisy = run(method, cfg, counts, workload, eps, k, np.random.default_rng(step * r + offset))
                    mx.append(max_relative_error(noisy, true, delta))
                    ov.append(overall_relative_error(noisy, true, delta))
                cells.append(f"{np.mean(mx):9.4g} [{np.median(mx):8.4g}] sd {np.std(mx):7.3g} / {np.mean(ov):7.4g}")
            print(f"{eps:>8g} " + " ".join(f"{c:>39}" for c in cells), flush=True)


if __name__ == "__main__":
    main()

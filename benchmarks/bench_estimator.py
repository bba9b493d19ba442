"""Issue 14 measurements: the noise-aware estimator under the marginal releasers.

    nice python -m benchmarks.bench_estimator ireduct  --datasets adult --seeds 0,1,2,3,4
    nice python -m benchmarks.bench_estimator releases --datasets adult,nltcs --epsilons 0.3,1,3 --algorithms mwem,auto

``ireduct``: for 1-way and 2-way workloads at ε ∈ {0.1, 1}, the overall relative
error (iReduct Definition 6, δ = 10⁻⁴·n) of the released marginals and of the
synthetic rows' marginals (rescaled to n) of ``laplace`` and ``ireduct``, and the
rows of the 1-way release (independence) for reference.
``releases``: time and average L1 of the rows' 1-, 2- and 3-way marginals (all, or
a fixed sample of 500 3-way) for each algorithm with its defaults (3-way workload).
Everything reads the real data: nothing printed is private.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time

import numpy as np

from benchmarks.worker import load_dataset

__all__ = ["main"]


def _setup(name: str):
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.data.discretize import encode

    raw, table, cfg = load_dataset(name)
    codes = encode(table, cfg.domain)
    codes = codes[0] if isinstance(codes, tuple) else codes
    return raw, table, cfg, ArrayCounts(codes, cfg.domain)


def _release(raw, table, algorithm, eps, k, seed, params=None, delta=0.0):
    import dpsynth
    from dpsynth.config import parse_config

    raw = json.loads(json.dumps(raw))
    raw["algorithm"] = {"name": algorithm, "params": params or {}}
    raw["privacy"]["epsilon"], raw["privacy"]["delta"] = eps, delta
    raw["workload"] = {"marginals": {"k": k}}
    raw["seed"] = None
    t = time.perf_counter()
    res = dpsynth.release(table, parse_config(raw), rng=np.random.default_rng(seed))
    rows = res.model.model.sample(res.rows, rng=np.random.default_rng(seed + 1000))
    return res, rows, time.perf_counter() - t


def _hist(codes, sizes, attrs):
    shape = [sizes[a] for a in attrs]
    idx = np.ravel_multi_index(tuple(codes[:, list(attrs)].T.astype(np.int64)), shape)
    return np.bincount(idx, minlength=int(np.prod(shape))).reshape(shape).astype(float)


def ireduct_rows(names, seeds, sampling="iid"):
    from dpsynth.nonprivate.metrics import overall_relative_error

    for name in names:
        raw, table, cfg, counts = _setup(name)
        n, sizes = counts.n, cfg.domain.sizes
        delta = 1e-4 * n
        for k in (1, 2):
            sets = list(itertools.combinations(range(len(sizes)), k))
            true = [counts.marginal(s).astype(float) for s in sets]
            for eps in (0.1, 1.0):
                for alg in ("laplace", "ireduct"):
                    rel, rows_err = [], []
                    for seed in seeds:
                        res, rows, _ = _release(raw, table, alg, eps, k, seed, {"sampling": sampling})
                        released = [np.asarray(m.values, dtype=float) for m in res.model.measurements]
                        rel.append(overall_relative_error(released, true, delta))
                        synth = [_hist(rows, sizes, s) * n / len(rows) for s in sets]
                        rows_err.append(overall_relative_error(synth, true, delta))
                    print(f"{name} k={k} eps={eps:g} {alg:8s} sampling={sampling} released {np.mean(rel):.4f}  rows {np.mean(rows_err):.4f}"
                          f"  (sd {np.std(rows_err):.4f}, {len(seeds)} seeds)", flush=True)


def releases(names, epsilons, algorithms, seeds, params, delta, k=3):
    for name in names:
        raw, table, cfg, counts = _setup(name)
        n, sizes, d = counts.n, cfg.domain.sizes, len(cfg.domain.sizes)
        tri = list(itertools.combinations(range(d), 3))
        if len(tri) > 500:
            pick = np.random.default_rng(0).choice(len(tri), 500, replace=False)
            tri = [tri[i] for i in sorted(pick)]
        ways = {1: [(a,) for a in range(d)], 2: list(itertools.combinations(range(d), 2)), 3: tri}
        true = {k: [counts.marginal(s) / n for s in v] for k, v in ways.items()}
        for eps in epsilons:
            for alg in algorithms:
                for seed in seeds:
                    _, rows, secs = _release(raw, table, alg, eps, k, seed, params.get(alg), delta)
                    err = {k: float(np.mean([np.abs(_hist(rows, sizes, s) / len(rows) - t).sum()
                                              for s, t in zip(ways[k], true[k])])) for k in ways}
                    print(f"{name} n={n} eps={eps:g} delta={delta:g} {alg:8s} k={k} seed={seed} {secs:6.1f} s  "
                          f"L1 1-way {err[1]:.4f} 2-way {err[2]:.4f} 3-way {err[3]:.4f}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["ireduct", "releases"])
    ap.add_argument("--datasets", default="adult")
    ap.add_argument("--epsilons", default="0.3,1,3")
    ap.add_argument("--algorithms", default="mwem")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--params", default="{}", help="JSON: algorithm -> params")
    ap.add_argument("--delta", type=float, default=0.0)
    ap.add_argument("--k", type=int, default=3, help="workload: all k-way marginals (releases)")
    ap.add_argument("--sampling", default="iid", help="ireduct: sampling of the rows (iid or systematic)")
    a = ap.parse_args(argv)
    names, seeds = a.datasets.split(","), [int(s) for s in a.seeds.split(",")]
    if a.what == "ireduct":
        ireduct_rows(names, seeds, a.sampling)
    else:
        releases(names, [float(e) for e in a.epsilons.split(",")], a.algorithms.split(","), seeds,
                 json.loads(a.params), a.delta, a.k)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

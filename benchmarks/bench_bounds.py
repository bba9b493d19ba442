"""Coverage and tightness of the report's error bounds (issue 28 §3; dpsynth/algorithms/bounds.py).

    nice .venv/bin/python -m benchmarks.bench_bounds --datasets nltcs,adult,czech --eps 0.3,1 --seeds 0,1,2,3,4 \\
        --algs auto,auto-pure,mwem,aim --out benchmarks/results/bounds.csv

For every release (table × ε × seed × algorithm; workload: all 2-way marginals of the table's first
``--columns`` columns, n public) and every workload marginal with a bound in the report, the true L1 error
‖M_s(D)/n − p̂_s‖₁ of the released model's marginal is computed here (NOT PRIVATE: it reads the table) and
compared with the bound.  Coverage = the fraction of (marginal, release) pairs whose true error is at most
the bound (nominal level 95 %); tightness = the median of bound / true error.  ``auto-pure`` is ``auto``
with δ = 0 (Laplace noise, pure ε); the others run with δ = 10⁻⁶ (Gaussian noise, zCDP).  One CSV row per
(release, marginal); a summary per (dataset, algorithm, ε) and overall is printed.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

from benchmarks.peers.scoring import load_table

FIELDS = ["dataset", "alg", "chosen", "eps", "delta", "seed", "marginal", "measured", "bound", "true_l1"]


def _true_marginal(codes: np.ndarray, sizes, attrs) -> np.ndarray:
    shape = [sizes[a] for a in attrs]
    flat = np.ravel_multi_index(tuple(codes[:, a].astype(np.int64) for a in attrs), shape)
    return np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape).astype(float)


def _config(table, columns: int, alg: str, eps: float, delta: float):
    from dpsynth.config import parse_config

    raw = dict(table.raw)
    names = list(table.config.domain.names)[:columns]
    cols = raw["schema"]["columns"]
    raw["schema"] = {**raw["schema"], "columns": {k: cols[k] for k in names}}
    raw["privacy"] = {"epsilon": eps, "delta": delta, "neighbouring": "add-remove", "n": "public"}
    raw["algorithm"] = {"name": alg}
    raw["workload"] = {"marginals": {"k": 2}}
    raw.pop("output", None)
    return parse_config(raw), [table.config.domain.index(k) for k in names]


def run_one(table, columns: int, alg: str, eps: float, seed: int) -> list[dict]:
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.pipeline import release_from_counts

    name, delta = ("auto", 0.0) if alg == "auto-pure" else (alg, 1e-6)
    cfg, keep = _config(table, columns, name, eps, delta)
    codes = np.ascontiguousarray(table.codes[:, keep])
    res = release_from_counts(ArrayCounts(codes, cfg.domain), cfg, rng=np.random.default_rng(seed), seeded=True)
    section = res.report["error_bounds"]
    details = res.report["algorithm"]["details"]
    chosen = details.get("auto", {}).get("chosen", name)
    model, sizes, n = res.model.model, cfg.domain.sizes, codes.shape[0]
    rows = []
    for m in section.get("marginals", []):  # loop over workload marginals
        if m["bound"] is None:
            continue
        attrs = tuple(cfg.domain.index(c) for c in m["marginal"])
        p_hat = np.asarray(model.project(attrs), dtype=float)
        true = float(np.abs(_true_marginal(codes, sizes, attrs) / n - p_hat / p_hat.sum()).sum())
        rows.append({"dataset": table.name, "alg": alg, "chosen": chosen, "eps": eps, "delta": delta, "seed": seed,
                     "marginal": "|".join(m["marginal"]), "measured": m["measured"], "bound": m["bound"],
                     "true_l1": true})
    return rows


def summary(rows: list[dict]) -> dict:
    b = np.array([r["bound"] for r in rows], dtype=float)
    t = np.array([r["true_l1"] for r in rows], dtype=float)
    if not b.size:
        return {"pairs": 0}
    return {"pairs": int(b.size), "coverage": float(np.mean(t <= b)),
            "median_ratio": float(np.median(b / np.maximum(t, 1e-12))),
            "median_bound": float(np.median(b)), "median_true": float(np.median(t))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_bounds", description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="nltcs,adult,czech")
    p.add_argument("--eps", default="0.3,1")
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--algs", default="auto,auto-pure,mwem,aim")
    p.add_argument("--columns", type=int, default=8, help="use the table's first COLUMNS columns (run time)")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/bounds.csv"))
    a = p.parse_args(argv)
    all_rows: list[dict] = []
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with a.out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for name in a.datasets.split(","):
            table = load_table(name)
            for eps in [float(x) for x in a.eps.split(",")]:
                for alg in a.algs.split(","):
                    cell: list[dict] = []
                    start = time.perf_counter()
                    for seed in [int(x) for x in a.seeds.split(",")]:
                        rows = run_one(table, a.columns, alg, eps, seed)
                        w.writerows(rows)
                        f.flush()
                        cell += rows
                    chosen = sorted({r["chosen"] for r in cell})
                    print({"dataset": name, "alg": alg, "chosen": chosen, "eps": eps,
                           **summary(cell), "seconds": round(time.perf_counter() - start, 1)}, flush=True)
                    all_rows += cell
    print({"overall": summary(all_rows)})
    for alg in a.algs.split(","):
        print({"alg": alg, **summary([r for r in all_rows if r["alg"] == alg])})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


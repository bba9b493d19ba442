"""Evaluate benchmark: runtime of ``dpsynth.nonprivate.evaluate`` on all 3-way marginals of Adult, and the demo figures.

Run (nice, it is CPU-bound)::

    nice python -m benchmarks.bench_evaluate            # sample_data/adult.csv (32,561 rows)
    nice python -m benchmarks.bench_evaluate --full     # UCI train + test (48,842 rows), from ../shared/data

Steps: a ``laplace`` release of the table with configs/adult.yaml at ε = 1
(seed 0), then ``evaluate`` with k = 1, 2, 3 (all 15 + 105 + 455 marginals,
1000 range queries, Naive Bayes on ``income``).  Printed: the average L1 per k
for the synthetic rows and the baselines, and the wall time of ``evaluate``
(encode both tables + all metrics; CSV reading excluded), best of ``--repeat``.
These numbers read the real data and are NOT differentially private.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpsynth.config import load_config
from dpsynth.data.io import read_table
from dpsynth.nonprivate.evaluate import METHODS, EvalOptions, evaluate
from dpsynth.pipeline import release

ROOT = Path(__file__).resolve().parent.parent


def _table(full: bool, string_cols: list[str]) -> pd.DataFrame:
    if not full:
        return read_table(ROOT / "sample_data" / "adult.csv", string_columns=string_cols)
    shared = ROOT.parent / "shared" / "data" / "adult"
    parts = [read_table(shared / name, string_columns=string_cols) for name in ("adult_train.csv", "adult_test.csv")]
    return pd.concat(parts, ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="UCI train + test (48,842 rows) instead of sample_data")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cfg = load_config(ROOT / "configs" / "adult.yaml")
    string_cols = cfg.domain.text_columns
    real = _table(args.full, string_cols)
    synth = release(real, cfg, rng=np.random.default_rng(0)).synthetic
    options = EvalOptions(ks=(1, 2, 3), target="income")
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        result = evaluate(real, synth, cfg, rng=np.random.default_rng(0), options=options)
        times.append(time.perf_counter() - t0)
    print(f"rows {len(real)}, laplace eps=1 seed 0, evaluate k=1,2,3 (NOT PRIVATE figures)")
    print(f"{'k':>2} {'marginals':>9} " + " ".join(f"{m + ' L1':>15}" for m in METHODS))
    for block in result["marginals"]:
        print(f"{block['k']:>2} {block['marginals_evaluated']:>9} "
              + " ".join(f"{block['metrics'][m]['l1_mean']:>15.4f}" for m in METHODS))
    clf = result["classifier"]
    print(f"Naive Bayes on income: synthetic {clf['synthetic']:.4f}, real 10-fold CV {clf['real_cross_validated']:.4f}, "
          f"majority {clf['majority_class_rate']:.4f}")
    print(f"evaluate wall time (s): best {min(times):.2f}, runs {', '.join(f'{t:.2f}' for t in times)}")
    t0 = time.perf_counter()
    evaluate(real, synth, cfg, rng=np.random.default_rng(0), options=EvalOptions(ks=(3,), ranges=0))
    print(f"k=3 only (455 marginals, no ranges, no classifier): {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()

"""DualQuery paper (Gaboardi et al. 2014) Figure 5: DualQuery vs MWEM on Adult with 17 attributes.

    nice python -m benchmarks.papers.dualquery_fig5 [--runs 10] [--quick]

The paper (§7, "Comparison with MWEM"): "the Adult dataset with a selection of 17 attributes",
10,000 3-way marginal queries, (ε, 0)-DP for ε = 1 … 5; DualQuery with η = 0.4 and
(s, T) = (35, 47), (40, 62), (45, 71), (50, 78), (55, 83); MWEM with T = 15; average and maximum
error.  Its claim: "the accuracy performance of MWEM is better than DualQuery on this
low-dimensional dataset".

Which 17 attributes.  The text does not say.  The authors' code (github.com/ejgallego/dualquery,
src/adult.ml, ``parsing_schema_reduced``, the schema its MWEM runner src/runmw.ml uses) reads
Adult without its rows with missing values (30,162 rows: the paper's Figure 1 size, and the n for
which the (s, T) above cost ε = 1 … 5 under pure composition) and keeps three columns, binarised
into 11 + 3 + 3 = 17 binary attributes: age in 11 equal-width buckets of [0, 100], workclass
(UCI order) in 3 buckets of its codes 0–7, fnlwgt in 3 equal-width buckets of [0, 1,600,000].
We rebuild that table from /work/shared/data/adult/adult_train.csv with the same public bucket
rules (nothing here is learned from the data).

Which 10,000 queries.  With 3 columns there are only 11·3·3 = 99 distinct "sensible" 3-way
conjunctions (one value per column, §7), so 10,000 queries must repeat; uniform draws with
replacement contain every one of the 99 (probability 1 − 99·(98/99)^10000 ≈ 1) and their average
error is the 99-query average up to the draw.  We therefore release and score all 99 cells
(``workload.conjunctions: {k: 3}``), average and maximum |q(D) − q(D̂)| over them.

Methods: ``dualquery`` (the paper's η, s, T, ``accounting: pure``, local-search best response:
with 99 possible rows it finds the exact best response); ``mwem`` (``variant: paper``, every
conjunction a candidate query: ``marginal_queries: cells``, T = 15, our §2.3.2 defaults);
``mwem-fig1`` (the same with Figure 1 as printed: uniform start, no extra MW passes, average of
the iterates, close to the authors' runner); ``uniform`` (MWEM's starting point, no privacy
cost: the paper's "uniform data set" baseline).  DualQuery is scored on its T records (the
uniform distribution over its best responses), MWEM on its model distribution.

Privacy: the paper's (s, T) at ε = 1 and 2 cost slightly more than the nominal ε under pure
composition with n = 30,162 (ηT(T−1)s/n = 1.0035 and 2.0062); both methods run at
max(nominal ε, that cost rounded up to 4 decimals): 1.0036 and 2.0063, printed in the table.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from benchmarks.papers.common import SHARED, Clock, figure, parser, save, write_png
from dpsynth.algorithms import mwem
from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.algorithms.dualquery.accounting import all_accountings, round_charges
from dpsynth.config import parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.pipeline import release_from_counts
from dpsynth.privacy import Neighbouring
from dpsynth.privacy.accountant import Ledger
from dpsynth.workload.conjunctions import conjunction_counts

ADULT = SHARED / "adult" / "adult_train.csv"
ETA = 0.4
SETTINGS = {1: (35, 47), 2: (40, 62), 3: (45, 71), 4: (50, 78), 5: (55, 83)}  # ε: (s, T), the paper's §7
MWEM_T = 15
METHODS = ("dualquery", "mwem", "mwem-fig1", "uniform")
STYLE = {"dualquery": ("#d62728", "o-"), "mwem": ("#1f77b4", "s-"), "mwem-fig1": ("#2ca02c", "^-"),
         "uniform": ("#7f7f7f", ":")}
# The authors' bucket rules (src/adult.ml, parsing_schema_reduced): equal-width buckets of a public range.
WORKCLASS = ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
             "Without-pay", "Never-worked"]  # UCI order = the authors' codes 0-7
BUCKETS = {"age": (0, 100, 11), "workclass": (0, 7, 3), "fnlwgt": (0, 1_600_000, 3)}


def _bucket(values: np.ndarray, lo: float, hi: float, num: int) -> np.ndarray:
    """Equal-width bucket of [lo, hi] into ``num`` codes (the top value goes into the last one)."""
    step = (hi - lo) / num
    return np.minimum(((values - lo) / step).astype(np.int64), num - 1)


def _labels(name: str) -> list[str]:
    lo, hi, num = BUCKETS[name]
    step = (hi - lo) / num
    return [f"[{lo + i * step:.6g}, {lo + (i + 1) * step:.6g})" for i in range(num)]


def _raw(epsilon: float, params: dict, algorithm: str, rows: int | None) -> dict:
    return {
        "schema": {"columns": {c: {"type": "categorical", "categories": _labels(c)} for c in BUCKETS},
                   "unknown": "error"},
        "privacy": {"epsilon": epsilon, "delta": 0.0, "neighboring": "add-remove", "n": "public"},
        "algorithm": {"name": algorithm, "params": params},
        "workload": {"conjunctions": {"k": 3}},
        "output": {"rows": rows if rows is not None else "n"},
    }


def load():
    """The 17-binary-attribute Adult of the authors' code: codes (n × 3) and the parsed base config."""
    table = pd.read_csv(ADULT).dropna()
    wc = table["workclass"].map({v: i for i, v in enumerate(WORKCLASS)}).to_numpy()
    codes = np.stack([_bucket(table["age"].to_numpy(), *BUCKETS["age"]), _bucket(wc, *BUCKETS["workclass"]),
                      _bucket(table["fnlwgt"].to_numpy(), *BUCKETS["fnlwgt"])], axis=1)
    return codes, parse_config(_raw(1.0, {"eta": ETA}, "dualquery", None))


def pure_cost(s: int, T: int, n: float) -> float:
    """ε of the paper's (η, s, T) under pure composition (Theorem 4.2), from the accountant."""
    return all_accountings(round_charges(T=T, s=s, eta=ETA, n=n), 0.0)["pure"]


def _dualquery(counts, epsilon: float, s: int, T: int, seed: int) -> np.ndarray:
    params = {"eta": ETA, "s": s, "T": T, "accounting": "pure", "best_response": "local"}
    cfg = parse_config(_raw(epsilon, params, "dualquery", T))
    res = release_from_counts(counts, cfg, rng=np.random.default_rng(seed))
    return np.asarray(res.codes)  # the T best responses, each once (rows = T)


def _mwem(counts, workload, epsilon: float, seed: int, fig1: bool) -> np.ndarray:
    ctx = AlgorithmContext(domain=counts.domain, counts=counts, ledger=Ledger(epsilon),
                           neighbouring=Neighbouring.ADD_REMOVE, n=float(counts.n), rows=counts.n,
                           workload=tuple(workload))
    extra = {"init": "uniform", "mw_passes": 0, "output": "average"} if fig1 else {}
    params = mwem.parse_params({"variant": "paper", "marginal_queries": "cells", "iterations": MWEM_T,
                                "noise": "continuous", **extra})
    return mwem.fit(ctx, params, rng=np.random.default_rng(seed)).project(tuple(range(len(counts.domain))))


def run(epsilons, runs: int, quick: bool) -> pd.DataFrame:
    codes, base = load()
    counts = ArrayCounts(codes, base.domain)
    n = counts.n
    queries = base.workload.conjunctions
    true = conjunction_counts(counts, queries) / n
    # each conjunction fixes all 3 columns: it is one cell of the full table (values in column order)
    cells = tuple(np.take_along_axis(queries.values, np.argsort(queries.attrs, axis=1), axis=1).T)
    print(f"Adult without missing values: n = {n}; age/workclass/fnlwgt in {base.domain.sizes} buckets = "
          f"{sum(base.domain.sizes)} binary attributes; {len(queries)} distinct 3-way conjunctions; "
          f"{runs} run(s) per point")
    print(f"{'eps':>4} {'eps run':>8} {'s':>4} {'T':>4} " + " ".join(f"{m + ' avg':>15} {m + ' max':>15}" for m in METHODS))
    rows = []
    for eps in epsilons:
        s, T = SETTINGS[eps]
        if quick:
            s, T = 10, 8
        eps_run = max(float(eps), math.ceil(pure_cost(s, T, float(n)) * 1e4) / 1e4)  # rounded up: the ledger's check
        line = {}
        for method in METHODS:
            errs = []
            for seed in range(runs if method != "uniform" else 1):
                if method == "dualquery":
                    synth = _dualquery(counts, eps_run, s, T, seed)
                    answers = queries.answers(synth)
                elif method == "uniform":
                    answers = np.full(len(queries), 1.0 / np.prod(base.domain.sizes))
                else:
                    dist = _mwem(counts, [(0, 1, 2)], eps_run, seed, method == "mwem-fig1")
                    answers = dist[cells] / dist.sum()
                err = np.abs(answers - true)
                errs.append((float(err.mean()), float(err.max())))
                rows.append({"epsilon": eps, "epsilon_run": eps_run, "s": s, "T": T, "method": method, "seed": seed,
                             "avg_error": err.mean(), "max_error": err.max()})
            line[method] = np.mean(errs, axis=0)
        print(f"{eps:4d} {eps_run:8.4f} {s:4d} {T:4d} " + " ".join(f"{line[m][0]:15.4f} {line[m][1]:15.4f}"
                                                                 for m in METHODS), flush=True)
    return pd.DataFrame(rows)


def plot(df: pd.DataFrame, out) -> None:
    fig, axes = figure(2)
    for ax, col, title in zip(axes, ("avg_error", "max_error"), ("average error", "maximum error")):
        for method in METHODS:
            g = df[df["method"] == method].groupby("epsilon")[col]
            color, style = STYLE[method]
            ax.plot(g.mean().index, g.mean().values, style, color=color, label=method)
            if method != "uniform":
                ax.fill_between(g.mean().index, g.mean() - g.std(ddof=0), g.mean() + g.std(ddof=0), color=color,
                                alpha=0.15)
        ax.set_xlabel("epsilon (delta = 0)")
        ax.set_ylabel(title)
        ax.set_title(f"Adult, 17 binary attributes, 99 3-way conjunctions: {title}", fontsize=8)
        ax.legend(fontsize=7)
    print("wrote", write_png(fig, out, "dualquery_fig5"))


def main(argv=None) -> None:
    args = parser(__doc__).parse_args(argv)
    if args.replot:
        plot(pd.read_csv(args.out / "dualquery_fig5.csv"), args.out)
        return
    if not ADULT.exists():
        print(f"{ADULT}: not available, skipped")
        return
    clock = Clock()
    runs = args.runs or (1 if args.quick else 5)
    df = run((1,) if args.quick else tuple(SETTINGS), runs, args.quick)
    print("wrote", save(df, args.out, "dualquery_fig5"))
    plot(df, args.out)
    print(f"dualquery_fig5: {clock}")


if __name__ == "__main__":
    main()

"""iReduct paper (Xiao, Bender, Hay & Gehrke 2011) Figure 5: TwoPhase's overall error vs ε₁/ε.

    nice python -m benchmarks.papers.ireduct_fig5 [--runs 10] [--quick]

The paper (§6.2): ε = 0.01 on census tables of 10–14 million rows and 9 attributes, all 1-way
marginals, sanity bound δ = 10⁻⁴·|T|, 10 runs per point; the overall error (Definition 6) of
TwoPhase's noisy marginals "decreases until it reaches a minimum and then increases monotonically",
with a sweet spot at ε₁ ∈ [0.06ε, 0.08ε] (they use 0.07); for 2-way marginals (§6.4) "an experiment
similar" gave 0.025.  The census tables are not available here, so we use Adult (sample_data/adult.csv,
32,561 rows, the 15 columns of configs/adult.yaml).  What matters for the calibration is the signal
to noise ratio n·ε: the paper's 10⁷ × 0.01 = 10⁵ corresponds to ε ≈ 3 on Adult; we also run ε = 0.1
and 1.  Reference line: equal noise on every marginal ("Dwork", ``algorithm: laplace`` with
continuous noise), the same metric.  The errors are of the released noisy marginals (not of rows).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from benchmarks.papers.common import Clock, adult_counts, counts_ctx, figure, parser, save, write_png
from dpsynth.algorithms import laplace
from dpsynth.algorithms.ireduct import twophase
from dpsynth.nonprivate.metrics import overall_relative_error

FRACTIONS = (0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7)
EPSILONS = (0.1, 1.0, 3.0)
PAPER_BEST = {1: "0.06-0.08 (uses 0.07)", 2: "0.025"}


def _error(marginals, truth, delta: float) -> float:
    return overall_relative_error([m.values for m in marginals], truth, delta)


def run(counts, ks, epsilons, fractions, runs: int) -> pd.DataFrame:
    d, n = len(counts.domain), counts.n
    delta = 1e-4 * n
    rows = []
    for k in ks:
        workload = list(itertools.combinations(range(d), k))
        truth = [counts.marginal(m) for m in workload]
        for eps in epsilons:
            dwork = [_error(laplace.measure_marginals(counts_ctx(counts, workload, eps), workload, eps, noise="continuous",
                                                      rng=np.random.default_rng(s)), truth, delta) for s in range(runs)]
            rows += [{"k": k, "epsilon": eps, "method": "dwork", "fraction": np.nan, "seed": s, "error": e}
                     for s, e in enumerate(dwork)]
            line = []
            for f in fractions:
                params = twophase.Params(epsilon1_fraction=f, sanity_bound=delta)
                errs = []
                for s in range(runs):
                    marginals, _, _ = twophase.measure(counts_ctx(counts, workload, eps), params, rng=np.random.default_rng(s))
                    errs.append(_error(marginals, truth, delta))
                rows += [{"k": k, "epsilon": eps, "method": "twophase", "fraction": f, "seed": s, "error": e}
                         for s, e in enumerate(errs)]
                line.append(float(np.mean(errs)))
            best = fractions[int(np.argmin(line))]
            print(f"k = {k} ({len(workload)} marginals), eps = {eps:g} (n·eps = {n * eps:.3g}): TwoPhase overall error "
                  f"by eps1/eps {', '.join(f'{f:g}: {e:.4g}' for f, e in zip(fractions, line))}; best {best} "
                  f"(paper: {PAPER_BEST[k]}); "
                  f"Dwork {np.mean(dwork):.4f}", flush=True)
    return pd.DataFrame(rows)


def plot(df: pd.DataFrame, out) -> None:
    ks = sorted(df["k"].unique())
    fig, axes = figure(len(ks))
    for ax, k in zip(axes, ks):
        for i, eps in enumerate(sorted(df["epsilon"].unique())):
            color = f"C{i}"
            sub = df[(df["k"] == k) & (df["epsilon"] == eps)]
            two = sub[sub["method"] == "twophase"].groupby("fraction")["error"].mean()
            ax.plot(two.index, two.values, "o-", color=color, label=f"TwoPhase, eps {eps:g}")
            ax.axhline(sub.loc[sub["method"] == "dwork", "error"].mean(), color=color, ls=":", lw=1)
        ax.axvspan(0.06, 0.08, color="#cccccc", alpha=0.5) if k == 1 else ax.axvline(0.025, color="#999999")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("eps1 / eps  (grey: the paper's best)")
        ax.set_ylabel("overall relative error (Def. 6)")
        ax.set_title(f"Adult, all {k}-way marginals (dotted: Dwork)")
        ax.legend(fontsize=7)
    print("wrote", write_png(fig, out, "ireduct_fig5"))


def main(argv=None) -> None:
    ap = parser(__doc__)
    args = ap.parse_args(argv)
    if args.replot:
        plot(pd.read_csv(args.out / "ireduct_fig5.csv"), args.out)
        return
    clock = Clock()
    runs = args.runs or (2 if args.quick else 10)
    counts = adult_counts()
    if args.quick:
        df = run(counts, (1,), (1.0,), (0.05, 0.3), runs)
    else:
        df = run(counts, (1, 2), EPSILONS, FRACTIONS, runs)
    print("wrote", save(df, args.out, "ireduct_fig5"))
    plot(df, args.out)
    print(f"ireduct_fig5: {clock}")


if __name__ == "__main__":
    main()

"""iReduct paper (Xiao, Bender, Hay & Gehrke 2011) Figures 7 and 9: overall error vs the sanity bound δ.

    nice python -m benchmarks.papers.ireduct_fig7_9 [--runs 10] [--quick]

The paper (§6.3, §6.4): the overall error (Definition 6) of the noisy marginals of five methods as
a function of the sanity bound δ, all 1-way marginals at ε = 0.01 (Figure 7) and all 2-way
marginals at ε = 0.1 (Figure 9), 10 runs per point, census tables of 10 and 14 million rows and 9
attributes.  Methods: iReduct (λ_max = |T|/10, λ_Δ = |T|/10⁶), TwoPhase (ε₁ = 0.07ε for 1-way,
0.025ε for 2-way), iResamp, Dwork (equal noise on every marginal) and Oracle (noise scales from
the true counts: not private, a lower bound for the class).  Its claims: the ordering of Figures 6
and 8 holds at every δ (iReduct ≈ Oracle < TwoPhase < iResamp ≈ Dwork for 1-way; for 2-way the
gaps are smaller and TwoPhase beats iResamp and Dwork), and every method's error falls as δ grows.

The census tables are not available; we use Adult (sample_data/adult.csv, 32,561 rows, the 15
columns of configs/adult.yaml: 15 one-way and 105 two-way marginals), as ireduct_fig5.py does.
Adult has 300–400 times fewer rows, so at the paper's ε the signal n·ε is that much smaller
(1-way: 326 against the paper's ≈ 10⁵); we also run ε = 3, where n·ε ≈ 10⁵ as in Figure 7.
Each method is given δ (it shapes the noise allocation of all but Dwork) and is scored with the
same δ; δ = c·n for c from 10⁻⁵ to 10⁻², around the paper's default 10⁻⁴·n (on Adult 10⁻⁵·n is
0.33 rows: a zero cell then counts its absolute error three times).  All noise is continuous
Laplace, as in the paper.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from benchmarks.papers.common import Clock, adult_counts, counts_ctx, figure, parser, save, write_png
from dpsynth.algorithms import ireduct, laplace
from dpsynth.algorithms.ireduct import iresamp, twophase
from dpsynth.nonprivate.metrics import overall_relative_error
from dpsynth.nonprivate.oracle import oracle_marginals

FRACTIONS = (1e-5, 1e-4, 1e-3, 1e-2)  # δ / n
PANELS = ((1, 0.01), (1, 3.0), (2, 0.1), (2, 3.0))  # (k, ε): the paper's ε, then n·ε ≈ 10⁵
EPSILON1 = {1: 0.07, 2: 0.025}  # TwoPhase's ε₁/ε, §6.2 and §6.4
METHODS = ("ireduct", "oracle", "twophase", "iresamp", "dwork")
LABEL = {"ireduct": "iReduct", "oracle": "Oracle (not private)", "twophase": "TwoPhase", "iresamp": "iResamp",
         "dwork": "Dwork"}
STYLE = {"ireduct": ("C0", "o-"), "oracle": ("k", "--"), "twophase": ("C1", "s-"), "iresamp": ("C2", "^-"),
         "dwork": ("C3", "v-")}
FIGURE = {1: "Fig. 7", 2: "Fig. 9"}


def _noisy(method: str, counts, workload, truth, eps: float, delta: float, k: int, seed: int) -> list[np.ndarray]:
    ctx = counts_ctx(counts, workload, eps)
    rng = np.random.default_rng(seed)
    if method == "ireduct":
        marginals, _, _ = ireduct.measure(ctx, ireduct.Params(sanity_bound=delta), rng=rng)
    elif method == "twophase":
        params = twophase.Params(epsilon1_fraction=EPSILON1[k], sanity_bound=delta, noise="continuous")
        marginals, _, _ = twophase.measure(ctx, params, rng=rng)
    elif method == "iresamp":
        marginals, _, _ = iresamp.measure(ctx, iresamp.Params(sanity_bound=delta, noise="continuous"), rng=rng)
    elif method == "oracle":
        sens = ctx.neighbouring.histogram_l1
        return oracle_marginals(truth, sensitivity=sens, epsilon=eps, sanity_bound=delta, rng=rng)[0]
    else:
        marginals = laplace.measure_marginals(ctx, workload, eps, noise="continuous", rng=rng)
    return [m.values for m in marginals]


def run(counts, panels, fractions, methods, runs: int) -> pd.DataFrame:
    d, n = len(counts.domain), counts.n
    rows = []
    for k, eps in panels:
        workload = list(itertools.combinations(range(d), k))
        truth = counts.marginals(workload)
        print(f"\n{FIGURE[k]}: Adult (n = {n}), all {len(workload)} {k}-way marginals, eps = {eps:g} "
              f"(n·eps = {n * eps:.3g}); overall error (Def. 6), mean over {runs} runs")
        print(f"{'delta/n':>8} {'delta':>8} " + " ".join(f"{LABEL[m].split()[0]:>10}" for m in methods))
        for c in fractions:
            delta = c * n
            line = []
            for method in methods:
                # the same seeds at every δ: Dwork (whose noise ignores δ) is the same draws scored differently
                errs = [overall_relative_error(_noisy(method, counts, workload, truth, eps, delta, k, seed), truth, delta)
                        for seed in range(runs)]
                rows += [{"k": k, "epsilon": eps, "delta_fraction": c, "delta": delta, "method": method, "seed": s,
                          "error": e} for s, e in enumerate(errs)]
                line.append(float(np.mean(errs)))
            print(f"{c:8.0e} {delta:8.3g} " + " ".join(f"{e:10.4g}" for e in line), flush=True)
    return pd.DataFrame(rows)


def plot(df: pd.DataFrame, out) -> None:
    panels = list(dict.fromkeys(zip(df["k"], df["epsilon"])))
    fig, axes = figure(len(panels), width=3.6)
    for ax, (k, eps) in zip(axes, panels):
        sub = df[(df["k"] == k) & (df["epsilon"] == eps)]
        for method in METHODS:
            g = sub[sub["method"] == method].groupby("delta_fraction")["error"].mean()
            if len(g):
                color, style = STYLE[method]
                ax.plot(g.index, g.values, style, color=color, label=LABEL[method], ms=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.axvline(1e-4, color="#cccccc", lw=1)
        ax.set_xlabel("sanity bound delta / n (grey: 1e-4)")
        ax.set_ylabel("overall relative error (Def. 6)")
        ax.set_title(f"{FIGURE[k]}: Adult, {k}-way marginals, eps {eps:g}", fontsize=8)
        ax.legend(fontsize=6)
    print("wrote", write_png(fig, out, "ireduct_fig7_9"))


def main(argv=None) -> None:
    args = parser(__doc__).parse_args(argv)
    if args.replot:
        plot(pd.read_csv(args.out / "ireduct_fig7_9.csv"), args.out)
        return
    clock = Clock()
    runs = args.runs or (1 if args.quick else 10)
    counts = adult_counts()
    if args.quick:
        df = run(counts, ((1, 3.0),), (1e-4, 1e-3), METHODS, runs)
    else:
        df = run(counts, PANELS, FRACTIONS, METHODS, runs)
    print("wrote", save(df, args.out, "ireduct_fig7_9"))
    plot(df, args.out)
    print(f"ireduct_fig7_9: {clock}")


if __name__ == "__main__":
    main()

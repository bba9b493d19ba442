"""MWEM paper (Hardt, Ligett & McSherry 2012) Figure 3: relative entropy vs ε on mildew, rochdale, czech.

    nice python -m benchmarks.papers.mwem_fig3 [--runs 20] [--quick]

The paper (§3.2): RE(B‖A) = Σ_x B(x) log(B(x)/A(x))/n between the true table B and the released
distribution A, all 3-way marginals of binary contingency tables, averages of 100 runs with ±1 sd
bands, for three methods: "the modified Barak et al. [21] algorithm" ("combines its observations
using multiplicative weights; without this modification, [21] is terrible with respect to relative
entropy"), unoptimized MWEM (Figure 1) and optimized MWEM (§2.3.2).  We run, on the model
distributions (not sampled rows):

* ``barak-mw``: ``algorithm: fourier`` with ``fit: mw`` (noisy Fourier coefficients of all 3-way
  marginals, then MW passes from uniform: the paper's modified Barak et al.);
* ``barak-lp``: ``fit: lp`` (the survey's linear program; its table is a sparse vertex, so RE is
  infinite whenever a true cell gets no mass — the reason the paper modified it);
* ``mwem-unopt``: Figure 1 (uniform A₀, one MW step per round, average of the iterates), T = 10;
* ``mwem-opt``: our defaults (noisy 1-way A₀, 20 MW passes per round, final iterate), T = 10.

The paper prints no numbers for this figure (only curves, and a black line for Fienberg et al.'s
non-private values, which are not in the text); README.md compares shapes and orderings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.papers.common import (
    Clock,
    all_k_way,
    binary_ctx,
    binary_table,
    figure,
    full_table,
    mean_sd,
    parser,
    save,
    write_png,
)
from dpsynth.algorithms import fourier, mwem
from dpsynth.nonprivate.metrics import relative_entropy

TABLES = {"mildew": "mildew/mildew.csv", "rochdale": "rochdale/rochdale.csv", "czech": "czech_autoworkers/czech.csv"}
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
METHODS = ("barak-mw", "barak-lp", "mwem-unopt", "mwem-opt")
STYLE = {"barak-mw": ("#d62728", "--"), "barak-lp": ("#ff9896", ":"), "mwem-unopt": ("#2ca02c", "-."),
         "mwem-opt": ("#1f77b4", "-")}


def _distribution(method: str, ctx, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    all_attrs = tuple(range(len(ctx.domain)))
    if method.startswith("barak"):
        params = fourier.Params(fit=method.split("-")[1], noise="continuous")
        return fourier.fit(ctx, params, rng=rng).project(all_attrs)
    extra = {"init": "uniform", "mw_passes": 0, "output": "average"} if method == "mwem-unopt" else {}
    return mwem.fit(ctx, mwem.parse_params({"iterations": 10, **extra}), rng=rng).project(all_attrs)


def run(runs: int, epsilons, tables) -> pd.DataFrame:
    rows = []
    for name, rel in tables.items():
        data = binary_table(rel)
        if data is None:
            continue
        codes, names = data
        true = full_table(codes, (2,) * len(names))
        workload = all_k_way(len(names), 3)
        print(f"\n{name} (n = {len(codes)}, {len(names)} binary columns, {len(workload)} 3-way marginals), "
              f"RE(B||A) mean ± sd over {runs} runs")
        print(f"{'eps':>5} " + " ".join(f"{m:>22}" for m in METHODS))
        for eps in epsilons:
            cells = []
            for method in METHODS:
                res = [relative_entropy(true, _distribution(method, binary_ctx(codes, names, eps, workload), seed))
                       for seed in range(runs)]
                rows += [{"dataset": name, "n": len(codes), "epsilon": eps, "method": method, "seed": s, "re": r}
                         for s, r in enumerate(res)]
                cells.append(mean_sd(res))
            print(f"{eps:5.1f} " + " ".join(f"{c:>22}" for c in cells), flush=True)
    return pd.DataFrame(rows)


def plot(df: pd.DataFrame, out) -> None:
    names = list(dict.fromkeys(df["dataset"]))
    fig, axes = figure(len(names))
    for ax, name in zip(axes, names):
        for method in METHODS:
            sub = df[(df["dataset"] == name) & (df["method"] == method)]
            g = sub.groupby("epsilon")["re"]
            mean, sd = g.mean(), g.std(ddof=0)
            if not np.isfinite(mean).any():
                continue
            color, ls = STYLE[method]
            ax.plot(mean.index, mean.values, ls, color=color, label=method)
            ax.fill_between(mean.index, np.maximum(mean - sd, 1e-4), mean + sd, color=color, alpha=0.15)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{name} (n = {int(df.loc[df['dataset'] == name, 'n'].iloc[0])})")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("relative entropy RE(B||A)")
        ax.legend(fontsize=7)
    print("wrote", write_png(fig, out, "mwem_fig3"))


def main(argv=None) -> None:
    args = parser(__doc__).parse_args(argv)
    if args.replot:
        plot(pd.read_csv(args.out / "mwem_fig3.csv"), args.out)
        return
    clock = Clock()
    runs = args.runs or (2 if args.quick else 20)
    epsilons = (1.0,) if args.quick else EPSILONS
    tables = {"mildew": TABLES["mildew"]} if args.quick else TABLES
    df = run(runs, epsilons, tables)
    if df.empty:
        return
    print("wrote", save(df, args.out, "mwem_fig3"))
    plot(df, args.out)
    print(f"mwem_fig3: {clock}")


if __name__ == "__main__":
    main()

"""iReduct paper (Xiao et al. 2011) Figures 10–11: Naive Bayes marginals, overall error and accuracy vs ε.

    nice python -m benchmarks.papers.ireduct_fig10_11 [--runs 1] [--quick]

The paper (§6.5): Education as the class, the other attributes as features; each algorithm releases
the 1-way class marginal and the (class, feature) 2-way marginals from each training set of a
10-fold cross-validation; Figure 10 is the average overall error (Def. 6, δ = 10⁻⁴·|T|) of those
marginals, Figure 11 the average accuracy of the Naive Bayes classifiers built from them (footnote
3: cells max(y + 1, 1)), with a dashed line for noise-free marginals.  Its claims: iReduct (and
Oracle) have the smallest errors, then TwoPhase (ε₁ = 0.03ε); iResamp is worse than Dwork; lower
relative error gives more accurate classifiers.  We run the protocol of ``dpsynth evaluate --target
education --release-per-fold`` on Adult (sample_data/adult.csv, 32,561 rows; configs/adult.yaml
without ``education-num``, which is a relabelling of the class) for iReduct, TwoPhase (ε₁ = 0.03ε),
iResamp and Dwork (``laplace``, continuous noise).  Oracle is not private and not run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import yaml

from benchmarks.papers.common import ROOT, Clock, figure, parser, save, write_png
from dpsynth.config import parse_config
from dpsynth.data.io import read_table
from dpsynth.nonprivate.evaluate import EvalOptions, evaluate

METHODS = {"ireduct": {}, "twophase": {"epsilon1_fraction": 0.03}, "iresamp": {}, "laplace": {"noise": "continuous"}}
LABEL = {"ireduct": "iReduct", "twophase": "TwoPhase", "iresamp": "iResamp", "laplace": "Dwork"}
EPSILONS = (0.1, 0.5, 1.0)
TARGET = "education"


def _raw() -> dict:
    raw = yaml.safe_load((ROOT / "configs" / "adult.yaml").read_text())
    raw["schema"]["columns"].pop("education-num")
    return raw


def run(epsilons, methods, runs: int) -> pd.DataFrame:
    raw = _raw()
    base = parse_config(raw)
    table = read_table(str(ROOT / "sample_data" / "adult.csv"), string_columns=base.domain.text_columns)
    table = table[list(base.domain.names)]
    rows = []
    print(f"Adult (n = {len(table)}), class '{TARGET}', {len(base.domain) - 1} features, 10-fold, "
          f"one release per training fold; {runs} run(s) of the 10 folds per point")
    print(f"{'eps':>5} {'method':>9} {'overall error':>14} {'NB accuracy':>12} {'synthetic rows':>15} {'noise-free':>11}")
    for eps in epsilons:
        for alg in methods:
            cfg = parse_config({**raw, "algorithm": {"name": alg, "params": METHODS[alg]},
                                "privacy": {**raw["privacy"], "epsilon": eps}})
            for seed in range(runs):
                res = evaluate(table, table.head(10), cfg, rng=np.random.default_rng(seed),
                               options=EvalOptions(ks=(1,), ranges=0, target=TARGET, release_per_fold=True))
                clf = res["classifier"]
                p = clf["release_per_fold"]
                rows.append({"epsilon": eps, "method": alg, "seed": seed, "overall_error": p["overall_relative_error"],
                             "accuracy": p["released_marginals_accuracy"], "synthetic_accuracy": p["synthetic_accuracy"],
                             "noise_free_accuracy": clf["real_cross_validated"],
                             "majority": clf["majority_class_rate"]})
            sub = pd.DataFrame([r for r in rows if r["epsilon"] == eps and r["method"] == alg])
            print(f"{eps:5.2f} {LABEL[alg]:>9} {sub['overall_error'].mean():14.4f} {sub['accuracy'].mean():12.4f} "
                  f"{sub['synthetic_accuracy'].mean():15.4f} {sub['noise_free_accuracy'].mean():11.4f}", flush=True)
    return pd.DataFrame(rows)


def plot(df: pd.DataFrame, out) -> None:
    fig, (ax1, ax2) = figure(2)
    for i, alg in enumerate(dict.fromkeys(df["method"])):
        g = df[df["method"] == alg].groupby("epsilon")
        ax1.plot(g["overall_error"].mean(), "o-", color=f"C{i}", label=LABEL[alg])
        ax2.plot(g["accuracy"].mean(), "o-", color=f"C{i}", label=LABEL[alg])
    ax2.axhline(df["noise_free_accuracy"].mean(), color="k", ls="--", lw=1, label="noise-free marginals")
    ax2.axhline(df["majority"].mean(), color="#999999", ls=":", lw=1, label="majority class")
    for ax, title in ((ax1, "Fig. 10: overall error of the released marginals"), (ax2, "Fig. 11: Naive Bayes accuracy")):
        ax.set_xscale("log")
        ax.set_xlabel("epsilon")
        ax.set_title(f"Adult, class {TARGET}: {title}", fontsize=8)
        ax.legend(fontsize=7)
    ax1.set_yscale("log")
    print("wrote", write_png(fig, out, "ireduct_fig10_11"))


def main(argv=None) -> None:
    args = parser(__doc__).parse_args(argv)
    if args.replot:
        plot(pd.read_csv(args.out / "ireduct_fig10_11.csv"), args.out)
        return
    clock = Clock()
    runs = args.runs or 1
    df = run((1.0,), ("laplace",), runs) if args.quick else run(EPSILONS, tuple(METHODS), runs)
    print("wrote", save(df, args.out, "ireduct_fig10_11"))
    plot(df, args.out)
    print(f"ireduct_fig10_11: {clock}")


if __name__ == "__main__":
    main()

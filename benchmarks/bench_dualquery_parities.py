"""DualQuery on parity queries (Gaboardi et al. 2014, §6) on NLTCS, against baselines.

Run: ``nice -n 10 python -m benchmarks.bench_dualquery_parities [--seeds 3] [--quick] [--only eps,queries,ip,ab]
[--plot PATH] [--csv PATH]`` (results of 22 Nov 2026: ``benchmarks/results/dualquery_parities.{csv,png}``).

NLTCS: 21,574 rows, 16 binary columns (``configs/nltcs-dualquery-parities.yaml``), (ε, 10⁻³), n public,
DualQuery defaults (η = 1.2, s = 10·T solved from the budget, tightest accounting).  Answers are the 0/1
form of Definition 6.1 (fraction of rows with an even number of the parity's columns at 1); errors are
|p(D) − p(synthetic)| averaged (and maximised) over the queries (a negation has the same error).

* ``eps``: all 560 3-wise parities, ε ∈ {0.5, 1, 2, 5};
* ``queries``: ε = 1, the first 35, 140, 560 sampled 3-wise parities and all 1,820 4-wise ones;
* ``ip``: ε = 1, 560 parities, ``best_response: hybrid`` (local search, then §6's integer program
  with CBC) against ``local`` alone, one seed;
* ``ab``: 560 parities, the α/β form (Algorithm 2) with the smallest α each budget affords at β = 0.05
  (ε = 1: α = 0.98; ε = 5: α = 0.6), against the defaults at the same ε.

Baselines, same queries: *uniform* (every answer 1/2: the uniform distribution over {0,1}¹⁶),
*laplace-marginals* (the ``laplace`` algorithm's measurement of the parities' column sets at the same ε
and δ = 0, Laplace noise of scale m/ε per cell for m marginals; each parity computed from its noisy
marginal, Σ cells·(±1) / n, clipped to [0, 1]; NLTCS's columns are binary), and
*laplace-parities* (each parity's count + Laplace noise of scale Q/ε, the L1 sensitivity of Q parity
counts under add-remove; computed here, not a dpsynth algorithm).  Prints a table; ``--plot`` writes a PNG.
Nothing here is a test.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

import dpsynth
from dpsynth.config import parse_config
from dpsynth.data.discretize import encode
from dpsynth.workload.parities import Parities

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "nltcs-dualquery-parities.yaml"
SHARED = ROOT.parent / "shared" / "data" / "nltcs" / "nltcs.csv"
DATA = SHARED if SHARED.exists() else ROOT / "sample_data" / "nltcs.csv"


def _raw(epsilon: float, workload: dict, mode: str, **params) -> dict:
    raw = yaml.safe_load(CONFIG.read_text())
    raw["privacy"]["epsilon"] = epsilon
    raw["workload"] = {"parities": workload}
    raw["algorithm"]["params"].update({"best_response": mode, **params})
    if "alpha" in params:
        del raw["algorithm"]["params"]["eta"]
    return raw


def _errors(true, got) -> tuple[float, float]:
    e = np.abs(np.asarray(true) - np.asarray(got))
    return float(e.mean()), float(e.max())


def _dualquery(table, codes, raw, seed):
    cfg = parse_config(raw)
    q = cfg.workload.parities
    t0 = time.perf_counter()
    res = dpsynth.release(table, cfg, rng=np.random.default_rng(seed))
    secs = time.perf_counter() - t0
    synth = encode(res.synthetic, cfg.domain)
    det = res.report["algorithm"]["details"]
    _dualquery.rounds = det["rounds"]  # per-round objectives and CBC statuses, for the ip section
    return q, _errors(q.answers(codes), q.answers(synth)), det["T"], det["s"], secs


def _laplace_marginals(codes, q: Parities, epsilon, n, rng):
    """The ``laplace`` algorithm's measurement (docs/ireduct.md): each of the m marginals over the parities'
    column sets gets Laplace noise of scale m/ε per cell (equal budget split, L1 sensitivity 1 per marginal
    under add-remove); each parity is then read off its noisy marginal, Σ cells·(±1), over n, clipped.
    Its synthesis step (a model fitted to 560 marginals) is skipped: it costs minutes and can only
    post-process the same noisy counts."""
    sets, inverse = np.unique(q.attrs, axis=0, return_inverse=True)
    scale = len(sets) / epsilon
    out = np.zeros(len(q))
    for g, cols in enumerate(sets.tolist()):  # loop over the (few hundred) marginals
        flat = np.ravel_multi_index(tuple(codes[:, c] for c in cols), (2,) * len(cols))
        noisy = np.bincount(flat, minlength=2 ** len(cols)) + rng.laplace(0.0, scale, size=2 ** len(cols))
        cells = np.array(np.unravel_index(np.arange(2 ** len(cols)), (2,) * len(cols))).T
        for i in np.flatnonzero(inverse.reshape(-1) == g):  # the parities of this column set
            sign = np.prod(np.where(cells == q.values[i], -1.0, 1.0), axis=1)
            out[i] = np.clip((1.0 + float(noisy @ sign) / n) / 2.0, 0.0, 1.0)
    return out


def _laplace_parities(true, epsilon, n, rng):
    scale = len(true) / epsilon  # Q parity counts: each row changes every count by at most 1
    return np.clip(true + rng.laplace(0.0, scale, size=len(true)) / n, 0.0, 1.0)


def run(seeds: int, quick: bool, plot: str | None, only: set[str], csv: str | None = None) -> None:
    table = pd.read_csv(DATA)
    n = len(table)
    domain = parse_config(_raw(1.0, {"k": 3}, "local")).domain
    codes = encode(table, domain)
    eps_list = [1.0] if quick else [0.5, 1.0, 2.0, 5.0]
    rows = []

    def measure(section, epsilon, workload, label):
        dq_err, lm_err, lp_err = [], [], []
        for seed in range(seeds):  # loop over repetitions
            q, err, T, s, secs = _dualquery(table, codes, _raw(epsilon, workload, "local"), seed)
            true = q.answers(codes)
            dq_err.append(err)
            lm_err.append(_errors(true, _laplace_marginals(codes, q, epsilon, n, np.random.default_rng(100 + seed))))
            lp_err.append(_errors(true, _laplace_parities(true, epsilon, n, np.random.default_rng(seed))))
        uni = _errors(true, np.full(len(q), 0.5))
        mean = lambda xs, i: float(np.mean([x[i] for x in xs]))
        sd = float(np.std([x[0] for x in dq_err]))
        rows.append({"section": section, "epsilon": epsilon, "queries": len(q), "what": label, "T": T, "s": s,
                         "dq_mean": mean(dq_err, 0), "dq_sd": sd, "dq_max": mean(dq_err, 1),
                         "lap_marg_mean": mean(lm_err, 0), "lap_marg_max": mean(lm_err, 1),
                         "lap_par_mean": mean(lp_err, 0), "lap_par_max": mean(lp_err, 1),
                         "uniform_mean": uni[0], "uniform_max": uni[1], "seconds": secs})
        print(rows[-1], flush=True)

    for e in eps_list if "eps" in only else []:
        measure("eps", e, {"k": 3}, "all 3-wise")
    counts = [140] if quick else [35, 140]
    for c in counts if "queries" in only else []:
        measure("queries", 1.0, {"k": 3, "count": c, "seed": 0}, f"{c} sampled 3-wise")
    if "queries" in only and not quick:
        measure("queries", 1.0, {"k": 4}, "all 4-wise")
    for e, alpha in ((1.0, 0.98), (5.0, 0.6)) if "ab" in only and not quick else ():
        for seed in range(seeds):  # loop over repetitions
            q, err, T, s, secs = _dualquery(table, codes, _raw(e, {"k": 3}, "local", alpha=alpha, beta=0.05), seed)
            rows.append({"section": "ab", "epsilon": e, "queries": len(q), "what": f"alpha={alpha}", "T": T,
                         "s": s, "dq_mean": err[0], "dq_max": err[1], "seconds": secs})
            print(rows[-1], flush=True)
    if "ip" in only and not quick:
        for mode in ("local", "hybrid"):
            q, err, T, s, secs = _dualquery(table, codes, _raw(1.0, {"k": 3}, mode), 0)
            rounds = _dualquery.rounds
            better = sum(1 for r in rounds if r["objective"] > r.get("local_objective", r["objective"]))
            statuses = pd.Series([r.get("cbc_status", "-") for r in rounds]).value_counts().to_dict()
            rows.append({"section": "ip", "epsilon": 1.0, "queries": len(q), "what": mode, "T": T, "s": s,
                         "dq_mean": err[0], "dq_max": err[1], "seconds": secs, "cbc_better_rounds": better,
                         "cbc": str(statuses)})
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(df.round(4).to_string(index=False))
    if csv:
        df.to_csv(csv, index=False)
    if plot and {"eps", "queries"} <= only:
        _plot(df, plot)


def _plot(df: pd.DataFrame, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, section, x, xlabel in ((axes[0], "eps", "epsilon", "ε (δ = 10⁻³; laplace baselines δ = 0)"),
                                   (axes[1], "queries", "queries", "number of parity queries (ε = 1; 3-wise, 1820 = all 4-wise)")):
        d = df[df.section == section] if section == "eps" else df[df.section.isin(["eps", "queries"]) & (df.epsilon == 1)]
        d = d.sort_values(x)
        for col, label, style in (("dq_mean", "DualQuery", "o-"), ("lap_marg_mean", "laplace (noisy marginals)", "s--"),
                                  ("lap_par_mean", "Laplace on the parities", "^--"),
                                  ("uniform_mean", "uniform (every answer 1/2)", "k:")):
            ax.plot(d[x], d[col], style, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(list(d[x]), [f"{v:g}" for v in d[x]])
        ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean |error| (0/1 parity answers)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("NLTCS parities (n = 21,574, 16 binary columns)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="ε = 1 and 140 queries only")
    ap.add_argument("--plot", default=None, help="write a PNG of the two sweeps")
    ap.add_argument("--only", default="eps,queries,ip", help="comma-separated sections: eps, queries, ip, ab")
    ap.add_argument("--csv", default=None, help="write the table as CSV")
    args = ap.parse_args(argv)
    run(args.seeds, args.quick, args.plot, set(args.only.split(",")), args.csv)


if __name__ == "__main__":
    main()

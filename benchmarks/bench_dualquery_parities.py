"""DualQuery on parity queries (Gaboardi et al. 2014, §6) on NLTCS, against baselines.

Run: ``nice -n 10 python -m benchmarks.bench_dualquery_parities [--seeds 3] [--quick] [--plot PATH]``.

NLTCS: 21,574 rows, 16 binary columns (``configs/nltcs-dualquery-parities.yaml``), (ε, 10⁻³), n public,
DualQuery defaults (η = 1.2, s = 10·T solved from the budget, tightest accounting).  Answers are the 0/1
form of Definition 6.1 (fraction of rows with an even number of the parity's columns at 1); errors are
|p(D) − p(synthetic)| averaged (and maximised) over the queries (a negation has the same error).

* ``eps``: all 560 3-wise parities, ε ∈ {0.5, 1, 2, 5};
* ``queries``: ε = 1, the first 35, 140, 560 sampled 3-wise parities and all 1,820 4-wise ones;
* ``ip``: ε = 1, 560 parities, ``best_response: hybrid`` (local search, then §6's integer program
  with CBC) against ``local`` alone, one seed.

Baselines, same queries: *uniform* (every answer 1/2: the uniform distribution over {0,1}¹⁶),
*laplace-marginals* (``algorithm: laplace`` on the parities' column sets at the same ε and δ = 0; each
parity computed from its released noisy marginal, Σ cells·(±1) / n, clipped to [0, 1]), and
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
from dpsynth.nonprivate.evaluate import parse_released_marginals
from dpsynth.workload.parities import Parities

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "nltcs-dualquery-parities.yaml"
SHARED = ROOT.parent / "shared" / "data" / "nltcs" / "nltcs.csv"
DATA = SHARED if SHARED.exists() else ROOT / "sample_data" / "nltcs.csv"


def _raw(epsilon: float, workload: dict, mode: str) -> dict:
    raw = yaml.safe_load(CONFIG.read_text())
    raw["privacy"]["epsilon"] = epsilon
    raw["workload"] = {"parities": workload}
    raw["algorithm"]["params"].update({"best_response": mode, "time_budget": 240})
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
    return q, _errors(q.answers(codes), q.answers(synth)), det["T"], det["s"], secs


def _laplace_marginals(table, q: Parities, epsilon, n, seed):
    sets = [list(s) for s in np.unique(q.attrs, axis=0).tolist()]
    raw = yaml.safe_load(CONFIG.read_text())
    names = list(raw["schema"]["columns"])
    raw["privacy"] = {"epsilon": epsilon, "neighboring": "add-remove", "n": "public"}
    raw["algorithm"] = {"name": "laplace"}
    raw["workload"] = {"marginals": [[names[a] for a in s] for s in sets]}
    raw["output"] = {"rows": 10}
    cfg = parse_config(raw)
    res = dpsynth.release(table, cfg, rng=np.random.default_rng(seed))
    tables = {tuple(a): t for a, t in parse_released_marginals(res.marginals, cfg.domain)}
    out = np.zeros(len(q))
    for i, (a, v) in enumerate(zip(q.attrs.tolist(), q.values.tolist())):  # loop over queries (a few hundred)
        t = tables[tuple(a)]
        sign = np.ones(t.shape)
        for j, val in enumerate(v):
            shape = [1] * t.ndim
            shape[j] = t.shape[j]
            sign = sign * np.where(np.arange(t.shape[j]) == val, -1.0, 1.0).reshape(shape)
        out[i] = np.clip((1.0 + float((t * sign).sum()) / n) / 2.0, 0.0, 1.0)
    return out


def _laplace_parities(true, epsilon, n, rng):
    scale = len(true) / epsilon  # Q parity counts: each row changes every count by at most 1
    return np.clip(true + rng.laplace(0.0, scale, size=len(true)) / n, 0.0, 1.0)


def run(seeds: int, quick: bool, plot: str | None) -> None:
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
            lm_err.append(_errors(true, _laplace_marginals(table, q, epsilon, n, seed)))
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

    for e in eps_list:
        measure("eps", e, {"k": 3}, "all 3-wise")
    counts = [140] if quick else [35, 140]
    for c in counts:
        measure("queries", 1.0, {"k": 3, "count": c, "seed": 0}, f"{c} sampled 3-wise")
    if not quick:
        measure("queries", 1.0, {"k": 4}, "all 4-wise")
        for mode in ("local", "hybrid"):
            q, err, T, s, secs = _dualquery(table, codes, _raw(1.0, {"k": 3}, mode), 0)
            rows.append({"section": "ip", "epsilon": 1.0, "queries": len(q), "what": mode, "T": T, "s": s, "dq_mean": err[0],
                             "dq_max": err[1], "seconds": secs})
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(df.round(4).to_string(index=False))
    if plot:
        _plot(df, plot)


def _plot(df: pd.DataFrame, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, section, x, xlabel in ((axes[0], "eps", "epsilon", "ε (δ = 10⁻³; laplace baselines δ = 0)"),
                                   (axes[1], "queries", "queries", "number of parity queries (ε = 1)")):
        d = df[df.section == section].sort_values(x)
        for col, label, style in (("dq_mean", "DualQuery", "o-"), ("lap_marg_mean", "laplace (noisy marginals)", "s--"),
                                  ("lap_par_mean", "Laplace on the parities", "^--"),
                                  ("uniform_mean", "uniform (every answer 1/2)", "k:")):
            ax.plot(d[x], d[col], style, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
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
    args = ap.parse_args(argv)
    run(args.seeds, args.quick, args.plot)


if __name__ == "__main__":
    main()

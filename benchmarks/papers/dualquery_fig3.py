"""DualQuery paper (Gaboardi et al. 2014) Figure 3: error and runtime vs the number of queries on KDD99.

    nice python -m benchmarks.papers.dualquery_fig3 [--queries 25000,50000,100000,200000] [--quick]

The paper (§7, "Scaling to More Queries"): 40,000 to 2 million random 3-way marginal queries on
KDD99, (1, 0.001)-DP, η = 1.2, T = 170, s = 1750 for every size; "both average and max error remain
mostly stable" and "the runtime grows almost linearly in the number of queries".  We run the same
parameters on configs/kddcup99.yaml (494,021 rows, 42 columns, 200 bits one-hot) with the
local-search best response (``best_response: local``; CBC per round would cost minutes per size) and
a smaller range of sizes (the full 2 million would take about 25 minutes on this machine).  Errors are
over the positive conjunctions only, as in the paper; one run per size (the paper does not say how
many it averaged for this figure).  Time is the wall time of the release (not the query evaluation,
as in the paper), on a shared machine: compare ratios between sizes, not absolute seconds.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import yaml

from benchmarks.papers.common import ROOT, SHARED, Clock, figure, parser, save, write_png
from dpsynth.config import parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.discretize import encode
from dpsynth.pipeline import release_from_counts
from dpsynth.workload.conjunctions import conjunction_counts, conjunction_workload

KDD = SHARED / "kddcup99" / "kddcup99_10pct.csv.gz"
SIZES = (25_000, 50_000, 100_000, 200_000)


def _config(count: int, quick: bool):
    raw = yaml.safe_load((ROOT / "configs" / "kddcup99.yaml").read_text())
    raw["workload"]["conjunctions"] = {"k": 3, "count": count, "seed": 0}
    params = {"eta": 1.2, "T": 170, "s": 1750, "best_response": "local"}
    if quick:
        params.update(T=10, s=100)
    raw["algorithm"]["params"] = {**(raw["algorithm"].get("params") or {}), **params}
    return parse_config(raw)


def run(sizes, seed: int, quick: bool) -> pd.DataFrame:
    base = _config(sizes[0], quick)
    table = pd.read_csv(KDD)
    counts = ArrayCounts(encode(table, base.domain), base.domain)
    del table
    print(f"KDD99: n = {counts.n}, {len(base.domain)} columns, {base.domain.n_bits} bits; "
          f"(1, 1e-3), eta 1.2, T {base.params.T}, s {base.params.s}, local-search best response, seed {seed}")
    print(f"{'queries':>9} {'avg error':>10} {'max error':>10} {'zeros avg':>10} {'zeros max':>10} "
          f"{'release s':>10} {'s per 10k q':>12}")
    rows = []
    for count in sizes:
        cfg = _config(count, quick)
        queries = conjunction_workload({"k": 3, "count": count, "seed": 0}, cfg.domain, cfg.marginals)
        true = conjunction_counts(counts, queries) / counts.n
        t0 = time.perf_counter()
        res = release_from_counts(counts, cfg, rng=np.random.default_rng(seed))
        seconds = time.perf_counter() - t0
        err = np.abs(queries.answers(encode(res.synthetic, cfg.domain)) - true)
        row = {"queries": count, "avg_error": float(err.mean()), "max_error": float(err.max()),
               "zeros_avg_error": float(true.mean()), "zeros_max_error": float(true.max()),
               "seconds": seconds, "epsilon_spent": res.report["privacy"]["epsilon_spent"]}
        rows.append(row)
        print(f"{count:>9} {row['avg_error']:10.5f} {row['max_error']:10.4f} {row['zeros_avg_error']:10.5f} "
              f"{row['zeros_max_error']:10.4f} {seconds:10.1f} {seconds / count * 1e4:12.2f}", flush=True)
    return pd.DataFrame(rows)


def plot(df: pd.DataFrame, out) -> None:
    fig, (ax1, ax2) = figure(2)
    ax1.plot(df["queries"], df["avg_error"], "o-", label="average error")
    ax1.plot(df["queries"], df["max_error"], "s-", label="max error")
    ax1.plot(df["queries"], df["zeros_avg_error"], ":", color="#7f7f7f", label="all-zero answers, average")
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("number of 3-way marginal queries")
    ax1.set_ylabel("error")
    ax1.legend(fontsize=7)
    ax2.plot(df["queries"], df["seconds"], "o-")
    ax2.set_xscale("log")
    ax2.set_xlabel("number of 3-way marginal queries")
    ax2.set_ylabel("release wall time (s, shared machine)")
    ax1.set_title("DualQuery, KDD99, (1, 1e-3), eta 1.2, T 170, s 1750", fontsize=9)
    print("wrote", write_png(fig, out, "dualquery_fig3"))


def main(argv=None) -> None:
    ap = parser(__doc__)
    ap.add_argument("--queries", default=None, help="comma-separated query counts")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not KDD.exists():
        print(f"{KDD}: not available, skipped")
        return
    if args.replot:
        plot(pd.read_csv(args.out / "dualquery_fig3.csv"), args.out)
        return
    clock = Clock()
    sizes = tuple(int(x) for x in args.queries.split(",")) if args.queries else ((2_000, 4_000) if args.quick else SIZES)
    df = run(sizes, args.seed, args.quick)
    print("wrote", save(df, args.out, "dualquery_fig3"))
    plot(df, args.out)
    print(f"dualquery_fig3: {clock}")


if __name__ == "__main__":
    main()

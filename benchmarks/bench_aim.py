"""``aim`` beside ``auto`` (and any dpsynth algorithm) on the peer benchmark's tables, codes and scores.

    nice .venv/bin/python -m benchmarks.bench_aim --datasets adult,nltcs --eps 1,0.3 --seeds 0,1,2 \\
        --algs aim,auto --params '{"rounds_per_column": 6}' --tag r6 --out benchmarks/results/aim.csv

The same integer codes and the same 2-way / 3-way L1 as benchmarks/peers (``load_table``, ``KWayScorer``),
one forked child per release (``releases.dpsynth_release``: wall and CPU seconds); unlike the peer runner,
δ is set here (default 10⁻⁹, MST's and AIM's δ in results/peers.csv) so that zCDP algorithms run under the
same δ as the peers, and the workload is all k-way marginals (default k = 3).  One CSV row per release,
appended.  NOT PRIVATE: the scores read the real tables.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
from pathlib import Path

from benchmarks.grid import DATASETS, ROOT, Dataset
from benchmarks.peers import releases
from benchmarks.peers.scoring import KWayScorer, load_table
from benchmarks.peers.tables import TABLES

RAW = Path(os.environ.get("DPSYNTH_RAW_DATA", "/work/rawdata"))
EXTRA = {
    # a wide development table (47 columns; benchmarks/raw_configs): 500 sampled 3-way marginals are scored
    "star": Dataset(name="star", config=ROOT / "benchmarks" / "raw_configs" / "star.yaml", data=RAW / "star.csv",
                    eval_sample=500),
    # narrow raw development tables (benchmarks/raw_configs; not held out): all 3-way marginals scored
    **{name: Dataset(name=name, config=ROOT / "benchmarks" / "raw_configs" / f"{name}.yaml", data=RAW / f"{name}.csv")
       for name in ("nasscds", "cps1988", "gss_wages", "wage", "mplsstops", "covid_testing", "fertility", "baseball")},
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_aim", description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="adult")
    p.add_argument("--eps", default="1")
    p.add_argument("--seeds", default="0")
    p.add_argument("--algs", default="aim")
    p.add_argument("--params", default="{}", help="JSON merged into every algorithm's params")
    p.add_argument("--delta", type=float, default=1e-9)
    p.add_argument("--k", type=int, default=3, help="workload: all k-way marginals")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/aim.csv"))
    p.add_argument("--tag", default="")
    p.add_argument("--timeout", type=float, default=900.0)
    a = p.parse_args(argv)
    params = json.loads(a.params)
    for name in a.datasets.split(","):
        if name in EXTRA:
            DATASETS.setdefault(name, EXTRA[name])
            TABLES.setdefault(name, EXTRA[name])
        table = load_table(name)
        scorer = KWayScorer(table.codes, table.sizes, sample=TABLES[name].eval_sample, seed=0)
        for eps in [float(x) for x in a.eps.split(",")]:
            for seed in [int(x) for x in a.seeds.split(",")]:
                for alg in a.algs.split(","):
                    cell = releases.dpsynth_cell(name, len(table.sizes), alg, eps, seed, params=params,
                                                 workload={"marginals": {"k": a.k}})
                    res = releases.dpsynth_release(table, dataclasses.replace(cell, delta=a.delta), timeout=a.timeout)
                    codes = res.pop("codes", None)
                    score = scorer.score(codes) if codes is not None else {}
                    row = {"dataset": name, "alg": alg, "tag": a.tag, "eps": eps, "seed": seed, "delta": a.delta,
                           "k": a.k, "status": res.get("status"), "l1_2way": score.get("l1_2way"),
                           "l1_3way": score.get("l1_3way"), "seconds": res.get("seconds"),
                           "cpu": res.get("cpu_seconds"), "params": json.dumps(params), "error": res.get("error")}
                    print(row, flush=True)
                    new = not a.out.exists()
                    a.out.parent.mkdir(parents=True, exist_ok=True)
                    with a.out.open("a", newline="") as f:
                        w = csv.DictWriter(f, fieldnames=list(row))
                        if new:
                            w.writeheader()
                        w.writerow(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""DualQuery benchmarks (Gaboardi et al. 2014, §7).  Run: ``nice python -m benchmarks.bench_dualquery``.

Sections (``--only br,nltcs,netflix,kdd``):

* ``kdd``: KDD Cup 99 10% (configs/kddcup99.yaml, 494,021 rows, 200 bits), 100,000 random 3-way
  conjunctions, (1, 1e-3), eta = 1.2, T = 170, s = 1750: average / max error over the conjunctions
  and their negations, wall time, against the zero-answer, all-first-code and (non-private)
  1-way-product baselines.  ``--kdd-queries``, ``--kdd-mode``, ``--kdd-time-limit`` shrink it.
* ``nltcs``: all 4,480 3-way cells, epsilon in {0.5, 1, 2, 5}, average and max error against
  the zeros (every row all-0) and uniform baselines.
* ``netflix``: 100 binary columns, 20,000 rows, 100,000 random 3-way conjunctions, epsilon in
  {0.5, 1, 2, 5}, against the same baselines (one run each).
* ``br``: best-response quality on random instances (200 binary columns, 1,000 sampled 3-way
  clauses, half negated): local search alone vs local search + warm-started CBC vs CBC alone.

Errors are |q(D) − q(synthetic)| over the conjunctions (a negation has the same error).
Prints figures only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd

import dpsynth
from dpsynth.algorithms.dualquery import core as dq
from dpsynth.config import parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.discretize import encode
from dpsynth.data.schema import CategoricalColumn, Domain
from dpsynth.pipeline import release_from_counts
from dpsynth.workload.conjunctions import Clauses, conjunction_counts, random_conjunctions
from dpsynth.workload.spec import parse_workload

ROOT = Path(__file__).resolve().parent.parent
KDD = ROOT.parent / "shared" / "data" / "kddcup99" / "kddcup99_10pct.csv.gz"
NLTCS = ROOT / "sample_data" / "nltcs.csv"


def _with_params(cfg, **changes):
    return dataclasses.replace(cfg, params=dataclasses.replace(cfg.params, **changes))


def _errors(true: np.ndarray, got: np.ndarray) -> tuple[float, float]:
    err = np.abs(true - got)
    return float(err.mean()), float(err.max())


def _product_answers(queries, codes, domain) -> np.ndarray:
    """Answers of the product of the (true, non-private) 1-way marginals: a reference point only."""
    p = [np.bincount(codes[:, a], minlength=s) / len(codes) for a, s in enumerate(domain.sizes)]
    out = np.ones(len(queries))
    for j in range(queries.k):  # loop over literal positions
        probs = np.array([p[a][v] for a, v in zip(queries.attrs[:, j], queries.values[:, j])])
        out *= probs
    return out


def bench_kdd(args) -> None:
    if not KDD.exists():
        print("kdd: dataset missing, skipped")
        return
    t0 = time.perf_counter()
    cfg = dpsynth.load_config(ROOT / "configs" / "kddcup99.yaml")
    raw_workload = {"conjunctions": {**cfg.workload.conjunctions_spec, "count": args.kdd_queries}}
    cfg = dataclasses.replace(cfg, workload=parse_workload(raw_workload, cfg.domain, accepted=dq.SPEC.workload,
                                                           algorithm="dualquery"))
    cfg = _with_params(cfg, best_response=args.kdd_mode,
                       solver=dataclasses.replace(cfg.params.solver, time_limit=args.kdd_time_limit))
    table = pd.read_csv(KDD)
    codes = encode(table, cfg.domain)
    del table
    t_load = time.perf_counter() - t0
    counts = ArrayCounts(codes, cfg.domain)
    t1 = time.perf_counter()
    res = release_from_counts(counts, cfg, rng=np.random.default_rng(args.seed))
    t_run = time.perf_counter() - t1
    queries = cfg.workload.conjunctions
    true = conjunction_counts(counts, queries) / counts.n
    synth = queries.answers(encode(res.synthetic, cfg.domain))
    det = res.report["algorithm"]["details"]
    rounds = det["rounds"]
    print(f"kdd: n={counts.n} bits={cfg.domain.n_bits} queries={len(queries)} (x2 with negations) "
          f"mode={args.kdd_mode} time_limit={args.kdd_time_limit}s T={det['T']} s={det['s']} eta={det['eta']}")
    print(f"kdd: epsilon by accounting {  {k: round(v, 4) for k, v in det['epsilon_by_accounting'].items()} } "
          f"used={det['accounting_used']} spent={res.report['privacy']['epsilon_spent']:.4f}")
    avg, mx = _errors(true, synth)
    print(f"kdd: DualQuery          avg error {avg:.5f}  max {mx:.4f}")
    first = queries.answers(np.zeros((1, len(cfg.domain)), dtype=np.int64))
    for name, ans in (("zero answers", np.zeros(len(queries))), ("all-first-code rows", first),
                      ("1-way product (non-private)", _product_answers(queries, codes, cfg.domain))):
        a, m = _errors(true, ans)
        print(f"kdd: {name:<27} avg error {a:.5f}  max {m:.4f}")
    secs = np.array(res.diagnostics["round_seconds"])
    improved = sum(1 for r in rounds if r.get("cbc_objective") is not None
                   and r["cbc_objective"] > r.get("local_objective", -1))
    statuses = pd.Series([r.get("cbc_status", "none") for r in rounds]).value_counts().to_dict()
    print(f"kdd: wall time load+encode {t_load:.1f}s, release {t_run:.1f}s (total {t_load + t_run:.1f}s); "
          f"best response per round mean {secs.mean():.2f}s max {secs.max():.2f}s; "
          f"CBC improved on local search in {improved}/{len(rounds)} rounds; CBC status {statuses}")


def bench_nltcs(args) -> None:
    base = dpsynth.load_config(ROOT / "configs" / "nltcs-dualquery.yaml")
    table = pd.read_csv(NLTCS)
    codes = encode(table, base.domain)
    counts = ArrayCounts(codes, base.domain)
    queries = base.workload.conjunctions
    true = conjunction_counts(counts, queries) / counts.n
    za, zm = _errors(true, queries.answers(np.zeros((1, 16), dtype=np.int64)))
    ua, um = _errors(true, np.full(len(queries), 1 / 8))
    print(f"nltcs: n={counts.n} queries={len(queries)}; zeros avg {za:.4f} max {zm:.4f}; "
          f"uniform avg {ua:.4f} max {um:.4f}")
    for eps in (0.5, 1.0, 2.0, 5.0):
        cfg = dataclasses.replace(base, privacy=dataclasses.replace(base.privacy, epsilon=eps))
        cfg = _with_params(cfg, best_response=args.nltcs_mode)
        errs = []
        t0 = time.perf_counter()
        for rep in range(args.reps):
            res = release_from_counts(counts, cfg, rng=np.random.default_rng(args.seed + rep))
            errs.append(_errors(true, queries.answers(encode(res.synthetic, cfg.domain))))
        det = res.report["algorithm"]["details"]
        e = np.array(errs)
        print(f"nltcs: eps={eps:<4} T={det['T']:<4} s={det['s']:<5} eta={det['eta']} "
              f"({det['accounting_used']}) avg error {e[:, 0].mean():.4f} (sd {e[:, 0].std():.4f}) "
              f"max {e[:, 1].mean():.4f}  [{args.reps} runs, {time.perf_counter() - t0:.1f}s]")


def bench_netflix(args) -> None:
    """Netflix (100 binary columns, 20,000 rows): 100,000 random 3-way conjunctions of the 0/1 view."""
    path = ROOT.parent / "shared" / "data" / "netflix" / "netflix.csv.gz"
    if not path.exists():
        print("netflix: dataset missing, skipped")
        return
    raw = {
        "schema": {"columns": {f"a{i}": {"type": "categorical", "categories": [0, 1]} for i in range(100)}},
        "privacy": {"epsilon": 1.0, "delta": 1e-3},
        "algorithm": {"name": "dualquery", "params": {"eta": 1.2, "best_response": args.nltcs_mode}},
        "workload": {"marginals": [["a0"]], "conjunctions": {"k": 3, "count": 100_000, "seed": 0}},
    }
    base = parse_config(raw)
    codes = encode(pd.read_csv(path), base.domain)
    counts = ArrayCounts(codes, base.domain)
    queries = base.workload.conjunctions
    true = conjunction_counts(counts, queries) / counts.n
    za, zm = _errors(true, queries.answers(np.zeros((1, 100), dtype=np.int64)))
    ua, um = _errors(true, np.full(len(queries), 1 / 8))
    print(f"netflix: n={counts.n} queries={len(queries)}; zeros avg {za:.4f} max {zm:.4f}; "
          f"uniform avg {ua:.4f} max {um:.4f}")
    for eps in (0.5, 1.0, 2.0, 5.0):
        cfg = dataclasses.replace(base, privacy=dataclasses.replace(base.privacy, epsilon=eps))
        t0 = time.perf_counter()
        res = release_from_counts(counts, cfg, rng=np.random.default_rng(args.seed))
        det = res.report["algorithm"]["details"]
        a, m = _errors(true, queries.answers(encode(res.synthetic, cfg.domain)))
        print(f"netflix: eps={eps:<4} T={det['T']:<4} s={det['s']:<5} ({det['accounting_used']}) "
              f"avg error {a:.4f} max {m:.4f}  [{time.perf_counter() - t0:.1f}s]")


def bench_best_response(args) -> None:
    domain = Domain(tuple(CategoricalColumn(f"b{i}", (0, 1)) for i in range(200)))
    limit = args.br_time_limit
    for seed in range(args.br_instances):
        rng = np.random.default_rng(100 + seed)
        q = random_conjunctions(domain, 3, 20_000, rng=rng)
        pick = rng.choice(len(q), size=1000, replace=False)
        sample = np.where(np.arange(1000) % 2 == 0, pick, pick + len(q))  # half negated
        cl = Clauses.from_samples(q, sample)
        out = {}
        for mode in ("local", "hybrid", "ip"):
            p = dq.parse_params({"best_response": mode, "solver": {"time_limit": limit}})
            _, info = dq.best_response(cl, domain, p, previous=None, rng=np.random.default_rng(seed))
            out[mode] = info
        h = out["hybrid"]
        print(f"br: instance {seed}: local {out['local']['objective']} ({out['local']['seconds']:.2f}s) | "
              f"hybrid {h['objective']} ({h['seconds']:.2f}s, CBC {h['cbc_status']}, bound {h['cbc_bound']}) | "
              f"CBC alone {out['ip']['objective']} ({out['ip']['seconds']:.2f}s, {out['ip']['cbc_status']}) | "
              f"hybrid >= local: {h['objective'] >= h['local_objective']}, "
              f"within limit+10%: {h['seconds'] <= 1.1 * limit}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="br,nltcs,netflix,kdd")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--nltcs-mode", default="local", choices=["local", "hybrid", "ip"])
    ap.add_argument("--kdd-queries", type=int, default=100_000)
    ap.add_argument("--kdd-mode", default="hybrid", choices=["local", "hybrid", "ip"])
    ap.add_argument("--kdd-time-limit", type=float, default=3.0)
    ap.add_argument("--br-instances", type=int, default=3)
    ap.add_argument("--br-time-limit", type=float, default=20.0)
    args = ap.parse_args()
    sections = {"br": bench_best_response, "nltcs": bench_nltcs, "netflix": bench_netflix, "kdd": bench_kdd}
    for name in args.only.split(","):
        sections[name](args)


if __name__ == "__main__":
    main()

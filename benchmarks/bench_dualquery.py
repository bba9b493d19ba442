"""DualQuery benchmarks (Gaboardi et al. 2014, §7).  Run: ``nice python -m benchmarks.bench_dualquery``.

Sections (``--only br,nltcs,netflix,kdd``):

* ``kdd``: KDD Cup 99 10% (configs/kddcup99.yaml, 494,021 rows, 200 bits), 100,000 random 3-way
  conjunctions, (1, 1e-3), eta = 1.2, T = 170, s = 1750: average / max error over the conjunctions
  and their negations, wall time, against the zero-answer, all-first-code and (non-private)
  1-way-product baselines.  ``--kdd-queries``, ``--kdd-mode``, ``--kdd-max-nodes`` shrink it.
* ``defaults``: NLTCS (configs/nltcs-dualquery.yaml as shipped, all 4,480 3-way cells, epsilon 1),
  ``--reps`` seeds: error, wall time, process and CBC CPU time (``--defaults-mode`` overrides
  ``best_response``).
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


def _kdd_config(args, *, queries, T=None, s=None, max_nodes=None):
    cfg = dpsynth.load_config(ROOT / "configs" / "kddcup99.yaml")
    raw_workload = {"conjunctions": {**cfg.workload.conjunctions_spec, "count": queries}}
    cfg = dataclasses.replace(cfg, workload=parse_workload(raw_workload, cfg.domain, accepted=dq.SPEC.workload,
                                                           algorithm="dualquery"))
    changes = {} if args.kdd_mode is None else {"best_response": args.kdd_mode}
    if max_nodes is not None:
        changes["solver"] = dataclasses.replace(cfg.params.solver, max_nodes=max_nodes)
    if T is not None:
        changes.update(T=T, s=s)
    return _with_params(cfg, **changes)


def _kdd_counts(cfg):
    table = pd.read_csv(KDD)
    codes = encode(table, cfg.domain)
    return codes, ArrayCounts(codes, cfg.domain)


def bench_kdd(args) -> None:
    """The issue-16 target at the config's parameters (``--kdd-mode``, ``--kdd-max-nodes`` override them)."""
    if not KDD.exists():
        print("kdd: dataset missing, skipped")
        return
    t0 = time.perf_counter()
    cfg = _kdd_config(args, queries=args.kdd_queries, max_nodes=args.kdd_max_nodes)
    codes, counts = _kdd_counts(cfg)
    t_load = time.perf_counter() - t0
    t1 = time.perf_counter()
    res = release_from_counts(counts, cfg, rng=np.random.default_rng(args.seed))
    t_run = time.perf_counter() - t1
    queries = cfg.workload.conjunctions
    true = conjunction_counts(counts, queries) / counts.n
    synth = queries.answers(encode(res.synthetic, cfg.domain))
    det = res.report["algorithm"]["details"]
    rounds = det["rounds"]
    print(f"kdd: n={counts.n} bits={cfg.domain.n_bits} queries={len(queries)} (x2 with negations) "
          f"mode={det['best_response']} max_nodes={det['solver']['max_nodes']} "
          f"T={det['T']} s={det['s']} eta={det['eta']} seed={args.seed}")
    print(f"kdd: epsilon by accounting {  {k: round(v, 4) for k, v in det['epsilon_by_accounting'].items()} } "
          f"used={det['accounting_used']} spent={res.report['privacy']['epsilon_spent']:.4f}")
    avg, mx = _errors(true, synth)
    print(f"kdd: DualQuery          avg error {avg:.5f}  max {mx:.4f}")
    first = queries.answers(np.zeros((1, len(cfg.domain)), dtype=np.int64))
    product = None
    for name, ans in (("zero answers", np.zeros(len(queries))), ("all-first-code rows", first),
                      ("1-way product (non-private)", _product_answers(queries, codes, cfg.domain))):
        a, m = _errors(true, ans)
        product = a
        print(f"kdd: {name:<27} avg error {a:.5f}  max {m:.4f}")
    print(f"kdd: DualQuery / 1-way product avg error = {avg / product:.3f}")
    secs = np.array(res.diagnostics["round_seconds"])
    improved = sum(1 for r in rounds if r.get("cbc_objective") is not None
                   and r["cbc_objective"] > r.get("local_objective", -1))
    statuses = pd.Series([r.get("cbc_status", "none") for r in rounds]).value_counts().to_dict()
    print(f"kdd: wall time load+encode {t_load:.1f}s, release {t_run:.1f}s (total {t_load + t_run:.1f}s); "
          f"best response per round mean {secs.mean():.2f}s max {secs.max():.2f}s; "
          f"CBC improved on local search in {improved}/{len(rounds)} rounds; CBC status {statuses}; "
          f"failed {det['rounds_solver_failed']}")


def bench_sweep(args) -> None:
    """Robustness: ``--sweep-seeds`` releases at reduced T, the node limit ``solver.max_nodes`` cycling
    over ``--sweep-nodes``; every release must finish (a CBC failure is a weaker round, not a crash)."""
    if not KDD.exists():
        print("sweep: dataset missing, skipped")
        return
    limits = [int(x) for x in args.sweep_nodes.split(",")]
    cfg0 = _kdd_config(args, queries=args.kdd_queries)
    _, counts = _kdd_counts(cfg0)
    finished, failed = 0, {}
    for seed in range(args.sweep_seeds):
        limit = limits[seed % len(limits)]
        cfg = _kdd_config(args, queries=args.kdd_queries, T=args.sweep_T, s=args.sweep_s, max_nodes=limit)
        t0 = time.perf_counter()
        try:
            res = release_from_counts(counts, cfg, rng=np.random.default_rng(seed))
        except Exception as exc:  # noqa: BLE001 - the point of the sweep is to see any crash
            print(f"sweep: seed {seed} max_nodes {limit} CRASHED: {type(exc).__name__}: {exc}")
            continue
        det = res.report["algorithm"]["details"]
        finished += 1
        for k, v in det["rounds_solver_failed"].items():
            failed[k] = failed.get(k, 0) + v
        statuses = pd.Series([r.get("cbc_status", "none") for r in det["rounds"]]).value_counts().to_dict()
        print(f"sweep: seed {seed:>2} max_nodes {limit:>4} T={det['T']} s={det['s']}: finished in "
              f"{time.perf_counter() - t0:.1f}s; CBC {statuses}; failed {det['rounds_solver_failed']}", flush=True)
    print(f"sweep: {finished}/{args.sweep_seeds} releases finished; CBC failures by cause {failed}")


def _pulp_model(clauses, domain):
    """The previous model builder (PuLP objects, one Python statement per clause), for timing only."""
    import pulp

    cols = np.unique(clauses.attrs)
    prob = pulp.LpProblem("dualquery_best_response", pulp.LpMaximize)
    x = {}
    for a in cols.tolist():  # loop over touched columns and their values
        x[a] = [prob.add_variable(f"x_{a}_{v}", cat="Binary") for v in range(domain.sizes[a])]
        prob += pulp.lpSum(x[a]) == 1, f"one_{a}"
    c = [prob.add_variable(f"c_{j}", lowBound=0, upBound=1) for j in range(len(clauses))]
    prob += pulp.lpSum(float(w) * cj for w, cj in zip(clauses.weights.tolist(), c))
    k = clauses.attrs.shape[1]
    for j, (ats, vals, pos) in enumerate(
        zip(clauses.attrs.tolist(), clauses.values.tolist(), clauses.positive.tolist())
    ):  # the per-clause loop this benchmark measures
        lits = [x[a][v] for a, v in zip(ats, vals)]
        if pos:
            for i, lit in enumerate(lits):
                prob += c[j] <= lit, f"p_{j}_{i}"
        else:
            prob += c[j] <= k - pulp.lpSum(lits), f"n_{j}"
    return prob


def bench_build(args) -> None:
    """Model building at s samples on the KDD99 schema (200 bits): the PuLP per-clause builder + PuLP's MPS
    writer against build_model + write_mps, and one CBC round on the same instance for scale."""
    import tempfile

    from dpsynth.algorithms.dualquery import solver

    domain = dpsynth.load_config(ROOT / "configs" / "kddcup99.yaml").domain
    rng = np.random.default_rng(args.seed)
    q = random_conjunctions(domain, 3, 100_000, rng=rng)
    with tempfile.TemporaryDirectory() as tmp:
        for s in (int(x) for x in args.build_s.split(",")):
            cl = Clauses.from_samples(q, rng.integers(0, 2 * len(q), size=s))
            t0 = time.perf_counter()
            for _ in range(args.build_reps):
                _pulp_model(cl, domain).writeMPS(f"{tmp}/old.mps", rename=1)
            old = (time.perf_counter() - t0) / args.build_reps
            t0 = time.perf_counter()
            for _ in range(args.build_reps):
                solver.write_mps(solver.build_model(cl, domain), f"{tmp}/new.mps")
            new = (time.perf_counter() - t0) / args.build_reps
            p = dq.parse_params({"best_response": "hybrid", "solver": {"max_nodes": args.build_nodes}})
            _, info = dq.best_response(cl, domain, p, previous=None, rng=np.random.default_rng(0))
            print(f"build: s={s} clauses={len(cl)}: PuLP model+MPS {old:.3f}s, NumPy model+MPS {new:.4f}s "
                  f"(x{old / new:.0f} faster); one hybrid round with at most {args.build_nodes} nodes took "
                  f"{info['seconds']:.2f}s (CBC {info['cbc_status']}): build = {100 * new / info['seconds']:.1f}% "
                  f"of the round (was {100 * old / info['seconds']:.0f}%)", flush=True)


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


def bench_defaults(args) -> None:
    """NLTCS at configs/nltcs-dualquery.yaml as shipped (epsilon 1): error and time per seed, the work budget's
    figures (issue 24).  Wall time depends on the machine's load; the rows do not."""
    import resource

    cfg = dpsynth.load_config(ROOT / "configs" / "nltcs-dualquery.yaml")
    if args.defaults_mode is not None:
        cfg = _with_params(cfg, best_response=args.defaults_mode)
    counts = ArrayCounts(encode(pd.read_csv(NLTCS), cfg.domain), cfg.domain)
    queries = cfg.workload.conjunctions
    true = conjunction_counts(counts, queries) / counts.n
    for rep in range(args.reps):
        seed = args.seed + rep
        t0, c0 = time.perf_counter(), time.process_time()
        ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        res = release_from_counts(counts, cfg, rng=np.random.default_rng(seed))
        ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        cbc_cpu = (ch1.ru_utime + ch1.ru_stime) - (ch0.ru_utime + ch0.ru_stime)
        det = res.report["algorithm"]["details"]
        avg, mx = _errors(true, queries.answers(encode(res.synthetic, cfg.domain)))
        statuses = pd.Series([r.get("cbc_status", "none") for r in det["rounds"]]).value_counts().to_dict()
        print(f"defaults: seed {seed} {det['best_response']} T={det['T']} s={det['s']}: avg error {avg:.5f} max "
              f"{mx:.4f}; wall {wall:.1f}s, CPU {cpu:.1f}s + CBC {cbc_cpu:.1f}s; CBC {statuses}; failed "
              f"{det['rounds_solver_failed']}", flush=True)


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
    nodes = args.br_max_nodes
    for seed in range(args.br_instances):
        rng = np.random.default_rng(100 + seed)
        q = random_conjunctions(domain, 3, 20_000, rng=rng)
        pick = rng.choice(len(q), size=1000, replace=False)
        sample = np.where(np.arange(1000) % 2 == 0, pick, pick + len(q))  # half negated
        cl = Clauses.from_samples(q, sample)
        out = {}
        for mode in ("local", "hybrid", "ip"):
            p = dq.parse_params({"best_response": mode, "solver": {"max_nodes": nodes}})
            _, info = dq.best_response(cl, domain, p, previous=None, rng=np.random.default_rng(seed))
            out[mode] = info
        h = out["hybrid"]
        print(f"br: instance {seed}: local {out['local']['objective']} ({out['local']['seconds']:.2f}s) | "
              f"hybrid {h['objective']} ({h['seconds']:.2f}s, CBC {h['cbc_status']}, bound {h['cbc_bound']}) | "
              f"CBC alone {out['ip']['objective']} ({out['ip']['seconds']:.2f}s, {out['ip']['cbc_status']}) | "
              f"hybrid >= local: {h['objective'] >= h['local_objective']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="br,nltcs,netflix,kdd")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--nltcs-mode", default="local", choices=["local", "hybrid", "ip"])
    ap.add_argument("--defaults-mode", default=None, choices=["local", "hybrid", "ip"])
    ap.add_argument("--kdd-queries", type=int, default=100_000)
    ap.add_argument("--kdd-mode", default=None, choices=["local", "hybrid", "ip"], help="default: the config's")
    ap.add_argument("--kdd-max-nodes", type=int, default=None, help="solver.max_nodes (default: the config's)")
    ap.add_argument("--sweep-seeds", type=int, default=20)
    ap.add_argument("--sweep-nodes", default="0,1,5,20,100")
    ap.add_argument("--sweep-T", type=int, default=10)
    ap.add_argument("--sweep-s", type=int, default=1750)
    ap.add_argument("--build-s", default="500,2000,5000")
    ap.add_argument("--build-reps", type=int, default=3)
    ap.add_argument("--build-nodes", type=int, default=100, help="CBC's node limit for the round, for scale")
    ap.add_argument("--br-instances", type=int, default=3)
    ap.add_argument("--br-max-nodes", type=int, default=100)
    args = ap.parse_args()
    sections = {"br": bench_best_response, "nltcs": bench_nltcs, "netflix": bench_netflix, "kdd": bench_kdd,
                "sweep": bench_sweep, "build": bench_build, "defaults": bench_defaults}
    for name in args.only.split(","):
        sections[name](args)


if __name__ == "__main__":
    main()

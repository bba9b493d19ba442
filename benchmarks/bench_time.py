"""The time model of ``dpsynth plan``: measure releases over a grid of public quantities, fit, state the error.

    nice -n 10 python -m benchmarks.bench_plan time [--minutes 15] [--seed 0]
    python -m benchmarks.bench_plan time --fit-only

The time measured is the child's CPU time (user + system, ``os.wait4``): on this shared 2-core machine the
wall time of the same run varies several-fold with the other jobs' load, the CPU time much less; it is
the wall time of an idle machine (the releases are mostly single-threaded).  The wall time and the load
average are recorded beside it.

Each configuration is a synthetic table (``rows`` × ``columns``, ``values`` per column, each column a
noisy copy of the previous one) with all ``k``-way marginals, released by one algorithm (with its
rounds where it has them) in a child process (``python -m dpsynth release --silent``, wall time from
start to exit, like a batch job sees it).  Configurations are drawn in a seeded random order from the
grid and run until ``--minutes`` are used.  A run is recorded with the plan's work terms
(:attr:`dpsynth.plan.Plan.work`, public quantities), so fitting needs no rerun.

Fit: TIME[term] ≥ 0 minimising Σ (log Σ_term TIME[term]·work[term] − log seconds)² over the training
runs (70 %, every configuration whose index mod 10 is 3 or more), with a weak pull (weight 0.05 in log
units) towards the previous coefficients so that a term the grid barely exercises keeps its value.  The
error is max(predicted/actual, actual/predicted) on the held-out 30 %: median and 90th percentile.
Results: ``benchmarks/results/plan_time.csv``; the fitted TIME and TIME_ERROR are printed for
``dpsynth/plan/coefficients.py``.  NOT PRIVATE: synthetic data only (and, when present, the loans table
of ``benchmarks/fetch_raw.py`` as an extra check, reported apart).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "plan_time.csv"
LOANS = Path("/work/rawdata/loans.csv")
TIMEOUT = 240.0

ALGORITHMS = [  # (label, algorithm, params, delta)
    ("laplace", "laplace", {}, 0.0),
    ("laplace-mw", "laplace", {"synthesis": "mw"}, 0.0),
    ("mwem-pgm-5", "mwem", {"variant": "pgm", "iterations": 5}, 0.0),
    ("mwem-pgm-20", "mwem", {"variant": "pgm", "iterations": 20}, 1e-6),
    ("mwem-paper-5", "mwem", {"variant": "paper", "iterations": 5}, 0.0),
    ("mwem-paper-30", "mwem", {"variant": "paper", "iterations": 30}, 0.0),
    ("ireduct", "ireduct", {}, 0.0),
    ("twophase", "twophase", {}, 0.0),
    ("iresamp", "iresamp", {}, 0.0),
    ("fourier", "fourier", {}, 0.0),
    ("auto", "auto", {}, 1e-6),
]
ROWS = (2_000, 20_000, 100_000)
COLUMNS = (6, 12, 24, 48)
VALUES = (2, 4, 10)
ORDERS = (1, 2, 3)


def grid(seed: int) -> list[dict]:
    """Every admissible configuration, in a seeded random order (public quantities only)."""
    out = []
    for (label, alg, params, delta), n, d, m, k in itertools.product(ALGORITHMS, ROWS, COLUMNS, VALUES, ORDERS):
        marginals = math.comb(d, k)
        cells = marginals * m**k
        if marginals > 1200 or cells > 3_000_000:
            continue
        if alg == "fourier" and m**d * sum(math.comb(d, j) * (m - 1) ** j for j in range(k + 1)) > 50_000_000:
            continue
        if alg == "mwem" and params.get("variant") == "paper" and m**d > 10**12 and k > 1:
            continue
        out.append({"label": label, "algorithm": alg, "params": params, "delta": delta, "rows": n, "columns": d,
                    "values": m, "k": k})
    rng = np.random.default_rng(seed)
    return [out[i] for i in rng.permutation(len(out))]


def _table(path: Path, n: int, d: int, m: int) -> None:
    rng = np.random.default_rng(n + 7 * d + 131 * m)
    codes = rng.integers(0, m, size=(n, d))
    for j in range(1, d):  # each column copies the previous one half of the time
        copy = rng.random(n) < 0.5
        codes[copy, j] = codes[copy, j - 1]
    header = ",".join(f"c{j}" for j in range(d))
    np.savetxt(path, codes, fmt="%d", delimiter=",", header=header, comments="")


def _config(cell: dict) -> dict:
    d, m = cell["columns"], cell["values"]
    return {
        "schema": {"columns": {f"c{j}": {"type": "categorical", "categories": list(range(m))} for j in range(d)}},
        "privacy": {"epsilon": 1.0, "delta": cell["delta"]},
        "algorithm": {"name": cell["algorithm"], "params": cell["params"]},
        "workload": {"marginals": {"k": cell["k"]}},
    }


def _run(config_path: Path, data: Path, out: Path) -> tuple[int, float, float]:
    """(exit code, wall seconds, CPU seconds of the child: user + system, from ``os.wait4``)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpsynth", "release", "-c", str(config_path), "-i", str(data), "-o", str(out),
         "--seed", "1", "--silent", "--force"], cwd=ROOT, stderr=subprocess.DEVNULL, start_new_session=True)
    # the child's own session: the timer kills only what this benchmark started
    timer = threading.Timer(TIMEOUT, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


def _plan(raw: dict, rows: int):
    from dpsynth.config import parse_config
    from dpsynth.plan import make_plan

    return make_plan(parse_config(raw), rows=rows)


def measure(minutes: float, seed: int, start: int = 0) -> list[dict]:
    cells = grid(seed)
    records = []
    deadline = time.monotonic() + 60 * minutes
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        for i, cell in enumerate(cells):
            if i < start:
                continue
            if time.monotonic() > deadline:
                break
            data = tmpdir / f"t_{cell['rows']}_{cell['columns']}_{cell['values']}.csv"
            if not data.exists():
                _table(data, cell["rows"], cell["columns"], cell["values"])
            raw = _config(cell)
            plan = _plan(raw, cell["rows"])
            cfg = tmpdir / "c.yaml"
            cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
            code, wall, secs = _run(cfg, data, tmpdir / "o.csv")
            rec = {"index": i, "split": "test" if i % 10 < 3 else "train", **{k: cell[k] for k in (
                "label", "rows", "columns", "values", "k")}, "exit": code, "seconds": round(secs, 3),
                "wall": round(wall, 3), "load": round(os.getloadavg()[0], 2),
                "predicted": round(plan.seconds, 3), "fixed": plan.alg.seconds, "work": json.dumps(plan.work)}
            records.append(rec)
            print(f"{i:3d} {rec['split']:5s} {cell['label']:13s} n={cell['rows']:>6} d={cell['columns']:>2} "
                  f"m={cell['values']:>2} k={cell['k']} exit {code:>3}  cpu {secs:7.2f} s  wall {wall:7.2f} s  "
                  f"(plan {plan.seconds:7.2f} s)",
                  flush=True)
        if LOANS.exists():
            raw = yaml.safe_load((ROOT / "benchmarks" / "raw_configs" / "loans.yaml").read_text())
            plan = _plan(raw, 10_000)
            cfg = tmpdir / "c.yaml"
            cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
            code, wall, secs = _run(cfg, LOANS, tmpdir / "o.csv")
            records.append({"index": -1, "split": "loans", "label": "auto", "rows": 10_000, "columns": 54,
                            "values": 0, "k": 2, "exit": code, "seconds": round(secs, 3), "wall": round(wall, 3),
                            "load": round(os.getloadavg()[0], 2),
                            "predicted": round(plan.seconds, 3), "fixed": plan.alg.seconds,
                            "work": json.dumps(plan.work)})
            print(f"loans (issue 26): exit {code}, cpu {secs:.2f} s, wall {wall:.2f} s (plan {plan.seconds:.2f} s)",
                  flush=True)
    return records


def replan(record: dict) -> dict:
    """``record`` with its work terms recomputed by the current predictors (after a predictor changed)."""
    if record["split"] == "loans":
        raw = yaml.safe_load((ROOT / "benchmarks" / "raw_configs" / "loans.yaml").read_text())
    else:
        _, alg, params, delta = next(a for a in ALGORITHMS if a[0] == record["label"])
        raw = _config({"algorithm": alg, "params": params, "delta": delta, "rows": int(record["rows"]),
                       "columns": int(record["columns"]), "values": int(record["values"]), "k": int(record["k"])})
    plan = _plan(raw, int(record["rows"]))
    return {**record, "fixed": plan.alg.seconds, "work": json.dumps(plan.work)}


def fit(records: list[dict], prior: dict[str, float]) -> dict[str, float]:
    """Least squares on log time (module docstring); only terms with work in the training runs move."""
    from scipy.optimize import least_squares

    train = [r for r in records if r["split"] == "train" and r["exit"] == 0]
    terms = sorted({t for r in train for t, v in json.loads(r["work"]).items() if v > 0})
    work = np.array([[json.loads(r["work"]).get(t, 0.0) for t in terms] for r in train])
    fixed = np.array([float(r["fixed"]) for r in train])
    target = np.log([float(r["seconds"]) for r in train])
    start = np.log([prior[t] for t in terms])

    def residuals(theta):
        pred = work @ np.exp(theta) + fixed
        return np.concatenate([np.log(pred) - target, 0.05 * (theta - start)])

    sol = least_squares(residuals, start)
    return {**prior, **{t: float(f"{c:.3g}") for t, c in zip(terms, np.exp(sol.x))}}


def errors(records: list[dict], coef: dict[str, float], split: str) -> np.ndarray:
    rows = [r for r in records if r["split"] == split and r["exit"] == 0]
    pred = np.array([sum(coef[t] * v for t, v in json.loads(r["work"]).items()) + float(r["fixed"]) for r in rows])
    actual = np.array([float(r["seconds"]) for r in rows])
    return np.maximum(pred / actual, actual / pred)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="bench_plan time", description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=15.0, help="measuring time budget")
    ap.add_argument("--seed", type=int, default=0, help="order of the grid")
    ap.add_argument("--fit-only", action="store_true", help=f"refit from {RESULTS.relative_to(ROOT)}")
    ap.add_argument("--append", action="store_true", help="add to the saved runs (continue the grid after them)")
    args = ap.parse_args(argv)
    if args.fit_only:
        with RESULTS.open() as fh:
            records = [{**r, "exit": int(r["exit"])} for r in csv.DictReader(fh)]
    else:
        old = []
        if args.append and RESULTS.exists():
            with RESULTS.open() as fh:
                old = [{**r, "exit": int(r["exit"])} for r in csv.DictReader(fh)]
        start = 1 + max((int(r["index"]) for r in old), default=-1)
        records = old + [r for r in measure(args.minutes, args.seed, start) if not (old and r["split"] == "loans")]
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(records[0]))
            writer.writeheader()
            writer.writerows(records)
    records = [replan(r) for r in records]  # the work terms of the current predictors
    from dpsynth.plan.coefficients import TIME

    before = errors(records, TIME, "test")
    coef = fit(records, TIME)
    after, train = errors(records, coef, "test"), errors(records, coef, "train")
    failed = sum(1 for r in records if r["exit"] != 0)
    print(f"runs: {len(records)} ({failed} not exit 0, left out); train {len(train)}, held out {len(after)}")
    print(f"held-out ratio before the fit: median x{np.median(before):.2f}, 90th percentile "
          f"x{np.percentile(before, 90):.2f}, worst x{before.max():.1f}")
    print(f"held-out ratio after the fit:  median x{np.median(after):.2f}, 90th percentile "
          f"x{np.percentile(after, 90):.2f}, worst x{after.max():.1f}")
    print(f"training ratio after the fit:  median x{np.median(train):.2f}, 90th percentile x{np.percentile(train, 90):.2f}")
    loans = errors(records, coef, "loans")
    if loans.size:
        r = next(r for r in records if r["split"] == "loans")
        pred = sum(coef[t] * v for t, v in json.loads(r["work"]).items())
        print(f"loans (issue 26): predicted {pred:.1f} s, measured {float(r['seconds']):.1f} s (x{loans[0]:.2f})")
    print("TIME = " + json.dumps(coef, indent=4))
    print(f'TIME_ERROR = {{"median": {np.median(after):.2g}, "p90": {np.percentile(after, 90):.2g}, '
          f'"configs": {len(after)}}}')

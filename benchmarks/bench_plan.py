"""Predicted (``dpsynth plan``) against measured peak memory and time of ``dpsynth release``.

    nice -n 10 python -m benchmarks.bench_plan [--limit-gb 6]           # memory
    nice -n 10 python -m benchmarks.bench_plan time [--minutes 15]      # time: measure, then fit
    python -m benchmarks.bench_plan time --fit-only                     # refit from the saved runs

Time (``time``, :mod:`benchmarks.bench_time`): releases over a seeded grid of public quantities
(rows, columns, values per column, workload order, algorithm, rounds), synthetic tables; the time
model's coefficients are fitted by least squares on log time on 70 % of the runs and its error
(predicted/actual) is stated on the other 30 %.

Each cell of the grid writes a config variant of ``configs/adult.yaml`` and runs
``python -m dpsynth release`` in a child process under an address-space limit
(``RLIMIT_AS``, like ``ulimit -v``: a wrong prediction cannot take the machine
down).  The measured peak is the child's ``ru_maxrss`` from ``os.wait4`` (its own
peak resident set, not the maximum over all children).  The prediction is
:func:`dpsynth.plan.make_plan` with the row count estimated from the input file
size, exactly as ``release`` computes it before refusing.

The issue-15 case (``workload.marginals: {k: 5}`` with laplace on Adult:
3,003 marginals, 253 M cells) is not run by default: the benchmark checks that
``release --max-memory 2GB`` refuses it before reading the data, and prints the
prediction; ``--heavy`` also runs it under the address-space limit (about 4 GB and
10 minutes on a 2-core machine).
NOT PRIVATE: the figures are about the run, not the data, but the runs read the real table.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
ADULT = ROOT / "sample_data" / "adult.csv"

QUICK = [
    ("laplace", {}, 2, None),
    ("laplace", {}, 3, None),
    ("laplace", {}, 4, None),
    ("mwem", {}, 3, None),
    ("mwem", {}, 4, None),
    ("ireduct", {}, 3, 1000),
    ("twophase", {}, 3, 1000),
    ("iresamp", {}, 3, 1000),
    ("dualquery", {"T": 5, "s": 20}, 3, 1000),
]


def _config(algorithm: str, params: dict, k: int, rows: int | None) -> dict:
    raw = yaml.safe_load((ROOT / "configs" / "adult.yaml").read_text())
    raw["algorithm"] = {"name": algorithm, "params": params}
    raw["workload"] = {"marginals": {"k": k}}
    if rows is not None:
        raw["output"] = {"rows": rows}
    return raw


def measure(raw: dict, input_path: Path, *, limit_gb: float, extra: tuple[str, ...] = ()) -> tuple[int, float, float, str]:
    """(exit code, peak MB, seconds, last stderr line) of one release in a child process."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "c.yaml"
        cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
        limit = int(limit_gb * (1 << 30))

        def guard() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "dpsynth", "release", "-c", str(cfg), "-i", str(input_path),
             "-o", str(Path(tmp) / "o.csv"), "--seed", "1", "--silent", *extra],
            preexec_fn=guard, stderr=subprocess.PIPE, cwd=ROOT,  # noqa: PLW1509  (the parent has one thread)
        )
        _, status, usage = os.wait4(proc.pid, 0)
        err = proc.stderr.read().decode(errors="replace").strip().splitlines()
        proc.stderr.close()
        return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024, time.perf_counter() - t0, (err or [""])[-1]


def predict(raw: dict, input_path: Path) -> tuple[float, float]:
    """(predicted peak MB, predicted seconds) as release computes them."""
    from dpsynth.config import parse_config
    from dpsynth.plan import make_plan

    plan = make_plan(parse_config(raw), input_path=str(input_path))
    return plan.peak_memory / (1 << 20), plan.seconds


def main() -> None:
    if sys.argv[1:2] == ["time"]:
        from benchmarks.bench_time import main as time_main

        return time_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit-gb", type=float, default=6.0, help="address-space limit of each child (GB)")
    ap.add_argument("--heavy", action="store_true", help="also run the issue's k=5 laplace case (~4 GB)")
    args = ap.parse_args()
    print(f"{'algorithm':9s} {'k':>2s} {'rows out':>8s} {'predicted MB':>12s} {'measured MB':>11s} {'error':>7s} "
          f"{'pred. s':>8s} {'meas. s':>8s}  exit")
    worst = (0.0, "")
    for algorithm, params, k, rows in QUICK:
        raw = _config(algorithm, params, k, rows)
        pred_mb, pred_s = predict(raw, ADULT)
        code, peak, secs, last = measure(raw, ADULT, limit_gb=args.limit_gb)
        err = (pred_mb - peak) / peak
        label = f"{algorithm} k={k}"
        if abs(err) > abs(worst[0]):
            worst = (err, label)
        print(f"{algorithm:9s} {k:>2d} {rows or 'n':>8} {pred_mb:12.0f} {peak:11.0f} {err:+7.0%} {pred_s:8.0f} {secs:8.0f}  "
              f"{code}{' ' + last if code else ''}", flush=True)
    raw = _config("laplace", {}, 5, None)
    pred_mb, pred_s = predict(raw, ADULT)
    code, peak, secs, last = measure(raw, ADULT, limit_gb=args.limit_gb, extra=("--max-memory", "2GB"))
    print(f"issue case laplace k=5: predicted {pred_mb:.0f} MB, {pred_s:.0f} s; with --max-memory 2GB: exit {code} "
          f"after {secs:.1f} s, peak {peak:.0f} MB: {last}")
    if args.heavy:
        code, peak, secs, last = measure(raw, ADULT, limit_gb=max(args.limit_gb, 7.0))
        err = (pred_mb - peak) / peak
        print(f"issue case laplace k=5 run: measured {peak:.0f} MB ({err:+.0%}), {secs:.0f} s, exit {code}")
        if abs(err) > abs(worst[0]):
            worst = (err, "laplace k=5")
    print(f"largest prediction error: {worst[0]:+.0%} ({worst[1]})")


if __name__ == "__main__":
    main()

"""Fit once, sample many: model file size, `dpsynth sample` speed and memory, 10⁷-row release memory.

Every measurement runs the real CLI in a child process and reads the child's own resource usage
(``os.wait4``): wall time, CPU time (user + system) and peak RSS.  The machine is shared, so the
load average is recorded next to every figure, and throughput is given both per wall second and per
CPU second (what an idle machine would approach)::

    nice -n 10 python -m benchmarks.bench_sample --rows 1e7                     # sample benchmark
    nice -n 10 python -m benchmarks.bench_sample --rows 1e7 --release-input /tmp/dpsynth-big/adult_10000000.parquet

``--release-input`` (a 10⁷-row Adult table from ``benchmarks.make_big``) adds the release benchmark:
``dpsynth release --engine stream`` with ``output.rows: n`` (10⁷ synthetic rows) against the same
release writing 10⁵ rows (the counting engine's own footprint).  Results: ``benchmarks/results/sample.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "sample.json"


def _run(args: list[str]) -> dict:
    """Run ``python -m dpsynth ARGS``; wall s, CPU s, peak MB of the child, load averages around it."""
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "dpsynth", *args], env=env, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"dpsynth {' '.join(args)} failed: {err.strip()}")
    return {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_mb": round(usage.ru_maxrss / 1024.0, 1), "load_before": round(load0, 2),
            "load_after": round(os.getloadavg()[0], 2)}


def bench_sample(tmp: Path, rows: int, formats: list[str]) -> dict:
    model = tmp / "adult-mwem.dpm"
    fit = _run(["release", "-c", str(ROOT / "configs/adult-mwem.yaml"), "-i", str(ROOT / "sample_data/adult.csv"),
                "-o", str(tmp / "fit.csv"), "--model", str(model), "--seed", "0", "-q"])
    out = {"model": {"config": "configs/adult-mwem.yaml", "bytes": model.stat().st_size, "release": fit},
           "sample": {}}
    for fmt in formats:
        dest = tmp / f"rows.{fmt}"
        r = _run(["sample", "-m", str(model), "-n", str(rows), "-o", str(dest), "--seed", "1", "-q", "--force"])
        r.update(rows=rows, output_mb=round(dest.stat().st_size / 1e6, 1),
                 rows_per_wall_s=round(rows / r["wall_s"]), rows_per_cpu_s=round(rows / max(r["cpu_s"], 1e-9)))
        out["sample"][fmt] = r
        dest.unlink()
        print(f"sample {fmt:8s} {rows:,} rows: {r}", flush=True)
    return out


def bench_release(tmp: Path, source: Path) -> dict:
    """``release --engine stream`` of a 10⁷-row table: 10⁷ synthetic rows vs 10⁵ (engine footprint)."""
    raw = yaml.safe_load((ROOT / "configs/adult.yaml").read_text())
    out = {}
    for label, rows in (("rows_1e5", 100_000), ("rows_n", "n")):
        cfg = tmp / f"adult_{label}.yaml"
        cfg.write_text(yaml.safe_dump({**raw, "output": {**raw.get("output", {}), "rows": rows}}, sort_keys=False))
        dest = tmp / "release.parquet"
        r = _run(["release", "-c", str(cfg), "-i", str(source), "-o", str(dest), "--engine", "stream",
                  "--seed", "0", "-q", "--force"])
        r["synthetic_rows"] = json.loads(Path(f"{dest}.report.json").read_text())["output"]["rows"]
        out[label] = r
        print(f"release {label}: {r}", flush=True)
    out["output_cost_mb"] = round(out["rows_n"]["peak_mb"] - out["rows_1e5"]["peak_mb"], 1)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--formats", nargs="+", default=["parquet", "csv", "csv.gz"])
    ap.add_argument("--release-input", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="dpsynth-bench-sample-"))
    try:
        results = {"machine": {"cpus": os.cpu_count()}, **bench_sample(tmp, int(args.rows), args.formats)}
        if args.release_input is not None:
            results["release"] = bench_release(tmp, args.release_input)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

"""Counts-engine benchmarks: stream counting throughput and memory, release time vs rows per engine.

Inputs are Adult resamples made by ``benchmarks.make_big`` under /tmp/dpsynth-big
(generated on demand; never in the repository).  Every measurement runs in a
fresh child process (spawn) that reports its wall time and peak resident set
size (``ru_maxrss``: interpreter, numpy, pandas, pyarrow included; for Spark
the JVM is another process and is NOT included).  Run with ``nice``::

    nice python -m benchmarks.bench_engines throughput --rows 1e7
    nice python -m benchmarks.bench_engines memory --rows 1e7 --algorithms laplace mwem ireduct
    nice python -m benchmarks.bench_engines scaling --rows 1e4 1e5 1e6 1e7 --algorithms laplace mwem ireduct \\
        --engines numpy stream spark

``throughput``: (a) the stream engine's pass (parse + discretize + spill) in
rows/s for CSV and Parquet; (b) all 105 two-way Adult marginals answered from
the spilled codes vs the same marginals by :class:`dpsynth.data.counts.ArrayCounts`
(plain in-memory numpy bincount) over the same codes held in memory.
``memory``: peak RSS of a whole release (``release_from_source``, stream
engine, output rows = ``--out-rows``, default the config's ``n``), nothing written.
``scaling``: release time vs input rows.  The numpy engine is skipped above
``--numpy-max`` rows (its pandas table of 10⁷ Adult rows needs several GB).
These figures read the (synthetic-resample) data and are NOT differentially private.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import multiprocessing as mp
import os
import resource
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {"laplace": "configs/adult.yaml", "mwem": "configs/adult-mwem.yaml", "ireduct": "configs/adult-ireduct.yaml"}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _child(target, *args):
    """Run ``target(*args)`` in a fresh process; returns its result dict (with peak_mb)."""
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        return pool.apply(target, args)


# ----------------------------------------------------------------------- children
def _stream_pass(path: str) -> dict:
    from dpsynth.config import load_config
    from dpsynth.data.engines.stream import StreamCounts

    cfg = load_config(ROOT / "configs/adult.yaml")
    t0 = time.perf_counter()
    with StreamCounts(path, cfg.domain) as counts:
        t1 = time.perf_counter()
        pairs = list(itertools.combinations(range(len(cfg.domain)), 2))
        counts.marginals(pairs)
        t2 = time.perf_counter()
        n = counts.n
    return {"n": n, "pass_s": t1 - t0, "marginals_s": t2 - t1, "peak_mb": _peak_mb()}


def _in_memory(path: str) -> dict:
    """The same codes held in memory (read back from the stream spill), counted by ArrayCounts."""
    import numpy as np

    from dpsynth.config import load_config
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.data.engines.stream import StreamCounts

    cfg = load_config(ROOT / "configs/adult.yaml")
    d = len(cfg.domain)
    with StreamCounts(path, cfg.domain) as counts:
        codes = np.empty((counts.n, d), dtype=np.uint8)
        for j in range(d):  # loop over columns
            codes[:, j] = counts._spill.read(j, 0, counts.n)
    mem = ArrayCounts(codes, cfg.domain)
    del codes
    t1 = time.perf_counter()
    mem.marginals(list(itertools.combinations(range(d), 2)))
    return {"n": mem.n, "marginals_s": time.perf_counter() - t1, "peak_mb": _peak_mb()}


def _numpy_engine(path: str) -> dict:
    from dpsynth.config import load_config
    from dpsynth.data.engines import open_counts

    cfg = load_config(ROOT / "configs/adult.yaml")
    t0 = time.perf_counter()
    counts = open_counts(path, cfg.domain, engine="numpy")
    t1 = time.perf_counter()
    counts.marginals(list(itertools.combinations(range(len(cfg.domain)), 2)))
    return {"n": counts.n, "pass_s": t1 - t0, "marginals_s": time.perf_counter() - t1, "peak_mb": _peak_mb()}


def _release(path: str, algorithm: str, engine: str, out_rows: int | None) -> dict:
    import numpy as np

    from dpsynth.config import load_config
    from dpsynth.pipeline import release_from_source

    cfg = load_config(ROOT / CONFIGS[algorithm])
    if out_rows is not None:
        cfg = dataclasses.replace(cfg, output=dataclasses.replace(cfg.output, rows=out_rows))
    t0 = time.perf_counter()
    result = release_from_source(path, cfg, engine=engine, rng=np.random.default_rng(0), seeded=True,
                                 spark_master="local[2]" if engine == "spark" else None)
    rows_out = sum(len(chunk) for chunk in result.chunks())  # drawn and decoded in chunks, as the CLI writes them
    return {"release_s": time.perf_counter() - t0, "rows_out": rows_out, "peak_mb": _peak_mb()}


# ----------------------------------------------------------------------- commands
def _data(rows: int, fmt: str) -> str:
    from benchmarks.make_big import make

    return str(make(rows, fmt))


def throughput(args) -> None:
    for rows in args.rows:
        for fmt in ("csv", "parquet"):
            r = _child(_stream_pass, _data(rows, fmt))
            print(f"stream pass  {fmt:7s} n={r['n']:>9,d}: {r['pass_s']:7.1f} s  {r['n'] / r['pass_s']:>12,.0f} rows/s"
                  f"  | 105 2-way marginals from spill {r['marginals_s']:6.2f} s"
                  f" ({105 * r['n'] / r['marginals_s']:,.0f} row-marginals/s)  peak {r['peak_mb']:,.0f} MB")
        m = _child(_in_memory, _data(rows, "parquet"))
        print(f"in-memory    numpy   n={m['n']:>9,d}: 105 2-way marginals (ArrayCounts bincount)"
              f" {m['marginals_s']:6.2f} s"
              f" ({105 * m['n'] / m['marginals_s']:,.0f} row-marginals/s)  peak {m['peak_mb']:,.0f} MB"
              f"  | stream/in-memory time ratio {r['marginals_s'] / m['marginals_s']:.2f}")
        if rows <= args.numpy_max:
            e = _child(_numpy_engine, _data(rows, "csv"))
            print(f"numpy engine csv     n={e['n']:>9,d}: read+encode {e['pass_s']:7.1f} s"
                  f"  {e['n'] / e['pass_s']:>12,.0f} rows/s | marginals {e['marginals_s']:6.2f} s"
                  f"  peak {e['peak_mb']:,.0f} MB")


def memory(args) -> None:
    for rows in args.rows:
        path = _data(rows, "csv")
        for alg in args.algorithms:
            r = _child(_release, path, alg, "stream", args.out_rows)
            print(f"stream release {alg:8s} n={rows:>9,d} rows_out={r['rows_out']:>9,d}: {r['release_s']:7.1f} s"
                  f"  peak {r['peak_mb']:,.0f} MB")


def scaling(args) -> None:
    print(f"{'algorithm':9s} {'engine':7s} {'rows':>10s} {'release s':>10s} {'peak MB':>9s}")
    for alg in args.algorithms:
        for rows in args.rows:
            for engine in args.engines:
                if engine == "numpy" and rows > args.numpy_max:
                    print(f"{alg:9s} {engine:7s} {rows:>10,d} {'skipped (memory)':>20s}")
                    continue
                try:
                    r = _child(_release, _data(rows, "csv"), alg, engine, args.out_rows)
                except Exception as exc:  # noqa: BLE001  (e.g. pyspark missing: report and go on)
                    print(f"{alg:9s} {engine:7s} {rows:>10,d} failed: {type(exc).__name__}: {exc}")
                    continue
                print(f"{alg:9s} {engine:7s} {rows:>10,d} {r['release_s']:>10.1f} {r['peak_mb']:>9,.0f}", flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["throughput", "memory", "scaling"])
    ap.add_argument("--rows", nargs="+", default=["1e7"])
    ap.add_argument("--algorithms", nargs="+", default=["laplace"], choices=sorted(CONFIGS))
    ap.add_argument("--engines", nargs="+", default=["numpy", "stream"], choices=["numpy", "stream", "spark"])
    ap.add_argument("--out-rows", type=float, default=None, help="synthetic rows (default: the config's, n)")
    ap.add_argument("--numpy-max", type=float, default=1e6, help="largest input for the numpy engine")
    args = ap.parse_args(argv)
    args.rows = [int(float(r)) for r in args.rows]
    args.out_rows = int(args.out_rows) if args.out_rows else None
    args.numpy_max = int(args.numpy_max)
    os.chdir(ROOT)
    {"throughput": throughput, "memory": memory, "scaling": scaling}[args.command](args)


if __name__ == "__main__":
    main()

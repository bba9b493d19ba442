"""Shared helpers of the paper benchmarks: data, contexts, output files, tables and PNGs.

NOT PRIVATE: these scripts read the real tables and print exact errors; they are for comparing
dpsynth with the papers, never for publishing.
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.schema import CategoricalColumn, Domain
from dpsynth.privacy import Neighbouring
from dpsynth.privacy.accountant import Ledger

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
OUT = ROOT / "benchmarks" / "results" / "papers"


def parser(doc: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--runs", type=int, default=None, help="repetitions per point (default: the script's)")
    ap.add_argument("--quick", action="store_true", help="a few seconds: smallest grid (smoke test)")
    ap.add_argument("--out", type=Path, default=OUT, help=f"where the CSV and PNG go (default {OUT})")
    ap.add_argument("--replot", action="store_true", help="only redraw the PNG from the CSV in --out")
    return ap


def binary_table(relative: str) -> tuple[np.ndarray, list[str]] | None:
    """A 0/1 table from shared/data (rows × columns of codes), or None when absent."""
    path = SHARED / relative
    if not path.exists():
        print(f"{relative}: not available, skipped")
        return None
    df = pd.read_csv(path)
    return df.to_numpy(dtype=np.int64), list(df.columns)


def binary_ctx(codes: np.ndarray, names: Sequence[str], epsilon: float, workload) -> AlgorithmContext:
    """An algorithm context over binary columns, n public, add-remove neighbours (the papers' setting)."""
    domain = Domain(tuple(CategoricalColumn(n, (0, 1)) for n in names))
    counts = ArrayCounts(codes, domain)
    return AlgorithmContext(domain=domain, counts=counts, ledger=Ledger(epsilon), neighbouring=Neighbouring.ADD_REMOVE,
                            n=float(counts.n), rows=counts.n, workload=tuple(workload))


def adult_counts() -> ArrayCounts:
    """Adult (sample_data/adult.csv, 32,561 rows) encoded with the public schema of configs/adult.yaml."""
    import yaml

    from dpsynth.config import parse_config
    from dpsynth.data.discretize import encode
    from dpsynth.data.io import read_table

    cfg = parse_config(yaml.safe_load((ROOT / "configs" / "adult.yaml").read_text()))
    strings = [c.name for c in cfg.domain.columns if c.kind == "categorical"]
    table = read_table(str(ROOT / "sample_data" / "adult.csv"), string_columns=strings)
    return ArrayCounts(encode(table, cfg.domain, unknown=cfg.unknown), cfg.domain)


def counts_ctx(counts, workload, epsilon: float) -> AlgorithmContext:
    """An algorithm context over ``counts``, n public, add-remove neighbours (the papers' setting)."""
    return AlgorithmContext(domain=counts.domain, counts=counts, ledger=Ledger(epsilon),
                            neighbouring=Neighbouring.ADD_REMOVE, n=float(counts.n), rows=counts.n,
                            workload=tuple(workload))


def all_k_way(d: int, k: int) -> list[tuple[int, ...]]:
    return list(itertools.combinations(range(d), k))


def full_table(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    flat = np.ravel_multi_index(codes.T, tuple(sizes))
    return np.bincount(flat, minlength=int(np.prod(sizes))).reshape(tuple(sizes))


def mean_sd(values) -> str:
    v = np.asarray(values, dtype=float)
    if np.isinf(v).any():
        finite = v[np.isfinite(v)]
        return f"inf in {int(np.isinf(v).sum())}/{v.size}" + (f", rest {finite.mean():.3f}" if finite.size else "")
    return f"{v.mean():8.4f} ± {v.std():6.4f}"


def save(df: pd.DataFrame, out: Path, name: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.csv"
    df.to_csv(path, index=False)
    return path


def figure(panels: int, width: float = 4.4):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * panels, 3.8), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(1, panels, squeeze=False)[0]


def write_png(fig, out: Path, name: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    fig.suptitle("NOT PRIVATE: computed from the real tables", fontsize=8, color="#d62728")
    fig.savefig(path)
    return path


class Clock:
    """Wall time of the whole script (printed at the end; never asserted)."""

    def __init__(self):
        self.t0 = time.perf_counter()

    def __str__(self) -> str:
        return f"{time.perf_counter() - self.t0:.0f} s"

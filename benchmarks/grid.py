"""Declared benchmark grids: dataset × algorithm × ε × seed.

A *cell* is one release: a dataset's public config (``configs/<name>.yaml``)
with ``algorithm``, ``privacy.epsilon`` / ``privacy.delta`` and ``workload``
replaced by the algorithm's preset below.  Everything here is public: the
parameters, the workloads, the seeds and the sample of evaluated marginals.

Workloads (what each algorithm is asked to measure):

* ``laplace``, ``ireduct``, ``twophase``, ``iresamp``: all 2-way marginals
  (the iReduct paper's setting, §6; ``laplace`` is the equal-noise baseline);
* ``mwem``: all 3-way marginals (cuboid queries, §3.3), a public sample of 300
  on wide data;
* ``dualquery``: every cell of every 3-way marginal as a conjunction (§7), a
  public sample of ``count`` conjunctions on wide data.  DualQuery is
  (ε, δ)-DP with δ = 10⁻³ (the paper's setting); every other algorithm here is
  pure ε-DP (δ = 0).

Accuracy is always measured on 3-way marginals (see worker.py), whatever the
algorithm measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"

__all__ = ["DATASETS", "GRIDS", "ROOT", "SCALING", "SHARED", "Cell", "Dataset", "Grid", "algorithm_preset", "cells"]


@dataclass(frozen=True, kw_only=True)
class Dataset:
    """A table, its public config, and how to evaluate it."""

    name: str
    config: Path
    data: Path
    binary: bool = False
    eval_sample: int | None = None
    """Evaluate a fixed public random sample of this many 3-way marginals (None: all)."""
    wide: bool = False
    """Wide data: MWEM and DualQuery get sampled workloads."""

    @property
    def available(self) -> bool:
        return self.data.is_file() and self.config.is_file()


def _ds(name, config, data, **kw) -> Dataset:
    return Dataset(name=name, config=ROOT / "configs" / config, data=data, **kw)


DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        _ds("adult", "adult.yaml", ROOT / "sample_data" / "adult.csv"),
        _ds("nltcs", "nltcs.yaml", ROOT / "sample_data" / "nltcs.csv", binary=True),
        _ds("mildew", "mildew.yaml", SHARED / "mildew" / "mildew.csv", binary=True),
        _ds("rochdale", "rochdale.yaml", SHARED / "rochdale" / "rochdale.csv", binary=True),
        _ds("czech", "czech.yaml", SHARED / "czech_autoworkers" / "czech.csv", binary=True),
        _ds("pums", "pums.yaml", SHARED / "pums" / "PUMS.csv"),
        _ds("kddcup99", "kddcup99.yaml", SHARED / "kddcup99" / "kddcup99_10pct.csv.gz", eval_sample=500, wide=True),
        _ds("netflix", "netflix.yaml", SHARED / "netflix" / "netflix.csv.gz", binary=True, eval_sample=500,
            wide=True),
    )
}


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One release to run and score."""

    dataset: str
    algorithm: str
    epsilon: float
    seed: int
    delta: float = 0.0
    params: dict = field(default_factory=dict)
    workload: dict = field(default_factory=dict)
    rows: int | None = None
    """Resample the table to this many rows first (row-scaling runs); None: as is."""

    def label(self) -> str:
        extra = f" n={self.rows}" if self.rows else ""
        return f"{self.dataset} {self.algorithm} eps={self.epsilon:g} seed={self.seed}{extra}"


@dataclass(frozen=True, kw_only=True)
class Grid:
    name: str
    datasets: tuple[str, ...]
    algorithms: tuple[str, ...]
    epsilons: dict[str, tuple[float, ...]]
    """Per dataset (key ``*`` is the default)."""
    seeds: tuple[int, ...] = (0, 1, 2)
    level: str = "quick"
    """Parameter preset: ``quick`` (small T, fast solvers) or ``full`` (the papers' settings)."""
    timeout: float = 600.0
    """Seconds before a release is killed and recorded as ``timeout``."""
    skip: frozenset = frozenset()
    """(dataset, algorithm) pairs left out (too slow or not meaningful)."""
    workload: dict | None = None
    """Replaces every algorithm's preset workload (the smoke test's cheap 1-way grid)."""


ALL = ("laplace", "mwem", "dualquery", "ireduct", "twophase", "iresamp")

GRIDS: dict[str, Grid] = {
    # For the smoke test (sample_data only): seconds in total.
    "tiny": Grid(name="tiny", datasets=("nltcs",), algorithms=("laplace",), workload={"marginals": {"k": 1}},
                 epsilons={"*": (1.0,)}, seeds=(0, 1, 2), timeout=120),
    # make bench-quick: under 5 minutes on 2 cores.
    "quick": Grid(
        name="quick",
        datasets=("adult", "nltcs", "mildew", "rochdale", "czech"),
        algorithms=("laplace", "mwem", "dualquery", "ireduct"),
        epsilons={"*": (0.1, 0.5, 1.0, 2.0), "adult": (0.1, 1.0), "nltcs": (0.1, 1.0)},
        timeout=120,
    ),
    # make bench: every dataset, every algorithm, the papers' parameters.  Hours on 2 cores.
    "full": Grid(
        name="full",
        datasets=("adult", "nltcs", "mildew", "rochdale", "czech", "pums", "kddcup99", "netflix"),
        algorithms=ALL,
        epsilons={"*": (0.1, 0.25, 0.5, 1.0, 2.0), "kddcup99": (0.5, 1.0), "netflix": (0.5, 1.0)},
        level="full",
        timeout=1800,
        skip=frozenset({("kddcup99", "iresamp"), ("kddcup99", "twophase")}),
    ),
}

# Row scaling: Adult resampled with replacement to each size, ε = 1, quick presets, accuracy not scored.
SCALING: dict[str, dict] = {
    "rows": {"dataset": "adult", "rows": (10_000, 30_000, 100_000, 300_000, 1_000_000),
             "algorithms": ("laplace", "mwem", "dualquery", "ireduct"), "seeds": (0,), "timeout": 900},
    "rows-full": {"dataset": "adult", "rows": (10_000, 100_000, 1_000_000, 10_000_000),
                  "algorithms": ALL, "seeds": (0, 1, 2), "timeout": 3600},
}


def algorithm_preset(algorithm: str, ds: Dataset, level: str, n_cols: int) -> tuple[dict, dict, float]:
    """(params, workload, delta) of ``algorithm`` on ``ds`` at preset ``level``."""
    quick = level == "quick"
    if algorithm == "mwem":
        params = {"iterations": 10 if quick else 30, "mw_passes": 10 if quick else 20}
        workload = {"marginals": {"k": 3, "sample": 300, "seed": 0}} if ds.wide else {"marginals": {"k": 3}}
        return params, workload, 0.0
    if algorithm == "dualquery":
        params = {"best_response": "local", "eta": 1.2} if quick else {
            "best_response": "hybrid", "eta": 1.2, "solver": {"time_limit": 5, "gap": 0.0, "threads": 1}}
        if ds.wide:
            count = 100_000 if not quick else 10_000
            workload = {"conjunctions": {"k": 3, "count": count, "seed": 0}}
        else:
            workload = {"conjunctions": {"k": 3}}
        return params, workload, 1e-3
    k = 1 if n_cols > 60 else 2  # Netflix (100 columns): 4,950 2-way marginals are too many for ε ≤ 1
    return {}, {"marginals": {"k": k}}, 0.0


def cells(grid: Grid, dataset: Dataset, n_cols: int) -> list[Cell]:
    """The grid's cells on one dataset (seed innermost, so a partial run has whole ε blocks)."""
    eps = grid.epsilons.get(dataset.name, grid.epsilons["*"])
    out = []
    for algorithm in grid.algorithms:
        if (dataset.name, algorithm) in grid.skip:
            continue
        params, workload, delta = algorithm_preset(algorithm, dataset, grid.level, n_cols)
        workload = grid.workload or workload
        for e in eps:
            for seed in grid.seeds:
                out.append(Cell(dataset=dataset.name, algorithm=algorithm, epsilon=e, seed=seed, delta=delta,
                                params=params, workload=workload))
    return out


def three_way_count(d: int) -> int:
    return math.comb(d, 3)

"""Run benchmark releases of ONE dataset, each in its own child process, and score them.

    python -m benchmarks.worker < spec.json     # used by benchmarks.run; prints one JSON line per result

``spec``: ``{"dataset": name, "cells": [Cell fields...], "timeout": seconds,
"rows": null | int, "baselines": true}``.

How a release is measured.  The worker loads the table once, then for every
cell forks a child that runs ``dpsynth.release`` (encode → algorithm → decode)
and writes the synthetic codes to a temporary file.  ``seconds`` is the wall
time of ``dpsynth.release`` inside the child (not reading the CSV, not
scoring).  ``peak_mb`` is the child's peak resident set size, ``ru_maxrss``
of the ``struct rusage`` that ``os.wait4`` returns for that child: the same
figure ``resource.getrusage(RUSAGE_CHILDREN)`` gives, but for one child
(``getrusage`` reports the maximum over *all* children waited for so far, so
it cannot attribute memory to the second and later releases).  A forked child
shares the worker's pages (interpreter, numpy, pandas, the table) and counts
those it touches: ``base_mb`` is the child's resident size just before the
release starts, so ``peak_mb − base_mb`` is roughly what the release added.

Accuracy is computed in the worker after the child exits, on the schema's
discretization (the config's bins), with :mod:`dpsynth.nonprivate.metrics`, over the
3-way marginals (all of them, or a fixed public sample on wide data):

* ``l1_3way``: mean over marginals of the L1 distance Σ|p − q| between the true
  and the synthetic marginal distributions (0 = identical, 2 = disjoint);
* ``max_cell_error``: the largest |p(x) − q(x)| over all evaluated cells
  (DualQuery §7's max error, on the normalised scale);
* ``cell_error``: the mean of |p(x) − q(x)| over all evaluated cells (DualQuery §7's average error);
* ``relative_error``: iReduct Definition 6 over the same marginals, synthetic
  counts rescaled to n rows, sanity bound δ = max(10⁻⁴·n, 1) (the paper's
  10⁻⁴·n, floored at one record so the tiny tables are not dominated by empty cells);
* ``re_full``: relative entropy RE(true ‖ synthetic) of the full contingency
  table (MWEM §3.2), only when it has at most 2²⁰ cells, with the synthetic
  distribution mixed with the uniform one at weight 1/(m + 1) so empty cells
  keep it finite.

Baselines are scored the same way: ``uniform`` (the uniform distribution over
the domain) and ``zeros`` (every record 0 in every column; DualQuery §7).
NOT PRIVATE: every figure here is computed from the real table.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import pandas as pd

from .grid import DATASETS, Cell

__all__ = ["Evaluator", "build_config", "load_dataset", "main", "run_release"]

FULL_TABLE_MAX_CELLS = 2**20
POLL = 0.02


# --------------------------------------------------------------------------- data
def independent_binary(columns: int, rows: int) -> tuple[dict, pd.DataFrame]:
    """Public config and table of ``columns`` independent binary columns (MWEM §4's synthetic test).

    Column j is Bernoulli(p_j) with p_j drawn once from U(0.05, 0.5) (public seed 7).
    """
    rng = np.random.default_rng(7)
    p = rng.uniform(0.05, 0.5, size=columns)
    bits = (rng.random((rows, columns)) < p).astype(np.int8)
    names = [f"b{j}" for j in range(columns)]
    raw = {"schema": {"columns": {c: {"type": "categorical", "categories": [0, 1]} for c in names}},
           "privacy": {"epsilon": 1.0, "n": "public"}, "algorithm": {"name": "laplace"},
           "workload": {"marginals": {"k": 1}}, "output": {"rows": "n"}}
    labels = np.array(["0", "1"], dtype=object)
    return raw, pd.DataFrame({c: labels[bits[:, j]] for j, c in enumerate(names)})


def load_dataset(name: str, rows: int | None = None, columns: int | None = None):
    """(raw config dict, table, Config) of a dataset, resampled to ``rows`` rows when given."""
    import yaml

    from dpsynth.config import parse_config
    from dpsynth.data.io import read_table

    ds = DATASETS[name]
    if ds.synthetic:
        raw, table = independent_binary(columns or 16, rows or 20_000)
        return raw, table, parse_config(raw)
    raw = yaml.safe_load(ds.config.read_text())
    cfg = parse_config(raw)
    table = read_table(ds.data, string_columns=cfg.domain.text_columns)
    table = table[[c for c in cfg.domain.names]]
    if rows is not None:  # row scaling: resample with replacement (public seed; a benchmark, not a release)
        idx = np.random.default_rng(12345).integers(0, len(table), size=rows)
        table = table.iloc[idx].reset_index(drop=True)
    return raw, table, cfg


def build_config(raw: dict, cell: Cell):
    """The dataset's public config with algorithm, ε, δ and workload replaced by the cell's."""
    from dpsynth.config import parse_config

    raw = json.loads(json.dumps(raw))  # deep copy
    raw["algorithm"] = {"name": cell.algorithm, "params": cell.params}
    raw["privacy"]["epsilon"] = cell.epsilon
    raw["privacy"]["delta"] = cell.delta
    raw["workload"] = cell.workload
    raw["seed"] = None
    return parse_config(raw)


# ----------------------------------------------------------------------- counting
def marginal_counts(codes: np.ndarray, sizes, attrs, cache: dict | None = None) -> np.ndarray:
    """Contingency table of ``codes`` over ``attrs`` (vectorized over rows).

    With ``cache``, the combined code of the first two attributes is kept, so
    the 3-way marginals (a, b, c), (a, b, d), … share it.
    """
    shape = tuple(sizes[a] for a in attrs)
    if cache is not None and len(attrs) == 3:
        pair = cache.get(attrs[:2])
        if pair is None:
            pair = cache[attrs[:2]] = codes[:, attrs[0]].astype(np.int64) * shape[1] + codes[:, attrs[1]]
        flat = pair * shape[2] + codes[:, attrs[2]]
    else:
        flat = np.ravel_multi_index(tuple(codes[:, a] for a in attrs), shape)
    return np.bincount(flat, minlength=math.prod(shape)).reshape(shape)


class Evaluator:
    """3-way marginal metrics against one true table (module docstring)."""

    def __init__(self, codes: np.ndarray, sizes, *, sample: int | None = None, seed: int = 0):
        from dpsynth.nonprivate import metrics as M

        self.M = M
        self.sizes = tuple(int(s) for s in sizes)
        d = len(self.sizes)
        combos = list(itertools.combinations(range(d), min(3, d)))
        self.marginals_total = len(combos)
        if sample is not None and sample < len(combos):
            pick = np.sort(np.random.default_rng(seed).choice(len(combos), size=sample, replace=False))
            combos = [combos[i] for i in pick]
        self.marginals = combos
        self.n = codes.shape[0]
        self.delta = max(1e-4 * self.n, 1.0)
        cache: dict = {}
        self.true = [marginal_counts(codes, self.sizes, m, cache) for m in combos]
        self.cells = sum(t.size for t in self.true)
        full = math.prod(self.sizes)
        self.full = marginal_counts(codes, self.sizes, tuple(range(d))) if full <= FULL_TABLE_MAX_CELLS else None

    def score(self, approx, m: int) -> dict:
        """Metrics of ``approx(attrs) -> counts`` (any positive total), a table of ``m`` rows."""
        M = self.M
        l1, mx, rel = [], 0.0, []
        for attrs, true in zip(self.marginals, self.true):  # loop over marginals
            a = np.asarray(approx(attrs), dtype=float)
            cells = M.cell_abs_errors(true, a)
            l1.append(cells.sum())
            mx = max(mx, float(cells.max()))
            rel.append(M.rescale(a, self.n))
        out = {
            "l1_3way": float(np.mean(l1)),
            "l1_3way_max": float(np.max(l1)),
            "max_cell_error": mx,
            "cell_error": float(np.sum(l1) / self.cells),
            "relative_error": M.overall_relative_error(rel, self.true, self.delta),
            "re_full": None,
        }
        if self.full is not None:
            a = np.asarray(approx(tuple(range(len(self.sizes)))), dtype=float)
            out["re_full"] = M.relative_entropy(self.full, a, smoothing=1.0 / (m + 1))
        return out

    def score_codes(self, codes: np.ndarray) -> dict:
        cache: dict = {}
        return self.score(lambda attrs: marginal_counts(codes, self.sizes, attrs, cache), codes.shape[0])

    def score_uniform(self) -> dict:
        return self.score(lambda attrs: np.ones(tuple(self.sizes[a] for a in attrs)), self.n)

    def score_zeros(self) -> dict:
        def point(attrs):
            a = np.zeros(tuple(self.sizes[x] for x in attrs))
            a[(0,) * len(attrs)] = 1.0
            return a

        return self.score(point, self.n)


# ------------------------------------------------------------------------ release
def _rss_mb() -> float:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(table, cfg, cell: Cell, out: Path) -> None:
    """Runs in the forked child: release, write codes and timing, exit without cleanup."""
    code = 1
    try:
        os.setpgid(0, 0)  # own process group: a timeout kills CBC too
        import dpsynth
        from dpsynth.data.discretize import encode

        base = _rss_mb()
        t0 = time.perf_counter()
        res = dpsynth.release(table, cfg, rng=np.random.default_rng(cell.seed))
        seconds = time.perf_counter() - t0
        codes = encode(res.synthetic, cfg.domain, unknown=cfg.unknown)
        np.save(out / "codes.npy", codes.astype(np.int32))
        privacy = res.report["privacy"]
        meta = {"seconds": seconds, "base_mb": round(base, 1), "epsilon_spent": privacy.get("epsilon_spent"),
                "delta_spent": privacy.get("delta_spent"), "warnings": len(res.report.get("warnings", []))}
        (out / "meta.json").write_text(json.dumps(meta))
        code = 0
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as the cell's status
        line = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        (out / "meta.json").write_text(json.dumps({"error": line[:300]}))
        if os.environ.get("DPSYNTH_BENCH_DEBUG"):
            traceback.print_exc()
    finally:
        os._exit(code)


def run_release(table, cfg, cell: Cell, *, timeout: float) -> dict:
    """Fork, run one release in the child, wait; returns status, times, memory and the synthetic codes."""
    with tempfile.TemporaryDirectory(prefix="dpsynth-bench-") as tmp:
        out = Path(tmp)
        sys.stdout.flush()
        sys.stderr.flush()
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            _child(table, cfg, cell, out)
        status, usage, timed_out = 0, None, False
        while True:
            wpid, status, usage = os.wait4(pid, os.WNOHANG)
            if wpid == pid:
                break
            if time.perf_counter() - t0 > timeout:
                timed_out = True
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    os.kill(pid, signal.SIGKILL)
                _, status, usage = os.wait4(pid, 0)
                break
            time.sleep(POLL)
        result = {"peak_mb": round(usage.ru_maxrss / 1024, 1),
                  "child_seconds": round(time.perf_counter() - t0, 3)}
        meta_path = out / "meta.json"
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        if timed_out:
            return result | {"status": "timeout", "error": f"killed after {timeout:g} s"}
        if "error" in meta or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            error = meta.get("error", f"child exit status {status}")
            # BudgetError: the algorithm cannot run at this (ε, n), e.g. DualQuery on 70 rows at ε = 0.1
            return result | {"status": "infeasible" if error.startswith("BudgetError") else "error", "error": error}
        return result | {"status": "ok", "codes": np.load(out / "codes.npy")} | meta


# --------------------------------------------------------------------------- main
def _row(cell_fields: dict, **values) -> dict:
    return cell_fields | values


def main(spec: dict, emit=None) -> None:
    """Run every cell of ``spec`` (module docstring) and emit one dict per result."""
    emit = emit or (lambda row: print(json.dumps(row), flush=True))
    name, rows = spec["dataset"], spec.get("rows")
    ds = DATASETS[name]
    raw, table, cfg0 = load_dataset(name, rows, spec.get("columns"))
    from dpsynth.data.discretize import encode

    true_codes = encode(table, cfg0.domain, unknown=cfg0.unknown)
    scoring = spec.get("score", True) or spec.get("baselines", True)
    ev = Evaluator(true_codes if scoring else true_codes[:1], cfg0.domain.sizes, sample=ds.eval_sample, seed=0)
    common = {"dataset": name, "n": int(true_codes.shape[0]), "columns": len(cfg0.domain),
              "marginals_evaluated": len(ev.marginals), "marginals_total": ev.marginals_total}
    if spec.get("baselines", True):
        emit(_row(common, algorithm="uniform", status="baseline", **ev.score_uniform()))
        if ds.binary or ds.zeros:
            emit(_row(common, algorithm="zeros", status="baseline", **ev.score_zeros()))
    for fields in spec["cells"]:  # loop over releases
        cell = Cell(**fields)
        base = common | {"algorithm": cell.algorithm, "epsilon": cell.epsilon, "delta": cell.delta,
                         "seed": cell.seed, "params": json.dumps(cell.params, sort_keys=True),
                         "workload": json.dumps(cell.workload, sort_keys=True)}
        try:
            cfg = build_config(raw, cell)
        except Exception as exc:  # noqa: BLE001 - a bad preset is reported, not fatal
            emit(base | {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        res = run_release(table, cfg, cell, timeout=float(spec.get("timeout", 600)))
        codes = res.pop("codes", None)
        scores = ev.score_codes(codes) if codes is not None and spec.get("score", True) else {}
        emit(base | res | scores)


if __name__ == "__main__":
    main(json.loads(sys.stdin.read()))

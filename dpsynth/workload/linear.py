"""General linear queries q: D → [−1, 1] (MWEM paper §2, "a function q mapping data records to [−1, +1]").

The answer of q on a table B is q(B) = Σ_x q(x)·B(x).  A query depends on a
set S of columns (its *support*; S may be every column) and is stored densely
over the cells of the marginal on S: q(x) = W[x_S].  Queries with the same
support are stacked into one :class:`LinearQueries` (weights of shape
(k, cells of S)), so all their answers on a marginal are one matrix product.

Configuration (``workload.linear``), exactly one of:

``file: queries.csv`` — *terms*, one line per term::

    query,weight,age,sex,race
    young men,1,"[17, 27)",Male,
    young men,-0.5,,,White
    women,1,,Female,

  The header is ``query,weight`` followed by any schema columns.  A term's
  conjunction is its non-empty column values (labels of the discretized
  columns, as in ``release --marginals``: categories, integers, numeric bins
  such as ``[17, 27)``, ``null``); q(x) is the sum of the weights of the
  query's terms whose conjunction x satisfies (0 when none).  Lines of one
  query need not be adjacent.
``file: queries.npz`` — *dense* weights: array ``weights`` of shape (k, cells)
  (or (k, size₁, size₂, …)), codes in C order over ``columns`` (an array of
  column names; default: every schema column, in schema order), optional
  ``names`` (k strings).  For small domains.
``queries: [{name: ..., columns: [...], weights: [...]}, ...]`` — the dense
  form inline in YAML (what a saved model's configuration holds).

Validation, from the configuration and the file alone (exit 64, before any row
is read): every q(x) within [−1, 1] (up to 10⁻⁹, then clipped), no query
constant over the domain, supports of at most :data:`MAX_SUPPORT_CELLS`
cells, at most :data:`MAX_WEIGHTS` stored weights in all.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpsynth.data.schema import Domain
from dpsynth.errors import ConfigError

__all__ = ["MAX_SUPPORT_CELLS", "MAX_WEIGHTS", "LinearQueries", "LinearWorkload", "parse_linear"]

MAX_SUPPORT_CELLS = 1_000_000
"""Largest marginal (cells) one query may depend on."""
MAX_WEIGHTS = 2_000_000
"""Largest number of weights all queries may store together (16 MB of float64)."""
_TOL = 1e-9
"""Slack on the [−1, 1] bound for weights that are sums of terms (0.1 + 0.2 + 0.7)."""


@dataclass(frozen=True)
class LinearQueries:
    """Linear queries sharing the support ``attrs``: ``weights`` (k, cells), ``names`` (k)."""

    attrs: tuple[int, ...]
    weights: np.ndarray
    names: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.weights.shape[0])

    def answers(self, marginal: np.ndarray) -> np.ndarray:
        """q(B) of every query, from the marginal of B over ``attrs`` (in that order)."""
        return self.weights @ np.asarray(marginal, dtype=float).reshape(-1)

    @property
    def low(self) -> np.ndarray:
        """min_x q(x) per query."""
        return self.weights.min(axis=1)

    @property
    def high(self) -> np.ndarray:
        """max_x q(x) per query."""
        return self.weights.max(axis=1)

    @property
    def integral(self) -> bool:
        """All weights are integers (−1, 0, 1), so every answer on a table of counts is an integer."""
        return bool(np.all(self.weights == np.rint(self.weights)))


@dataclass(frozen=True)
class LinearWorkload:
    """The parsed ``workload.linear`` section: query sets by support, and where they came from."""

    sets: tuple[LinearQueries, ...]
    source: dict
    spec: dict

    def __len__(self) -> int:
        return int(sum(len(s) for s in self.sets))

    def describe(self, domain: Domain) -> dict:
        """The report's entry: the source (file and its SHA-256, or inline), counts by support."""
        return {**self.source, "queries": len(self),
                "sets": [{"columns": [domain.names[a] for a in s.attrs], "queries": len(s)} for s in self.sets]}


def parse_linear(raw: Any, domain: Domain, path: str = "workload.linear") -> LinearWorkload | None:
    """Validate ``workload.linear`` (module docstring) and build the query sets; ``None`` when absent."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or len(raw) != 1 or next(iter(raw)) not in ("file", "queries"):
        raise ConfigError(f"{path}: expected a mapping with one key, file (a .csv or .npz file) or queries (a list)")
    if "queries" in raw:
        queries = _inline(raw["queries"], domain, f"{path}.queries")
        source: dict = {"source": "inline"}
    else:
        file = raw["file"]
        if not isinstance(file, str) or not file:
            raise ConfigError(f"{path}.file: expected a path to a .csv or .npz file, got {file!r}")
        p = Path(file)
        if p.suffix.lower() not in (".csv", ".npz"):
            raise ConfigError(f"{path}.file: expected a .csv (terms) or .npz (dense weights) file, got {file!r}")
        if not p.is_file():
            raise ConfigError(f"{path}.file: file not found: {file}")
        data = p.read_bytes()
        where = f"{path}.file: {file}"
        queries = _terms_csv(data, domain, where) if p.suffix.lower() == ".csv" else _dense_npz(data, domain, where)
        source = {"source": file, "sha256": hashlib.sha256(data).hexdigest()}
    return _build(queries, domain, path, source)


# --------------------------------------------------------------------------- formats
def _inline(raw: Any, domain: Domain, path: str) -> list[tuple[str, tuple[int, ...], np.ndarray]]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{path}: expected a non-empty list of {{name, columns, weights}}")
    out = []
    for j, q in enumerate(raw):
        where = f"{path}[{j}]"
        if not isinstance(q, Mapping) or not {"columns", "weights"} <= set(q) or set(q) - {"name", "columns", "weights"}:
            raise ConfigError(f"{where}: expected a mapping with columns, weights and an optional name")
        attrs = _columns(q["columns"], domain, f"{where}.columns")
        weights = _numbers(q["weights"], f"{where}.weights")
        _check_size(weights.size, attrs, domain, f"{where}.weights")
        out.append((str(q.get("name", f"query {j + 1}")), attrs, weights))
    return out


def _terms_csv(data: bytes, domain: Domain, where: str) -> list[tuple[str, tuple[int, ...], np.ndarray]]:
    """The terms format: one line per (query, weight, conjunction); dense weights per query."""
    try:
        lines = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not valid UTF-8") from None
    except csv.Error as exc:
        raise ConfigError(f"{where}: not a readable CSV file ({exc})") from None
    if not lines or [h.strip() for h in lines[0][:2]] != ["query", "weight"]:
        raise ConfigError(f"{where} line 1: the header must be query,weight followed by schema columns")
    header = [h.strip() for h in lines[0][2:]]
    for name in header:
        if name not in domain.names:
            raise ConfigError(f"{where} line 1: unknown column {name!r}")
    if len(set(header)) != len(header):
        raise ConfigError(f"{where} line 1: a column appears twice")
    cols = [domain.index(name) for name in header]
    labels = [{lab: c for c, lab in enumerate(domain.columns[a].labels())} for a in cols]
    terms: dict[str, list[tuple[float, dict[int, int]]]] = {}
    for i, line in enumerate(lines[1:], start=2):  # loop over the file's lines (public), not over data
        if not any(f.strip() for f in line):
            continue
        if len(line) != len(header) + 2:
            hint = ' (put values with commas in double quotes, e.g. "[17, 20)")' if len(line) > len(header) + 2 else ""
            raise ConfigError(f"{where} line {i}: expected {len(header) + 2} fields, got {len(line)}{hint}")
        name = line[0].strip()
        if not name:
            raise ConfigError(f"{where} line {i}: the query name is empty")
        weight = _weight(line[1], f"{where} line {i}")
        cond = {}
        for a, lab, value in zip(cols, labels, line[2:]):
            value = value.strip()
            if value and value not in lab:
                raise ConfigError(f"{where} line {i}: column {domain.names[a]!r} has no value {value!r} "
                                  f"(values: {_preview(list(lab))})")
            if value:
                cond[a] = lab[value]
        terms.setdefault(name, []).append((weight, cond))
    out, total = [], 0
    for name, ts in terms.items():  # loop over queries, each vectorized over its support's cells
        attrs = tuple(sorted({a for _, cond in ts for a in cond}))
        if not attrs:
            raise ConfigError(f"{where}: query {name!r} has no column value in any term, so q(x) is the same "
                              "for every record; give each query at least one condition")
        _check_size(0, attrs, domain, f"{where}: query {name!r}")
        total += domain.cells(attrs)
        if total > MAX_WEIGHTS:
            raise ConfigError(f"{where}: the queries store more than {MAX_WEIGHTS} weights (the cells of their "
                              "supports); use fewer queries or fewer columns per query")
        w = np.zeros(domain.shape(attrs))
        for weight, cond in ts:
            w[tuple(cond.get(a, slice(None)) for a in attrs)] += weight
        out.append((name, attrs, w.reshape(-1)))
    if not out:
        raise ConfigError(f"{where}: no queries (the file has a header only)")
    return out


def _dense_npz(data: bytes, domain: Domain, where: str) -> list[tuple[str, tuple[int, ...], np.ndarray]]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        raise ConfigError(f"{where}: not a readable .npz file (numpy.savez of arrays weights, columns, names)") from None
    extra = sorted(set(arrays) - {"weights", "columns", "names"})
    if extra or "weights" not in arrays:
        raise ConfigError(f"{where}: expected arrays weights and optionally columns and names, got "
                          f"{', '.join(sorted(arrays)) or 'none'}")
    cols = arrays.get("columns")
    attrs = (_columns([str(c) for c in np.atleast_1d(cols)], domain, f"{where}: columns") if cols is not None
             else tuple(range(len(domain))))
    cells = domain.cells(attrs)
    if cells > MAX_SUPPORT_CELLS:
        raise ConfigError(f"{where}: the columns have {cells} cells, more than the limit of {MAX_SUPPORT_CELLS} "
                          "for dense weights; write the queries as terms (.csv) over fewer columns")
    w = arrays["weights"]
    if w.dtype.kind not in "iuf" or w.ndim < 1:
        raise ConfigError(f"{where}: weights must be a numeric array of shape (queries, cells)")
    w = w.reshape(1, -1) if w.ndim == 1 else w.reshape(w.shape[0], -1)
    if w.shape[1] != cells:
        sizes = " × ".join(str(domain.sizes[a]) for a in attrs)
        raise ConfigError(f"{where}: weights has {w.shape[1]} entries per query, but the columns have {cells} "
                          f"cells ({sizes}, codes in C order over the columns)")
    if w.size > MAX_WEIGHTS:
        raise ConfigError(f"{where}: {w.size} weights, more than the limit of {MAX_WEIGHTS}")
    names = arrays.get("names")
    names = [str(x) for x in np.atleast_1d(names)] if names is not None else [f"query {j + 1}" for j in range(len(w))]
    if len(names) != len(w):
        raise ConfigError(f"{where}: names has {len(names)} entries for {len(w)} queries")
    return [(name, attrs, w[j].astype(float)) for j, name in enumerate(names)]


# ------------------------------------------------------------------------- checks
def _build(queries, domain: Domain, path: str, source: dict) -> LinearWorkload:
    names = [q[0] for q in queries]
    if len(set(names)) != len(names):
        dup = next(x for x in names if names.count(x) > 1)
        raise ConfigError(f"{path}: duplicate query name {dup!r}")
    total = sum(w.size for _, _, w in queries)
    if total > MAX_WEIGHTS:
        raise ConfigError(f"{path}: the queries store {total} weights, more than the limit of {MAX_WEIGHTS}")
    groups: dict[tuple[int, ...], list[tuple[str, np.ndarray]]] = {}
    spec = []
    for name, attrs, w in queries:  # loop over queries (public), each checked vectorized over its cells
        if not np.all(np.isfinite(w)):
            raise ConfigError(f"{path}: query {name!r} has a weight that is not a finite number")
        hi, lo = float(w.max()), float(w.min())
        if hi > 1 + _TOL or lo < -1 - _TOL:
            bad = hi if hi > 1 + _TOL else lo
            raise ConfigError(f"{path}: query {name!r} has q(x) = {bad:g} on some records; every q(x) must lie in "
                              "[-1, 1] (the sum of the weights of the terms a record satisfies)")
        if hi == lo:
            raise ConfigError(f"{path}: query {name!r} has q(x) = {hi:g} for every record (a constant query says "
                              "nothing about the data); remove it")
        w = np.clip(w, -1.0, 1.0)
        groups.setdefault(attrs, []).append((name, w))
        spec.append({"name": name, "columns": [domain.names[a] for a in attrs], "weights": w.tolist()})
    sets = tuple(LinearQueries(attrs, np.stack([w for _, w in g]), tuple(n for n, _ in g))
                 for attrs, g in groups.items())
    return LinearWorkload(sets=sets, source=source, spec={"queries": spec})


def _columns(raw: Any, domain: Domain, path: str) -> tuple[int, ...]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{path}: expected a non-empty list of column names")
    for j, name in enumerate(raw):
        if name not in domain.names:
            raise ConfigError(f"{path}[{j}]: unknown column {name!r}")
    if len(set(raw)) != len(raw):
        raise ConfigError(f"{path}: a column appears twice")
    return domain.indices(raw)


def _check_size(size: int, attrs: tuple[int, ...], domain: Domain, where: str) -> None:
    """The support's cells within :data:`MAX_SUPPORT_CELLS`; ``size`` (when > 0) equal to them."""
    cells = domain.cells(attrs)
    names = ", ".join(domain.names[a] for a in attrs)
    if cells > MAX_SUPPORT_CELLS:
        raise ConfigError(f"{where}: depends on columns ({names}) with {cells} cells, more than the limit of "
                          f"{MAX_SUPPORT_CELLS}")
    if size and size != cells:
        raise ConfigError(f"{where}: {size} weights, but columns ({names}) have {cells} cells "
                          "(one weight per cell, codes in C order over the columns)")


def _numbers(raw: Any, path: str) -> np.ndarray:
    if not isinstance(raw, list) or not raw or any(isinstance(x, bool) or not isinstance(x, (int, float))
                                                   for x in raw):
        raise ConfigError(f"{path}: expected a non-empty list of numbers")
    return np.asarray(raw, dtype=float)


def _weight(text: str, where: str) -> float:
    try:
        w = float(text)
    except ValueError:
        raise ConfigError(f"{where}: weight {text.strip()!r} is not a number") from None
    if not math.isfinite(w):
        raise ConfigError(f"{where}: weight {text.strip()!r} is not a finite number")
    return w


def _preview(values: list[str], limit: int = 8) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f", … ({len(values)} in all)" if len(values) > limit else "")

"""Conditions for conditional sampling: ``--where 'sex=Female,age>=40'``.

A condition is a conjunction (comma-separated) of predicates over the public
schema's *decoded values*:

* categorical: ``col=a`` or ``col=a|b`` (one of), ``col!=a`` (labels as in the
  schema; ``__other__`` for the extra category of ``unknown: other``);
* integer: ``=`` / ``!=`` (with ``|``), ``<``, ``<=``, ``>``, ``>=``;
* numeric (binned): ``<``, ``<=``, ``>``, ``>=`` and ``=``;
* any column with ``missing: category``: ``col=null`` / ``col!=null``.

A released row is drawn in two steps: codes from the model, then values
inside each code (a numeric bin decodes to a uniform draw inside it, or its
midpoint; see :func:`dpsynth.data.discretize.decode`).  The condition is
turned into a weight per code, the probability that a value decoded from the
code satisfies it, plus an interval for the uniform draw; conditioning the
model on those weights (:meth:`dpsynth.models.base.Model.condition`) and
decoding inside the interval draws rows from exactly the distribution of the
unconditioned rows restricted to the condition (by Bayes' rule: p(code | A) ∝
p(code)·P(A | code)).  No rejection: a rare condition costs nothing extra.
Strict comparisons on a continuous numeric column exclude the value itself
(the bound moves to the adjacent float), so they are exact for midpoint decoding too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from dpsynth.data.schema import CategoricalColumn, ColumnSpec, DatetimeColumn, Domain, IntegerColumn, NumericColumn
from dpsynth.errors import UsageError

__all__ = ["Condition", "parse_where"]

_PRED = re.compile(r"^\s*(?P<col>[^=!<>]+?)\s*(?P<op><=|>=|!=|=|<|>)\s*(?P<val>.*?)\s*$")
_NULL = "null"


@dataclass(frozen=True)
class Condition:
    """A parsed ``--where``: per-attribute weights (None = unrestricted) and decode bounds."""

    text: str
    weights: tuple[np.ndarray | None, ...]
    bounds: tuple[tuple[float, float] | None, ...]

    def describe(self) -> str:
        return self.text


def parse_where(text: str, domain: Domain, *, numeric: str = "uniform") -> Condition:
    """Parse ``text`` against the public ``domain``; :class:`UsageError` (one line) when it names an
    unknown column or value, or an operator the column's type does not support."""
    preds = [p for p in (s.strip() for s in text.split(",")) if p]
    if not preds:
        raise UsageError("--where: empty condition (e.g. --where 'sex=Female,age>=40')")
    weights: list[np.ndarray | None] = [None] * len(domain)
    intervals: dict[int, list[float]] = {}
    for pred in preds:
        m = _PRED.match(pred)
        if m is None or not m.group("val"):
            raise UsageError(f"--where: cannot parse '{pred}' (use column=value, column!=value, "
                             "column<value, <=, > or >=; separate conditions with commas)")
        col, op, val = m.group("col"), m.group("op"), m.group("val")
        if col not in domain.names:
            raise UsageError(f"--where: unknown column '{col}' (columns: {_listing(domain.names)})")
        a = domain.index(col)
        spec = domain.columns[a]
        w = _weights(spec, op, val, pred, intervals.setdefault(a, [-math.inf, math.inf]))
        weights[a] = w if weights[a] is None else weights[a] * w
    bounds: list[tuple[float, float] | None] = [None] * len(domain)
    for a, (lo, hi) in intervals.items():
        spec = domain.columns[a]
        if isinstance(spec, NumericColumn) and (lo, hi) != (-math.inf, math.inf):
            weights[a] = weights[a] * _bin_fractions(spec, lo, hi, numeric)
            bounds[a] = (_ceil(lo), _floor(hi)) if spec.integral else (lo, hi)
    return Condition(text, tuple(weights), tuple(bounds))


def _listing(values, limit: int = 12) -> str:
    values = [str(v) for v in values]
    more = f", … ({len(values) - limit} more)" if len(values) > limit else ""
    return ", ".join(values[:limit]) + more


def _weights(spec: ColumnSpec, op: str, val: str, pred: str, interval: list[float]) -> np.ndarray:
    """0/1 weights of one predicate over the column's codes (numeric comparisons also narrow
    ``interval``, turned into bin fractions once all predicates are read)."""
    size = spec.size
    null_code = size - 1 if spec.missing else None
    if val == _NULL and spec.missing and op not in ("=", "!="):
        raise UsageError(f"--where: '{pred}': null can only be compared with = or !=")
    if val == _NULL and spec.missing and isinstance(spec, NumericColumn):
        w = np.zeros(size)
        w[null_code] = 1.0
        return w if op == "=" else 1.0 - w
    if isinstance(spec, DatetimeColumn):
        raise UsageError(f"--where: '{pred}': column '{spec.name}' is datetime; conditions on datetime columns "
                         "are not supported yet (only =null and !=null)")
    if isinstance(spec, CategoricalColumn):
        if op not in ("=", "!="):
            raise UsageError(f"--where: '{pred}': column '{spec.name}' is categorical; use = or !=")
        labels = spec.labels()  # includes __other__ and null when the schema has them
        w = np.zeros(size)
        for v in val.split("|"):
            if v not in labels:
                raise UsageError(f"--where: column '{spec.name}' has no value '{v}' (values: {_listing(labels)})")
            w[labels.index(v)] = 1.0
        return w if op == "=" else 1.0 - w
    if isinstance(spec, IntegerColumn):
        values = np.arange(spec.lower, spec.upper + 1, dtype=float)
        if op in ("=", "!="):
            w = np.zeros(size)
            for v in val.split("|"):
                if v == _NULL and spec.missing:
                    w[null_code] = 1.0
                    continue
                x = _number(spec, v, pred)
                if not (x.is_integer() and spec.lower <= x <= spec.upper):
                    raise UsageError(f"--where: column '{spec.name}' has no value '{v}' "
                                     f"(integers {spec.lower} to {spec.upper})")
                w[int(x) - spec.lower] = 1.0
            return w if op == "=" else 1.0 - w
        w = _compare(values, op, _number(spec, val, pred)).astype(float)
        return np.append(w, 0.0) if spec.missing else w
    # numeric (binned): comparisons narrow the value interval; '=' is the interval [v, v]
    if op == "!=":
        raise UsageError(f"--where: '{pred}': column '{spec.name}' is numeric; use =, <, <=, > or >=")
    x = _number(spec, val, pred)
    if spec.integral:  # decoded values are integers: strict comparisons become integer bounds
        lo, hi = {"<": (-math.inf, math.ceil(x) - 1), "<=": (-math.inf, math.floor(x)),
                  ">": (math.floor(x) + 1, math.inf), ">=": (math.ceil(x), math.inf), "=": (x, x)}[op]
    else:
        below, above = math.nextafter(x, -math.inf), math.nextafter(x, math.inf)  # strict = closed, exactly
        lo, hi = {"<": (-math.inf, below), "<=": (-math.inf, x), ">": (above, math.inf), ">=": (x, math.inf),
                  "=": (x, x)}[op]
    interval[0], interval[1] = max(interval[0], lo), min(interval[1], hi)
    w = np.ones(size)
    if spec.missing:
        w[null_code] = 0.0
    return w


def _ceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


def _floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


def _number(spec: ColumnSpec, val: str, pred: str) -> float:
    try:
        x = float(val)
    except ValueError:
        raise UsageError(f"--where: '{pred}': column '{spec.name}' holds numbers, got '{val}'") from None
    if not math.isfinite(x):
        raise UsageError(f"--where: '{pred}': the value must be a finite number")
    return x


def _compare(values: np.ndarray, op: str, x: float) -> np.ndarray:
    return {"<": values < x, "<=": values <= x, ">": values > x, ">=": values >= x}[op]


def _bin_fractions(spec: NumericColumn, lo: float, hi: float, numeric: str) -> np.ndarray:
    """Per code: the probability that the value decoded from it lies in [lo, hi] (0 for null)."""
    r = spec.step or 1.0  # a lattice column decodes to multiples of its step: counted in steps
    lattice = spec.integral or spec.step is not None
    edges = np.asarray(spec.edges, dtype=float) / r if lattice else np.asarray(spec.edges)
    edges = np.where(np.abs(edges - np.round(edges)) < 1e-9, np.round(edges), edges) if lattice else edges
    lo, hi = (lo / r, hi / r) if lattice else (lo, hi)
    a, b = edges[:-1], edges[1:]
    if numeric != "uniform":
        mid = (a + b) / 2.0
        mid = np.round(mid) if lattice else mid
        tol = 1e-9 if lattice else 0.0
        frac = ((mid >= lo - tol) & (mid <= hi + tol)).astype(float)
    elif lattice:  # the whole units decode() draws from, as in discretize._decode_column
        lo, hi = math.ceil(lo - 1e-9) if math.isfinite(lo) else lo, math.floor(hi + 1e-9) if math.isfinite(hi) else hi
        ilo = np.ceil(a)
        ihi = np.where(np.arange(spec.n_bins) == spec.n_bins - 1, np.floor(b), np.ceil(b) - 1)
        empty = ihi < ilo
        inside = np.maximum(0.0, np.minimum(ihi, hi) - np.maximum(ilo, lo) + 1)
        point = np.round((a + b) / 2.0)
        frac = np.where(empty, ((point >= lo) & (point <= hi)).astype(float), inside / np.maximum(ihi - ilo + 1, 1))
    else:  # a point bin (an edge written twice) decodes to its value
        width = np.where(b > a, b - a, 1.0)
        frac = np.where(b > a, np.maximum(0.0, np.minimum(b, hi) - np.maximum(a, lo)) / width,
                        ((a >= lo) & (a <= hi)).astype(float))
    return np.append(frac, 0.0) if spec.missing else frac

"""Private schema discovery: learn a release schema from the table itself, charged to the ledger.

``dpsynth schema discover`` and a config's ``schema: {discover: ...}`` both
call :func:`discover_schema`.  Every fact taken from the data passes through a
mechanism of :mod:`dpsynth.privacy.selection` or
:mod:`dpsynth.privacy.mechanisms` (the counts come from the
:class:`~dpsynth.data.profile.ColumnProfile` boundary); hints are public facts
the user gives, and a column whose hint is complete costs nothing.

Per column that needs learning (budget ε_c = ε/(number of such columns), since
every row touches every column; δ_c = δ/(number of columns that may be
categorical)):

1. **kind** (when type, missing or integrality is unknown; 30% of ε_c): a noisy
   4-cell histogram (null, integral, fractional, text) with discrete Laplace
   noise.  Text above 4 noise scales and 1% of the noisy non-null total makes
   the column categorical; a noisy null count above 2 scales declares
   ``missing: category``; a noisy fractional count under 4 scales or 10% of
   the numbers makes it integral (decoded to integers).  (A column with fewer nulls than that gets
   ``missing: error`` and the release refuses its nulls: hint
   ``missing: category``.)
2. **categorical**: partition selection (threshold from δ_c) over the observed
   values, the top ``max_categories`` by noisy count kept, the rest going to
   the other-bucket (``unknown: other``).
3. **numeric**: bounds from a noisy histogram (discrete Laplace, 30% of the
   rest) over public logarithmic buckets (edges 0 and ±{1, 1.5, 2, 3, 5, 7}·10^k
   within [−10⁹, 10⁹]): the outer edges of the lowest and highest buckets whose
   noisy count passes a cut that all empty buckets stay under with probability
   ≥ 99%.  (Exponential-mechanism quantiles are poor *bounds* on a wide public
   range: every candidate beyond the data has the same utility, and there are
   many of them.)  Then bins: equal-width, or ``bins − 1`` interior quantiles by
   the exponential mechanism (Smith 2011 rank utility,
   :func:`dpsynth.privacy.selection.quantile_mechanism`) on about 1000 round
   public points between the bounds.  An integral column whose bounds span at
   most ``2·bins`` values gets one bin around each integer (treated like
   categories, no further budget; a learned ``integer`` column would refuse
   stray fractional values); a column hinted ``type: integer`` is an
   ``integer`` column unless its learned bounds span more than
   ``max(2·bins, max_categories)`` values, in which case it is binned.

The schema has ``unknown: other``: values outside the released categories go
to the other-bucket and numbers outside the bounds are clamped to the end bins.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import yaml

from dpsynth.data.profile import ColumnProfile
from dpsynth.errors import ConfigError, DataError
from dpsynth.privacy.accountant import Ledger, split_budget
from dpsynth.privacy.mechanisms import geometric_mechanism
from dpsynth.privacy.neighbouring import Neighbouring
from dpsynth.privacy.selection import partition_selection_mechanism, quantile_mechanism

__all__ = [
    "DEFAULT_RANGE",
    "ColumnHint",
    "DiscoverSpec",
    "Discovery",
    "discover_schema",
    "parse_discover",
    "schema_yaml",
]

DEFAULT_RANGE = (-1e9, 1e9)
"""The public coarse range of a numeric column without bound hints."""

KIND_SHARE, BOUNDS_SHARE = 0.3, 0.3
"""Shares of a column's ε: the kind histogram, then the bounds (of the rest); bins get what remains."""

KIND_CUT, NULL_CUT, FRACTION_SHARE = 4.0, 2.0, 0.1
"""Text or fractional values count as present when their noisy count exceeds KIND_CUT noise scales (a false
positive from a zero count has probability e^-4/2 < 1%); nulls when it exceeds NULL_CUT scales (e^-2/2 = 7%:
an unneeded null value costs one cell, a missed one makes the release refuse the table).  A numeric column is
integral (decoded to integers) unless its noisy fractional count exceeds both KIND_CUT scales and
FRACTION_SHARE of its numbers."""

BUCKET_MISS = 0.01
"""Probability that some empty logarithmic bucket passes the cut and widens the bounds."""

_FINE_GRID = 1000
_MULTIPLIERS = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)


@dataclass(frozen=True)
class ColumnHint:
    """Public facts about one column (all optional)."""

    type: str | None = None  # numeric, integer or categorical
    categories: tuple | None = None
    lower: float | None = None
    upper: float | None = None
    bins: int | None = None
    integer: bool | None = None
    missing: str | None = None  # category or error

    def complete(self) -> bool:
        """True when the hint alone is a full column spec (nothing to learn)."""
        if self.missing is None:
            return False
        if self.type == "categorical":
            return self.categories is not None
        if self.type == "integer":
            return self.lower is not None and self.upper is not None
        if self.type == "numeric":
            return self.lower is not None and self.upper is not None and self.bins is not None \
                and self.integer is not None
        return False


@dataclass(frozen=True)
class DiscoverSpec:
    epsilon: float
    delta: float = 0.0
    columns: Mapping[str, ColumnHint] | None = None  # None: every column of the input
    max_categories: int = 100
    bins: int = 10
    edges: str = "quantile"  # or equal


@dataclass
class Discovery:
    """A discovered schema (the config's ``schema:`` mapping) and what was learned, per column."""

    schema: dict
    columns: dict[str, dict] = field(default_factory=dict)
    public: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- parsing
_HINT_KEYS = {"type", "categories", "lower", "upper", "bins", "integer", "missing"}


def _num(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{path}: expected a finite number, got {value!r}")
    return float(value)


def _hint(raw: Any, path: str) -> ColumnHint:
    raw = {} if raw is None else raw
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{path}: expected a mapping of hints ({', '.join(sorted(_HINT_KEYS))}), got {raw!r}")
    extra = sorted(set(map(str, raw)) - _HINT_KEYS)
    if extra:
        raise ConfigError(f"{path}.{extra[0]}: unknown hint (allowed: {', '.join(sorted(_HINT_KEYS))})")
    kind = raw.get("type")
    if kind is not None and kind not in ("numeric", "integer", "categorical"):
        raise ConfigError(f"{path}.type: must be one of numeric, integer, categorical, got {kind!r}")
    cats = raw.get("categories")
    if cats is not None:
        if not isinstance(cats, list) or not cats or any(c is None or isinstance(c, (list, dict)) for c in cats):
            raise ConfigError(f"{path}.categories: expected a non-empty list of strings or numbers")
        if len({str(c) for c in cats}) != len(cats):
            raise ConfigError(f"{path}.categories: duplicate category")
        if kind not in (None, "categorical"):
            raise ConfigError(f"{path}.categories: only for type categorical")
        kind = "categorical"
    lower = _num(raw["lower"], f"{path}.lower") if "lower" in raw else None
    upper = _num(raw["upper"], f"{path}.upper") if "upper" in raw else None
    if (lower is None) != (upper is None):
        raise ConfigError(f"{path}: give both lower and upper, or neither")
    if lower is not None and upper <= lower:
        raise ConfigError(f"{path}.upper: must be greater than lower ({upper:g} <= {lower:g})")
    if lower is not None and kind == "categorical":
        raise ConfigError(f"{path}: lower/upper are not hints for a categorical column")
    if kind == "integer" and lower is not None and not (lower.is_integer() and upper.is_integer()):
        raise ConfigError(f"{path}: lower and upper of an integer column must be integers")
    bins = raw.get("bins")
    if bins is not None and (isinstance(bins, bool) or not isinstance(bins, int) or bins < 1):
        raise ConfigError(f"{path}.bins: expected an integer >= 1, got {bins!r}")
    integer = raw.get("integer")
    if integer is not None and not isinstance(integer, bool):
        raise ConfigError(f"{path}.integer: expected true or false, got {integer!r}")
    missing = raw.get("missing")
    if missing is not None and missing not in ("category", "error"):
        raise ConfigError(f"{path}.missing: must be one of error, category, got {missing!r}")
    return ColumnHint(kind, tuple(cats) if cats is not None else None, lower, upper, bins, integer, missing)


def parse_discover(raw: Any, path: str = "schema.discover") -> DiscoverSpec:
    """Validate a ``discover`` mapping (epsilon, delta, columns, max_categories, bins, edges)."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{path}: expected a mapping with at least epsilon")
    allowed = {"epsilon", "delta", "columns", "max_categories", "bins", "edges"}
    extra = sorted(set(map(str, raw)) - allowed)
    if extra:
        raise ConfigError(f"{path}.{extra[0]}: unknown key (allowed: {', '.join(sorted(allowed))})")
    if "epsilon" not in raw:
        raise ConfigError(f"{path}.epsilon: required")
    eps = _num(raw["epsilon"], f"{path}.epsilon")
    if eps <= 0:
        raise ConfigError(f"{path}.epsilon: must be > 0, got {eps!r}")
    delta = _num(raw.get("delta", 0.0), f"{path}.delta")
    if not 0 <= delta < 1:
        raise ConfigError(f"{path}.delta: must be in [0, 1), got {delta!r}")
    cols = raw.get("columns")
    hints = None
    if cols is not None:
        if not isinstance(cols, Mapping) or not cols:
            raise ConfigError(f"{path}.columns: expected a non-empty mapping of column name to hints")
        hints = {str(k): _hint(v, f"{path}.columns.{k}") for k, v in cols.items()}
    out = {}
    for key in ("max_categories", "bins"):
        if key in raw:
            v = raw[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{path}.{key}: expected an integer >= 1, got {v!r}")
            out[key] = v
    edges = raw.get("edges", "quantile")
    if edges not in ("quantile", "equal"):
        raise ConfigError(f"{path}.edges: must be one of quantile, equal, got {edges!r}")
    return DiscoverSpec(eps, delta, hints, edges=edges, **out)


# ------------------------------------------------------------------------ discovery
def _needs_delta(h: ColumnHint) -> bool:
    return not h.complete() and h.type in (None, "categorical") and h.categories is None


def discover_schema(
    table: pd.DataFrame,
    spec: DiscoverSpec,
    *,
    ledger: Ledger,
    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE,
    rng: np.random.Generator,
) -> Discovery:
    """Learn a schema for ``table`` (see the module docstring); charges ``ledger`` (basic composition)."""
    present = [str(c) for c in table.columns]
    if len(set(present)) != len(present):
        raise DataError("the input has duplicate column names")
    if spec.columns is None:
        hints = {name: ColumnHint() for name in present}
    else:
        missing = [n for n in spec.columns if n not in present]
        if missing:
            raise DataError(f"column '{missing[0]}' has discovery hints but is missing from the input")
        hints = dict(spec.columns)
    if len(table) == 0:
        raise DataError("the input has no data rows")
    learn = [n for n, h in hints.items() if not h.complete()]
    maybe_cat = [n for n in learn if _needs_delta(hints[n])]
    if maybe_cat and spec.delta <= 0:
        raise ConfigError(
            f"discovery of categories (column '{maybe_cat[0]}') needs delta > 0 for partition selection; "
            "set --delta / discover.delta (e.g. 1e-6) or give the column's type or categories as a hint"
        )
    eps_parts = split_budget(spec.epsilon, [1.0] * len(learn)) if learn else []
    delta_parts = split_budget(spec.delta, [1.0] * len(maybe_cat)) if maybe_cat else []
    eps_of = dict(zip(learn, eps_parts))
    delta_of = dict(zip(maybe_cat, delta_parts))
    out = Discovery(schema={"columns": {}, "unknown": "other"})
    for name, hint in hints.items():  # loop over columns; each is vectorised over rows
        if name not in eps_of:
            out.schema["columns"][name] = _spec_from_hint(hint)
            out.columns[name] = {"epsilon": 0.0, "delta": 0.0, "learned": [], "public": sorted(_given(hint))}
            continue
        col = _Column(name, hint, ColumnProfile(table[name]), ledger, neighbouring, rng, spec)
        out.schema["columns"][name] = col.run(eps_of[name], delta_of.get(name, 0.0))
        out.columns[name] = {"epsilon": eps_of[name], "delta": delta_of.get(name, 0.0),
                             "learned": col.learned, "public": sorted(_given(hint))}
    out.public = [
        "the column names (the input's header)",
        "the hints given for each column (type, categories, bounds, bins, missing)",
        (f"the public candidate grids: default range [{DEFAULT_RANGE[0]:g}, {DEFAULT_RANGE[1]:g}] unless hinted, "
        f"{_FINE_GRID} fine grid points, max_categories={spec.max_categories}, bins={spec.bins}, "
        f"edges={spec.edges}"),
    ]
    return out


def _given(h: ColumnHint) -> set[str]:
    return {k for k in _HINT_KEYS if getattr(h, k) is not None}


def _spec_from_hint(h: ColumnHint) -> dict:
    if h.type == "categorical":
        spec: dict = {"type": "categorical", "categories": list(h.categories)}
    elif h.type == "integer":
        spec = {"type": "integer", "lower": int(h.lower), "upper": int(h.upper)}
    else:
        spec = {"type": "numeric", "lower": _plain(h.lower), "upper": _plain(h.upper), "bins": h.bins}
        if h.integer:
            spec["integer"] = True
    spec["missing"] = h.missing
    return spec


def _plain(x: float):
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


class _Column:
    """Discovery of one column: the steps of the module docstring, each through a mechanism."""

    def __init__(self, name, hint: ColumnHint, profile: ColumnProfile, ledger, neighbouring, rng, spec):
        self.name, self.hint, self.profile, self.ledger, self.rng, self.spec = name, hint, profile, ledger, rng, spec
        self.l1 = neighbouring.histogram_l1
        self.learned: list[str] = []

    def run(self, eps: float, delta: float) -> dict:
        h = self.hint
        kind, missing, integral = h.type, h.missing, h.integer
        if h.type == "integer":
            integral = True
        need_kind = kind is None or missing is None or (kind == "numeric" and integral is None)
        if need_kind:
            k_eps, eps = split_budget(eps, [KIND_SHARE, 1.0 - KIND_SHARE])
            kind, missing, integral = self._kinds(k_eps, kind, missing, integral)
        if kind == "categorical":
            spec = {"type": "categorical", "categories": list(h.categories) if h.categories else
                    self._categories(eps, delta)}
        else:
            spec = self._numeric(eps, kind, bool(integral))
        spec["missing"] = missing
        return spec

    # -- step 1: kind histogram
    def _kinds(self, eps, kind, missing, integral):
        noisy = geometric_mechanism(self.profile.kind_counts(), sensitivity=self.l1, epsilon=eps, ledger=self.ledger,
                                    rng=self.rng, stage="discover", measured=f"{self.name}: rows per kind "
                                    "(null, integral, fractional, text)")
        null, whole, frac, text = (max(0, int(v)) for v in noisy)
        cut = KIND_CUT * self.l1 / eps
        if kind is None:
            kind = "categorical" if text > max(cut, 0.01 * (whole + frac + text)) else "numeric"
            self.learned.append(f"type {kind} (noisy kind counts)")
        if missing is None:
            missing = "category" if null > NULL_CUT * self.l1 / eps else "error"
            self.learned.append(f"missing: {missing} (noisy null count)")
        if integral is None and kind != "categorical":
            integral = frac <= max(cut, FRACTION_SHARE * (whole + frac))
            self.learned.append(f"integer: {str(integral).lower()} (noisy fractional count)")
        return kind, missing, integral

    # -- step 2: categories
    def _categories(self, eps, delta) -> list:
        labels, counts = self.profile.value_counts()
        if labels.size == 0:  # every row null: the mechanism is still charged (its outcome is the empty set)
            counts = np.zeros(0, dtype=np.int64)
        idx = partition_selection_mechanism(counts, epsilon=eps, delta=delta, sensitivity=self.l1, ledger=self.ledger,
                                            rng=self.rng, stage="discover",
                                            measured=f"{self.name}: rows per observed value")
        kept = [str(x) for x in labels[idx[: self.spec.max_categories]]]
        self.learned.append(f"{len(kept)} categories by partition selection"
                            + (f" (top {self.spec.max_categories} kept)" if len(idx) > self.spec.max_categories else ""))
        if not kept:
            kept = [_OTHER_ONLY]
            self.learned.append("no value passed the threshold: one placeholder category, every value goes to other")
        return kept

    # -- step 3: numeric
    def _numeric(self, eps, kind, integral) -> dict:
        h, bins = self.hint, self.hint.bins or self.spec.bins
        if h.lower is not None:
            lo, hi = h.lower, h.upper
        else:
            b_eps, eps = split_budget(eps, [BOUNDS_SHARE, 1.0 - BOUNDS_SHARE])
            lo, hi = self._bounds(b_eps, integral)
        if integral:
            lo, hi = math.ceil(lo), math.floor(hi)
            hi = max(hi, lo + 1)
        values = hi - lo + 1
        too_wide = kind == "integer" and h.lower is None and values > max(2 * bins, self.spec.max_categories)
        if kind == "integer" and not too_wide:  # the hint says integer: one value per integer
            return {"type": "integer", "lower": int(lo), "upper": int(hi)}
        if kind != "integer" and integral and h.bins is None and values <= 2 * bins:
            # Treated like categories: one bin around each integer (a learned 'integer' column would
            # refuse the stray fractional values that the noisy kind counts cannot rule out).
            self.learned.append("few integers between the bounds: one bin around each")
            return {"type": "numeric", "edges": [_plain(e) for e in np.arange(lo, hi + 2) - 0.5], "integer": True}
        if too_wide:
            self.learned.append(f"{int(values)} integers between the learned bounds: binned (numeric, integer: true)")
        if self.spec.edges == "equal" or bins == 1:
            edges = np.linspace(lo, hi, bins + 1)
            if integral:
                edges = np.unique(np.round(edges))
        else:
            grid = fine_grid(lo, hi, integral=integral)
            inner = self._quantiles(grid, np.arange(1, bins) / bins, eps, f"{bins - 1} bin edges")
            edges = np.unique(np.concatenate([[lo], inner[(inner > lo) & (inner < hi)], [hi]]))
            self.learned.append(f"{len(edges) - 1} bins with edges at exponential-mechanism quantiles")
        spec: dict = {"type": "numeric", "edges": [_plain(e) for e in edges]}
        if integral:
            spec["integer"] = True
        return spec

    def _bounds(self, eps: float, integral: bool) -> tuple[float, float]:
        """Noisy counts of rows per public logarithmic bucket (discrete Laplace, each row in one bucket);
        the bounds are the outer edges of the lowest and highest buckets whose noisy count reaches the cut
        at which an empty bucket shows with probability ≤ 1% (of all buckets together)."""
        edges = coarse_grid(*DEFAULT_RANGE)
        below, total = self.profile.rank_counts(edges)
        counts = np.diff(np.concatenate([[0], below, [total]]))  # (-inf, e0), [e0, e1), ..., [e_last, inf)
        noisy = geometric_mechanism(counts, sensitivity=self.l1, epsilon=eps, ledger=self.ledger, rng=self.rng,
                                    stage="discover", measured=f"{self.name}: rows per logarithmic bucket")
        scale = self.l1 / eps
        alpha = math.exp(-1.0 / scale)
        cut = math.ceil(scale * math.log(len(counts) / (BUCKET_MISS * (1.0 + alpha))))
        shown = np.flatnonzero(noisy >= cut)
        if shown.size == 0:
            shown = np.array([int(np.argmax(noisy))])
        ext = np.concatenate([[edges[0]], edges, [edges[-1]]])  # the outer buckets end at the range
        lo, hi = float(ext[shown[0]]), float(ext[shown[-1] + 1])
        if integral and hi > lo and float(hi).is_integer():
            hi -= 1.0  # buckets are half-open: [a, b) holds the integers up to b - 1
        if hi <= lo:
            hi = float(ext[min(shown[-1] + 2, len(ext) - 1)]) if hi < ext[-1] else lo + 1.0
        self.learned.append(f"bounds [{lo:g}, {hi:g}] (noisy logarithmic-bucket histogram)")
        return lo, hi

    def _quantiles(self, grid: np.ndarray, qs, eps: float, what: str) -> np.ndarray:
        below, total = self.profile.rank_counts(grid)
        idx = quantile_mechanism(below, total, qs=qs, epsilon=eps, ledger=self.ledger, rng=self.rng,
                                 stage="discover", measured=f"{self.name}: {what}")
        return np.sort(grid[idx])


_OTHER_ONLY = "__none__"


def coarse_grid(lo: float, hi: float) -> np.ndarray:
    """Public candidates for bounds: 0 and ±{1, 1.5, 2, 3, 5, 7}·10^k within [lo, hi], plus lo and hi."""
    mags = np.array([m * 10.0**k for k in range(-6, 16) for m in _MULTIPLIERS])
    pts = np.concatenate([[0.0, lo, hi], mags, -mags])
    return np.unique(pts[(pts >= lo) & (pts <= hi)])


def fine_grid(lo: float, hi: float, *, integral: bool) -> np.ndarray:
    """Public candidates for bin edges: about 1000 round points in [lo, hi] (integers for integral columns)."""
    decimals = -math.floor(math.log10((hi - lo) / _FINE_GRID))
    if integral:
        decimals = min(0, decimals)
    pts = np.round(np.linspace(lo, hi, _FINE_GRID + 1), decimals)
    return np.unique(np.clip(np.concatenate([[lo], pts, [hi]]), lo, hi))


# ----------------------------------------------------------------------------- output
def schema_yaml(discovery: Discovery, header: str = "") -> str:
    """The discovered ``schema:`` section as YAML (a config fragment), after an optional comment header."""
    text = yaml.safe_dump({"schema": discovery.schema}, sort_keys=False, default_flow_style=None, width=110)
    return header + text

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
from dpsynth.privacy.selection import partition_selection_mechanism

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

PROFILE_SHARE = 0.3
"""Share of a column's ε for the profile histogram (kind and coarse range) when either must be learned; the
rest goes to partition selection (categorical) or the fine histogram (numeric)."""

FINE_CELLS, MIN_CELLS, FILL = 128, 16, 2.0
"""The fine histogram of a numeric column: G round cells over its coarse range (one per integer when an
integral range holds at most G integers), G between MIN_CELLS and FINE_CELLS such that the column's noisy
row count (from its profile) fills each cell FILL times over the cut of an empty cell."""

COARSE_MARGIN = 2
"""Logarithmic buckets added on each side of the coarse range (see :meth:`_Column._profile`)."""

FREE_TEXT_SHARE = 0.1
"""A categorical column whose released categories hold less than this share of its non-null rows (noisy
counts) is free text or an identifier: it is left out of the schema, and the report says so."""

FRACTION_SHARE = 0.1
"""A numeric column is integral (decoded to integers) unless the fractional numbers of its profile histogram
(cells past the cut) exceed both the cut and FRACTION_SHARE of its numbers."""

BUCKET_MISS = 0.01
"""Probability that some empty logarithmic bucket passes the cut and widens the bounds."""

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
        """True when the hint alone is a full column spec (nothing to learn; ``missing`` defaults to category)."""
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
        found = col.run(eps_of[name], delta_of.get(name, 0.0))
        if found is not None:
            out.schema["columns"][name] = found
        out.columns[name] = {"epsilon": eps_of[name], "delta": delta_of.get(name, 0.0),
                             "learned": col.learned, "public": sorted(_given(hint))}
        if col.dropped is not None:
            out.columns[name]["dropped"] = col.dropped
    if not out.schema["columns"]:
        raise DataError("schema discovery left no column in the schema (every column looks like free text or an "
                        "identifier); give hints for the columns to keep")
    out.public = [
        "the column names (the input's header)",
        "the hints given for each column (type, categories, bounds, bins, missing)",
        (f"the public candidate grids: default range [{DEFAULT_RANGE[0]:g}, {DEFAULT_RANGE[1]:g}] unless hinted, "
        f"fine cells of round widths ({MIN_CELLS} to {FINE_CELLS}, or one per integer), "
        f"max_categories={spec.max_categories}, bins={spec.bins}, "
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
    spec["missing"] = h.missing or "category"
    return spec


def _plain(x: float):
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


class _Column:
    """Discovery of one column: the steps of the module docstring, each through a mechanism."""

    def __init__(self, name, hint: ColumnHint, profile: ColumnProfile, ledger, neighbouring, rng, spec):
        self.name, self.hint, self.profile, self.ledger, self.rng, self.spec = name, hint, profile, ledger, rng, spec
        self.l1 = neighbouring.histogram_l1
        self.learned: list[str] = []
        self.dropped: str | None = None  # why the column is left out of the schema (free text, identifiers)
        self.non_null: float | None = None  # noisy number of non-null rows (a profile output), when profiled

    def run(self, eps: float, delta: float) -> dict | None:
        h = self.hint
        kind, integral = h.type, (True if h.type == "integer" else h.integer)
        missing = h.missing or "category"  # nulls are always representable unless the user says otherwise
        if h.missing is None:
            self.learned.append("missing: category (a discovered schema always has room for nulls)")
        bounds = (h.lower, h.upper) if h.lower is not None else None
        need_profile = kind is None or (kind != "categorical" and (bounds is None or integral is None))
        if need_profile:
            p_eps, eps = split_budget(eps, [PROFILE_SHARE, 1.0 - PROFILE_SHARE])
            kind, integral, found = self._profile(p_eps, kind, integral)
            bounds = bounds or found
        if kind == "categorical":
            cats = list(h.categories) if h.categories else self._categories(eps, delta)
            if cats is None:
                return None
            spec = {"type": "categorical", "categories": cats}
        else:
            spec = self._numeric(eps, kind, bool(integral), bounds)
        spec["missing"] = missing
        return spec

    # -- step 1: the profile histogram (kind and coarse bounds in one measurement)
    def _profile(self, eps, kind, integral):
        edges = coarse_grid(*DEFAULT_RANGE)
        nb = edges.size + 1
        noisy = geometric_mechanism(self.profile.profile_counts(edges), sensitivity=self.l1, epsilon=eps,
                                    ledger=self.ledger, rng=self.rng, stage="discover",
                                    measured=f"{self.name}: rows per kind and logarithmic bucket (null, text, "
                                    f"integral and fractional numbers per bucket: {2 + 2 * nb} cells)")
        cut = _cut(self.l1 / eps, noisy.size)
        kept = np.where(noisy >= cut, noisy, 0)
        text = int(kept[1])
        ints, fracs = kept[2:2 + nb], kept[2 + nb:]
        numbers = int(ints.sum() + fracs.sum())
        self.non_null = float(max(1, int(np.clip(noisy[1:], 0, None).sum())))
        if kind is None:
            if text == 0 and numbers == 0:  # nothing stands out of the noise: decide on the raw noisy sums
                kind = "categorical" if noisy[1] > noisy[2:].sum() else "numeric"
            else:
                kind = "categorical" if text > numbers else "numeric"
            self.learned.append(f"type {kind} (noisy text and number counts)")
        if kind == "categorical":
            return kind, integral, None
        if integral is None:
            integral = bool(fracs.sum() <= max(cut, FRACTION_SHARE * numbers))
            self.learned.append(f"integer: {str(integral).lower()} (noisy fractional count)")
        per_bucket = noisy[2:2 + nb] + noisy[2 + nb:]  # noise of scale √2·b per bucket: a slightly looser cut
        support = _support(per_bucket, math.sqrt(2.0) * self.l1 / eps)
        shown = np.array(support) if support is not None else np.array([int(np.argmax(per_bucket))] * 2)
        # A tail too thin to pass at this budget would be clamped for good: widen by COARSE_MARGIN buckets on each
        # side (the fine histogram trims the range again, at a finer resolution).
        shown = np.clip(shown + [-COARSE_MARGIN, COARSE_MARGIN], 0, nb - 1)
        ext = np.concatenate([[edges[0]], edges, [edges[-1]]])  # the outer buckets end at the range
        lo, hi = float(ext[shown[0]]), float(ext[shown[-1] + 1])
        if hi <= lo:
            hi = lo + 1.0
        self.learned.append(f"coarse range [{lo:g}, {hi:g}) (noisy logarithmic buckets)")
        return kind, integral, (lo, hi)

    # -- step 2: categories
    def _categories(self, eps, delta) -> list | None:
        labels, counts = self.profile.value_counts()
        if labels.size == 0:  # every row null: the mechanism is still charged (its outcome is the empty set)
            counts = np.zeros(0, dtype=np.int64)
        idx, noisy = partition_selection_mechanism(counts, epsilon=eps, delta=delta, sensitivity=self.l1,
                                                   ledger=self.ledger, rng=self.rng, stage="discover",
                                                   measured=f"{self.name}: rows per observed value",
                                                   return_noisy=True)
        top = idx[: self.spec.max_categories]
        kept = [str(x) for x in labels[top]]
        self.learned.append(f"{len(kept)} categories by partition selection"
                            + (f" (top {self.spec.max_categories} kept)" if len(idx) > self.spec.max_categories else ""))
        if self.non_null is not None:
            share = min(1.0, float(np.clip(noisy[: len(top)], 0, None).sum()) / self.non_null)
            if share < FREE_TEXT_SHARE:
                self.dropped = (f"mostly distinct values (free text or an identifier): the kept categories hold "
                                f"about {share:.0%} of the rows (noisy counts); left out of the schema")
                self.learned.append(self.dropped)
                return None
            if share < 0.9:
                self.learned.append(f"the kept categories hold about {share:.0%} of the non-null rows "
                                    "(noisy counts); the rest are released as __other__")
        if not kept:
            kept = [_OTHER_ONLY]
            self.learned.append("no value passed the threshold: one placeholder category, every value goes to other")
        return kept

    # -- step 3: numeric
    def _numeric(self, eps, kind, integral, bounds) -> dict:
        h, bins = self.hint, self.hint.bins or self.spec.bins
        lo, hi = bounds if bounds is not None else DEFAULT_RANGE
        equal = self.spec.edges == "equal" or bins == 1
        weights = None
        if h.lower is None or not equal:  # refine the bounds and read the edges off one finer histogram
            lo, hi, weights = self._fine(eps, lo, hi, integral)
            if h.lower is not None:  # hinted bounds are public: kept as given
                lo, hi = h.lower, h.upper
        if integral:
            lo, hi = math.ceil(lo), math.floor(hi)
            hi = max(hi, lo + 1)
        values = hi - lo + 1
        too_wide = kind == "integer" and h.lower is None and values > max(2 * bins, self.spec.max_categories)
        if kind == "integer" and not too_wide:  # the hint says integer: one value per integer
            return {"type": "integer", "lower": int(lo), "upper": int(hi)}
        if kind != "integer" and integral and h.bins is None and values <= 2 * bins:
            # Treated like categories: one bin around each integer (a learned 'integer' column would
            # refuse the stray fractional values that the noisy counts cannot rule out).
            self.learned.append("few integers between the bounds: one bin around each")
            return {"type": "numeric", "edges": [_plain(e) for e in np.arange(lo, hi + 2) - 0.5], "integer": True}
        if too_wide:
            self.learned.append(f"{int(values)} integers between the learned bounds: binned (numeric, integer: true)")
        if equal or weights is None:
            edges = np.linspace(lo, hi, bins + 1)
            if integral:
                edges = np.unique(np.round(edges))
        else:
            edges = _quantile_edges(*weights, bins, lo, hi)
            self.learned.append(f"{len(edges) - 1} bins with edges at quantiles of the noisy fine histogram")
        spec: dict = {"type": "numeric", "edges": [_plain(e) for e in edges]}
        if integral:
            spec["integer"] = True
        return spec

    def _fine(self, eps: float, lo: float, hi: float, integral: bool):
        """A noisy histogram over public round cells covering the coarse range, as many as the noisy row count
        fills well above the cut (between :data:`MIN_CELLS` and :data:`FINE_CELLS`; one per integer for a short
        integral range).  (A second, zoomed-in level was measured and rejected: at this budget it loses the
        tails of adult's age and hours-per-week.)
        The bounds are the outer edges of the second histogram's support (:func:`_support`), and its noisy
        counts (clipped at 0) give the bin edges (post-processing)."""
        cells = FINE_CELLS
        if self.non_null is not None:  # as many cells as the noisy row count can fill well above the cut
            cells = int(np.clip(self.non_null / (FILL * _block_cut(self.l1 / eps, 1, FINE_CELLS)), MIN_CELLS,
                                FINE_CELLS))
        found = self._level(eps, lo, hi, integral, cells, "fine")
        if found is None:
            self.learned.append(f"bounds [{lo:g}, {hi:g}] (no fine cell stood out of the noise)")
            return lo, hi, None
        self.learned.append(f"bounds [{found[0]:g}, {found[1]:g}] (noisy fine histogram)")
        return found

    def _level(self, eps: float, lo: float, hi: float, integral: bool, cells: int, what: str):
        grid = fine_cells(lo, hi, integral=integral, cells=cells)
        noisy = geometric_mechanism(self.profile.cell_counts(grid), sensitivity=self.l1, epsilon=eps,
                                    ledger=self.ledger, rng=self.rng, stage="discover",
                                    measured=f"{self.name}: rows per {what} cell ({grid.size - 1} public cells)")
        support = _support(noisy, self.l1 / eps)
        if support is None:
            return None
        a, b = support
        new_lo, new_hi = float(grid[a]), float(grid[b + 1])
        if integral and grid.size > 1 and grid[1] - grid[0] == 1.0 and grid[0] % 1 == 0.5:
            new_lo, new_hi = new_lo + 0.5, new_hi - 0.5  # unit cells [k - 0.5, k + 0.5): bounds are integers
        mass = np.clip(noisy[a:b + 1], 0, None).astype(float)
        return new_lo, new_hi, (grid[a:b + 2], mass)


def _cut(scale: float, cells: int) -> int:
    """The noisy count an empty cell reaches with probability ≤ BUCKET_MISS/cells (so, over all cells, ≤
    BUCKET_MISS): two-sided geometric tail α^c/(1 + α) with α = exp(−1/scale)."""
    alpha = math.exp(-1.0 / scale)
    return max(1, math.ceil(scale * math.log(cells / (BUCKET_MISS * (1.0 + alpha)))))


def _support(noisy: np.ndarray, scale: float) -> tuple[int, int] | None:
    """First and last cell of the data's support read off a noisy histogram (post-processing).

    The core is the cells whose own noisy count passes :func:`_block_cut` (all empty cells stay under it with
    probability ≥ 1 − BUCKET_MISS).  Thin tails spread over many cells cannot pass cell by cell, so each side is
    then searched in rings of doubling width outside the core (widths 1, 1, 2, 4, … cells): the bound moves to
    the outer edge of the farthest ring whose noisy sum passes its own cut — at most twice as far out as the
    tail's mass.  A utility choice, not a privacy one.  None when no cell passes."""
    G = noisy.size
    core = np.flatnonzero(noisy >= _block_cut(scale, 1, G))
    if core.size == 0:
        return None
    first, last = int(core[0]), int(core[-1])
    csum = np.concatenate([[0], np.cumsum(noisy)])

    def rings(span: int) -> list[tuple[int, int]]:  # (start, stop) offsets of the rings, within ``span`` cells
        out, start, width = [], 0, 1
        while start < span:
            out.append((start, min(span, start + width)))
            start, width = start + width, width if start == 0 else 2 * width
        return out

    left, right = rings(first), rings(G - 1 - last)
    count = max(1, len(left) + len(right))
    new_first, new_last = first, last
    for a, b in left:  # cells [first − b, first − a)
        if csum[first - a] - csum[first - b] >= _block_cut(scale, b - a, count):
            new_first = first - b
    for a, b in right:  # cells (last + a, last + b]
        if csum[last + 1 + b] - csum[last + 1 + a] >= _block_cut(scale, b - a, count):
            new_last = last + b
    return new_first, new_last


def _block_cut(scale: float, w: int, blocks: int) -> float:
    """A t with P(some of ``blocks`` sums of w Laplace(scale) noises ≥ t) ≤ BUCKET_MISS, by the Chernoff bound
    P(S ≥ t) ≤ min_λ e^(−λt)·(1 − λ²b²)^(−w) (the Laplace moment generating function; the two-sided geometric
    noise of the same scale has a smaller one), λ = u/b minimised over a grid of u in (0, 1)."""
    u = np.linspace(0.005, 0.995, 199)
    t = scale * (math.log(blocks / BUCKET_MISS) - w * np.log1p(-u * u)) / u
    return float(t.min())


def _quantile_edges(cells: np.ndarray, mass: np.ndarray, bins: int, lo: float, hi: float) -> np.ndarray:
    """Bin edges at the j/bins quantiles (j = 1 … bins − 1) of a histogram over ``cells`` (post-processing):
    the right edge of the cell where the cumulative mass first reaches each quantile, within (lo, hi)."""
    total = mass.sum()
    if total <= 0:
        return np.linspace(lo, hi, bins + 1)
    cdf = np.cumsum(mass) / total
    at = np.searchsorted(cdf, np.arange(1, bins) / bins, side="left")
    inner = cells[np.clip(at + 1, 1, cells.size - 1)]
    return np.unique(np.concatenate([[lo], inner[(inner > lo) & (inner < hi)], [hi]]))


_OTHER_ONLY = "__none__"


def coarse_grid(lo: float, hi: float) -> np.ndarray:
    """Public candidates for bounds: 0 and ±{1, 1.5, 2, 3, 5, 7}·10^k within [lo, hi], plus lo and hi."""
    mags = np.array([m * 10.0**k for k in range(-6, 16) for m in _MULTIPLIERS])
    pts = np.concatenate([[0.0, lo, hi], mags, -mags])
    return np.unique(pts[(pts >= lo) & (pts <= hi)])


_NICE = (1.0, 2.0, 2.5, 5.0)


def fine_cells(lo: float, hi: float, *, integral: bool, cells: int = 128) -> np.ndarray:
    """Public cell edges covering [lo, hi]: one cell per integer (edges k ± 0.5) for an integral range of at
    most ``cells`` integers, else about ``cells`` cells of a round width (1, 2, 2.5 or 5 times a power of ten;
    at least 1 for integral columns) on multiples of that width."""
    if integral and math.floor(hi) - math.ceil(lo) + 1 <= cells:
        return np.arange(math.ceil(lo), math.floor(hi) + 2) - 0.5
    raw = (hi - lo) / cells
    power = 10.0 ** math.floor(math.log10(raw))
    width = next(m * power for m in (*_NICE, 10.0) if m * power >= raw)
    if integral:
        width = max(1.0, math.ceil(width))
    start, stop = math.floor(lo / width), math.ceil(hi / width)
    if stop <= start:
        stop = start + 1
    return np.arange(start, stop + 1) * width


# ----------------------------------------------------------------------------- output
def schema_yaml(discovery: Discovery, header: str = "") -> str:
    """The discovered ``schema:`` section as YAML (a config fragment), after an optional comment header."""
    text = yaml.safe_dump({"schema": discovery.schema}, sort_keys=False, default_flow_style=None, width=110)
    return header + text

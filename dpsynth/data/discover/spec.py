"""Discovery settings and hints: what the user says in ``schema.discover`` (all public)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpsynth.data.schema import lattice_gaps
from dpsynth.errors import ConfigError

__all__ = ["ColumnHint", "DiscoverSpec", "Discovery", "parse_discover"]


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
    step: float | None = None  # numeric values are multiples of it (1: no lattice; lattice.py)

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
    # (issue 27, session 15: more bins for a zoomed column lose in the release, though a perfect model gains:
    # 20 bins for every zoomed column moved the perfect-model 2-way L1 of 16 seen tables by x0.85 (seeds 2,3;
    # cricketers 0.074 → 0.038) but the zero-config release by x1.066 over 11 tables (wage x1.20, txhousing
    # x1.13), 15 bins x1.046, 8 bins x1.041 (county_murders x0.94); 20 for integral zoomed columns only x1.005
    # over 8 (nlswork x0.92, txhousing x1.05); one bin per integer up to 3·bins integers x1.00 (taxi_trips'
    # hour x1.03).  The model's domain pays for them.)
    edges: str = "quantile"  # or equal
    share_by_size: bool = False  # zero-config: the release sizes the discovery's share from public n (share_for)
    kind_first: bool = False  # the share is capped (share_for, public n): text columns skip the profile (kind.py)


@dataclass
class Discovery:
    """A discovered schema (the config's ``schema:`` mapping) and what was learned, per column."""

    schema: dict
    columns: dict[str, dict] = field(default_factory=dict)
    public: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)  # name -> evidence.Evidence (released noisy counts)


# --------------------------------------------------------------------------- parsing
_HINT_KEYS = {"type", "categories", "lower", "upper", "bins", "integer", "missing", "step"}


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
    step = _num(raw["step"], f"{path}.step") if "step" in raw else None
    if step is not None and (step <= 0 or kind in ("categorical", "integer") or (integer and not step.is_integer())):
        raise ConfigError(f"{path}.step: expected a number > 0 for a numeric column (a whole one with integer: true), "
                          f"got {raw['step']!r}")
    if step is not None and lower is not None and bins is not None and \
            lattice_gaps(np.linspace(lower, upper, bins + 1), step):
        raise ConfigError(f"{path}.step: some of the {bins} equal bins over [{lower:g}, {upper:g}] hold no multiple "
                          f"of {step:g}; use fewer bins")
    return ColumnHint(kind, tuple(cats) if cats is not None else None, lower, upper, bins, integer, missing, step)


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

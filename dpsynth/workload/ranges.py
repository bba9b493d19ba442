"""Range-query workloads over ordered columns (MWEM paper §3.1).

A range query over ordered attributes a₁ … a_k counts the records whose code
lies in an interval [lo_i, hi_i] on every a_i: the product of interval
indicators (single-dimensional when k = 1).  Ordered columns are numeric
(bins in increasing order) and integer columns; a ``null`` code, when the
column has one, is never inside a range.

Configuration (``workload.ranges``; a mapping, or a list of mappings)::

    workload:
      ranges: {count: 1000, columns: [age, hours-per-week], seed: 0}
      # optional: dims: 1   -> each query constrains 1 randomly chosen column of the list

The queries are drawn from ``np.random.default_rng(seed)``: public randomness
fixed by the configuration, independent of the data and of the release's
random generator (like ``workload.marginals.sample``).  Each interval has two
endpoints drawn uniformly from the column's value codes (lo = min, hi = max).

Answers use summed-area tables: with P the marginal padded with a zero and
cumulated along every axis, a query's count is the inclusion–exclusion sum of
P over the 2^k corners (hi_i + 1 or lo_i), vectorized over all queries.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dpsynth.data.schema import Domain
from dpsynth.errors import ConfigError
from dpsynth.params import as_int

__all__ = ["RangeQueries", "parse_ranges", "value_codes"]

_KEYS = {"count", "columns", "seed", "dims"}


def value_codes(domain: Domain, attr: int) -> int:
    """Number of non-null codes of an ordered attribute (the null code, if any, is last)."""
    return domain.sizes[attr] - int(getattr(domain.columns[attr], "missing", False))


@dataclass(frozen=True)
class RangeQueries:
    """k-dimensional range queries sharing the attributes ``attrs``: ``lo``/``hi`` of shape (count, k)."""

    attrs: tuple[int, ...]
    lo: np.ndarray
    hi: np.ndarray

    def __len__(self) -> int:
        return int(self.lo.shape[0])

    def answers(self, marginal: np.ndarray) -> np.ndarray:
        """Counts of every query on ``marginal`` (the table over ``attrs``, in that order)."""
        k = len(self.attrs)
        padded = np.pad(np.asarray(marginal, dtype=float), [(1, 0)] * k)
        for axis in range(k):
            padded = np.cumsum(padded, axis=axis)
        out = np.zeros(len(self))
        for corner in itertools.product((0, 1), repeat=k):  # 2^k corners, vectorized over queries
            idx = tuple(np.where(c, self.hi[:, i] + 1, self.lo[:, i]) for i, c in enumerate(corner))
            out += (-1) ** (k - sum(corner)) * padded[idx]
        return out

    def indicator(self, j: int, shape: Sequence[int]) -> np.ndarray:
        """0/1 array over the marginal's cells: 1 inside query j."""
        out = np.zeros(tuple(shape))
        out[tuple(slice(int(a), int(b) + 1) for a, b in zip(self.lo[j], self.hi[j]))] = 1.0
        return out

    def describe(self, j: int, domain: Domain) -> str:
        """Public text of query j, e.g. ``age in [25, 30) .. [35, 40)``."""
        parts = []
        for i, a in enumerate(self.attrs):
            labels = domain.columns[a].labels()
            parts.append(f"{domain.names[a]} in {labels[int(self.lo[j, i])]}..{labels[int(self.hi[j, i])]}")
        return "range(" + ", ".join(parts) + ")"


def parse_ranges(raw, domain: Domain, path: str = "workload.ranges") -> list[RangeQueries]:
    """Validate ``workload.ranges`` and draw the queries; one :class:`RangeQueries` per column set."""
    if raw is None:
        return []
    specs = raw if isinstance(raw, list) else [raw]
    out: list[RangeQueries] = []
    for i, spec in enumerate(specs):
        where = f"{path}[{i}]" if isinstance(raw, list) else path
        out.extend(_one_spec(spec, domain, where))
    return out


def _one_spec(spec, domain: Domain, path: str) -> list[RangeQueries]:
    if not isinstance(spec, Mapping):
        raise ConfigError(f"{path}: expected a mapping with count, columns and seed")
    extra = sorted(set(map(str, spec)) - _KEYS)
    if extra:
        raise ConfigError(f"{path}.{extra[0]}: unknown key (allowed: {', '.join(sorted(_KEYS))})")
    count = as_int(spec.get("count"), f"{path}.count", minimum=1)
    seed = as_int(spec.get("seed", 0), f"{path}.seed", minimum=0)
    cols = spec.get("columns")
    if not isinstance(cols, list) or not cols:
        raise ConfigError(f"{path}.columns: expected a non-empty list of ordered (numeric or integer) columns")
    attrs = []
    for j, name in enumerate(cols):
        if name not in domain.names:
            raise ConfigError(f"{path}.columns[{j}]: unknown column {name!r}")
        a = domain.index(name)
        if not domain.columns[a].ordered:
            raise ConfigError(
                f"{path}.columns[{j}]: column {name!r} is {domain.columns[a].kind}; "
                "range queries need an ordered (numeric or integer) column"
            )
        attrs.append(a)
    if len(set(attrs)) != len(attrs):
        raise ConfigError(f"{path}.columns: a column appears twice")
    dims = as_int(spec.get("dims", len(attrs)), f"{path}.dims", minimum=1)
    if dims > len(attrs):
        raise ConfigError(f"{path}.dims: must be <= the number of columns ({len(attrs)}), got {dims}")
    rng = np.random.default_rng(seed)  # public: fixed by the configuration, never sees data
    subsets = [tuple(sorted(s)) for s in itertools.combinations(attrs, dims)]
    pick = rng.integers(len(subsets), size=count)
    out = []
    for s_idx in np.unique(pick):
        sub = subsets[s_idx]
        m = int(np.sum(pick == s_idx))
        nv = np.array([value_codes(domain, a) for a in sub])
        ends = rng.integers(0, nv, size=(2, m, len(sub)))
        out.append(RangeQueries(sub, ends.min(axis=0), ends.max(axis=0)))
    return out

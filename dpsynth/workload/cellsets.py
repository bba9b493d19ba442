"""Counting queries given as sets of cells: conjunctions of value sets (``workload.queries``).

Query i counts the rows whose value on every column it names lies in the set of
values it lists for that column (``where: {sex: [Female], race: [Black, Other]}``);
columns it does not name are unconstrained.  iReduct (Xiao et al. 2011, §4.3)
answers such a workload query by query (``algorithm: ireduct`` with a
``queries`` section).  Everything here is public: built from the config and the
schema, never from the data, and checked when the config is parsed (exit 64).

**Sensitivity** (Definition 3).  A row r adds 1 to every query containing it.
Under add-remove the L1 sensitivity is S = max_r |{i : r ∈ q_i}|, the largest
number of queries one row can fall in; under replace-one a row leaves its
queries and joins others, and we use 2·S (an upper bound, exact when some
possible row lies in no query shared with the worst one).  The generalized
sensitivity with per-query scales λ_i (Definition 4) is, likewise,
GS = factor · max_r Σ_{i∋r} 1/λ_i.  Both are maxima over the *possible* rows (the
schema's domain), not the rows of the table.

Computing the maximum exactly: each named column's values are grouped into
classes with the same membership in every query (values no query tells apart),
the product of the classes is enumerated (one ``einsum``, guarded by
``MAX_WORK``), and the distinct membership patterns that are maximal under
inclusion are kept: GS for any scales is then max over those patterns of
Σ_{i∈pattern} 1/λ_i, a (patterns × queries) product.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from dpsynth.data.schema import Domain
from dpsynth.errors import ConfigError
from dpsynth.params import as_mapping, load_yaml, no_extra_keys

__all__ = ["MAX_QUERIES", "MAX_WORK", "CellSetQueries", "parse_queries"]

MAX_QUERIES = 100_000
MAX_WORK = 50_000_000
"""Bound on (queries × row classes) when the maximal membership patterns are enumerated."""


@dataclass(frozen=True, eq=False)
class CellSetQueries:
    """Q conjunction queries over the columns ``attrs``: ``member[j]`` is a (Q × sizes[attrs[j]]) bool array,
    True where query i accepts value v of column attrs[j]; ``sanity_bounds`` holds each query's own δ (NaN:
    the default); ``patterns`` the maximal sets of queries one possible row can satisfy (P × Q bool)."""

    attrs: tuple[int, ...]
    member: tuple[np.ndarray, ...]
    names: tuple[str, ...]
    sanity_bounds: np.ndarray
    patterns: np.ndarray
    spec: tuple

    def __len__(self) -> int:
        return len(self.names)

    @property
    def depth(self) -> int:
        """S: the largest number of queries one possible row satisfies (sensitivity under add-remove)."""
        return int(self.patterns.sum(axis=1).max()) if len(self) else 0

    def load(self, weights) -> float:
        """max over possible rows r of Σ_{i∋r} weights_i (weights ≥ 0): e.g. Σ 1/λ_i, Definition 4."""
        return float(np.max(self.patterns @ np.asarray(weights, dtype=float)))

    def masks(self, domain: Domain) -> np.ndarray:
        """(Q × cells) 0/1 matrix over the marginal on ``attrs`` (row-major): query i's cells."""
        out = np.ones((len(self), 1), dtype=bool)
        for m in self.member:  # loop over the named columns
            out = (out[:, :, None] & m[:, None, :]).reshape(len(self), -1)
        return out

    def answers(self, marginal: np.ndarray) -> np.ndarray:
        """Each query's count from the marginal on ``attrs`` (one contraction, vectorized over queries)."""
        letters = string.ascii_letters[: len(self.attrs)]
        expr = ",".join(f"z{c}" for c in letters) + "," + letters + "->z"
        return np.einsum(expr, *[m.astype(float) for m in self.member], np.asarray(marginal, dtype=float),
                         optimize=True)

    def bounds(self, default: float) -> np.ndarray:
        """δ_i of every query: its own, else ``default``."""
        return np.where(np.isnan(self.sanity_bounds), float(default), self.sanity_bounds)


def _values(domain: Domain, a: int, raw: Any, where: str) -> np.ndarray:
    labels = [str(x) for x in domain.columns[a].labels()]
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise ConfigError(f"{where}: the list of values is empty")
    mask = np.zeros(len(labels), dtype=bool)
    for v in items:
        key = str(v)
        if key not in labels:
            raise ConfigError(f"{where}: {v!r} is not a value of column '{domain.names[a]}' "
                              f"(values: {', '.join(labels[:8])}{', ...' if len(labels) > 8 else ''})")
        mask[labels.index(key)] = True
    return mask


def _patterns(member: list[np.ndarray]) -> np.ndarray:
    """Maximal (under inclusion) sets of queries satisfied together by one possible row (module docstring)."""
    q = member[0].shape[0]
    classes = []
    for m in member:  # loop over the named columns: values with identical membership are one class
        classes.append(np.unique(m.T, axis=0).T)  # (Q × classes)
    work = q * math.prod(c.shape[1] for c in classes)
    if work > MAX_WORK:
        raise ConfigError(f"workload.queries: computing the sensitivity needs {work} query-row combinations, "
                          f"more than {MAX_WORK}; use fewer queries or fewer distinct value sets per column")
    letters = string.ascii_letters[: len(classes)]
    rows = np.einsum(",".join(f"z{c}" for c in letters) + "->" + letters + "z",
                     *[c.astype(np.uint8) for c in classes]).reshape(-1, q).astype(bool)
    rows = np.unique(rows, axis=0)
    rows = rows[rows.any(axis=1)] if rows.any() else rows[:1]
    # keep a pattern unless another one contains it strictly (inclusion: a & b == a)
    inter = rows.astype(np.int32) @ rows.T.astype(np.int32)
    size = rows.sum(axis=1)
    contained = (inter == size[:, None]) & (size[None, :] > size[:, None])
    return rows[~contained.any(axis=1)]


def _from_file(raw: Any, path: str) -> Any:
    """``{file: queries.yaml}``: the list read from a YAML file (a relative path in a config file is resolved
    against the config's folder by :func:`dpsynth.config.load_config`; here it is taken as given)."""
    if set(raw) != {"file"} or not isinstance(raw["file"], str) or not raw["file"]:
        raise ConfigError(f"{path}: expected a list of queries or {{file: queries.yaml}}")
    p = Path(raw["file"])
    if p.suffix.lower() not in (".yaml", ".yml") or not p.is_file():
        raise ConfigError(f"{path}.file: expected an existing .yaml file holding the list of queries, got {raw['file']!r}")
    try:
        return load_yaml(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}.file: {raw['file']}: not a readable YAML file ({type(exc).__name__})") from None
    except ConfigError as exc:  # a duplicate key
        raise ConfigError(f"{path}.file: {raw['file']}: {exc}") from None


def parse_queries(raw: Any, domain: Domain, path: str = "workload.queries") -> CellSetQueries:
    """Validate ``workload.queries``: a list of ``{where: {column: value or [values]}, name, sanity_bound}``, or
    ``{file: queries.yaml}`` holding that list (kept inline in the parsed workload, so a saved model does not
    depend on the file)."""
    if isinstance(raw, Mapping):
        raw, path = _from_file(raw, path), f"{path} ({raw.get('file')})"
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{path}: expected a non-empty list of queries such as {{where: {{sex: [Female]}}}}")
    if len(raw) > MAX_QUERIES:
        raise ConfigError(f"{path}: {len(raw)} queries, more than {MAX_QUERIES}")
    wheres, names, bounds = [], [], []
    for i, item in enumerate(raw):
        at = f"{path}[{i}]"
        item = as_mapping(item, at)
        no_extra_keys(item, {"where", "name", "sanity_bound"}, at)
        where = as_mapping(item.get("where"), f"{at}.where")
        if not where:
            raise ConfigError(f"{at}.where: name at least one column and its values")
        parsed = {}
        for col, values in where.items():
            if col not in domain.names:
                raise ConfigError(f"{at}.where: unknown column {col!r}")
            parsed[domain.index(col)] = _values(domain, domain.index(col), values, f"{at}.where.{col}")
        wheres.append(parsed)
        name = item.get("name", f"q{i}")
        if not isinstance(name, str):
            raise ConfigError(f"{at}.name: expected a string, got {name!r}")
        names.append(name)
        b = item.get("sanity_bound")
        if b is not None and (isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b) or b <= 0):
            raise ConfigError(f"{at}.sanity_bound: a sanity bound must be a finite number > 0 (a count, e.g. 10), "
                              f"got {b!r}")
        bounds.append(np.nan if b is None else float(b))
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ConfigError(f"{path}: query name {dup!r} is used twice")
    attrs = tuple(sorted({a for w in wheres for a in w}))
    member = tuple(np.array([w.get(a, np.ones(domain.sizes[a], dtype=bool)) for w in wheres]) for a in attrs)
    return CellSetQueries(attrs=attrs, member=member, names=tuple(names), sanity_bounds=np.array(bounds),
                          patterns=_patterns(list(member)), spec=tuple(raw))

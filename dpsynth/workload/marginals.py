"""The marginal workload: which contingency tables (sets of columns) a release measures."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpsynth.data.schema import Domain
from dpsynth.errors import ConfigError
from dpsynth.params import as_int, as_mapping, no_extra_keys

__all__ = ["SanityBounds", "default_sanity_bound", "parse_marginals", "parse_sanity_bounds"]


def parse_marginals(raw: Any, domain: Domain, path: str = "workload.marginals") -> tuple[tuple[int, ...], ...]:
    """Validate ``workload.marginals``: a list of column-name lists, or ``{k, sample, seed}`` (default: all
    2-way marginals).  Sampling uses public randomness fixed by the config, never the data."""
    d = len(domain)
    if raw is None:
        raw = {"k": min(2, d)}
    if isinstance(raw, list):
        if not raw:
            raise ConfigError(f"{path}: the list of marginals is empty")
        out = []
        for i, m in enumerate(raw):
            if not isinstance(m, list) or not m:
                raise ConfigError(f"{path}[{i}]: expected a non-empty list of column names")
            for j, name in enumerate(m):
                if name not in domain.names:
                    raise ConfigError(f"{path}[{i}][{j}]: unknown column {name!r}")
            if len(set(m)) != len(m):
                raise ConfigError(f"{path}[{i}]: a column appears twice")
            out.append(domain.indices(m))
        return tuple(out)
    raw = as_mapping(raw, path)
    no_extra_keys(raw, {"k", "sample", "seed"}, path)
    k = as_int(raw.get("k", 2), f"{path}.k", minimum=1)
    if k > d:
        raise ConfigError(f"{path}.k: must be <= the number of columns ({d}), got {k}")
    combos = list(itertools.combinations(range(d), k))
    if "sample" in raw:
        m = as_int(raw["sample"], f"{path}.sample", minimum=1)
        seed = as_int(raw.get("seed", 0), f"{path}.seed", minimum=0)
        if m < len(combos):
            # Public randomness: the choice of marginals does not look at the data.
            pick = np.sort(np.random.default_rng(seed).choice(len(combos), size=m, replace=False))
            combos = [combos[i] for i in pick]
    elif "seed" in raw:
        raise ConfigError(f"{path}.seed: only meaningful with sample")
    return tuple(combos)


def default_sanity_bound(n: float) -> float:
    """The sanity bound δ of relative errors, 10⁻⁴·n when not configured (Xiao et al. 2011, §6.1)."""
    return 1e-4 * float(n)


@dataclass(frozen=True)
class SanityBounds:
    """Sanity bounds δ of relative errors (Xiao et al. 2011, Equation 1), per marginal (§2: "the sanity
    bound [may vary] from query to query").  Public parameters from the config, never from the data.

    ``default``: δ of every marginal not listed (``None``: the algorithm's ``sanity_bound`` parameter,
    else 10⁻⁴·n, §6.1).  ``per_marginal``: (sorted column indices, δ) pairs; a bound applies to every
    workload marginal over that set of columns, whatever their order.
    """

    default: float | None = None
    per_marginal: tuple[tuple[tuple[int, ...], float], ...] = ()

    def for_marginals(self, marginals, *, fallback: float) -> np.ndarray:
        """δ_j of each marginal of ``marginals``: its own bound, else ``default``, else ``fallback``."""
        own = dict(self.per_marginal)
        base = self.default if self.default is not None else float(fallback)
        return np.array([own.get(tuple(sorted(m)), base) for m in marginals], dtype=float)

    def to_raw(self, domain: Domain) -> dict:
        raw: dict[str, Any] = {}
        if self.default is not None:
            raw["default"] = self.default
        if self.per_marginal:
            raw["marginals"] = [{"columns": [domain.names[a] for a in m], "bound": b} for m, b in self.per_marginal]
        return raw


def _bound(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{path}: a sanity bound must be a finite number > 0 (a count, e.g. 10), got {value!r}")
    return float(value)


def parse_sanity_bounds(raw: Any, domain: Domain, marginals: tuple[tuple[int, ...], ...],
                        path: str = "workload.sanity_bounds") -> SanityBounds:
    """Validate ``workload.sanity_bounds: {default: δ, marginals: [{columns: [...], bound: δ}, ...]}``.

    Every listed marginal must be a workload marginal (as a set of columns) and appear once.
    """
    if raw is None:
        return SanityBounds()
    raw = as_mapping(raw, path)
    no_extra_keys(raw, {"default", "marginals"}, path)
    default = _bound(raw["default"], f"{path}.default") if raw.get("default") is not None else None
    items = raw.get("marginals", [])
    if not isinstance(items, list):
        raise ConfigError(f"{path}.marginals: expected a list of {{columns: [...], bound: number}}")
    present = {tuple(sorted(m)) for m in marginals}
    out: dict[tuple[int, ...], float] = {}
    for i, item in enumerate(items):
        where = f"{path}.marginals[{i}]"
        item = as_mapping(item, where)
        no_extra_keys(item, {"columns", "bound"}, where)
        cols = item.get("columns")
        if not isinstance(cols, list) or not cols or not all(isinstance(c, str) for c in cols):
            raise ConfigError(f"{where}.columns: expected a non-empty list of column names")
        for c in cols:
            if c not in domain.names:
                raise ConfigError(f"{where}.columns: unknown column {c!r}")
        key = tuple(sorted(domain.indices(cols)))
        if key not in present:
            raise ConfigError(f"{where}.columns: ({', '.join(cols)}) is not a marginal of the workload; "
                              "list only workload marginals")
        if key in out:
            raise ConfigError(f"{where}.columns: ({', '.join(cols)}) is listed twice")
        if "bound" not in item:
            raise ConfigError(f"{where}.bound: required")
        out[key] = _bound(item["bound"], f"{where}.bound")
    return SanityBounds(default=default, per_marginal=tuple(out.items()))

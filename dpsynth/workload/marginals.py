"""The marginal workload: which contingency tables (sets of columns) a release measures."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from dpsynth.data.schema import Domain
from dpsynth.errors import ConfigError
from dpsynth.params import as_int, as_mapping, no_extra_keys

__all__ = ["default_sanity_bound", "parse_marginals"]


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

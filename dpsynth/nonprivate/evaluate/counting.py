"""Marginal counts of encoded tables (with a prefix cache), the baselines, and encoding with clear errors."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from dpsynth.config import Config
from dpsynth.data.discretize import encode
from dpsynth.errors import DataError


class _Counter:
    """Marginal counts of an (n × d) code array: one combined code per marginal + ``np.bincount``.

    Combined codes of 1- and 2-attribute prefixes are cached, so the 3-way
    marginals (a, b, c), (a, b, d), … reuse the code of (a, b).
    """

    def __init__(self, codes: np.ndarray, sizes: tuple[int, ...]):
        self.codes = np.asfortranarray(codes, dtype=np.int64)
        self.sizes = sizes
        self.n = codes.shape[0]
        self._cache: dict[tuple[int, ...], np.ndarray] = {}

    def _flat(self, attrs: tuple[int, ...]) -> np.ndarray:
        if len(attrs) == 1:
            return self.codes[:, attrs[0]]
        hit = self._cache.get(attrs)
        if hit is not None:
            return hit
        out = self._flat(attrs[:-1]) * self.sizes[attrs[-1]] + self.codes[:, attrs[-1]]
        if len(attrs) <= 2:
            self._cache[attrs] = out
        return out

    def counts(self, attrs: tuple[int, ...]) -> np.ndarray:
        shape = tuple(self.sizes[a] for a in attrs)
        return np.bincount(self._flat(attrs), minlength=math.prod(shape)).reshape(shape)


def _baselines(attrs: tuple[int, ...], sizes, one_way: list[np.ndarray]) -> dict[str, np.ndarray]:
    """The three baselines on the marginal over ``attrs`` (unnormalised; every metric normalises).

    ``one_way`` holds the true 1-way *counts*: the independent baseline is
    their outer product, so on a 1-way marginal it equals the truth exactly.
    """
    shape = tuple(sizes[a] for a in attrs)
    zeros = np.zeros(shape)
    zeros[(0,) * len(attrs)] = 1.0
    return {
        "uniform": np.full(shape, 1.0 / math.prod(shape)),
        "zeros": zeros,
        "independent": functools.reduce(np.multiply.outer, [one_way[a] for a in attrs]),
    }


# ------------------------------------------------------------------------ encoding
def _encode(table: pd.DataFrame, config: Config, which: str) -> np.ndarray:
    missing = [c for c in config.domain.names if c not in set(map(str, table.columns))]
    if missing:
        raise DataError(
            f"schema mismatch: the {which} table has no column '{missing[0]}'"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            + "; both tables must have every column of the config's schema"
        )
    try:
        return encode(table, config.domain, unknown=config.unknown)
    except DataError as exc:
        raise DataError(f"{which} table: {exc}") from None

"""The privacy boundary: algorithms see the private table only through :class:`Counts`.

A counts engine answers two questions about the discretized table:

* ``marginal(attrs)``: the exact contingency table over a tuple of attribute
  indices (a numpy array of shape ``domain.shape(attrs)``, integer counts);
* ``n``: the number of rows, used only where the configuration declares it
  public or by the pipeline's noisy row-count mechanism.

Both results are *private*.  An algorithm may compute scores, errors or
anything else from them, but what it outputs must pass through a mechanism of
:mod:`dpsynth.privacy.mechanisms`, which charges the ledger.  Keeping the interface
this narrow lets other engines (streaming, Spark) plug in unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from dpsynth.data.schema import Domain

__all__ = ["ArrayCounts", "CachedCounts", "Counts"]


class Counts(Protocol):
    """Sufficient-statistics interface of the private table."""

    domain: Domain

    @property
    def n(self) -> int:
        ...

    def marginal(self, attrs: Sequence[int]) -> np.ndarray:
        ...

    def marginals(self, attr_sets: Sequence[Sequence[int]]) -> list[np.ndarray]:
        ...


class CachedCounts:
    """Shared part of the counts engines: argument checks, the cache, ``marginals``.

    A subclass sets ``domain`` and ``_cache`` (a dict) and implements ``n`` and
    ``_count(attrs, shape)``, the exact contingency table for distinct ``attrs``
    (at least one attribute), as int64 of ``shape``.
    """

    domain: Domain
    _cache: dict

    @property
    def n(self) -> int:  # the exact row count: each engine implements it
        raise NotImplementedError

    def marginal(self, attrs: Sequence[int]) -> np.ndarray:
        """Exact counts over ``attrs`` (in the given order), as int64 of the marginal's shape."""
        attrs = tuple(int(a) for a in attrs)
        if len(set(attrs)) != len(attrs):
            raise ValueError("attributes of a marginal must be distinct")
        hit = self._cache.get(attrs)
        if hit is None:
            shape = self.domain.shape(attrs)
            hit = np.array(self.n, dtype=np.int64) if not attrs else self._count(attrs, shape)
            self._cache[attrs] = hit
        return hit.copy()

    def marginals(self, attr_sets: Sequence[Sequence[int]]) -> list[np.ndarray]:
        return [self.marginal(a) for a in attr_sets]

    def _count(self, attrs: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
        raise TypeError(f"{type(self).__name__} must implement _count")


class ArrayCounts(CachedCounts):
    """Counts over an in-memory (n × d) array of integer codes (the ``numpy`` engine)."""

    def __init__(self, codes: np.ndarray, domain: Domain):
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(domain):
            raise ValueError("codes must be an (n × d) array matching the domain")
        self.domain = domain
        # Narrowest dtype keeps memory low on wide tables.
        self._codes = codes.astype(np.min_scalar_type(max(domain.sizes, default=1)))
        self._cache: dict[tuple[int, ...], np.ndarray] = {}

    @property
    def n(self) -> int:
        return int(self._codes.shape[0])

    def _count(self, attrs: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
        flat = np.zeros(self.n, dtype=np.int64)
        for a, size in zip(attrs, shape):  # loop over the (few) attributes, vectorized over rows
            flat *= size
            flat += self._codes[:, a]
        return np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape)

    def conjunction_counts(self, attrs: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Rows satisfying each conjunction: row q counts rows with code ``values[q, j]`` in column
        ``attrs[q, j]`` for every j (int64, shape (Q,); DualQuery's true answers).

        Vectorized per distinct column set over the *distinct* rows (weighted by
        multiplicity), so Q in the millions over large n costs one bincount per
        column set.  Other engines get the same answer from ``marginal()``
        (``dpsynth.workload.conjunctions.conjunction_counts``).
        """
        attrs, values = np.asarray(attrs, dtype=np.int64), np.asarray(values, dtype=np.int64)
        if attrs.ndim != 2 or attrs.shape != values.shape:
            raise ValueError("attrs and values must be (Q × k) arrays of the same shape")
        order = np.argsort(attrs, axis=1, kind="stable")
        attrs, values = np.take_along_axis(attrs, order, 1), np.take_along_axis(values, order, 1)
        if getattr(self, "_distinct", None) is None:
            self._distinct = np.unique(self._codes, axis=0, return_counts=True)
        rows, mult = self._distinct
        sets, inverse = np.unique(attrs, axis=0, return_inverse=True)
        words = -(-self.n // 64)
        if len(attrs) * words * (attrs.shape[1] + 1) < len(sets) * len(rows) * (attrs.shape[1] + 2):
            # Many column sets over many distinct rows (wide binary data): AND + popcount of
            # bit-packed row sets, O(Q·n/64·k) whatever the number of column sets.
            return _packed_conjunction_counts(self._codes, self.domain, attrs, values)
        inverse = inverse.reshape(-1)
        group = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[group], np.arange(len(sets) + 1))
        out = np.zeros(len(attrs), dtype=np.int64)
        for g, cols in enumerate(sets.tolist()):  # loop over distinct column sets, vectorized over rows
            idx = group[bounds[g] : bounds[g + 1]]
            key_rows = np.zeros(len(rows), dtype=np.int64)
            key_q = np.zeros(len(idx), dtype=np.int64)
            for j, a in enumerate(cols):
                key_rows = key_rows * self.domain.sizes[a] + rows[:, a]
                key_q = key_q * self.domain.sizes[a] + values[idx, j]
            cells = self.domain.cells(cols)
            if cells <= 4 * len(rows) + (1 << 20):
                table = np.bincount(key_rows, weights=mult, minlength=cells)
                out[idx] = np.rint(table[key_q]).astype(np.int64)
            else:  # huge marginal: count the occupied keys only
                keys, first = np.unique(key_rows, return_inverse=True)
                sums = np.bincount(first.reshape(-1), weights=mult, minlength=len(keys))
                pos = np.clip(np.searchsorted(keys, key_q), 0, len(keys) - 1)
                out[idx] = np.where(keys[pos] == key_q, np.rint(sums[pos]), 0).astype(np.int64)
        return out


def _packed_conjunction_counts(codes: np.ndarray, domain: Domain, attrs: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Conjunction counts by popcount of ANDed bit-packed rows (one packed row set per bit)."""
    n = codes.shape[0]
    words = -(-n // 64)
    packed = np.zeros((domain.n_bits, words * 8), dtype=np.uint8)
    for a, (off, size) in enumerate(zip(domain.offsets, domain.sizes)):  # loop over columns and values
        for v in range(size):
            packed[off + v, : -(-n // 8)] = np.packbits(codes[:, a] == v)
    packed = packed.view(np.uint64)
    bits = np.asarray(domain.offsets)[attrs] + values
    out = np.empty(len(bits), dtype=np.int64)
    chunk = max(1, (1 << 22) // words)
    for lo in range(0, len(bits), chunk):  # chunks of queries bound the memory to ~32 MB
        acc = packed[bits[lo : lo + chunk, 0]]
        for j in range(1, bits.shape[1]):
            acc = acc & packed[bits[lo : lo + chunk, j]]
        out[lo : lo + chunk] = _popcount(acc).sum(axis=1)
    return out


def _popcount(x: np.ndarray) -> np.ndarray:
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(x).astype(np.int64)
    table = np.array([i.bit_count() for i in range(256)], dtype=np.int64)
    return table[x.view(np.uint8)].reshape(*x.shape, 8).sum(axis=-1)

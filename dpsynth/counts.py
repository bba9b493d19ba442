"""The privacy boundary: algorithms see the private table only through :class:`Counts`.

A counts engine answers two questions about the discretized table:

* ``marginal(attrs)``: the exact contingency table over a tuple of attribute
  indices (a numpy array of shape ``domain.shape(attrs)``, integer counts);
* ``n``: the number of rows, used only where the configuration declares it
  public or by the pipeline's noisy row-count mechanism.

Both results are *private*.  An algorithm may compute scores, errors or
anything else from them, but what it outputs must pass through a mechanism of
:mod:`dpsynth.mechanisms`, which charges the ledger.  Keeping the interface
this narrow lets other engines (streaming, Spark) plug in unchanged.
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from .schema import Domain

__all__ = ["Counts", "ArrayCounts"]


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


class ArrayCounts:
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

    def marginal(self, attrs: Sequence[int]) -> np.ndarray:
        """Exact counts over ``attrs`` (in the given order), as int64 of the marginal's shape."""
        attrs = tuple(int(a) for a in attrs)
        if len(set(attrs)) != len(attrs):
            raise ValueError("attributes of a marginal must be distinct")
        hit = self._cache.get(attrs)
        if hit is not None:
            return hit.copy()
        shape = self.domain.shape(attrs)
        if not attrs:
            out = np.array(self.n, dtype=np.int64)
        else:
            flat = np.zeros(self.n, dtype=np.int64)
            for a, size in zip(attrs, shape):  # loop over the (few) attributes, vectorized over rows
                flat *= size
                flat += self._codes[:, a]
            out = np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape)
        self._cache[attrs] = out
        return out.copy()

    def marginals(self, attr_sets: Sequence[Sequence[int]]) -> list[np.ndarray]:
        return [self.marginal(a) for a in attr_sets]

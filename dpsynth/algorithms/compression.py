"""Rare values merged before measuring (MST's domain compression, McKenna et al. 2021, §3, in our terms).

After the 1-way marginals are measured, a value whose *noisy* count is below :data:`RARE` noise deviations is
rare; when a column has two or more rare values they are measured as one bin in every later marginal, so a
measurement spreads its noise over fewer cells (a value no row holds costs as much noise as a common one).
The bins are a function of released counts and public facts only (post-processing); a measurement of the
binned marginal has the sensitivity of the marginal itself (each row still falls in exactly one cell).  The
estimator sees it as linear queries over the full marginal's cells, so the model keeps every value.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RARE", "Bins", "absent_values", "bins_from_noisy"]

RARE = 3.0
"""A value is rare when its noisy 1-way count is below this many noise standard deviations (MST's threshold)."""


class Bins:
    """Per column, the bin of every value (``None``: the column is measured value by value)."""

    def __init__(self, maps: list[np.ndarray | None]):
        self.maps = maps
        self._onehot = [None if m is None else np.arange(int(m.max()) + 1)[:, None] == m[None, :] for m in maps]

    def describe(self, names) -> dict[str, list[int]]:
        """Per binned column, the codes of the values that share its rare bin (for the report)."""
        return {names[a]: np.flatnonzero(m == m.max()).tolist() for a, m in enumerate(self.maps) if m is not None}

    def binned(self, attrs) -> bool:
        return any(self.maps[a] is not None for a in attrs)

    def shape(self, attrs, sizes) -> tuple[int, ...]:
        return tuple(sizes[a] if self.maps[a] is None else int(self.maps[a].max()) + 1 for a in attrs)

    def apply(self, table: np.ndarray, attrs) -> np.ndarray:
        """The marginal over ``attrs`` (axes in that order) with each column's values summed into its bins."""
        out = np.asarray(table, dtype=float)
        for pos, a in enumerate(attrs):  # loop over the marginal's columns (2 or 3)
            hot = self._onehot[a]
            if hot is not None:
                out = np.moveaxis(np.tensordot(hot.astype(float), out, axes=([1], [pos])), 0, pos)
        return out

    def query(self, attrs, sizes) -> np.ndarray:
        """The (bins × cells) 0/1 matrix of :meth:`apply` over the marginal's cells, row-major."""
        q = np.ones((1, 1))
        for a in attrs:  # loop over the marginal's columns (2 or 3)
            hot = self._onehot[a]
            q = np.kron(q, np.eye(sizes[a]) if hot is None else hot.astype(float))
        return q


def bins_from_noisy(noisy_one_way: list[np.ndarray], sd) -> Bins:
    """:class:`Bins` from the noisy 1-way counts (released) and their noise deviation ``sd`` (public; one for all
    columns, or one per column)."""
    maps: list[np.ndarray | None] = []
    sds = list(sd) if np.ndim(sd) else [sd] * len(noisy_one_way)
    for values, dev in zip(noisy_one_way, sds, strict=True):  # loop over columns
        rare = np.asarray(values, dtype=float) < RARE * dev
        if rare.sum() < 2:
            maps.append(None)
            continue
        keep = np.flatnonzero(~rare)
        m = np.full(rare.size, keep.size, dtype=np.int64)  # the rare values share the last bin
        m[keep] = np.arange(keep.size)
        maps.append(m)
    return Bins(maps)


def absent_values(measurements, sizes) -> list[np.ndarray | None]:
    """Per column, 0/1 weights that give no mass to the values all released measurements together count at
    zero or below (``None``: the column keeps every value); post-processing of noisy values only.

    A value's count is estimated without bias from every measurement that holds its column and measures it
    value by value (``query`` None): the measured marginal summed over the other columns, of noise variance
    (cells / values of the column)·σ², combined by inverse variance.  The fitted model cannot follow a
    negative count: where a value is absent, each of its cells in a measured marginal is fitted near the
    positive part of its noise, so the model keeps some mass there however strongly the sum says zero; an
    estimate ≤ 0 (at most as likely as not for a value held by rows) removes that mass.  A column keeps every
    value when all of them would go."""
    num = [np.zeros(int(s)) for s in sizes]
    den = [np.zeros(int(s)) for s in sizes]
    for m in measurements:  # loop over measurements (tens)
        if m.query is not None:
            continue
        values = np.asarray(m.values, dtype=float).reshape([int(sizes[a]) for a in m.attrs])
        for pos, a in enumerate(m.attrs):  # loop over the measurement's columns (1 to 3)
            share = values.sum(axis=tuple(i for i in range(values.ndim) if i != pos))
            var = values.size / sizes[a] * float(m.sigma) ** 2
            num[a] += share / var
            den[a] += 1.0 / var
    out: list[np.ndarray | None] = []
    for n_a, d_a in zip(num, den, strict=True):  # loop over columns
        keep = (d_a == 0) | (n_a > 0)  # unmeasured values keep their mass
        out.append(None if keep.all() or not keep.any() else keep.astype(float))
    return out

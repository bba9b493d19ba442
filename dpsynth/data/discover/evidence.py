"""What discovery already released about each column, reused as 1-way measurements (post-processing).

Discovery measures every column it learns: the profile's null cell, the noisy counts of the categories that
partition selection keeps, and a fine histogram over public cells.  Those outputs are already paid for; once the
schema is fixed they are also noisy answers to linear queries over the column's codes, so the release's
estimator can use them beside its own measurements at no privacy cost.  This matters most where the release
can afford little: on a wide table with few rows the release measures only 1-way marginals, and the discovery's
histograms carry about as much information again.

Only exact answers are reused: an inner bin is a query when every fine cell it meets lies inside it (its edges
are cell edges; the end bins are left out, as encoding clamps into them values beyond the cells, which no cell
measured: a binary column whose zeros fell outside the coarse range had its ones counted as its first bin), and a
kept category is used only when its noisy count clears the smallest kept count by two standard deviations,
where the selection's bias (a released count is one that passed a threshold) is negligible.  Under
``missing: fill`` (no null cell; discover/nulls.py) the fill value's code also holds the few nulls: the profile's
noisy null count is added to the answer that counts it, never a query of a null cell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpsynth.data.schema import CategoricalColumn, ColumnSpec, DatetimeColumn, IntegerColumn, NumericColumn, null_code

__all__ = ["Evidence", "one_way_queries"]

SELECTION_MARGIN = 2.0
"""A kept category's noisy count is reused when it is at least this many standard deviations above the smallest
kept count (the selection threshold is below that smallest count)."""


@dataclass
class Evidence:
    """Noisy counts one column's discovery released, each with its noise's standard deviation."""

    null: tuple[float, float] | None = None  # (noisy count of nulls, sd)
    labels: tuple[str, ...] | None = None  # kept categories, by decreasing noisy count
    label_counts: np.ndarray | None = None
    label_sd: float = 0.0
    cells: np.ndarray | None = None  # ascending cell edges of a fine histogram (values of the column)
    cell_counts: np.ndarray | None = None  # its noisy counts, not clipped
    cell_sd: float = 0.0
    first: tuple[np.ndarray, float] | None = None  # the first fine histogram's noisy counts (cells first_grid), sd
    # (for the bounds only: values.seen_integers; not a 1-way measurement, the later cells are)
    buckets: Any = None  # the profile's logarithmic buckets: (edges, noisy counts, sd), for fuse.py only
    points: Any = None  # points.PointMasses: values with a bin of their own, their noisy counts and sds
    kept: tuple[np.ndarray, np.ndarray] | None = None  # integers kept by partition selection, noisy counts ≥ 0:
    # for decoding within bins only (a selection's released counts are biased upwards: never a measurement)


def one_way_queries(ev: Evidence, column: ColumnSpec) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """The evidence as linear queries over the column's codes: a list of (query k×size, answers k, sd).

    Rows of one query share one sd: a bin made of w cells has noise sd·sqrt(w), so its row and answer are
    divided by sqrt(w)."""
    size = column.size
    out: list[tuple[np.ndarray, np.ndarray, float]] = []
    if ev.null is not None and column.missing:
        q = np.zeros((1, size))
        q[0, size - 1] = 1.0
        out.append((q, np.array([ev.null[0]], dtype=float), float(ev.null[1])))
    if isinstance(column, CategoricalColumn) and ev.labels is not None and ev.label_counts is not None:
        counts = np.asarray(ev.label_counts, dtype=float)
        code = {str(c): i for i, c in enumerate(column.categories)}
        floor = counts.min() + SELECTION_MARGIN * ev.label_sd if counts.size else 0.0
        rows = [(code[lab], v) for lab, v in zip(ev.labels, counts) if lab in code and v >= floor]
        if rows:
            q = np.zeros((len(rows), size))
            q[np.arange(len(rows)), [r[0] for r in rows]] = 1.0
            out.append((q, np.array([r[1] for r in rows]), float(ev.label_sd)))
    if ev.cells is not None and ev.cell_counts is not None and not isinstance(column, DatetimeColumn):
        edges = _value_edges(column)
        if edges is not None:
            got = _bin_sums(edges, np.asarray(ev.cells, float), np.asarray(ev.cell_counts, float))
            if got is not None and ev.points is not None and len(ev.points.values):
                got = _without_point_cells(got, edges, ev.points.values)
            if got is not None:
                bins, sums, widths = got
                q = np.zeros((bins.size, size))
                q[np.arange(bins.size), bins] = 1.0 / np.sqrt(widths)
                out.append((q, sums / np.sqrt(widths), float(ev.cell_sd)))
    if ev.points is not None and isinstance(column, NumericColumn) and not isinstance(column, DatetimeColumn):
        for v, count, sd in zip(ev.points.values, ev.points.counts, ev.points.sds):  # loop over (public) points
            b = _point_bin(np.asarray(column.edges, dtype=float), float(v), column.integral)
            if b is not None and sd > 0:
                q = np.zeros((1, size))
                q[0, b] = 1.0
                out.append((q, np.array([float(count)]), float(sd)))
    return _with_fill(out, ev, column) if column.fill is not None and not column.missing else out


def _with_fill(queries, ev: Evidence, column: ColumnSpec) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Under ``missing: fill`` the fill value's code holds its value's rows and the nulls (fewer than the
    profile's cut; discover/nulls.py): a row of a query that counts that code answers the value's rows only, so
    it gets the noisy null count added (weighted as the row weighs the code; the two noises' variances add) and
    becomes a query of its own.  Without a noisy null count such rows are left out."""
    code = null_code(column)
    out = []
    for q, v, sd in queries:  # loop over the (few) queries
        hit = q[:, code] != 0
        if hit.any() and (~hit).any():
            out.append((q[~hit], v[~hit], sd))
        elif not hit.any():
            out.append((q, v, sd))
        if hit.any() and ev.null is not None:
            for i in np.flatnonzero(hit):  # at most one row of a query counts the code (its bins are disjoint)
                c = float(q[i, code])
                out.append((q[i:i + 1], np.array([v[i] + c * ev.null[0]]), math.hypot(sd, c * ev.null[1])))
    return out


def _point_bin(edges: np.ndarray, v: float, integral: bool) -> int | None:
    """The bin that holds the value v alone (a point bin, or [v − 0.5, v + 0.5) of an integral column), or None."""
    from dpsynth.data.schema import bin_index

    b = int(bin_index(np.array([v]), edges)[0])
    if edges[b] == edges[b + 1] == v:
        return b
    if integral and v - 1 < edges[b] <= v and v < edges[b + 1] <= v + 1:
        return b
    if integral and b == edges.size - 2 and v - 1 < edges[b] <= v == edges[b + 1]:  # the closed last bin
        return b
    return None


def _without_point_cells(got, edges: np.ndarray, points: np.ndarray):
    """The cell sums less those of the bins after a point bin: their first cell starts at the point and also holds
    its rows.  (A point inside a cell spoils the bins beside it already: their edge is inside a cell.)"""
    bins, sums, widths = got
    spoiled = np.zeros(edges.size - 1, dtype=bool)
    after = np.flatnonzero(np.diff(edges) == 0) + 1
    spoiled[after[after < spoiled.size]] = True
    ok = ~spoiled[bins]
    if not ok.any():
        return None
    return bins[ok], sums[ok], widths[ok]


def _value_edges(column: ColumnSpec) -> np.ndarray | None:
    if isinstance(column, IntegerColumn):
        return np.arange(column.lower, column.upper + 2, dtype=float) - 0.5
    if isinstance(column, NumericColumn):
        return np.asarray(column.edges, dtype=float)
    return None


def _bin_sums(edges: np.ndarray, cells: np.ndarray, counts: np.ndarray):
    """(bins, noisy sums, cells per bin) for the bins that are exact unions of cells, or None."""
    nb = edges.size - 1
    if nb < 1 or cells.size < 2 or counts.size != cells.size - 1:
        return None
    tol = 1e-9 * max(1.0, float(np.abs(cells).max()))
    # every inner bin edge that falls strictly inside a cell spoils the two bins beside it
    pos = np.searchsorted(cells, edges[1:-1])
    on_edge = np.zeros(edges.size - 2, dtype=bool)
    for shift in (0, -1):  # the nearest cell edge on either side
        k = np.clip(pos + shift, 0, cells.size - 1)
        on_edge |= np.abs(cells[k] - edges[1:-1]) <= tol
    inside = (edges[1:-1] > cells[0] + tol) & (edges[1:-1] < cells[-1] - tol)
    spoiled = inside & ~on_edge
    ok = np.ones(nb, dtype=bool)
    ok[:-1] &= ~spoiled
    ok[1:] &= ~spoiled
    mid = 0.5 * (cells[:-1] + cells[1:])
    which = np.clip(np.searchsorted(edges, mid, side="right") - 1, 0, nb - 1)  # clamped like encoding
    sums = np.bincount(which, weights=counts, minlength=nb)
    widths = np.bincount(which, minlength=nb)
    ok &= (widths > 0) & (edges[:-1] >= cells[0] - tol) & (edges[1:] <= cells[-1] + tol)  # bins the cells cover
    ok[[0, -1]] = False  # the end bins also hold the values clamped into them, which no cell measured
    bins = np.flatnonzero(ok)
    if bins.size == 0:
        return None
    return bins, sums[bins], widths[bins].astype(float)

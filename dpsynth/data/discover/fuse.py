"""A zoomed histogram's counts made consistent with the first, coarser one before its quantiles are read
(post-processing of two noisy histograms; issue 27).

A bin edge lands at a noisy quantile: the cumulative sum of the fine cells' noisy counts up to it, whose noise
grows with the square root of the cells summed.  On airfare_routes (4,596 rows) a zoom of 35 cells of σ ≈ 47
puts a median edge some 200 rows (4% of the rows) off its rank, and a count and its log (``passen``,
``lpassen``), each off by its own noise, get bins offset by up to half a bin: a model that measures their 2-way
marginal still spreads each bin's rows over two of the other's.  A zoomed column was also measured by its first
fine histogram (a few wide cells over the zoom's range, σ ≈ 38 each): the wide cells' sums carry the rank to
each wide edge with the noise of a handful of cells, the zoom's cells place the rows within a wide cell.

:func:`fused` is the least-squares estimate of the zoom's cells given both (each count weighted by the inverse
of its noise's variance): its unknowns are the rows of each zoom cell inside the zoom's range and of each wide
cell past its ends (an end cell of a histogram is open: it also holds the rows past it, ``cell_counts``); a wide
cell that a zoom cell straddles shares it in proportion to their overlap.  The estimate feeds only the bin edges;
the evidence (:mod:`~dpsynth.data.discover.evidence`) keeps the zoom's own counts, whose noise is independent
cell by cell.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fused", "least_squares"]


def least_squares(cells: np.ndarray, counts: np.ndarray, sd: float, wide: np.ndarray, wide_counts: np.ndarray,
                  wide_sd: float) -> np.ndarray:
    """The fine histogram's counts (cells ``cells``, noisy ``counts`` of noise sd ``sd``) estimated from it and a
    coarser noisy histogram over ``wide`` (``wide_counts``, ``wide_sd``); both histograms' end cells are open.
    Post-processing: a function of the two noisy histograms and public edges only."""
    k = cells.size - 1
    lo, hi = cells[:-1], cells[1:]
    w_lo, w_hi = wide[:-1], wide[1:]
    below, above = np.flatnonzero(w_hi <= cells[0]), np.flatnonzero(w_lo >= cells[-1])
    # unknowns: the rows of each wide cell below the zoom, of each zoom cell inside it, of each wide cell above
    nb, na = below.size, above.size
    overlap = np.clip(np.minimum(w_hi[:, None], hi[None, :]) - np.maximum(w_lo[:, None], lo[None, :]), 0.0, None)
    a = np.zeros((w_lo.size, nb + k + na))
    a[:, nb:nb + k] = overlap / (hi - lo)[None, :]  # (a wide cell a zoom cell straddles: in proportion)
    a[below, np.arange(nb)] = 1.0
    a[above, nb + k + np.arange(na)] = 1.0
    b = np.zeros((k, nb + k + na))  # the zoom's cells, its end cells open (they hold the rows past them)
    b[np.arange(k), nb + np.arange(k)] = 1.0
    b[0, :nb] = 1.0
    b[-1, nb + k:] = 1.0
    system = np.vstack([b / sd, a / wide_sd])
    answers = np.concatenate([counts / sd, wide_counts / wide_sd])
    rows, *_ = np.linalg.lstsq(system, answers, rcond=None)  # (the least-norm split where the two do not tell)
    return b @ rows


def fused(disc, weights):
    """The weights (cell edges, noisy mass ≥ 0) a zoomed column's bin edges are read from, its zoom's counts
    (``disc.evidence``'s cells) made consistent with its first fine histogram (:func:`least_squares`); the
    weights unchanged for any other column (whose last cells are the first histogram's own, or partly it)."""
    ev = disc.evidence
    first = disc.first_grid
    if weights is None or not disc.zoomed or first is None or ev.first is None or ev.cells is None \
            or ev.cell_counts is None or ev.cell_sd <= 0 or ev.first[1] <= 0:
        return weights
    cells, counts = np.asarray(ev.cells, dtype=float), np.asarray(ev.cell_counts, dtype=float)
    w_cells = np.asarray(weights[0], dtype=float)
    i = int(np.searchsorted(cells, w_cells[0]))
    if i + w_cells.size > cells.size or not np.array_equal(cells[i:i + w_cells.size], w_cells):
        return weights
    wide, wide_counts = np.asarray(first, dtype=float), np.asarray(ev.first[0], dtype=float)
    est = least_squares(cells, counts, float(ev.cell_sd), wide, wide_counts, float(ev.first[1]))
    return w_cells, np.clip(est[i:i + w_cells.size - 1], 0.0, None)

"""A column's last fine histogram made consistent with its coarser ones before its quantiles are read
(post-processing of noisy histograms; issue 27).

A bin edge lands at a noisy quantile: the cumulative sum of the fine cells' noisy counts up to it, whose noise
grows with the square root of the cells summed.  On airfare_routes (4,596 rows) a zoom of 35 cells of σ ≈ 47
puts a median edge some 200 rows (4% of the rows) off its rank, and a count and its log (``passen``,
``lpassen``), each off by its own noise, get bins offset by up to half a bin: a model that measures their 2-way
marginal still spreads each bin's rows over two of the other's.  The same rows were also counted in wider cells,
with noise independent of the last histogram's: the profile's logarithmic buckets (every profiled column) and,
for a zoomed column, its first fine histogram.  Their sums carry the rank to each wide edge with the noise of a
handful of cells; the fine cells place the rows inside a wide cell.

:func:`least_squares` estimates the fine cells from all of them (each count weighted by the inverse of its
noise's variance).  Its unknowns are the rows between adjacent edges of any of the grids, so each noisy count is
the sum of the unknowns inside its cell (a histogram's end cells are open: they also hold the rows past them,
``cell_counts``); what no count tells apart (two unknowns inside one fine cell) takes the least-norm split, which
leaves the fine cell's sum as the data says.  The estimate feeds only the bin edges; the evidence
(:mod:`~dpsynth.data.discover.evidence`) keeps the fine cells' own counts, whose noise is independent cell by cell.

Measured (issue 27, session 14).  A perfect model (the real rows encoded with the discovered edges, decoded
uniformly inside their bins), neutral 2-way L1 summed over airfare_routes' six related pairs, seeds 2-4: 14.4
with the nearer cell edges (:func:`~dpsynth.data.discover.noise.quantile_edges`), 13.2 with a zoom fused with
its first histogram, 12.6 with the profile's buckets too (16.1 before either; exact ranks: about 2).  Zero-config
2-way L1, seeds 2-5, 12 seen tables: the zoom's fusion x0.996 of the nearer edges alone (airfare_routes x0.956),
the profile's buckets x0.99 of that (within the noise of a reshuffle: black_legislators x1.03 and wage x1.04 on
seeds 2,3 either way); the three together x0.960 of before (airfare_routes 0.230 → 0.205 on seeds 2,3, hand
0.166; diamonds x0.827, car_exports x0.907; worse taxi_trips x1.033, from the nearer edges).  A wide histogram is
cut to the fine cells' range first (:func:`_within`): one solve of a few hundred unknowns per column (diamonds'
discovery, two seeds: 2.2 s of CPU, 7 s over every profile bucket, 0.6 s without the fusion).
"""

from __future__ import annotations

import numpy as np

__all__ = ["fused", "least_squares"]


def _sums(edges: np.ndarray, atoms: np.ndarray) -> np.ndarray:
    """Which atoms (between adjacent ``atoms`` edges) each cell of ``edges`` holds, its end cells open."""
    lo, hi = edges[:-1].copy(), edges[1:].copy()
    lo[0], hi[-1] = -np.inf, np.inf
    mid = 0.5 * (atoms[:-1] + atoms[1:])
    return ((mid[None, :] >= lo[:, None]) & (mid[None, :] < hi[:, None])).astype(float)


def _within(edges: np.ndarray, counts: np.ndarray, sd: float, lo: float, hi: float):
    """A wide histogram cut to [``lo``, ``hi``]: its cells past either end summed into one open end cell each (sd
    of a sum), so the unknowns stay about as many as the fine cells.  None when no edge lies inside."""
    inner = np.flatnonzero((edges > lo) & (edges < hi))
    inner = inner[(inner > 0) & (inner < counts.size)]  # (its own end edges: its end cells are open)
    if inner.size == 0:
        return None
    bounds = np.concatenate([[0], inner, [counts.size]])  # wide cells [bounds[k], bounds[k + 1]) merged
    csum = np.concatenate([[0.0], np.cumsum(counts)])
    return np.concatenate([[lo], edges[inner], [hi]]), csum[bounds[1:]] - csum[bounds[:-1]], \
        sd * np.sqrt(np.diff(bounds))


def least_squares(cells: np.ndarray, counts: np.ndarray, sd: float, wide) -> np.ndarray:
    """The fine histogram's counts (cells ``cells``, noisy ``counts`` of noise sd ``sd``) estimated from it and
    the coarser noisy histograms ``wide`` ((edges, counts, sd) each), all over the same rows.  Post-processing:
    a function of noisy histograms and public edges only."""
    cells = np.asarray(cells, dtype=float)
    cut = [_within(np.asarray(e, dtype=float), np.asarray(c, dtype=float), float(s), cells[0], cells[-1])
           for e, c, s in wide]
    cut = [w for w in cut if w is not None]
    atoms = np.unique(np.concatenate([cells] + [w[0] for w in cut]))
    fine = _sums(cells, atoms)
    system = np.vstack([fine / sd] + [_sums(e, atoms) / s[:, None] for e, _, s in cut])
    answers = np.concatenate([np.asarray(counts, dtype=float) / sd] + [c / s for _, c, s in cut])
    rows, *_ = np.linalg.lstsq(system, answers, rcond=None)
    return fine @ rows


def fused(disc, weights):
    """The weights (cell edges, noisy mass ≥ 0) a column's bin edges are read from, its last fine cells
    (``disc.evidence``'s) made consistent with the coarser histograms measured apart from them
    (``disc.coarser``: the profile's buckets, a zoom's first histogram); the weights unchanged when there are
    none (a column whose last cells average in or reuse its first histogram's counts sets none of its own)."""
    ev = disc.evidence
    if weights is None or not disc.coarser or ev.cells is None or ev.cell_counts is None or ev.cell_sd <= 0:
        return weights
    cells = np.asarray(ev.cells, dtype=float)
    w_cells = np.asarray(weights[0], dtype=float)
    i = int(np.searchsorted(cells, w_cells[0]))
    if i + w_cells.size > cells.size or not np.array_equal(cells[i:i + w_cells.size], w_cells):
        return weights
    est = least_squares(cells, np.asarray(ev.cell_counts, dtype=float), float(ev.cell_sd), disc.coarser)
    return w_cells, np.clip(est[i:i + w_cells.size - 1], 0.0, None)

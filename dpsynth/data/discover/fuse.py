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
its first histogram, 12.9 with the profile's buckets too (noise-free ranks: about 2).  Zero-config 2-way L1,
seeds 2-5, 12 seen tables: the zoom's fusion x0.996 of the nearer edges alone (airfare_routes x0.956), the
profile's x0.989 of that (diamonds x0.99, nmes1988 x0.96, black_legislators x0.97; worse german_health's seed
3 x1.06, diamonds' seed 5 x1.06); the three together x0.954 of before (airfare_routes 0.230 → 0.205 on seeds 2,3,
hand 0.166; diamonds x0.836, car_exports x0.907; worse taxi_trips x1.033, lending_club x1.003).
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


def least_squares(cells: np.ndarray, counts: np.ndarray, sd: float, wide) -> np.ndarray:
    """The fine histogram's counts (cells ``cells``, noisy ``counts`` of noise sd ``sd``) estimated from it and
    the coarser noisy histograms ``wide`` ((edges, counts, sd) each), all over the same rows.  Post-processing:
    a function of noisy histograms and public edges only."""
    grids = [np.asarray(cells, dtype=float)] + [np.asarray(w[0], dtype=float) for w in wide]
    atoms = np.unique(np.concatenate(grids))
    fine = _sums(grids[0], atoms)
    system = np.vstack([fine / sd] + [_sums(g, atoms) / float(w[2]) for g, w in zip(grids[1:], wide)])
    answers = np.concatenate([np.asarray(counts, dtype=float) / sd] +
                             [np.asarray(w[1], dtype=float) / float(w[2]) for w in wide])
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

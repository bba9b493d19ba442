"""The measurements of schema discovery and what is read off them (post-processing only).

A :class:`ColumnBudget` is one column's share of the discovery budget, in one of two currencies:

* **basic** (pure ε, a discovery with its own basic-composition ledger): histograms with discrete Laplace noise
  of scale Δ₁/ε (:func:`dpsynth.privacy.mechanisms.geometric_mechanism`), categories by Laplace partition
  selection (:func:`dpsynth.privacy.selection.partition_selection_mechanism`);
* **zcdp** (ρ, a discovery inside the release's zCDP ledger): histograms with discrete Gaussian noise
  σ = Δ₂/sqrt(2ρ), Δ₂ = sqrt(Δ₁) since each row is in one cell
  (:func:`dpsynth.privacy.mechanisms.discrete_gaussian_mechanism`), categories by Gaussian partition selection
  (:func:`dpsynth.privacy.selection.gaussian_partition_selection_mechanism`, δ-approximate zCDP).  Under zCDP
  the columns compose as ρ adds up, so each column's noise grows with sqrt(columns) rather than with the
  number of columns, and the Gaussian tails make the cuts and thresholds several times lower.

Cuts (which noisy cells show data) are utility choices, not privacy ones: all empty cells stay under them with
probability at least 1 − :data:`BUCKET_MISS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpsynth.privacy.accountant import Ledger, split_budget
from dpsynth.privacy.mechanisms import discrete_gaussian_mechanism, geometric_mechanism
from dpsynth.privacy.selection import gaussian_partition_selection_mechanism, partition_selection_mechanism

__all__ = ["BUCKET_MISS", "DEFAULT_RANGE", "FEW_CELLS", "FILL", "FINE_CELLS", "FINE_SHARE", "MIN_CELLS", "OUTER_RANGE", "ColumnBudget", "coarse_grid", "column_streams", "fine_cells", "log_cells",
           "plain", "quantile_edges", "support"]

FINE_CELLS, MIN_CELLS, FILL, FINE_SHARE, FEW_CELLS = 128, 16, 0.5, 0.6, 3
"""The fine histogram of a numeric column: G round cells over its coarse range (one per integer when an
integral range holds at most G integers), G between MIN_CELLS and FINE_CELLS such that the column's noisy
row count (from its profile) fills each cell FILL times over the cut of an empty cell."""

DEFAULT_RANGE = (-1e9, 1e9)
"""The public coarse range of a numeric column without bound hints: its logarithmic buckets' span."""

OUTER_RANGE = (-1e15, 1e15)
"""Where the profile's two outer buckets, beyond DEFAULT_RANGE, end (issue 27: gapminder's GDP in dollars, 4e7 to
1.2e13, was clamped below 1e9; a bucket [1e9, 1e15) that passes lets the fine histogram find the extent).  The
buckets themselves are unchanged, so the profile's noise and cuts are the same as before for every column."""

BUCKET_MISS = 0.01
"""Probability that some empty cell of a histogram passes its cut (and widens the bounds)."""

HALVE_SD = 3.0
"""Inside a block whose sum passed its cut (the data's presence settled), :func:`support` (``tight``) finds where
the data ends by halving; a half keeps the search when its noisy sum reaches this many standard deviations of its
noise (a pure-noise half passes with probability 0.13 %).  On a two-sided column at a thin budget (200 seeds)
2 left one bound beyond ±10⁶ and 2.5 none; 3 kept as many thin tails as the walk to the window's edge did (9 of
20, randhie-like amounts)."""

_MULTIPLIERS = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
_NICE = (1.0, 2.0, 2.5, 5.0)
_E_SERIES: tuple[tuple[float, ...], ...] = (
    (1.0, 2.2, 4.7),
    (1.0, 1.5, 2.2, 3.3, 4.7, 6.8),
    (1.0, 1.2, 1.5, 1.8, 2.2, 2.7, 3.3, 3.9, 4.7, 5.6, 6.8, 8.2),
    (1.0, 1.1, 1.2, 1.3, 1.5, 1.6, 1.8, 2.0, 2.2, 2.4, 2.7, 3.0, 3.3, 3.6, 3.9, 4.3, 4.7, 5.1, 5.6, 6.2, 6.8, 7.5,
     8.2, 9.1),
)
"""The IEC 60063 E3, E6, E12 and E24 series: 3 to 24 round numbers per decade, roughly evenly spaced in log."""


def column_streams(rng: np.random.Generator, names: list[str]) -> dict[str, np.random.Generator]:
    """One random stream per column, keyed by the column's name: every noise draw of a column's discovery (its
    stage and any pooled second round) comes from its own stream, so what one column's discovery does (how many
    histograms it asks for, of what size) no longer moves the noise of every column after it.  Before this, a
    change to one column's path shifted all later columns' draws and made seeds incomparable: ucla_courses'
    seeds 1 and 5 of 20 flipped to a bad mode after a change to other columns (issue 27, session 10).

    The streams are seeded from ONE draw of ``rng`` (data-independent: it happens whatever the table holds) and
    the name's UTF-8 bytes with their length, so distinct names never share a seed's entropy (two columns with
    the same noise would reveal the difference of their counts exactly).  The noise itself still goes through
    the mechanisms of :class:`ColumnBudget`; the release after discovery continues on ``rng``."""
    key = int(rng.integers(0, 2**63))
    out = {}
    for name in names:  # (one generator per column, not per row or cell)
        raw = name.encode("utf-8")
        out[name] = np.random.default_rng([key, len(raw), int.from_bytes(raw, "little")])
    return out



def plain(x: float):
    """An integral float as an int (for YAML), anything else as a float."""
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)

@dataclass(frozen=True)
class ColumnBudget:
    """One column's budget (ε under basic composition, ρ under zCDP) and where its mechanisms charge."""

    amount: float
    zcdp: bool
    l1: float  # histogram L1 sensitivity: 1 under add-remove, 2 under replace-one
    ledger: Ledger
    rng: np.random.Generator
    name: str

    def split(self, share: float) -> tuple[ColumnBudget, ColumnBudget]:
        """(share, rest) of this budget, by the accountant's exact split."""
        a, b = split_budget(self.amount, [share, 1.0 - share])
        return self._with(a), self._with(b)

    def _with(self, amount: float) -> ColumnBudget:
        return ColumnBudget(amount, self.zcdp, self.l1, self.ledger, self.rng, self.name)

    @property
    def scale(self) -> float:
        """σ of the Gaussian noise (zcdp) or b of the Laplace noise (basic)."""
        return math.sqrt(self.l1) / math.sqrt(2.0 * self.amount) if self.zcdp else self.l1 / self.amount

    @property
    def sd(self) -> float:
        """Standard deviation of the noise (sqrt(2)·b for Laplace)."""
        return self.scale if self.zcdp else math.sqrt(2.0) * self.scale

    def histogram(self, counts: np.ndarray, measured: str) -> np.ndarray:
        """Noisy integer counts of a histogram in which each row is in exactly one cell."""
        if self.zcdp:
            return discrete_gaussian_mechanism(counts, l2_sensitivity=math.sqrt(self.l1), rho=self.amount,
                                               ledger=self.ledger, rng=self.rng, stage="discover",
                                               measured=f"{self.name}: {measured}")
        return geometric_mechanism(counts, sensitivity=self.l1, epsilon=self.amount, ledger=self.ledger,
                                   rng=self.rng, stage="discover", measured=f"{self.name}: {measured}")

    def count(self, value: int, measured: str) -> float:
        """One noisy count whose add-remove sensitivity is 1 (``l1`` under replace-one) and that is not a cell of
        a histogram: its L2 sensitivity is ``l1`` as well (a histogram's is sqrt(l1): a replaced row moves two
        cells by 1 each, but one count by up to 2)."""
        if self.zcdp:
            out = discrete_gaussian_mechanism(np.array([value], dtype=np.int64), l2_sensitivity=float(self.l1),
                                              rho=self.amount, ledger=self.ledger, rng=self.rng, stage="discover",
                                              measured=f"{self.name}: {measured}")
        else:
            out = geometric_mechanism(np.array([value], dtype=np.int64), sensitivity=self.l1, epsilon=self.amount,
                                      ledger=self.ledger, rng=self.rng, stage="discover",
                                      measured=f"{self.name}: {measured}")
        return float(out[0])

    @property
    def count_sd(self) -> float:
        """Standard deviation of :meth:`count`'s noise."""
        return self.l1 / math.sqrt(2.0 * self.amount) if self.zcdp else math.sqrt(2.0) * self.l1 / self.amount

    @staticmethod
    def with_scale(scale: float, like: ColumnBudget) -> ColumnBudget:
        """A budget (never charged) whose noise has ``scale``: the cuts of an average of measurements."""
        amount = like.l1 / (2.0 * scale * scale) if like.zcdp else like.l1 / scale
        return ColumnBudget(amount, like.zcdp, like.l1, like.ledger, like.rng, like.name)

    def partition(self, counts: np.ndarray, delta: float, what: str = "rows per observed value", public: int = 0):
        """Released candidates (by decreasing noisy count) and their noisy counts; the first ``public`` are public
        keys, released whatever their noisy count (``dpsynth.privacy.selection``)."""
        measured = f"{self.name}: {what}"
        if self.zcdp:
            return gaussian_partition_selection_mechanism(
                counts, rho=self.amount, delta=delta, l2_sensitivity=math.sqrt(self.l1), ledger=self.ledger,
                rng=self.rng, stage="discover", measured=measured, return_noisy=True,
                public=public)
        return partition_selection_mechanism(counts, epsilon=self.amount, delta=delta, sensitivity=self.l1,
                                             ledger=self.ledger, rng=self.rng, stage="discover",
                                             measured=measured, return_noisy=True, public=public)

    def block_cut(self, w: int, blocks: int) -> float:
        """A t with P(some of ``blocks`` sums of w noises ≥ t) ≤ BUCKET_MISS.

        Gaussian: a sum of w is N(0, wσ²) (the discrete Gaussian's tails are no heavier), so
        t = σ·sqrt(w)·sqrt(2·ln(blocks/BUCKET_MISS)).  Laplace: the Chernoff bound
        P(S ≥ t) ≤ min_λ e^(−λt)·(1 − λ²b²)^(−w) (the two-sided geometric noise of the same scale has a smaller
        moment generating function), λ = u/b minimised over a grid of u in (0, 1)."""
        log_m = math.log(max(1, blocks) / BUCKET_MISS)
        if self.zcdp:
            return self.scale * math.sqrt(w) * math.sqrt(2.0 * log_m)
        u = np.linspace(0.005, 0.995, 199)
        return float((self.scale * (log_m - w * np.log1p(-u * u)) / u).min())


def support(noisy: np.ndarray, budget: ColumnBudget, *, tight: bool = False) -> tuple[int, int] | None:
    """First and last cell of the data's support read off a noisy histogram (post-processing).

    The core is the cells whose own noisy count passes :meth:`ColumnBudget.block_cut`; when none does (few rows
    spread over many cells, such as a mostly-null income), the core is the windows of 2, 4, 8, … adjacent cells
    whose noisy sums pass the cut of a sum of that many noises, at the first width where any does.  Thin tails
    spread over many cells cannot pass cell by cell, so each side is then searched in rings of doubling width
    outside the core (widths 1, 1, 2, 4, … cells): the bound moves to the outer edge of the farthest ring whose
    noisy sum passes its own cut, at most twice as far out as the tail's mass.  None when no block passes.

    ``tight``: a running sum that passes moves the bound only to the nearest cell at which the sum from the bound
    reaches that window's cut, not to the window's far edge (the same event gates the move, so no more false
    moves).  For logarithmic buckets, where twice as many buckets out is orders of magnitude: the profile's
    signed columns at a thin budget walked from −3 to 10⁹ (7 of 200 seeds) on a window of 128 buckets whose
    first half held the positive side's rows."""
    G = noisy.size
    core = np.flatnonzero(noisy >= budget.block_cut(1, G))
    w = 1
    while core.size == 0 and 2 * w <= G:  # no single cell stands out: windows of 2, 4, 8, … adjacent cells
        w *= 2
        hit = np.flatnonzero(window_sums(noisy, w) >= budget.block_cut(w, G - w + 1))
        if hit.size:
            core = np.arange(int(hit[0]), int(hit[-1]) + w)
    if core.size == 0:
        return None
    first, last = int(core[0]), int(core[-1])
    csum = np.concatenate([[0], np.cumsum(noisy)])
    left, right = _rings(first), _rings(G - 1 - last)
    count = max(1, len(left) + len(right))
    new_first, new_last = first, last
    def halve(w: int) -> float:  # a block inside one that passed: where its data ends (:func:`_reach`)
        return HALVE_SD * budget.sd * math.sqrt(w)

    for a, b in left:  # cells [first − b, first − a)
        if csum[first - a] - csum[first - b] >= budget.block_cut(b - a, count):
            new_first = first - a - _reach(csum[first - a] - csum[first - a - np.arange(1, b - a + 1)], halve, tight)
    for a, b in right:  # cells (last + a, last + b]
        if csum[last + 1 + b] - csum[last + 1 + a] >= budget.block_cut(b - a, count):
            new_last = last + a + _reach(csum[last + 1 + a + np.arange(1, b - a + 1)] - csum[last + 1 + a], halve,
                                         tight)
    # A long thin tail (a fifth of the rows over dozens of cells) may pass no ring of its own: the running sums
    # outward from each bound over 2, 4, 8, … cells are tested too; the bound moves to the edge of the narrowest
    # that passes, and the search starts again from there.
    widths = np.array([1 << k for k in range(1, max(2, G).bit_length() + 1)])
    cut = np.array([budget.block_cut(int(w), 2 * widths.size) for w in widths])

    while True:  # at most G/2 steps, each vectorised over the widths
        ws = widths[widths <= new_first]
        hit = np.flatnonzero(csum[new_first] - csum[new_first - ws] >= cut[: ws.size])
        if not hit.size:
            break
        new_first -= _reach(csum[new_first] - csum[new_first - np.arange(1, ws[hit[0]] + 1)], halve, tight)
    while True:
        ws = widths[new_last + 1 + widths <= G]
        hit = np.flatnonzero(csum[new_last + 1 + ws] - csum[new_last + 1] >= cut[: ws.size])
        if not hit.size:
            break
        new_last += _reach(csum[new_last + 1 + np.arange(1, ws[hit[0]] + 1)] - csum[new_last + 1], halve, tight)
    return new_first, new_last


def _reach(sums: np.ndarray, cut, tight: bool) -> int:
    """Cells to move a bound by, given the running sums over 1 … w cells outward (``sums``, the last passing its
    cut): w, or (``tight``) the far end of the data in it, found by halving: while the block is wider than one
    cell, its far half keeps the search when its own noisy sum passes the cut of a sum of that many noises
    (``cut(width)``), else the near half does.  Each test is one more block test at the walk's miss rate; a thin
    tail cut off here is searched for again by the walk from the new bound."""
    w = int(sums.size)
    if not tight:
        return w
    total = np.concatenate([[0.0], sums])  # total[k]: the sum over the first k cells
    near, far = 0, w
    while far - near > 1:
        mid = (near + far) // 2
        if total[far] - total[mid] >= cut(far - mid):
            near = mid
        else:
            far = mid
    return far


def window_sums(noisy: np.ndarray, w: int) -> np.ndarray:
    """Sums of every run of ``w`` adjacent cells (G − w + 1 of them)."""
    csum = np.concatenate([[0], np.cumsum(noisy)])
    return csum[w:] - csum[:-w]


def _rings(span: int) -> list[tuple[int, int]]:
    """(start, stop) offsets of rings of widths 1, 1, 2, 4, … covering ``span`` cells."""
    out, start, width = [], 0, 1
    while start < span:
        out.append((start, min(span, start + width)))
        start, width = start + width, width if start == 0 else 2 * width
    return out


def quantile_edges(cells: np.ndarray, mass: np.ndarray, bins: int, lo: float, hi: float) -> np.ndarray:
    """Bin edges at the j/bins quantiles (j = 1 … bins − 1) of a histogram over ``cells`` (post-processing):
    of the two edges of the cell where the cumulative mass first reaches each quantile, the one whose cumulative
    mass is nearer it, within (lo, hi).

    Nearer, not always the right edge (before issue 27): the right edge put every edge up to a whole cell's mass
    past its quantile, by a share that differs between columns, so two monotone-related columns (a count and its
    log, a distance and its square: common in econometric tables) got bins offset by up to half a bin, and a
    model that measures their 2-way marginal still spread each bin's rows over two of the other's.  Measured on
    airfare_routes (zero-config discovery, seeds 2-4, a perfect model: the real rows encoded with the discovered
    edges and decoded uniformly inside their bins, neutral 2-way L1 summed over its six related pairs): 16.1
    with the right edge, 14.4 with the nearer one, 14.0 with edges interpolated inside the cell (which would
    split cells, and the evidence's bins must be unions of cells: :mod:`~dpsynth.data.discover.evidence`).  The
    rest of the gap is the noise of the cumulative counts (2-4% of the rows at a median), which no snapping
    removes."""
    total = mass.sum()
    if total <= 0:
        return np.linspace(lo, hi, bins + 1)
    cum = np.concatenate([[0.0], np.cumsum(mass) / total])  # cum[i]: the mass left of cells[i]
    q = np.arange(1, bins) / bins
    at = np.clip(np.searchsorted(cum[1:], q, side="left"), 0, cells.size - 2)  # the cell reaching q
    pick = np.where(cum[at + 1] - q <= q - cum[at], cells[at + 1], cells[at])
    for j in range(1, pick.size + 1):  # (≤ bins edges) an edge the one before took, or lo: the cell's right edge
        if pick[j - 1] <= max(lo, pick[j - 2] if j > 1 else lo):
            pick[j - 1] = cells[at[j - 1] + 1]
    inner = pick
    spikes = np.flatnonzero(mass > total / bins)  # a cell heavier than a bin: a bin of its own (both its edges)
    inner = np.concatenate([inner, cells[spikes], cells[spikes + 1]])
    return np.unique(np.concatenate([[lo], inner[(inner > lo) & (inner < hi)], [hi]]))


def coarse_grid(lo: float, hi: float) -> np.ndarray:
    """Public candidates for bounds: 0 and ±{1, 1.5, 2, 3, 5, 7}·10^k within [lo, hi], plus lo and hi."""
    mags = np.array([m * 10.0**k for k in range(-6, 16) for m in _MULTIPLIERS])
    pts = np.concatenate([[0.0, lo, hi], mags, -mags])
    return np.unique(pts[(pts >= lo) & (pts <= hi)])


def log_cells(lo: float, start: float, hi: float, *, integral: bool, cells: int = 128) -> np.ndarray:
    """Public cell edges covering [lo, hi] for a skewed positive column: round numbers of the densest E-series
    (:data:`_E_SERIES`, 3 to 24 per decade) from ``start`` > 0 to ``hi`` that gives at most ``cells`` cells,
    below ``start`` one cell [lo, start) (and 0 an edge when lo < 0 < start).  Integral columns: integer edges
    (the series rounded; lo and hi floored and ceiled), so no integer is split."""
    decades = max(math.log10(hi / start), 1e-9)
    series: tuple[float, ...] = _E_SERIES[0]
    for s in _E_SERIES:
        if decades * len(s) <= cells:
            series = s
    k0, k1 = math.floor(math.log10(start)), math.ceil(math.log10(hi))
    mags = np.array([m * 10.0**k for k in range(k0, k1 + 1) for m in series])
    mags = mags[(mags > start) & (mags < hi)]
    lo_, hi_ = (math.floor(lo), math.ceil(hi)) if integral else (lo, hi)
    edges = np.concatenate([[lo_, start, hi_], [0.0] if lo < 0.0 < start else [], mags])
    edges = np.round(edges) if integral else np.array([float(f"{e:.6g}") for e in edges])
    return np.unique(edges[(edges >= lo_) & (edges <= hi_)])


def fine_cells(lo: float, hi: float, *, integral: bool, cells: int = 128) -> np.ndarray:
    """Public cell edges covering [lo, hi]: one cell per integer (edges k ± 0.5) for an integral range of at
    most ``cells`` integers, else about ``cells`` cells of a round width (1, 2, 2.5 or 5 times a power of ten;
    at least 1 for integral columns) on multiples of that width.  Always at least one cell."""
    if integral and math.floor(hi) - math.ceil(lo) + 1 <= cells:
        if math.floor(hi) < math.ceil(lo):  # no integer inside: one cell around the nearest
            return np.array([math.floor(lo) - 0.5, math.floor(lo) + 0.5])
        return np.arange(math.ceil(lo), math.floor(hi) + 2) - 0.5
    raw = (hi - lo) / cells
    power = 10.0 ** math.floor(math.log10(raw))
    width = next(m * power for m in (*_NICE, 10.0) if m * power >= raw)
    if integral:
        width = max(1.0, math.ceil(width))
    start, stop = math.floor(lo / width), math.ceil(hi / width)
    if stop <= start:
        stop = start + 1
    decimals = max(0, -math.floor(math.log10(width)) + 2)  # round widths: no 4.800000000000001
    return np.round(np.arange(start, stop + 1) * width, decimals)

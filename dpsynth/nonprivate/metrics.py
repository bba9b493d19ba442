"""Fidelity metrics of the three papers, as pure numpy functions on count arrays.

No pandas, no files, no privacy: these functions compare a *true* count array
(from the real table) with an *approximate* one (synthetic rows, noisy
marginals, a baseline).  They read the real data, so their results are NOT
differentially private and must never go into a release report.

Scales.  Every function says which scale it works on:

* *normalised* (DualQuery §7, MWEM §3.2): each array is divided by its own sum,
  so a cell is the fraction of records in it and lies in [0, 1];
* *counts* (iReduct Definition 6, MWEM §3.1 and §3.3): raw counts.  To compare a
  synthetic table of m rows with a real table of n rows on this scale, first
  rescale the synthetic counts with :func:`rescale` (``counts · n / m``).

Metrics
-------
==============================  ==========================================  =================
function                        definition                                  source
==============================  ==========================================  =================
:func:`l1_distance`             Σ |p − q| over cells, in [0, 2]             (standard)
:func:`total_variation`         L1 / 2, in [0, 1]                           (standard)
:func:`cell_abs_errors`         |p − q| per cell (normalised)               DualQuery §7
:func:`relative_errors`         |y − q| / max(q, δ) per cell (counts)       iReduct Eq. (1)
:func:`overall_relative_error`  mean over marginals of mean relative error  iReduct Def. 6
:func:`relative_entropy`        Σ b log(b / a) (normalised)                 MWEM §3.2
:func:`cuboid_error`            mean |true − approx| in a cuboid (counts)   MWEM §3.3
:func:`range_query_answers`     counts in products of intervals             MWEM §3.1
:func:`range_query_squared_error`  mean squared error of range queries      MWEM §3.1
:func:`naive_bayes_fit` / ...   Naive Bayes from marginals                  iReduct §6.5
==============================  ==========================================  =================
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

__all__ = [
    "accuracy",
    "average_cell_error",
    "cell_abs_errors",
    "cuboid_error",
    "cuboid_errors",
    "l1_distance",
    "max_cell_error",
    "max_relative_error",
    "naive_bayes_fit",
    "naive_bayes_predict",
    "normalize",
    "overall_relative_error",
    "random_ranges",
    "range_query_answers",
    "range_query_squared_error",
    "relative_entropy",
    "relative_errors",
    "rescale",
    "total_variation",
]


# ----------------------------------------------------------------------------- scales
def normalize(counts) -> np.ndarray:
    """``counts / counts.sum()`` as float; raises ``ValueError`` on negative cells or a zero total.

    Noisy marginals can have negative cells; they are not distributions, so
    clip (or otherwise post-process) them before normalising.
    """
    a = np.asarray(counts, dtype=float)
    if np.any(a < 0):
        raise ValueError("counts must be non-negative to be normalised (clip noisy counts first)")
    total = a.sum()
    if not total > 0:
        raise ValueError("counts must have a positive total to be normalised")
    return a / total


def rescale(counts, total: float) -> np.ndarray:
    """Counts rescaled to sum to ``total`` (e.g. m synthetic rows → n real rows)."""
    return normalize(counts) * float(total)


def _pair(true, approx) -> tuple[np.ndarray, np.ndarray]:
    t, a = np.asarray(true), np.asarray(approx)
    if t.shape != a.shape:
        raise ValueError(f"shapes differ: {t.shape} vs {a.shape}")
    return t, a


# ---------------------------------------------------------------- distribution distances
def l1_distance(true, approx) -> float:
    """L1 distance Σ_x |p(x) − q(x)| between the two normalised arrays, in [0, 2].

    This is the *L1* distance, twice the total variation distance
    (:func:`total_variation`).  0 means identical distributions, 2 disjoint supports.
    """
    t, a = _pair(true, approx)
    return float(np.abs(normalize(t) - normalize(a)).sum())


def total_variation(true, approx) -> float:
    """Total variation distance max_S |p(S) − q(S)| = L1 / 2, in [0, 1]."""
    return 0.5 * l1_distance(true, approx)


def cell_abs_errors(true, approx) -> np.ndarray:
    """Per-cell absolute error |p(x) − q(x)| of the normalised arrays (flattened).

    DualQuery §7 measures each marginal query q_j (a cell: the fraction of
    records matching a conjunction) by |q_j(D) − q_j(D̂)| on the normalised
    scale, where "error 1 is trivial"; its *average error* is the mean of these
    over all queries and its *max error* the maximum.
    """
    t, a = _pair(true, approx)
    return np.abs(normalize(t) - normalize(a)).ravel()


def average_cell_error(true, approx) -> float:
    """Mean over cells of :func:`cell_abs_errors` (DualQuery §7, for one marginal)."""
    return float(cell_abs_errors(true, approx).mean())


def max_cell_error(true, approx) -> float:
    """Maximum over cells of :func:`cell_abs_errors` (DualQuery §7, for one marginal)."""
    return float(cell_abs_errors(true, approx).max())


# ------------------------------------------------------------------ relative error
def relative_errors(noisy, true, sanity_bound: float) -> np.ndarray:
    """Per-cell relative error |y − q| / max(q, δ) on the count scale (iReduct Eq. (1)).

    ``noisy`` are published answers y (may be negative), ``true`` the exact
    counts q, ``sanity_bound`` δ > 0 keeps tiny counts from dominating.
    """
    y, q = np.asarray(noisy, dtype=float), np.asarray(true, dtype=float)
    if y.shape != q.shape:
        raise ValueError(f"shapes differ: {y.shape} vs {q.shape}")
    if not sanity_bound > 0:
        raise ValueError(f"sanity bound must be > 0, got {sanity_bound}")
    return (np.abs(y - q) / np.maximum(q, sanity_bound)).ravel()


def overall_relative_error(noisy: Sequence, true: Sequence, sanity_bound) -> float:
    """Overall error of a set of noisy marginals (iReduct Definition 6).

        1/|M| · Σ_i 1/|M_i| · Σ_j |y_ij − q_ij(T)| / max(δ, q_ij(T))

    i.e. the mean over marginals of the mean relative error of their cells, on
    the count scale.  ``noisy`` and ``true`` are sequences of arrays, one pair
    per marginal; ``sanity_bound`` is one δ or one per marginal (§2 after Eq. 1).
    """
    if len(noisy) != len(true):
        raise ValueError("noisy and true must list the same marginals")
    if not noisy:
        raise ValueError("no marginals given")
    deltas = np.broadcast_to(np.asarray(sanity_bound, dtype=float), (len(noisy),))
    return float(np.mean([relative_errors(y, q, d).mean() for y, q, d in zip(noisy, true, deltas)]))


def max_relative_error(noisy: Sequence, true: Sequence, sanity_bound) -> float:
    """The largest relative error |y − q|/max(q, δ) over every cell of every marginal (iReduct §3.1, §4.3:
    the "worst-case relative error" that ``pick: max`` targets).  ``sanity_bound``: one δ or one per marginal."""
    if len(noisy) != len(true):
        raise ValueError("noisy and true must list the same marginals")
    if not noisy:
        raise ValueError("no marginals given")
    deltas = np.broadcast_to(np.asarray(sanity_bound, dtype=float), (len(noisy),))
    return float(max(relative_errors(y, q, d).max() for y, q, d in zip(noisy, true, deltas)))


# ------------------------------------------------------------------ relative entropy
def relative_entropy(true, approx, *, smoothing: float = 0.0, cells: int | None = None) -> float:
    """Relative entropy RE(B‖A) = Σ_x b(x) log(b(x) / a(x)) in nats (MWEM §3.2).

    B is the true table, A the approximation; b = B/n and a = A/|A| are their
    normalised versions (MWEM writes Σ B(x) log(B(x)/A(x)) / n with both
    tables summing to n, which is the same number).

    Zero cells: cells with b(x) = 0 contribute 0 (the limit 0·log 0 = 0).  A
    cell with b(x) > 0 and a(x) = 0 makes the divergence infinite: the result
    is ``inf``.  With ``smoothing = α ∈ (0, 1)`` the approximation is first
    mixed with the uniform distribution, a' = (1 − α)·a + α/N, where N is the
    number of cells of the full domain (``cells``, default ``true.size``;
    pass it when ``true``/``approx`` list only some cells, e.g. the support of
    B, which is enough because cells with b = 0 add nothing).  Then the
    result is finite and at most log(N / α).
    """
    t, a = _pair(true, approx)
    b = normalize(t).ravel()
    q = normalize(a).ravel()
    if not 0.0 <= smoothing < 1.0:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
    n_cells = t.size if cells is None else int(cells)
    if n_cells < t.size:
        raise ValueError("cells must be at least the number of cells given")
    if smoothing > 0:
        q = (1.0 - smoothing) * q + smoothing / n_cells
    support = b > 0
    if np.any(q[support] <= 0):
        return float("inf")
    return float(np.sum(b[support] * (np.log(b[support]) - np.log(q[support]))))


# -------------------------------------------------------------------- cuboid error
def cuboid_error(true, approx) -> float:
    """Average absolute error within a cuboid: mean over its cells of |true − approx| (MWEM §3.3).

    On the count scale: pass the synthetic counts through :func:`rescale` first
    when the synthetic table has a different number of rows.
    """
    t, a = _pair(true, approx)
    return float(np.abs(np.asarray(t, dtype=float) - np.asarray(a, dtype=float)).mean())


def cuboid_errors(true: Sequence, approx: Sequence) -> tuple[float, float]:
    """(average, maximum) over cuboids of :func:`cuboid_error` (MWEM §3.3, Figure 5)."""
    if len(true) != len(approx) or not true:
        raise ValueError("true and approx must list the same, non-empty set of cuboids")
    errs = np.array([cuboid_error(t, a) for t, a in zip(true, approx)])
    return float(errs.mean()), float(errs.max())


# -------------------------------------------------------------------- range queries
def random_ranges(shape: Sequence[int], count: int, *, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``count`` random range queries over a grid of ``shape`` (MWEM §3.1).

    A range query is a product of intervals, one per dimension; each interval
    [lo, hi] (inclusive codes) is given by two independent uniform draws from
    the dimension's codes, sorted.  Returns (lows, highs), each (count × d).
    """
    shape = tuple(int(s) for s in shape)
    if count < 0 or any(s < 1 for s in shape):
        raise ValueError("count must be >= 0 and every dimension non-empty")
    draws = rng.integers(0, np.array(shape), size=(2, count, len(shape)))
    return draws.min(axis=0), draws.max(axis=0)


CORNERS_MAX = 4096
"""Above 2^12 corners (12 ordered columns) range queries are answered by a box sum each (a loop over the queries,
each a numpy sum over at most the table's cells) rather than inclusion-exclusion over 2^d corners of a summed-area
table: 16 binary columns (2^16 corners of a 65,536-cell table, 1,000 queries per method) took 110 s in `evaluate`
(session 14, once discovered flags lost their null code); with box sums the whole command takes 1 s."""


def range_query_answers(counts, lows, highs) -> np.ndarray:
    """Answers Σ counts[lo_1..hi_1, …, lo_d..hi_d] of range queries, vectorized over queries.

    Uses a summed-area table S (cumulative sums along every axis, padded with a
    zero row in front) and inclusion–exclusion over the 2^d corners:
    answer = Σ_{c ∈ {0,1}^d} (−1)^{d−|c|} S[corner_c], corner_c = hi+1 where c=1, lo where c=0.
    """
    c = np.asarray(counts, dtype=float)
    lows, highs = np.atleast_2d(lows), np.atleast_2d(highs)
    d = c.ndim
    if lows.shape != highs.shape or lows.shape[1] != d:
        raise ValueError("lows and highs must be (queries × d) with d = counts.ndim")
    if np.any(lows < 0) or np.any(highs >= np.array(c.shape)) or np.any(lows > highs):
        raise ValueError("every range must satisfy 0 <= low <= high < size")
    if 2**d > CORNERS_MAX:  # many columns of few values: a box sum per query beats 2^d corners per query
        return np.array([c[tuple(slice(a, b + 1) for a, b in zip(lo, hi, strict=True))].sum()
                         for lo, hi in zip(lows, highs, strict=True)], dtype=float)
    sat = np.pad(c, [(1, 0)] * d)
    for axis in range(d):
        sat = np.cumsum(sat, axis=axis)
    out = np.zeros(lows.shape[0])
    for corner in itertools.product((0, 1), repeat=d):  # 2^d corners, each vectorized over queries
        idx = tuple(np.where(bit, highs[:, j] + 1, lows[:, j]) for j, bit in enumerate(corner))
        sign = (-1) ** (d - sum(corner))
        out += sign * sat[idx]
    return out


def range_query_squared_error(true, approx, lows, highs) -> float:
    """Average squared error per range query, Σ (q(B) − q(A))² / #queries (MWEM §3.1, Figure 2).

    On the scale of the inputs (counts); rescale a synthetic table to n rows first.
    """
    t, a = _pair(true, approx)
    diff = range_query_answers(t, lows, highs) - range_query_answers(a, lows, highs)
    if diff.size == 0:
        raise ValueError("no range queries given")
    return float(np.mean(diff**2))


# ---------------------------------------------------------------------- Naive Bayes
def naive_bayes_fit(class_counts, joint_counts: Sequence, *, pseudo: float = 1.0) -> tuple[np.ndarray, list[np.ndarray]]:
    """Log-probability tables of a Naive Bayes classifier built from marginals (iReduct §6.5).

    ``class_counts``: the 1-way marginal of the class variable (C cells);
    ``joint_counts[f]``: the 2-way marginal (class × feature f), shape (C, V_f).
    Every cell y is post-processed to max(y + pseudo, pseudo) before use (iReduct
    footnote 3 with pseudo = 1: add-one smoothing that also clips noisy
    negative counts).  Returns (log P(c), [log P(x_f | c) of shape (V_f, C)]).
    """
    prior = np.maximum(np.asarray(class_counts, dtype=float) + pseudo, pseudo)
    log_prior = np.log(prior / prior.sum())
    tables = []
    for joint in joint_counts:  # loop over features
        j = np.asarray(joint, dtype=float)
        if j.ndim != 2 or j.shape[0] != prior.size:
            raise ValueError("each joint marginal must have shape (classes × feature values)")
        j = np.maximum(j + pseudo, pseudo)
        tables.append(np.log(j / j.sum(axis=1, keepdims=True)).T)
    return log_prior, tables


def naive_bayes_predict(model: tuple[np.ndarray, list[np.ndarray]], features: np.ndarray) -> np.ndarray:
    """Predicted class codes for rows of feature codes (n × F), argmax of the log posterior.

    Ties go to the lowest class code (``np.argmax``).
    """
    log_prior, tables = model
    x = np.asarray(features)
    if x.ndim != 2 or x.shape[1] != len(tables):
        raise ValueError("features must be (rows × number of feature tables)")
    score = np.broadcast_to(log_prior, (x.shape[0], log_prior.size)).copy()
    for f, table in enumerate(tables):  # loop over features, vectorized over rows
        score += table[x[:, f]]
    return np.argmax(score, axis=1)


def accuracy(predicted, actual) -> float:
    """Fraction of rows where ``predicted == actual``."""
    p, a = _pair(predicted, actual)
    if p.size == 0:
        raise ValueError("no rows to score")
    return float(np.mean(p == a))

"""Numeric codes whose first fine histogram holds them side by side and whose last one (a zoom's, finer) shows
them apart: class labels such as weight classes (52, 56, 60, 67.5, 75, 82.5, 90, …, 125) read as fractional numbers.

:func:`~dpsynth.data.discover.values.few_distinct` asks the FIRST fine histogram whether a fractional column holds
few distinct numbers; when its cells are too wide (the codes in adjacent cells, no gaps between them) the column
zooms, and the zoom's finer cells show the codes apart only once the rest of its budget is spent, save the heaps
reserve (:func:`~dpsynth.data.discover.heaps.settle`).  So :func:`settled` asks the same question of the last fine
cells first: when they show few distinct numbers, the reserve runs partition selection over the column's observed
values (:func:`~dpsynth.data.discover.values.label_values`, charged through the reserve's
:class:`~dpsynth.data.discover.noise.ColumnBudget` with the column's δ), and the column is categorical over the
kept values when they hold :data:`~dpsynth.data.discover.values.LABELS_ALL` of its rows, else every value it
released is a point bin (the first histogram's test keeps only those holding a heap's share: there the whole rest
of the budget runs the selection; here the reserve alone, whose threshold keeps only values holding a sizable
share).  Cells on a lattice (:func:`evenly`: rounded measurements) are not codes.  Otherwise the reserve goes where
:func:`~dpsynth.data.discover.heaps.settle` sends it.  Every decision reads noisy counts only (post-processing).

Held-out-20's powerlifting_meets (41,152 rows): ``weight_class_kg``, 38 class labels ("52", "67.5", "120+", …),
was zoomed onto [42.5, 127.5], its reserve measured the zoom's cells again, and ten quantile bins decoded
continuous values (100.2879): no synthetic value was a class (1-way TV 0.86 under the neutral judge, which bins
the column per value as text).  Now 19-20 classes (86% of the rows) are point bins: 1-way TV 0.72 while the
release wrote them "75.0", 0.09 once the CSV writer wrote "75" (dpsynth/data/io.py).  Screened on the 133 seen
tables, seeds 2,3: 10 column-seeds of 6 tables moved (without :func:`evenly`, 28 of 14: weather's ``temp``,
``dewp`` and ``wind_speed``, yrbss's ``height`` and others, up to 56 point bins for a one-decimal measurement).
Zero-config 2-way L1, seeds 2-5, before → after (with the writer): powerlifting_meets 0.341 0.334 0.340 0.344 →
0.159 0.157 0.161 0.153 (the hand schema's 0.135; this alone 0.317 on seeds 2,3, the writer alone 0.341),
pizza_sales x0.87 (``price``: categorical over 21 prices on seed 3), tv16 x0.96 (``lcograc``: 18 point bins for
5-6), randhie x0.99; worse german_health x1.009 (``educ``: 1-2 more point bins; x1.03 on seeds 2,3) and
injury_claims x1.016 (seed 2 alone moved, 0.106 → 0.113); the 6 tables x0.85 (24 table-seeds)."""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.heaps import reserves, settle
from dpsynth.data.discover.noise import ColumnBudget, support
from dpsynth.data.discover.values import few_distinct, label_values

__all__ = ["LATTICE_SHARE", "evenly", "few_numbers", "settled"]

LATTICE_SHARE = 0.75
"""The last fine cells past the cut lie on a lattice (:func:`evenly`) when LATTICE_SHARE of the gaps between
consecutive ones are within a cell and a half of the lattice's step (rounding puts them a cell either side of it): numbers rounded to a unit (one decimal, or converted
from one: whole degrees Celsius as Fahrenheit, 1.8 apart; knots as miles an hour, 1.15; inches as metres, 0.0254)
are a measurement's values, not codes, and a point bin each would only multiply the bins (weather's ``temp``,
``dewp`` and ``wind_speed``, yrbss's ``height``: 13-33 isolated cells each, their gaps 2, 2, 1, 2, 3, …).  Codes
are spaced irregularly (powerlifting's weight classes: gaps 1, 4, 4, 1, 2, 1, 3, 3, 1, 5, …, 10 cells of 1 kg,
55 % of them within a cell and a half of the step)."""


def few_numbers(col, noisy: np.ndarray, found, budget: ColumnBudget, delta: float) -> bool:
    """Whether a fine histogram shows few distinct numbers (:func:`~dpsynth.data.discover.values.few_distinct`),
    for a column with a δ and no hinted type."""
    return delta > 0 and col.hint.type is None and \
        few_distinct(noisy, found, budget, max_categories=col.spec.max_categories)


def evenly(spikes: np.ndarray) -> bool:
    """Whether the cells ``spikes`` (indices, increasing) lie on a lattice: the step the mean of the gaps up to
    1.5 times their median (a lattice point under the cut leaves a double gap), :data:`LATTICE_SHARE` of the gaps
    within a cell and a half of it.  Post-processing of public indices read off noisy counts."""
    gaps = np.diff(np.asarray(spikes, dtype=float))
    if gaps.size < 2:
        return False
    step = float(gaps[gaps <= 1.5 * np.median(gaps)].mean())
    return float(np.mean(np.abs(gaps - step) <= 1.5)) >= LATTICE_SHARE


def settled(disc, weights, bins: int):
    """:func:`~dpsynth.data.discover.heaps.settle`, unless the column's last fine cells show few distinct numbers
    (:func:`~dpsynth.data.discover.values.few_distinct` on them): then the heaps reserve runs partition selection
    over its observed values (:func:`~dpsynth.data.discover.values.label_values`); ``disc.labels`` is set when the
    column is categorical over them, and ``weights`` come back unchanged (the kept values that hold a heap's share
    are its point bins: ``disc.label_points``).  Post-processing of the noisy cells."""
    spikes, ev = disc._spikes, disc.evidence
    if spikes is None or weights is None or ev.cells is None or ev.cell_counts is None or ev.cell_sd <= 0 or \
            not reserves(integral=bool(disc.integral), delta=spikes[2], non_null=disc.non_null):
        return settle(disc, weights, bins)
    budget, _, delta = spikes
    counts = np.asarray(ev.cell_counts, dtype=float)
    scaled = ColumnBudget.with_scale(ev.cell_sd if budget.zcdp else ev.cell_sd / math.sqrt(2.0), budget)
    if not few_numbers(disc, counts, support(counts, scaled), scaled, delta) or \
            evenly(np.flatnonzero(counts >= scaled.block_cut(1, counts.size))):
        return settle(disc, weights, bins)
    disc._spikes = None  # (the reserve goes to the values: no heaps selection, no cells again)
    first = None
    if disc.first_grid is not None and ev.first is not None:  # (the first fine histogram, its noise's budget)
        noisy, sd = ev.first
        first = (np.asarray(noisy, dtype=float), ColumnBudget.with_scale(sd if budget.zcdp else sd / math.sqrt(2.0),
                                                                        budget))
    disc.learned.append("few distinct numbers in the last fine histogram: the heaps reserve runs partition "
                        "selection over the observed values")
    label_values(disc, budget, delta, first, heap=0.0)  # (else every released value a point bin: docstring)
    return weights

"""Metrics against hand-computed small examples (all exact: no randomness unless stated)."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

from dpsynth.nonprivate import metrics as m


def test_normalize_and_rescale():
    assert np.allclose(m.normalize([1, 3]), [0.25, 0.75])
    assert np.allclose(m.rescale([1, 3], 100), [25, 75])
    with pytest.raises(ValueError, match=re.escape("counts must be non-negative to be normalised (clip noisy counts first)")):
        m.normalize([1, -1])
    with pytest.raises(ValueError, match=re.escape("counts must have a positive total to be normalised")):
        m.normalize([0, 0])


def test_l1_and_total_variation_hand_computed():
    # p = [.5, .5], q = [.25, .75]: L1 = .25 + .25
    assert m.l1_distance([2, 2], [1, 3]) == pytest.approx(0.5)
    assert m.total_variation([2, 2], [1, 3]) == pytest.approx(0.25)
    # p = [.75, .25, 0, 0], q = .25 each: |.5| + 0 + .25 + .25 = 1
    assert m.l1_distance([[3, 1], [0, 0]], [[1, 1], [1, 1]]) == pytest.approx(1.0)
    # disjoint supports: L1 = 2, TV = 1
    assert m.l1_distance([1, 0], [0, 5]) == pytest.approx(2.0)
    assert m.total_variation([1, 0], [0, 5]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match=re.escape("shapes differ: (2,) vs (3,)")):
        m.l1_distance([1, 1], [1, 1, 1])


def test_identical_or_proportional_arrays_give_zero():
    a = np.array([[5, 0, 2], [1, 1, 9]])
    for approx in (a, 3 * a):
        assert m.l1_distance(a, approx) == 0.0
        assert m.max_cell_error(a, approx) == 0.0
        assert m.relative_entropy(a, approx) == 0.0
    assert m.cuboid_error(a, a) == 0.0
    assert m.overall_relative_error([a], [a], 1.0) == 0.0


def test_cell_errors_dualquery():
    t, a = [[3, 1], [0, 0]], [[1, 1], [1, 1]]
    assert np.allclose(m.cell_abs_errors(t, a), [0.5, 0.0, 0.25, 0.25])
    assert m.average_cell_error(t, a) == pytest.approx(0.25)
    assert m.max_cell_error(t, a) == pytest.approx(0.5)


def test_relative_errors_ireduct_definition_6():
    # |12-10|/max(10,5) = .2 ; |-3-0|/max(0,5) = .6 ; |0-100|/100 = 1
    errs = m.relative_errors([12, -3, 0], [10, 0, 100], 5.0)
    assert np.allclose(errs, [0.2, 0.6, 1.0])
    # two marginals: means .6 and 0 -> overall .3 (not the pooled mean .45)
    assert m.overall_relative_error([[12, -3, 0], [1]], [[10, 0, 100], [1]], 5.0) == pytest.approx(0.3)
    with pytest.raises(ValueError, match=re.escape("sanity bound must be > 0, got 0.0")):
        m.relative_errors([1], [1], 0.0)
    with pytest.raises(ValueError, match=re.escape("noisy and true must list the same marginals")):
        m.overall_relative_error([[1]], [], 1.0)


def test_relative_entropy_mwem():
    # b = [.5, .5], a = [.25, .75]: .5 ln 2 + .5 ln(2/3) = .5 ln(4/3)
    assert m.relative_entropy([1, 1], [1, 3]) == pytest.approx(0.5 * math.log(4 / 3))
    # true zero cell contributes 0: 1 * ln(1 / .5)
    assert m.relative_entropy([2, 0], [1, 1]) == pytest.approx(math.log(2))
    # approximation zero where the truth has mass: infinite
    assert m.relative_entropy([1, 1], [1, 0]) == math.inf
    # smoothing .5 over 2 cells: a' = [.75, .25] -> .5 ln(2/3) + .5 ln 2 = .5 ln(4/3)
    assert m.relative_entropy([1, 1], [1, 0], smoothing=0.5) == pytest.approx(0.5 * math.log(4 / 3))
    # support-only arrays of a 4-cell domain: a' = [.625, .125] -> .5 ln(.8) + .5 ln 4 = .5 ln 3.2
    assert m.relative_entropy([1, 1], [1, 0], smoothing=0.5, cells=4) == pytest.approx(0.5 * math.log(3.2))
    # RE is not symmetric
    assert m.relative_entropy([1, 3], [1, 1]) != pytest.approx(m.relative_entropy([1, 1], [1, 3]))
    with pytest.raises(ValueError, match=re.escape("smoothing must be in [0, 1), got 1.0")):
        m.relative_entropy([1], [1], smoothing=1.0)


def test_cuboid_errors_mwem():
    assert m.cuboid_error([10, 0], [4, 6]) == pytest.approx(6.0)
    mean, worst = m.cuboid_errors([[10, 0], [[1, 1]]], [[4, 6], [[1, 3]]])
    assert (mean, worst) == (pytest.approx(3.5), pytest.approx(6.0))


def test_range_queries_hand_computed():
    counts = np.array([[1, 2], [3, 4]])
    lows = np.array([[0, 1], [0, 0], [1, 0]])
    highs = np.array([[1, 1], [1, 1], [1, 0]])
    assert np.allclose(m.range_query_answers(counts, lows, highs), [6, 10, 3])
    approx = np.array([[1, 2], [3, 5]])  # errors 1, 1, 0 -> mean square 2/3
    assert m.range_query_squared_error(counts, approx, lows, highs) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match=re.escape("every range must satisfy 0 <= low <= high < size")):
        m.range_query_answers(counts, [[1, 0]], [[0, 0]])


def test_range_queries_match_brute_force_3d():
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 10, size=(4, 3, 5))
    lows, highs = m.random_ranges(counts.shape, 50, rng=rng)
    assert np.all(lows <= highs) and np.all(lows >= 0) and np.all(highs < np.array(counts.shape))
    brute = [counts[lo[0]:hi[0] + 1, lo[1]:hi[1] + 1, lo[2]:hi[2] + 1].sum() for lo, hi in zip(lows, highs)]
    assert np.array_equal(m.range_query_answers(counts, lows, highs), brute)


def test_random_ranges_reproducible():
    a = m.random_ranges((7, 3), 20, rng=np.random.default_rng(1))
    b = m.random_ranges((7, 3), 20, rng=np.random.default_rng(1))
    c = m.random_ranges((7, 3), 20, rng=np.random.default_rng(2))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_naive_bayes_hand_computed():
    # prior [3,1]+1 -> [2/3, 1/3]; P(x|c0) = [4,1]/5, P(x|c1) = [1,2]/3
    model = m.naive_bayes_fit([3, 1], [[[3, 0], [0, 1]]])
    assert np.allclose(np.exp(model[0]), [2 / 3, 1 / 3])
    assert np.allclose(np.exp(model[1][0]), [[0.8, 1 / 3], [0.2, 2 / 3]])
    # x=0: 2/3*.8 > 1/3*1/3 -> 0 ; x=1: 2/3*.2 < 1/3*2/3 -> 1
    pred = m.naive_bayes_predict(model, np.array([[0], [1]]))
    assert pred.tolist() == [0, 1]
    assert m.accuracy(pred, [0, 0]) == 0.5
    # noisy negative cells are clipped to the pseudo count (iReduct footnote 3)
    noisy = m.naive_bayes_fit([3, -7], [[[3, -5], [0, 1]]])
    assert np.allclose(np.exp(noisy[0]), [4 / 5, 1 / 5])
    assert np.allclose(np.exp(noisy[1][0][:, 0]), [0.8, 0.2])


def test_naive_bayes_matches_per_row_loop():
    """The vectorized predictor equals a direct per-row evaluation (reference only, in the test)."""
    rng = np.random.default_rng(5)
    prior = rng.integers(0, 20, size=3)
    joints = [rng.integers(0, 20, size=(3, v)) for v in (2, 4, 5)]
    model = m.naive_bayes_fit(prior, joints)
    x = np.column_stack([rng.integers(0, v, size=40) for v in (2, 4, 5)])
    expected = []
    for row in x:
        scores = [model[0][c] + sum(model[1][f][row[f], c] for f in range(3)) for c in range(3)]
        expected.append(int(np.argmax(scores)))
    assert m.naive_bayes_predict(model, x).tolist() == expected


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 2, 2)])
def test_l1_equals_sum_of_cell_errors(shape):
    rng = np.random.default_rng(sum(shape))
    t, a = rng.integers(0, 9, size=shape) + 1, rng.integers(0, 9, size=shape)
    assert m.l1_distance(t, a) == pytest.approx(m.cell_abs_errors(t, a).sum())
    assert m.average_cell_error(t, a) == pytest.approx(m.l1_distance(t, a) / math.prod(shape))
    # cuboid error on counts is n times the average normalised cell error when totals match
    n = t.sum()
    assert m.cuboid_error(t, m.rescale(a, n)) == pytest.approx(n * m.average_cell_error(t, a))


def test_single_cell_ranges_4d():
    # 2^d corners: a 1-cell range in 4-d picks exactly that cell
    counts = np.arange(16).reshape(2, 2, 2, 2)
    for cell in itertools.product((0, 1), repeat=4):
        lo = np.array([cell])
        assert m.range_query_answers(counts, lo, lo)[0] == counts[cell]


def test_range_queries_over_many_columns_use_box_sums_with_the_same_answers(monkeypatch):
    """13 binary columns: 2^13 corners per query exceed CORNERS_MAX, so each query is a box sum; the answers equal
    the summed-area table's (CORNERS_MAX raised for the comparison) and a brute force on a few queries."""
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 4, size=(2,) * 13)
    lows, highs = m.random_ranges(counts.shape, 40, rng=rng)
    boxes = m.range_query_answers(counts, lows, highs)
    monkeypatch.setattr(m, "CORNERS_MAX", 2**20)
    assert np.array_equal(boxes, m.range_query_answers(counts, lows, highs))
    for lo, hi, got in zip(lows[:3], highs[:3], boxes[:3], strict=True):
        assert got == counts[tuple(slice(a, b + 1) for a, b in zip(lo, hi, strict=True))].sum()

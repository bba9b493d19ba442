"""Tests of the factored multiplicative-weights model (dpsynth/factored.py, MWEM paper §4)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats

from dpsynth.algorithms.base import NoisyMarginal
from dpsynth.models.factored import FactoredModel, FactorTooLarge, Measurement, fit_marginals, one_way_from_marginals


class Explicit:
    """Reference: the same MW rule on the full domain array (feasible only for tiny domains)."""

    def __init__(self, sizes, total, start=None):
        self.sizes, self.total = tuple(sizes), float(total)
        self.p = np.ones(self.sizes) if start is None else start.copy()
        self.p /= self.p.sum()

    def project(self, attrs):
        other = tuple(i for i in range(len(self.sizes)) if i not in attrs)
        marg = self.p.sum(axis=other)  # axes in sorted order
        order = sorted(attrs)
        return self.total * marg.transpose([order.index(a) for a in attrs])

    def update(self, m: Measurement):
        idx = np.indices(self.sizes)
        sub = tuple(idx[a] for a in m.attrs)  # each full-domain point's cell in the marginal
        if m.queries is None:
            expo = (m.values - self.project(m.attrs))[sub] / (2 * self.total)
        else:
            ans = m.queries.reshape(len(m.values), -1) @ self.project(m.attrs).reshape(-1)
            expo = sum(q[sub] * (v - a) for q, v, a in zip(m.queries, m.values, ans)) / (2 * self.total)
        self.p = self.p * np.exp(expo)
        self.p /= self.p.sum()


def test_mw_update_hand_computation_2x2():
    """A₀ uniform with n = 100 (25 per cell); measure the 1-way cuboid of attribute 0 as (70, 30).

    q(A₀) = (50, 50), exponents ±20/200 = ±0.1, so cells with x₀ = 0 get
    100·e^0.1 / (2e^0.1 + 2e^−0.1) and those with x₀ = 1 get 100·e^−0.1 / (same).
    """
    model = FactoredModel((2, 2), 100.0)
    model.mw_update(Measurement((0,), np.array([70.0, 30.0])))
    z = 2 * math.exp(0.1) + 2 * math.exp(-0.1)
    hi, lo = 100 * math.exp(0.1) / z, 100 * math.exp(-0.1) / z
    np.testing.assert_allclose(model.project((0, 1)), [[hi, hi], [lo, lo]], rtol=0, atol=1e-12)
    # A single cell query on cell (1, 1) measured at 40: q(A) = lo, exponent (40 − lo)/200 on that cell only.
    q = np.zeros((1, 2, 2))
    q[0, 1, 1] = 1.0
    model.mw_update(Measurement((0, 1), np.array([40.0]), q))
    w = np.array([[hi, hi], [lo, lo * math.exp((40 - lo) / 200)]])
    np.testing.assert_allclose(model.project((0, 1)), 100 * w / w.sum(), rtol=0, atol=1e-12)
    assert model.groups == [(0, 1)]


def _measurements(sizes, rng):
    """A mixed list: cuboids that merge groups, a cell query, a 2-d range query."""
    ms = []
    for attrs in [(0, 2), (3,), (2, 1), (4, 3), (1, 0, 4)]:
        shape = tuple(sizes[a] for a in attrs)
        ms.append(Measurement(attrs, rng.uniform(0, 200, size=shape)))
    q = np.zeros((1, sizes[3], sizes[1]))
    q[0, 1, 2] = 1.0
    ms.append(Measurement((3, 1), np.array([90.0]), q))
    r = np.zeros((2, sizes[0], sizes[4]))
    r[0, :2, 1:] = 1.0
    r[1, 1:, :1] = 1.0
    ms.append(Measurement((0, 4), np.array([300.0, 50.0]), r))
    return ms


def test_factored_equals_explicit():
    """Same start, same measurements, same MW passes: every marginal agrees to 1e-10."""
    sizes, total = (3, 4, 2, 3, 2), 1000.0
    rng = np.random.default_rng(7)
    one_way = [rng.uniform(1, 10, size=s) for s in sizes]
    factored = FactoredModel.independent(sizes, total, one_way)
    start = np.ones(sizes)
    for a, f in enumerate(factored.factors):
        shape = [1] * len(sizes)
        shape[a] = sizes[a]
        start = start * f.probs.reshape(shape)
    explicit = Explicit(sizes, total, start)
    ms = _measurements(sizes, rng)
    for step, m in enumerate(ms):
        factored.mw_update(m)
        explicit.update(m)
        # after the first two measurements the model is still split: {0, 2}, {1}, {3}, {4}
        if step == 1:
            assert sorted(factored.groups) == [(0, 2), (1,), (3,), (4,)]
    factored.mw_passes(ms, 3)
    for _ in range(3):
        for m in ms:
            explicit.update(m)
    for attrs in [(0,), (4, 2), (1, 3, 0), (2, 0, 4, 1, 3)]:
        np.testing.assert_allclose(factored.project(attrs), explicit.project(attrs), rtol=0, atol=1e-10)
    for m in ms:
        np.testing.assert_allclose(factored.answer(m), explicit.project(m.attrs) if m.queries is None
                                   else m.queries.reshape(len(m.values), -1)
                                   @ explicit.project(m.attrs).reshape(-1), rtol=0, atol=1e-10)


def test_project_never_builds_the_joint_of_independent_groups():
    """Projecting attributes from separate factors leaves the factors separate."""
    model = FactoredModel((5,) * 30, 10.0)  # 5^30 cells: the full domain cannot be built
    model.mw_update(Measurement((0, 1), np.arange(25.0).reshape(5, 5)))
    out = model.project((29, 1, 0))
    assert out.shape == (5, 5, 5)
    assert out.sum() == pytest.approx(10.0, abs=1e-12)
    assert model.largest_factor_cells() == 25
    assert len(model.factors) == 29


def test_would_exceed_and_merge_cap():
    model = FactoredModel((10, 10, 10), 1.0, max_factor_cells=100)
    assert not model.would_exceed((0, 1))
    model.merge((0, 1))
    assert model.would_exceed((1, 2))
    assert not model.would_exceed((0, 1))
    with pytest.raises(FactorTooLarge, match=re.escape(
        "merging attributes (1, 2) needs a factor of 1000 cells, more than max_factor_cells=100"
    )):
        model.merge((1, 2))


def test_sampling_matches_model_chi_square():
    """Rows drawn from a 2-factor model: chi-square goodness of fit of the 3-way joint.

    Critical value at 1e-6 (false-failure rate 1e-6), 11 degrees of freedom.
    """
    model = FactoredModel((2, 3, 2), 1.0)
    model.mw_update(Measurement((0, 1), np.array([[0.1, 0.2, 0.05], [0.3, 0.25, 0.1]])))
    model.mw_update(Measurement((2,), np.array([0.8, 0.2])))
    rows = 20000
    codes = model.sample(rows, rng=np.random.default_rng(3))
    assert codes.shape == (rows, 3) and codes.dtype == np.uint8  # the narrowest dtype for 3 values
    observed = np.bincount(np.ravel_multi_index(codes.T, (2, 3, 2)), minlength=12)
    expected = rows * model.project((0, 1, 2)).reshape(-1)
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    assert chi2 < stats.chi2.isf(1e-6, df=11)


def test_sampling_is_seeded():
    model = FactoredModel((4, 4), 1.0)
    model.mw_update(Measurement((0, 1), np.eye(4)))
    a = model.sample(50, rng=np.random.default_rng(1))
    b = model.sample(50, rng=np.random.default_rng(1))
    c = model.sample(50, rng=np.random.default_rng(2))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_fit_marginals_matches_explicit_and_records_unmerged():
    """fit_marginals = explicit MW passes from the same 1-way start; an over-cap marginal is split."""
    sizes, total = (3, 2, 4, 2), 500.0
    rng = np.random.default_rng(11)
    noisy = [
        NoisyMarginal((0, 1), rng.uniform(0, 80, size=(3, 2)), 2.0),
        NoisyMarginal((2, 3), rng.uniform(0, 60, size=(4, 2)), 2.0),
        NoisyMarginal((1, 2), rng.uniform(0, 60, size=(2, 4)), 2.0),  # would need 48 cells > 40
    ]
    model = fit_marginals(sizes, noisy, total, passes=4, max_factor_cells=40)
    assert model.unmerged == [2]
    assert sorted(model.groups) == [(0, 1), (2, 3)]
    one_way = one_way_from_marginals(4, noisy)
    start = FactoredModel.independent(sizes, total, one_way)
    explicit = Explicit(sizes, total, np.einsum("i,j,k,l->ijkl", *[f.probs for f in start.factors]))
    fitted = [Measurement(m.attrs, m.values) for m in noisy[:2]]
    fitted += [Measurement((1,), noisy[2].values.sum(axis=1)), Measurement((2,), noisy[2].values.sum(axis=0))]
    for _ in range(4):
        for m in fitted:
            explicit.update(m)
    np.testing.assert_allclose(model.project((0, 1, 2, 3)), explicit.project((0, 1, 2, 3)), rtol=0, atol=1e-10)


def test_fit_marginals_moves_towards_measurements():
    """More passes fit a consistent noiseless marginal more closely (MW decreases the error).

    With the paper's learning rate 1/(2n) the fit is slow but geometric: 200 passes bring the
    L1 error (71 after one pass) below 0.01.
    """
    sizes, total = (3, 3), 100.0
    target = np.array([[30.0, 5, 5], [5, 30, 5], [5, 5, 10]])
    errs = [np.abs(fit_marginals(sizes, [NoisyMarginal((0, 1), target, 1.0)], total, passes=p, init="uniform")
                   .project((0, 1)) - target).sum() for p in (1, 5, 50, 200)]
    assert errs[0] > errs[1] > errs[2] > errs[3]
    assert errs[3] < 1e-2


def test_fit_marginals_bad_arguments():
    with pytest.raises(ValueError, match=re.escape("init must be 'one-way' or 'uniform', got 'noisy'")):
        fit_marginals((2,), [], 1.0, init="noisy")
    with pytest.raises(ValueError, match=re.escape("passes must be >= 1, got 0")):
        fit_marginals((2,), [], 1.0, passes=0)


def test_staged_projection_of_a_large_factor():
    """A wide factor (7 attributes, 16384 cells) answers projections in two stages: same numbers."""
    sizes = (4,) * 7
    model = FactoredModel(sizes, 50.0)
    rng = np.random.default_rng(2)
    model.mw_update(Measurement(tuple(range(7)), rng.uniform(0, 1, size=sizes)))
    f = model.factors[0]
    assert f.tail == (4, 5, 6)  # the trailing block of 64 cells <= sqrt(16384) = 128
    for attrs in [(0, 3, 6), (6, 2), (1,), (5, 6), (0, 1, 2, 3, 4)]:
        other = tuple(i for i in range(7) if i not in attrs)
        direct = 50.0 * f.probs.sum(axis=other).transpose(np.argsort(np.argsort(attrs)))
        np.testing.assert_allclose(model.project(attrs), direct, rtol=0, atol=1e-12)


def test_tolerance_soft_thresholds_the_residual():
    """2×2, n = 100, uniform: measured (70, 30) with tolerance 5 moves like a residual of ±15.

    Residuals (20, −20) shrink to (15, −15): exponents ±15/200 = ±0.075.  A tolerance of 20
    or more leaves the model unchanged.
    """
    model = FactoredModel((2, 2), 100.0)
    model.mw_update(Measurement((0,), np.array([70.0, 30.0]), tolerance=5.0))
    z = 2 * math.exp(0.075) + 2 * math.exp(-0.075)
    np.testing.assert_allclose(model.project((0,)), [200 * math.exp(0.075) / z, 200 * math.exp(-0.075) / z],
                               rtol=0, atol=1e-12)
    still = FactoredModel((2, 2), 100.0)
    still.mw_update(Measurement((0,), np.array([70.0, 30.0]), tolerance=20.0))
    np.testing.assert_allclose(still.project((0, 1)), np.full((2, 2), 25.0), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=re.escape("Measurement: tolerance must be >= 0")):
        Measurement((0,), np.array([1.0, 2.0]), tolerance=-1.0)

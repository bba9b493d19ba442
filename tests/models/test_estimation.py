"""The noise-aware graphical-model estimator: junction trees, exact inference, fitting, sampling."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from scipy import stats

from dpsynth.models import estimation
from dpsynth.models.base import ZeroProbability, model_from_arrays, model_to_arrays
from dpsynth.models.estimation import LinearMeasurement, combine_duplicates, estimate, estimate_total
from dpsynth.models.graphical import GraphicalModel
from dpsynth.models.junction import ModelTooLarge, plan, tree_edges, triangulate


def _joint(sizes, cliques, thetas):
    """Brute-force p(x) ∝ exp(Σ θ_C(x_C)) over the full domain."""
    log_p = np.zeros(sizes)
    d = len(sizes)
    for c, t in zip(cliques, thetas):
        log_p = log_p + t.reshape([sizes[a] if a in c else 1 for a in range(d)])
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def _counts(p, attrs, n):
    d = p.ndim
    return n * p.sum(axis=tuple(a for a in range(d) if a not in attrs))


def test_triangulate_a_cycle_and_running_intersection():
    """A 4-cycle of pairs needs a chord: two triangles sharing an edge; the tree joins them."""
    tree = triangulate([2, 3, 4, 5], [(0, 1), (1, 2), (2, 3), (0, 3)])
    assert len(tree) == 2 and all(len(c) == 3 for c in tree)
    assert len(set(tree[0]) & set(tree[1])) == 2
    assert tree_edges(tree) == [(0, 1)]
    assert triangulate([2, 2, 2], []) == [(0,), (1,), (2,)]


def test_belief_propagation_is_exact():
    """Clique marginals from BP equal the brute-force marginals of the same potentials (float error only)."""
    rng = np.random.default_rng(0)
    sizes = (2, 3, 4, 2, 3)
    cliques = [(0, 1, 2), (1, 2, 3), (3, 4)]
    thetas = [rng.normal(size=[sizes[a] for a in c]) for c in cliques]
    model = GraphicalModel(sizes, cliques, thetas, total=10.0)
    p = _joint(sizes, cliques, thetas)
    for attrs in [(0, 1, 2), (2, 1), (4,), (3, 4), (2, 3)]:
        want = _counts(p, attrs, 10.0).transpose(np.argsort(np.argsort(attrs)))
        np.testing.assert_allclose(model.marginal(attrs), want, rtol=1e-10)


def test_project_any_attributes_is_exact():
    """Marginals across cliques (variable elimination on a subtree) equal brute force."""
    rng = np.random.default_rng(11)
    sizes = (2, 3, 2, 3, 2, 2)
    cliques = [(0, 1), (1, 2), (2, 3), (3, 4), (1, 5)]
    thetas = [rng.normal(size=[sizes[a] for a in c]) for c in cliques]
    model = GraphicalModel(sizes, cliques, thetas, total=7.0)
    p = _joint(sizes, cliques, thetas)
    for attrs in [(0, 4), (4, 0, 5), (0, 2, 3), (5, 3), (1,), (2, 0, 4, 5)]:
        want = _counts(p, attrs, 7.0).transpose(np.argsort(np.argsort(attrs)))
        np.testing.assert_allclose(model.project(attrs), want, rtol=1e-9)


def test_recovers_exact_marginals_without_noise():
    """Consistent noise-free marginals of a positive distribution are reproduced (optimisation
    tolerance: L1 distance ≤ 1e-3 of n per marginal after convergence)."""
    rng = np.random.default_rng(1)
    sizes = (3, 4, 2, 3)
    p = rng.dirichlet(np.ones(math.prod(sizes))).reshape(sizes)
    n = 1000.0
    cliques = [(0, 1), (1, 2), (2, 3), (0, 3), (1, 3)]
    ms = [LinearMeasurement(c, _counts(p, c, n), 1.0) for c in cliques]
    est = estimate(sizes, ms, total=n, iterations=3000)
    for c in cliques:
        assert np.abs(est.model.marginal(c) - _counts(p, c, n)).sum() <= 1e-3 * n


def test_precision_weighting_two_measurements_of_one_cell():
    """Two noisy answers of one cell, σ₁ = 1 and σ₂ = 2: the L2 fit is the inverse-variance mean
    (30/1 + 60/4)/(1 + 1/4) = 36 (total 100 public, so the other cell is 64)."""
    q = np.array([[1.0, 0.0]])
    ms = [LinearMeasurement((0,), [30.0], 1.0, q), LinearMeasurement((0,), [60.0], 2.0, q)]
    est = estimate([2], ms, total=100.0, iterations=2000)
    np.testing.assert_allclose(est.model.marginal((0,)), [36.0, 64.0], atol=1e-3)


def test_combine_duplicates_is_the_inverse_variance_mean():
    a = LinearMeasurement((0,), [10.0, 20.0], 1.0)
    b = LinearMeasurement((0,), [40.0, 0.0], 2.0)
    (m,) = combine_duplicates([a, b])
    np.testing.assert_allclose(m.values, [(10 + 40 / 4) / 1.25, (20 + 0) / 1.25])
    assert m.sigma == pytest.approx(1 / math.sqrt(1.25))


def test_estimate_total_inverse_variance():
    """Totals 100 (2 cells, σ=1: variance 2) and 130 (3 cells, σ=2: variance 12): (100/2 + 130/12)/(1/2 + 1/12)."""
    ms = [LinearMeasurement((0,), [40.0, 60.0], 1.0), LinearMeasurement((1,), [30.0, 50.0, 50.0], 2.0)]
    assert estimate_total(ms) == pytest.approx((100 / 2 + 130 / 12) / (1 / 2 + 1 / 12))


def test_estimate_without_total_uses_the_measurements():
    ms = [LinearMeasurement((0,), [40.0, 60.0], 1.0)]
    assert estimate([2], ms, iterations=10).model.total == pytest.approx(100.0)


def test_memory_refusal_before_any_work(monkeypatch):
    """All 2-way marginals of 6 columns of 10 values need one 10⁶-cell clique: refused before fitting."""
    sizes = [10] * 6
    ms = [LinearMeasurement(c, np.zeros((10, 10)), 1.0) for c in itertools.combinations(range(6), 2)]

    def no_fit(*args, **kwargs):
        raise AssertionError("fit_model must not run")

    monkeypatch.setattr(estimation, "fit_model", no_fit)
    msg = ("a model of the measured marginals needs 1000000 cells (about 48 MB), more than its bound of "
           "100000 cells; measure fewer or smaller marginals, or raise the bound")
    with pytest.raises(ModelTooLarge, match=re.escape(msg)):
        estimate(sizes, ms, total=100.0, max_cells=100_000, coarsen=False)


def test_model_floor_refused():
    with pytest.raises(ModelTooLarge, match=re.escape(
            "the model needs at least 30 cells (one per value of every column), more than its bound of "
            "20 cells; raise the bound or coarsen the schema")):
        plan([10, 10, 10], [(0, 1)], max_cells=20)


def test_coarsening_keeps_what_fits_and_projects_the_rest():
    """Bound 250 cells on three 10-value columns: (0, 1) fits (100 + 10), (1, 2) would make a
    200-cell chain... it fits; (0, 2) would close a cycle (1,000 cells): replaced by (0,) and (2,)."""
    p = plan([10, 10, 10], [(0, 1), (1, 2), (0, 2)], max_cells=250)
    assert p.kept[:2] == [(0, 1), (1, 2)]
    assert {k: sorted(v) for k, v in p.replaced.items()} == {(0, 2): [(0,), (2,)]} and p.cells <= 250


def _fitted_model():
    rng = np.random.default_rng(3)
    sizes = (3, 4, 2, 5)
    p = rng.dirichlet(np.ones(math.prod(sizes))).reshape(sizes)
    ms = [LinearMeasurement(c, _counts(p, c, 1000.0), 1.0) for c in [(0, 1), (1, 2), (2, 3)]]
    return estimate(sizes, ms, total=1000.0, iterations=200).model


@pytest.mark.parametrize("method", ["iid", "systematic"])
def test_sampled_rows_match_the_model(method):
    """Chi-square goodness of fit of 20,000 sampled rows on every clique of the model against the
    model's probabilities; each test fails falsely with probability 1e-6 (3 tests per method)."""
    model = _fitted_model()
    rows = 20_000
    codes = model.sample(rows, rng=np.random.default_rng(4), method=method)
    assert codes.shape == (rows, 4) and codes.dtype == np.uint8
    for c in model.cliques:
        expected = model.marginal(c).reshape(-1) * rows / model.total
        observed = np.bincount(np.ravel_multi_index(tuple(codes[:, c].T), model.shape(c)), minlength=expected.size)
        assert stats.chisquare(observed, expected).pvalue > 1e-6


def test_systematic_sampling_rounds_the_first_clique():
    """The first clique's counts are the model's counts rounded up or down (|error| < 1 per cell)."""
    model = _fitted_model()
    first = model.cliques[model.order()[0][0]]
    codes = model.sample(7_777, rng=np.random.default_rng(5), method="systematic")
    expected = model.marginal(first).reshape(-1) * 7_777 / model.total
    observed = np.bincount(np.ravel_multi_index(tuple(codes[:, first].T), model.shape(first)),
                           minlength=expected.size)
    assert np.all(np.abs(observed - expected) < 1.0)


def test_systematic_sampling_spreads_new_values_over_earlier_strata():
    """Cliques (0, 1) and (1, 2): given column 1, the model makes columns 0 and 2 independent.  Within each
    group of rows sharing column 1, systematic sampling deals column 2's values evenly over the rows sorted
    by column 0, so every (0, 1, 2) count is within 1 + (values of column 2) of the proportional share
    N(x0, x1)·N(x1, x2)/N(x1) of the rows' own counts (a deterministic bound of :func:`_allocate`).  A
    random pairing within groups (i.i.d. or shuffled allocation) misses it by about sqrt(N·p) ≈ 14 here."""
    rng = np.random.default_rng(11)
    sizes, cliques = (3, 2, 4), [(0, 1), (1, 2)]
    model = GraphicalModel(sizes, cliques, [rng.normal(size=[sizes[a] for a in c]) for c in cliques],
                           total=1.0, sampling="systematic")
    codes = model.sample(20_000, rng=np.random.default_rng(12)).astype(np.int64)
    joint = np.zeros(sizes)
    np.add.at(joint, tuple(codes.T), 1.0)
    share = joint.sum(axis=2, keepdims=True) * joint.sum(axis=0, keepdims=True) / joint.sum(axis=(0, 2),
                                                                                            keepdims=True)
    assert np.abs(joint - share).max() <= 1 + sizes[2]
    iid = model.sample(20_000, rng=np.random.default_rng(12), method="iid").astype(np.int64)
    joint = np.zeros(sizes)
    np.add.at(joint, tuple(iid.T), 1.0)
    share = joint.sum(axis=2, keepdims=True) * joint.sum(axis=0, keepdims=True) / joint.sum(axis=(0, 2),
                                                                                            keepdims=True)
    assert np.abs(joint - share).max() > 1 + sizes[2]  # the check can fail


def test_sampling_is_reproducible_and_chunkable():
    model = _fitted_model()
    a = model.sample(100, rng=np.random.default_rng(9))
    b = model.sample(100, rng=np.random.default_rng(9))
    c = model.sample(100, rng=np.random.default_rng(10))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert model.sample(0, rng=np.random.default_rng(0)).shape == (0, 4)
    with pytest.raises(ValueError, match=re.escape("method must be one of ('iid', 'systematic'), got 'x'")):
        model.sample(1, rng=np.random.default_rng(0), method="x")


def test_noisy_marginal_weighted_by_its_noise():
    """A very noisy 2-way marginal (σ = 10⁴) next to exact 1-way marginals: the fit keeps the exact
    1-way marginals (within 1 count) instead of following the noise."""
    rng = np.random.default_rng(6)
    one = [np.array([600.0, 400.0]), np.array([300.0, 700.0])]
    noisy = np.outer(one[0], one[1]) / 1000 + rng.normal(0, 1e4, (2, 2))
    ms = [LinearMeasurement((0,), one[0], 1.0), LinearMeasurement((1,), one[1], 1.0),
          LinearMeasurement((0, 1), noisy, 1e4)]
    model = estimate([2, 2], ms, total=1000.0, iterations=500).model
    np.testing.assert_allclose(model.marginal((0,)), one[0], atol=1.0)
    np.testing.assert_allclose(model.marginal((1,)), one[1], atol=1.0)


def test_probability_and_condition_are_exact():
    """probability(w) = Σ p(x)Πw(x) and condition(w) ∝ p·w, against the brute-force joint."""
    rng = np.random.default_rng(7)
    sizes = (2, 3, 4)
    cliques = [(0, 1), (1, 2)]
    thetas = [rng.normal(size=[sizes[a] for a in c]) for c in cliques]
    model = GraphicalModel(sizes, cliques, thetas, total=50.0)
    p = _joint(sizes, cliques, thetas)
    w = [None, np.array([1.0, 0.0, 0.5]), np.array([0.0, 1.0, 1.0, 0.2])]
    weight = w[1].reshape(1, 3, 1) * w[2].reshape(1, 1, 4)
    assert model.probability(w) == pytest.approx(float((p * weight).sum()), rel=1e-10)
    cond = model.condition(w)
    want = p * weight / (p * weight).sum()
    np.testing.assert_allclose(cond.marginal((1, 2)), 50.0 * want.sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(cond.marginal((0,)), 50.0 * want.sum(axis=(1, 2)), rtol=1e-10)
    with pytest.raises(ZeroProbability):
        model.condition([None, np.zeros(3), None])


def test_serialisation_round_trip_and_validation():
    model = _fitted_model()
    model.sampling = "systematic"
    header, arrays = model_to_arrays(model)
    again = model_from_arrays(header, arrays)
    assert again.cliques == model.cliques and again.sampling == "systematic"
    for c in model.cliques:
        np.testing.assert_allclose(again.marginal(c), model.marginal(c), rtol=1e-12)
    rng = np.random.default_rng(8)
    assert np.array_equal(again.sample(50, rng=np.random.default_rng(8)), model.sample(50, rng=rng))
    bad = dict(arrays)
    bad["log_potential_0"] = np.full_like(arrays["log_potential_0"], np.nan)
    with pytest.raises(ValueError, match="without NaN"):
        model_from_arrays(header, bad)
    meta = dict(header["meta"], cliques=[[1, 0]] + header["meta"]["cliques"][1:])
    with pytest.raises(ValueError, match="sorted list"):
        model_from_arrays({"kind": "graphical", "meta": meta}, arrays)

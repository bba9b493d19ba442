"""MWEM's default variant: the noise-aware estimator in the loop (dpsynth/algorithms/mwem_pgm.py)."""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest

from dpsynth.algorithms import mwem
from dpsynth.algorithms.mwem_pgm import candidates, merged_cells
from dpsynth.errors import ConfigError
from dpsynth.models.graphical import GraphicalModel
from dpsynth.privacy.accountant import ZCDPComposition
from tests.algorithms.test_mwem import _ctx, small  # noqa: F401  (fixture)


def test_candidates_are_the_workload_and_its_subsets():
    assert candidates([(0, 1, 2)]) == [(0, 1), (0, 2), (1, 2), (0, 1, 2)]
    assert candidates([(2, 0), (0, 2)]) == [(0, 2)]


def test_merged_cells_bound():
    """Chain (0,1)-(1,2)-(2,3) of 3-value columns (27 cells): measuring (0, 3) by merging the chain gives one
    clique over 0..3 (81 cells); routing 3 down to (0,1) gives (0,1,3)-(1,2,3)-(2,3) (27 + 27 + 9 = 63), the
    smaller; (1, 2) is already inside a clique; (0, 2): merge (0,1,2) + (2,3) = 36, route 2 into (0,1): 27 + 9 + 9."""
    model = GraphicalModel([3, 3, 3, 3], [(0, 1), (1, 2), (2, 3)])
    assert merged_cells(model, (1, 2)) == 27
    assert merged_cells(model, (0, 3)) == 63
    assert merged_cells(model, (0, 2)) == 36


def test_route_bound_is_a_junction_tree_size():
    """On a chain of six 5-value columns, measuring (0, 5) by merging costs 5^6 cells; carrying 5 along the
    chain to (0,1) adds one factor of 5 to each of the first four cliques: 4 * 125 + 25 = 525."""
    model = GraphicalModel([5] * 6, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)])
    assert merged_cells(model, (0, 5)) == 4 * 125 + 25
    assert merged_cells(model, (0, 5)) < 5**6


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_default_variant_ledger(small, delta):  # noqa: F811
    """Init: one charge per column; then per round one selection and one measurement; the whole
    budget is spent (basic: exactly ≤ ε; zCDP with δ > 0 under accounting auto: Gaussian noise)."""
    domain, codes, wl = small
    params = mwem.parse_params({"iterations": 4})
    composition = mwem.composition(params, type("P", (), {"delta": delta})())
    ctx = _ctx(domain, codes, wl, delta=delta, composition=composition)
    out = mwem.run(ctx, params, rng=np.random.default_rng(3))
    charges = ctx.ledger.charges
    stages = [c.stage for c in charges]
    assert stages[:4] == ["mwem-init"] * 4
    rounds = out.details["rounds"]
    assert stages[4:] == ["mwem-select", "mwem-measure"] * rounds and rounds >= 1
    assert out.details["variant"] == "pgm"
    if delta == 0:
        assert {c.mechanism for c in charges if c.stage != "mwem-select"} == {"discrete-laplace"}  # integer noise
        spent = sum((Fraction(c.epsilon) for c in charges), Fraction(0))
        assert 0.999 <= spent <= 1
    else:
        assert isinstance(composition, ZCDPComposition)
        assert {c.mechanism for c in charges if c.stage != "mwem-select"} == {"discrete-gaussian"}  # integer noise
        eps, _ = ctx.ledger.spent()
        assert 0.999 <= eps <= 1.0
    rows = out.model.sample(500, rng=np.random.default_rng(0))
    assert rows.shape == (500, 4) and np.all(rows.max(axis=0) < np.array(domain.sizes))


def test_default_variant_is_reproducible(small):  # noqa: F811
    domain, codes, wl = small
    params = mwem.parse_params({"iterations": 3})
    runs = [mwem.run(_ctx(domain, codes, wl), params, rng=np.random.default_rng(s)) for s in (5, 5, 6)]
    samples = [r.model.sample(50, rng=np.random.default_rng(0)) for r in runs]
    assert np.array_equal(samples[0], samples[1]) and not np.array_equal(samples[0], samples[2])


def test_pgm_beats_independence_at_large_epsilon(small):  # noqa: F811
    """At ε = 50 the released model's 2-way marginals are closer to the data than the product of the
    true 1-way marginals (the data has a strong a–b–d dependence: L1 gap ≥ 0.2 on (a, b))."""
    domain, codes, wl = small
    out = mwem.run(_ctx(domain, codes, wl, epsilon=50.0), mwem.parse_params({"iterations": 6}),
                   rng=np.random.default_rng(0))
    n = len(codes)
    true = np.zeros((3, 5))
    np.add.at(true, (codes[:, 0], codes[:, 1]), 1.0)
    indep = np.outer(true.sum(1), true.sum(0)) / n
    fitted = out.model.project((0, 1))
    assert np.abs(fitted - true).sum() / n + 0.2 <= np.abs(indep - true).sum() / n
    assert math.isclose(fitted.sum(), n)


def test_all_workload_subsets_are_candidates():
    wl = list(itertools.combinations(range(4), 3))
    assert len(candidates(wl)) == 6 + 4


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_batch_ledger(small, delta):  # noqa: F811
    """``batch: 2``: per round two selections (each paid half the round's selection part: the same ε for
    both) then two measurements (half the measurement part each); the whole budget is spent, as with one."""
    domain, codes, wl = small
    params = mwem.parse_params({"iterations": 4, "batch": 2})
    composition = mwem.composition(params, type("P", (), {"delta": delta})())
    ctx = _ctx(domain, codes, wl, delta=delta, composition=composition)
    out = mwem.run(ctx, params, rng=np.random.default_rng(3))
    charges = ctx.ledger.charges[4:]
    rounds = out.details["rounds"]
    assert out.details["batch"] == 2 and len(out.details["selected"]) == 2 * rounds and rounds >= 2
    assert [c.stage for c in charges] == ["mwem-select"] * 2 + ["mwem-measure"] * 2 + [
        "mwem-select"] * 2 + ["mwem-measure"] * 2 + [c.stage for c in charges[8:]]
    for i in range(0, len(charges), 4):  # loop over rounds: the two draws and the two measurements cost alike
        assert charges[i].epsilon == charges[i + 1].epsilon and charges[i + 2].epsilon == charges[i + 3].epsilon
    if delta == 0:
        spent = sum((Fraction(c.epsilon) for c in ctx.ledger.charges), Fraction(0))
        assert 0.999 <= spent <= 1
    else:
        eps, _ = ctx.ledger.spent()
        assert 0.999 <= eps <= 1.0


def test_batch_is_refused_by_the_paper_variant():
    with pytest.raises(ConfigError, match=re.escape(
            "algorithm.params.batch: 2 marginals per round needs variant pgm (variant paper measures one query "
            "per round); remove batch or set variant: pgm")):
        mwem.resolve_config(mwem.parse_params({"variant": "paper", "batch": 2}), None, zcdp=False)
    with pytest.raises(ConfigError, match=re.escape("algorithm.params.batch: must be >= 1, got 0")):
        mwem.parse_params({"batch": 0})

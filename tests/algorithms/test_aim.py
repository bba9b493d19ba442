"""``aim``: adaptive selection on the graphical model with budget annealing (dpsynth/algorithms/aim.py)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpsynth.algorithms import aim
from dpsynth.errors import ConfigError
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import BasicComposition, ZCDPComposition
from dpsynth.privacy.neighbouring import Neighbouring
from tests.algorithms.test_mwem import _ctx, small  # noqa: F401  (fixture)


def _privacy(delta: float):
    return type("P", (), {"delta": delta})()


def test_candidates_are_the_downward_closure():
    assert aim.candidates([(2, 0)]) == [(0,), (2,), (0, 2)]
    assert aim.candidates([(0, 1, 2), (1, 2)]) == [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)]


def test_weights_count_the_workload_attributes_a_candidate_touches():
    """w_r = Σ_s |r ∩ s|: over the workload {(0, 1), (1, 2)}, (1,) touches both pairs once, (0, 1) touches
    (0, 1) twice and (1, 2) once."""
    wl = [(0, 1), (1, 2)]
    cands = aim.candidates(wl)
    w = dict(zip(cands, aim.weights(cands, wl)))
    assert w == {(0,): 1.0, (1,): 2.0, (0, 1): 3.0, (2,): 1.0, (1, 2): 3.0}


@pytest.mark.parametrize(("raw", "msg"), [
    ({"rounds_per_column": 0}, "algorithm.params.rounds_per_column: must be >= 1, got 0"),
    ({"select_fraction": 1.0}, "algorithm.params.select_fraction: must be in (0, 1), got 1.0"),
    ({"init_fraction": 0.0}, "algorithm.params.init_fraction: must be in (0, 1), got 0.0"),
    ({"model_cells": 0}, "algorithm.params.model_cells: must be >= 1, got 0"),
])
def test_bad_params_are_one_line_config_errors(raw, msg):
    with pytest.raises(ConfigError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        aim.parse_params(raw)


def test_composition_follows_delta_and_accounting():
    assert isinstance(aim.composition(aim.parse_params({}), _privacy(1e-6)), ZCDPComposition)
    assert isinstance(aim.composition(aim.parse_params({}), _privacy(0.0)), BasicComposition)
    assert isinstance(aim.composition(aim.parse_params({"accounting": "pure"}), _privacy(1e-6)), BasicComposition)
    with pytest.raises(ConfigError, match="zcdp needs privacy.delta > 0"):
        aim.composition(aim.parse_params({"accounting": "zcdp"}), _privacy(0.0))


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_ledger_and_budget_used_exactly(small, delta):  # noqa: F811
    """Init: one charge per column; then per round one selection and one measurement; the last round takes
    what is left, so the whole budget is spent (basic: exactly ≤ ε; zCDP: its (ε, δ) figure)."""
    domain, codes, wl = small
    params = aim.parse_params({"rounds_per_column": 4})
    composition = aim.composition(params, _privacy(delta))
    ctx = _ctx(domain, codes, wl, delta=delta, composition=composition)
    out = aim.run(ctx, params, rng=np.random.default_rng(3))
    stages = [c.stage for c in ctx.ledger.charges]
    rounds = out.details["rounds"]
    assert stages == ["aim-init"] * 4 + ["aim-select", "aim-measure"] * rounds and rounds >= 1
    assert rounds <= out.details["nominal_rounds"] + 1
    if delta == 0:
        spent = sum((Fraction(c.epsilon) for c in ctx.ledger.charges), Fraction(0))
        assert 1 - 1e-6 <= spent <= 1
    else:
        eps, _ = ctx.ledger.spent()
        assert 1 - 1e-6 <= eps <= 1.0
    rows = out.model.sample(300, rng=np.random.default_rng(0))
    assert rows.shape == (300, 4) and np.all(rows.max(axis=0) < np.array(domain.sizes))


@pytest.mark.parametrize("neighbouring", [Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE])
def test_score_sensitivity_is_the_largest_weight_times_the_histogram_sensitivity(small, neighbouring, monkeypatch):  # noqa: F811
    """Every selection declares max_r w_r · Δ₁ over the candidates offered (here all 2-way marginals of 4
    columns: a pair touches itself twice and the 4 other pairs sharing one column once, w = 6), and the
    scores it is given are the weighted scores, so one row moves none by more than that."""
    domain, codes, wl = small
    seen: list[tuple[float, int]] = []
    original = aim.exponential_mechanism

    def spy(scores, *, sensitivity, **kw):
        seen.append((sensitivity, len(scores)))
        return original(scores, sensitivity=sensitivity, **kw)

    monkeypatch.setattr(aim, "exponential_mechanism", spy)
    ctx = _ctx(domain, codes, wl, neighbouring=neighbouring)
    aim.run(ctx, aim.parse_params({"rounds_per_column": 2}), rng=np.random.default_rng(1))
    assert seen and all(s == 6.0 * neighbouring.histogram_l1 for s, _ in seen)


def test_annealing_raises_the_round_budget_and_the_size_limit_grows(small):  # noqa: F811
    """Many nominal rounds on a small table: the model soon stops moving beyond the noise, so the per-round
    budget grows (fewer rounds than nominal), and the model-size limit grows with the share spent."""
    domain, codes, wl = small
    out = aim.run(_ctx(domain, codes, wl, epsilon=5.0), aim.parse_params({"rounds_per_column": 16}),
                  rng=np.random.default_rng(2))
    det = out.details
    assert det["budget_increases"] >= 1 and det["rounds"] < det["nominal_rounds"]
    first, last = det["size_limit_first_last"]
    assert first < last == det["model_cells_bound"]


def test_model_size_limit_keeps_large_candidates_out_early(small, monkeypatch):  # noqa: F811
    """With a bound of 40 cells, the first rounds (a few % of the budget spent: limit = the model's own
    cells) may only pick candidates already inside the model's cliques, the 1-way marginals."""
    domain, codes, wl = small
    offered: list[int] = []
    original = aim.exponential_mechanism

    def spy(scores, **kw):
        offered.append(len(scores))
        return original(scores, **kw)

    monkeypatch.setattr(aim, "exponential_mechanism", spy)
    aim.run(_ctx(domain, codes, wl), aim.parse_params({"rounds_per_column": 8, "model_cells": 40}),
            rng=np.random.default_rng(0))
    assert offered[0] == 4  # the four 1-way marginals only (every pair would add cells beyond the limit)


def test_aim_beats_independence_at_large_epsilon(small):  # noqa: F811
    """At ε = 50 the released model's (a, b) marginal is closer to the data than the product of the true 1-way
    marginals (the data has a strong a–b dependence: L1 gap ≥ 0.2)."""
    domain, codes, wl = small
    out = aim.run(_ctx(domain, codes, wl, epsilon=50.0), aim.parse_params({"rounds_per_column": 3}),
                  rng=np.random.default_rng(0))
    n = len(codes)
    true = np.zeros((3, 5))
    np.add.at(true, (codes[:, 0], codes[:, 1]), 1.0)
    indep = np.outer(true.sum(1), true.sum(0)) / n
    assert np.abs(out.model.project((0, 1)) - true).sum() / n + 0.2 <= np.abs(indep - true).sum() / n


def test_every_draw_goes_through_a_mechanism(small, monkeypatch):  # noqa: F811
    """The recorder hook sees d initial measurements and two calls per round, and nothing else."""
    domain, codes, wl = small
    calls: list[str] = []
    monkeypatch.setattr(mechanisms, "recorder", lambda mech, true, out, info: calls.append(mech))
    out = aim.run(_ctx(domain, codes, wl), aim.parse_params({"rounds_per_column": 2}), rng=np.random.default_rng(4))
    assert calls == ["discrete-laplace"] * 4 + ["exponential", "discrete-laplace"] * out.details["rounds"]


def test_empty_workload_spends_everything_on_the_one_way_marginals(small):  # noqa: F811
    """No candidate: no round; the d initial measurements take the whole budget, as the plan says."""
    domain, codes, _ = small
    ctx = _ctx(domain, codes, [])
    out = aim.run(ctx, aim.parse_params({}), rng=np.random.default_rng(0))
    assert out.details["rounds"] == 0
    assert [c.stage for c in ctx.ledger.charges] == ["aim-init"] * 4
    assert 1 - 1e-6 <= sum((Fraction(c.epsilon) for c in ctx.ledger.charges), Fraction(0)) <= 1
    plan = aim.budget_plan(_ctx(domain, codes, []), aim.parse_params({}))
    assert [s.stage for s in plan] == ["aim-init"] and plan[0].epsilon == tuple(c.epsilon for c in ctx.ledger.charges)

"""The report's error bounds (dpsynth.algorithms.bounds): the formula, its coverage, which releases carry them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpsynth
from dpsynth.algorithms.base import NoisyMarginal, SelectionLog, SelectionRound
from dpsynth.algorithms.bounds import error_bounds, marginal_bound, selection_bound
from dpsynth.config import parse_config
from dpsynth.privacy.tails import l1_quantile, laplace_count_quantile
from dpsynth.report import validate_report

SIZES = (2, 3)
TRUE = np.array([[400.0, 150.0, 50.0], [100.0, 200.0, 100.0]])  # n = 1,000


class Fixed:
    """A model that answers every marginal from one joint table (a stand-in for a fitted model)."""

    def __init__(self, joint):
        self.joint = np.asarray(joint, dtype=float)

    def project(self, attrs):
        axes = tuple(a for a in range(self.joint.ndim) if a not in attrs)
        out = self.joint.sum(axis=axes)
        return out.transpose([sorted(attrs).index(a) for a in attrs])


def test_bound_is_the_residual_plus_the_noise_quantile_over_n():
    y = TRUE + np.array([[3.0, -2.0, 0.0], [1.0, 4.0, -5.0]])
    model = np.full(SIZES, 1000.0 / 6)
    m = NoisyMarginal((0, 1), y, 2.0, "gaussian")
    bound, source = marginal_bound((0, 1), [m], model / 1000.0, SIZES, n=1000.0, n_margin=0.0, alpha=0.05)
    q = l1_quantile("gaussian", 2.0, 6, alpha=0.025)  # the first (only) measurement gets alpha/2
    assert source == (0, 1)
    assert bound == pytest.approx((np.abs(y - model).sum() + q) / 1000.0, rel=1e-12)


def test_a_superset_is_summed_down_and_a_second_one_gets_a_quarter_of_alpha():
    y1 = TRUE + 1.0
    y2 = TRUE - 1.0
    p_hat = TRUE.sum(axis=1) / 1000.0
    first = NoisyMarginal((0, 1), y1, 50.0, "laplace")
    second = NoisyMarginal((1, 0), y2.T, 3.0, "laplace")
    bound, source = marginal_bound((0,), [first, second], p_hat, SIZES, n=1000.0, n_margin=0.0, alpha=0.05)
    q2 = l1_quantile("laplace", 3.0, 2, alpha=0.05 / 4, merged=3)
    assert source == (1, 0)
    assert bound == pytest.approx((np.abs(y2.sum(axis=1) - TRUE.sum(axis=1)).sum() + q2) / 1000.0, rel=1e-12)


def test_noisy_n_widens_the_bound_and_a_tiny_n_gives_the_trivial_two():
    y = TRUE.copy()
    m = NoisyMarginal((0, 1), y, 1.0, "gaussian")
    p_hat = TRUE / 1000.0
    public, _ = marginal_bound((0, 1), [m], p_hat, SIZES, n=1000.0, n_margin=0.0, alpha=0.05)
    noisy, _ = marginal_bound((0, 1), [m], p_hat, SIZES, n=1000.0, n_margin=20.0, alpha=0.05)
    q = l1_quantile("gaussian", 1.0, 6, alpha=0.025)
    assert public == pytest.approx(q / 1000.0) and noisy == pytest.approx((q + 20.0) / 980.0)
    assert marginal_bound((0, 1), [m], p_hat, SIZES, n=10.0, n_margin=20.0, alpha=0.05)[0] == 2.0


def test_coverage_with_a_model_fitted_to_the_noise():
    """The model is the noisy marginal clipped at 0 and normalised (it depends on the noise, as a fitted model
    does).  R = 2,000 runs: the coverage of a valid 95 % bound falls below 0.95 − 6 standard errors = 0.921
    with probability below 1e-9."""
    rng = np.random.default_rng(7)
    runs, hits = 2000, 0
    sigma = 30.0
    for _ in range(runs):  # loop over simulated releases
        y = TRUE + rng.normal(0.0, sigma, SIZES)
        p_hat = np.clip(y, 0, None) / np.clip(y, 0, None).sum()
        m = NoisyMarginal((0, 1), y, sigma, "gaussian")
        bound, _ = marginal_bound((0,), [m], p_hat.sum(axis=1), SIZES, n=1000.0, n_margin=0.0, alpha=0.05)
        hits += np.abs(TRUE.sum(axis=1) / 1000.0 - p_hat.sum(axis=1)).sum() <= bound
    assert hits / runs >= 0.95 - 6 * math.sqrt(0.95 * 0.05 / runs)


def test_section_lists_unmeasured_marginals_without_a_bound():
    m = NoisyMarginal((0,), TRUE.sum(axis=1), 1.0, "laplace")
    out = error_bounds([(0,), (0, 1)], ["a", "b"], SIZES, [m], Fixed(TRUE), n=1000.0, n_epsilon=0.5)
    assert [r["measured"] for r in out["marginals"]] == ["yes", "no"]
    assert out["marginals"][1] == {"marginal": ["a", "b"], "bound": None, "measured": "no", "from": None}
    assert out["classes"][1] == {"class": "2-way", "marginals": 1, "bounded": 0, "median_bound": None,
                                 "max_bound": None}
    t = laplace_count_quantile(2.0, alpha=0.005)
    q = l1_quantile("laplace", 1.0, 2, alpha=0.045 / 2)
    assert out["marginals"][0]["bound"] == pytest.approx((q + t) / (1000.0 - t), abs=1e-6)
    assert out["reason_unbounded"].startswith("1 workload marginal(s) are contained in no released marginal")


class Counting(Fixed):
    """:class:`Fixed`, recording which marginals the bounds asked the model for."""

    def __init__(self, joint):
        super().__init__(joint)
        self.asked: list[tuple[int, ...]] = []

    def project(self, attrs):
        self.asked.append(tuple(attrs))
        return super().project(attrs)


def test_model_is_projected_only_where_a_released_marginal_contains_the_workload_marginal():
    joint = np.arange(1.0, 25.0).reshape(2, 3, 4)
    sizes = (2, 3, 4)
    released = [NoisyMarginal((2, 0), joint.sum(axis=1).T, 1.0, "laplace")]
    workload = [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]
    model = Counting(joint)
    out = error_bounds(workload, ["a", "b", "c"], sizes, released, model, n=float(joint.sum()), n_epsilon=None)
    assert sorted(model.asked) == [(0,), (0, 2), (2,)]  # not (1,), (0, 1), (1, 2): nothing released holds b
    assert [r["bound"] is None for r in out["marginals"]] == [False, True, False, True, False, True]
    assert out["marginals"][4]["measured"] == "yes" and out["marginals"][0]["measured"] == "superset"


def _raw(algorithm, params=None):
    return {"schema": {"columns": {"color": {"type": "categorical", "categories": ["red", "green", "blue"]},
                                   "flag": {"type": "categorical", "categories": [0, 1]},
                                   "count": {"type": "integer", "lower": 1, "upper": 4}}},
            "privacy": {"epsilon": 1.0, "n": "public", "delta": 1e-6},
            "algorithm": {"name": algorithm, "params": params or {}},
            "workload": {"marginals": {"k": 2}}, "decode": {"fine": "off"}}


def test_an_auto_release_reports_bounds(tiny_table):
    res = dpsynth.release(tiny_table, parse_config(_raw("auto")), rng=3)
    validate_report(res.report)
    bounds = res.report["error_bounds"]
    assert bounds["available"] and bounds["level"] == 0.95
    assert [m["marginal"] for m in bounds["marginals"]] == [["color", "flag"], ["color", "count"], ["flag", "count"]]
    assert bounds["classes"][0]["class"] == "2-way" and bounds["classes"][0]["marginals"] == 3
    assert all(m["bound"] is None or 0 < m["bound"] <= 2 for m in bounds["marginals"])


def test_a_dualquery_release_reports_no_bound(tiny_table):
    params = {"T": 3, "s": 4, "best_response": "local", "local_search": {"restarts": 1, "kicks": 2}}
    raw = _raw("dualquery", params)
    raw["privacy"] = {"epsilon": 1.0, "n": "public"}
    res = dpsynth.release(tiny_table, parse_config(raw), rng=3)
    validate_report(res.report)
    assert res.report["error_bounds"] == {
        "available": False, "level": 0.95,
        "reason": "dualquery: its release is a set of rows chosen by sampled best responses: no noisy per-marginal "
                  "measurement, so no error bound follows from its outputs"}


def test_selection_bound_formula_and_its_row():
    """A workload marginal no measurement contains, scored in round 2 (1-based) of a selection: the bound is
    c_r + residual + q − c_chosen + (2Δ/ε)(ln C + ln(1/α₂)) plus the model's drift since that round, over n,
    with α₂ = α·6/(π²·2²)/2 for the selection and the same for the noise quantile q."""
    joint = np.array([[[60.0, 40.0], [100.0, 50.0]], [[200.0, 50.0], [300.0, 200.0]]])  # n = 1,000, sizes (2, 2, 2)
    then = np.full((2, 2), 250.0)  # the model's (0, 2) marginal when round 2 scored it
    log = SelectionLog(rounds=[SelectionRound(0.3, 1.0, 4, 55.0, "gaussian", 9.0, 4, 9.0),
                               SelectionRound(0.5, 1.0, 3, 40.0, "gaussian", 8.0, 8, 8.0)],
                       last_scored={(0, 2): (1, then, 1.0, 4, 0.0), (1, 2): (0, np.full((2, 2), 250.0), 1.0, 4, 0.0)})
    bound, source = selection_bound((0, 2), log, Fixed(joint), n=1000.0, n_margin=0.0, alpha=0.05)
    share = 0.05 * 6 / (math.pi**2 * 4) / 2
    charge = math.sqrt(2 / math.pi) * 8.0
    q = l1_quantile("gaussian", 8.0, 8, alpha=share)
    drift = np.abs(then - joint.sum(axis=1)).sum()
    expected = charge * 4 + 40.0 + q - charge * 8 + 2.0 / 0.5 * (math.log(3) + math.log(1 / share)) + drift
    assert source == (0, 2)
    assert bound == pytest.approx(expected / 1000.0, rel=1e-12)
    out = error_bounds([(0, 2), (0, 1)], ["a", "b", "c"], (2, 2, 2), [], Fixed(joint), n=1000.0, n_epsilon=None,
                       selection=log)
    assert out["marginals"][0] == {"marginal": ["a", "c"], "bound": round(bound, 6), "measured": "selection",
                                   "from": ["a", "c"]}
    assert out["marginals"][1]["bound"] is None  # nothing scored holds (a, b)
    assert selection_bound((0, 1), log, Fixed(joint), n=1000.0, n_margin=0.0, alpha=0.05) is None


def test_a_weighted_selection_divides_by_the_candidates_weight():
    """aim's scores are w·(error − charge) at sensitivity max w·Δ: the chosen one's part is scaled by its weight
    and the sum divided by the bounded candidate's."""
    joint = np.full((2, 2, 2), 125.0)
    then = joint.sum(axis=1)
    log = SelectionLog(rounds=[SelectionRound(0.5, 3.0, 3, 40.0, "laplace", 6.0, 8, 6.0 * math.sqrt(2), 3.0)],
                       last_scored={(0, 2): (0, then, 2.0, 4, 0.0)})
    bound, _ = selection_bound((0,), log, Fixed(joint), n=1000.0, n_margin=0.0, alpha=0.05)
    share = 0.05 * 6 / math.pi**2 / 2
    charge = math.sqrt(2 / math.pi) * 6.0 * math.sqrt(2)
    q = l1_quantile("laplace", 6.0, 8, alpha=share)
    slack = 2 * 3.0 / 0.5 * (math.log(3) + math.log(1 / share))
    assert bound == pytest.approx((charge * 4 + (3.0 * (40.0 + q - charge * 8) + slack) / 2.0) / 1000.0, rel=1e-12)


def test_a_candidate_scored_in_bins_adds_twice_the_models_mass_on_its_merged_bins():
    """``compress`` scored (0, 2) in 3 cells (two of c's values merged): the bound charges the 3 scored cells and
    adds 2 × the model's mass on the merged bin (Σ_{c∈b} |d_c − p_c| ≤ |d_b − p_b| + 2·p_b), here 2 × 90."""
    joint = np.full((2, 2, 2), 125.0)
    then = joint.sum(axis=1)
    plain = SelectionLog(rounds=[SelectionRound(0.5, 1.0, 3, 40.0, "gaussian", 8.0, 3, 8.0)],
                         last_scored={(0, 2): (0, then, 1.0, 3, 0.0)})
    merged = SelectionLog(rounds=plain.rounds, last_scored={(0, 2): (0, then, 1.0, 3, 90.0)})
    a, _ = selection_bound((0, 2), plain, Fixed(joint), n=1000.0, n_margin=0.0, alpha=0.05)
    b, _ = selection_bound((0, 2), merged, Fixed(joint), n=1000.0, n_margin=0.0, alpha=0.05)
    assert b - a == pytest.approx(180.0 / 1000.0, rel=1e-12)


def test_binned_candidates_are_logged_with_their_merged_mass():
    """mwem_pgm._log_round: a candidate holding a binned column is recorded with its full marginal, the cells it
    was scored on and the folded model mass on bins of two or more values."""
    from dpsynth.algorithms.compression import Bins
    from dpsynth.algorithms.mwem_pgm import _log_round

    bins = Bins([None, np.array([0, 0, 1])])  # column 1's first two values share a bin
    full = np.array([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]])
    folded = bins.apply(full, (0, 1))
    log = SelectionLog()
    _log_round(log, [(0, 1)], [folded], bins, 0.5, 1.0, 3.0, 4, "gaussian", 2.0, 2.0, full=[full])
    t, scored, w, cells, mass = log.last_scored[(0, 1)]
    assert t == 0 and scored is full and w == 1.0 and cells == 4 and mass == pytest.approx(10 + 20 + 40 + 50)

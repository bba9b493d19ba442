"""iReduct for marginals and its baselines (TwoPhase, iResamp, Oracle): budget, PickQueries, termination."""

from __future__ import annotations

import copy
import math
import re

import numpy as np
import pytest

from dpsynth.algorithms.ireduct import (
    error_weights,
    generalized_sensitivity,
    ireduct_marginals,
    pick_priority,
    pick_ratio,
)
from dpsynth.algorithms.ireduct.twophase import oracle_scales, rescale_weights
from dpsynth.config import parse_config
from dpsynth.errors import ConfigError
from dpsynth.pipeline import release
from dpsynth.privacy.allocation import scale_cost


def test_generalized_sensitivity_hand_case():
    """Equation 12: Σ Δ/λ_j; replace-one Δ = 2 gives 2/2 + 2/4 = 1.5, add-remove Δ = 1 gives 0.75."""
    assert generalized_sensitivity([2.0, 4.0], 2.0) == 1.5
    assert generalized_sensitivity([2.0, 4.0], 1.0) == 0.75
    assert scale_cost(1.0, 3.0) == math.nextafter(1 / 3, 2)  # the float 1/3 is below one third
    assert scale_cost(1.0, 2.0) == 0.5  # exact division: no bump
    assert scale_cost(2.0, 0.1) == 20.0  # the float 0.1 exceeds 1/10, so 2/0.1 < 20 and 20.0 is already above


def test_error_weights_hand_case():
    """Σ 1/max(y, δ) with δ = 1: cells (0.5, 4, −1) give 1 + 0.25 + 1 = 2.25 (mean 0.75); cell 10 gives 0.1."""
    values = np.array([0.5, 4.0, -1.0, 10.0])
    seg = np.array([0, 0, 0, 1])
    assert error_weights(values, seg, [3, 1], 1.0, "sum") == pytest.approx([2.25, 0.1])
    assert error_weights(values, seg, [3, 1], 1.0, "mean") == pytest.approx([0.75, 0.1])


def test_pick_queries_hand_case():
    """§5.3 ratio (λ_Δ/|𝓜|·w)/(Δ/(λ−λ_Δ) − Δ/λ) with w = (1, 3), λ = (10, 5), λ_Δ = 1, |𝓜| = 2, Δ = 2:
    22.5 and 15, so marginal 0 is picked; pick_priority is the same ratio up to one common factor."""
    w, lam = np.array([1.0, 3.0]), np.array([10.0, 5.0])
    ratio = pick_ratio(w, lam, 1.0, 2, 2.0)
    assert ratio == pytest.approx([22.5, 15.0])
    prio = pick_priority(w, lam, 1.0)
    assert prio / ratio == pytest.approx([prio[0] / ratio[0]] * 2)
    assert int(np.argmax(prio)) == 0


def test_oracle_scales_hand_case():
    """λ ∝ 1/sqrt(w), Σ Δ/λ = ε: w = (1, 4), Δ = ε = 1 gives λ = (3, 1.5)."""
    assert oracle_scales([1.0, 4.0], 1.0, 1.0) == pytest.approx([3.0, 1.5])
    assert rescale_weights([np.array([0.5, 4.0])], 1.0) == pytest.approx([0.625])


def _true_marginals(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.poisson(lam, size=shape).astype(np.int64) for lam, shape in
            [(200, (3,)), (5, (4, 5)), (50, (2, 6)), (0.5, (10,))]]


def _stuck(res, true, sens, eps, lam_max, lam_delta):
    """Figure 4's exit condition: no marginal can take one more λ_Δ step within ε."""
    costs = np.array([scale_cost(sens, s) for s in res.scales])
    for j, s in enumerate(res.scales):
        new = s - lam_delta
        if new > 0 and math.fsum(costs) - costs[j] + scale_cost(sens, new) <= eps:
            return False
    return True


@pytest.mark.parametrize("refresh, ratio", [(0.0, 200), (0.02, 1e5)])
@pytest.mark.parametrize("sens", [1.0, 2.0])
def test_loop_respects_budget_and_terminates(refresh, ratio, sens):
    """Final scales satisfy g ≤ ε; the loop stops only when no marginal can step (literal and batched modes)."""
    true = _true_marginals()
    eps, lam_max = 0.5, 100.0
    res = ireduct_marginals(true, sensitivity=sens, epsilon=eps, lambda_max=lam_max, lambda_delta=lam_max / ratio,
                            sanity_bound=1.0, rng=np.random.default_rng(3), refresh=refresh)
    costs = [scale_cost(sens, s) for s in res.scales]
    from fractions import Fraction

    assert sum(Fraction(c) for c in costs) <= Fraction(eps)
    assert np.all(res.scales <= lam_max) and np.all(res.scales > 0)
    assert _stuck(res, true, sens, eps, lam_max, lam_max / ratio)
    assert [v.shape for v in res.values] == [t.shape for t in true]
    # scales live on the lattice λ_max − k·λ_Δ
    k = (lam_max - res.scales) / (lam_max / ratio)
    assert np.allclose(k, np.round(k), atol=1e-6)


def test_small_marginals_get_less_noise():
    """Sparse marginals (small counts, high relative error) end with smaller scales than dense ones."""
    true = _true_marginals()
    res = ireduct_marginals(true, sensitivity=1.0, epsilon=1.0, lambda_max=100.0, lambda_delta=1e-3,
                            sanity_bound=1.0, rng=np.random.default_rng(4))
    assert res.scales[3] < res.scales[0]  # mean count 0.5 vs 200


def test_first_draw_unaffordable_raises():
    true = _true_marginals()
    with pytest.raises(ValueError, match=re.escape("lambda_max=2 cannot pay for the first draw: 4 marginals cost")):
        ireduct_marginals(true, sensitivity=1.0, epsilon=1.0, lambda_max=2.0, lambda_delta=0.1, sanity_bound=1.0,
                          rng=np.random.default_rng(0))


def _config(tiny_raw_config, name, **params):
    raw = copy.deepcopy(tiny_raw_config)
    raw["algorithm"] = {"name": name, "params": params}
    return parse_config(raw)


@pytest.mark.parametrize("name", ["ireduct", "twophase", "iresamp"])
def test_release_spends_at_most_epsilon(tiny_raw_config, tiny_table, name):
    """Every baseline releases one noisy marginal per workload entry and its ledger total is ≤ ε.

    iReduct and TwoPhase use it up (> 0.99 ε); iResamp halves scales, so it stops when every next draw
    (cost 2Δ/λ_j, at least twice the marginal's last draw) no longer fits, which can leave up to about ε/2.
    """
    cfg = _config(tiny_raw_config, name)
    res = release(tiny_table, cfg, rng=np.random.default_rng(5))
    p = res.report["privacy"]
    assert p["epsilon_spent"] <= 1.0 and p["epsilon_spent"] > (0.5 if name == "iresamp" else 0.99)
    assert res.marginals["marginal_id"].nunique() == len(cfg.marginals)
    assert len(res.synthetic) == len(tiny_table)


def test_ireduct_ledger_records_final_scales(tiny_raw_config, tiny_table):
    """One charge per marginal, ε_j = Δ/λ_j with λ_j the released scale (Theorem 1)."""
    cfg = _config(tiny_raw_config, "ireduct")
    res = release(tiny_table, cfg, rng=np.random.default_rng(6))
    charges = res.report["ledger"]
    assert len(charges) == len(cfg.marginals)
    scales = res.marginals.groupby("marginal_id")["noise_scale"].first().to_numpy()
    for c, s in zip(charges, scales):
        assert c["scale"] == pytest.approx(s) and c["epsilon"] == scale_cost(1.0, c["scale"])


def test_ireduct_reproducible(tiny_raw_config, tiny_table):
    cfg = _config(tiny_raw_config, "ireduct")
    a = release(tiny_table, cfg, rng=np.random.default_rng(7)).marginals["noisy_count"].to_numpy()
    b = release(tiny_table, cfg, rng=np.random.default_rng(7)).marginals["noisy_count"].to_numpy()
    c = release(tiny_table, cfg, rng=np.random.default_rng(8)).marginals["noisy_count"].to_numpy()
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_param_errors(tiny_raw_config):
    with pytest.raises(ConfigError, match=re.escape("algorithm.params.refresh: must be in [0, 1] (0: literal loop), got 2.0")):
        _config(tiny_raw_config, "ireduct", refresh=2.0)
    with pytest.raises(ConfigError, match=re.escape("algorithm.params.epsilon1_fraction: must be in (0, 1), got 1.0")):
        _config(tiny_raw_config, "twophase", epsilon1_fraction=1.0)
    with pytest.raises(ConfigError, match=re.escape("algorithm.params.lambda_max: must be a number > 0, got -1.0")):
        _config(tiny_raw_config, "iresamp", lambda_max=-1.0)


def test_lambda_max_too_small_is_a_config_error(tiny_raw_config, tiny_table):
    cfg = _config(tiny_raw_config, "ireduct", lambda_max=1.0)
    msg = ("algorithm.params.lambda_max: 1 cannot pay for the first draw of 6 marginals (cost 6 > epsilon 1); "
           "raise it to at least 6")
    with pytest.raises(ConfigError, match=re.escape(msg)):
        release(tiny_table, cfg, rng=np.random.default_rng(0))


def test_default_lambda_max_is_raised_with_warning(tiny_raw_config, tiny_table):
    """n = 500: n/10 = 50 cannot pay for 6 marginals at ε = 0.1 (needs 60), so λ_max = 600 with a warning."""
    raw = copy.deepcopy(tiny_raw_config)
    raw["privacy"]["epsilon"] = 0.1
    raw["algorithm"] = {"name": "ireduct"}
    res = release(tiny_table, parse_config(raw), rng=np.random.default_rng(0))
    assert res.report["algorithm"]["details"]["lambda_max"] == pytest.approx(600.0)
    assert any("cannot pay for the first draw" in w for w in res.report["warnings"])


def test_replace_one_charges_two_per_marginal(tiny_raw_config, tiny_table):
    """Under replace-one a row moves two cells of every marginal: Δ = 2, so ε_j = 2/λ_j (Equation 12)."""
    raw = copy.deepcopy(tiny_raw_config)
    raw["privacy"]["neighbouring"] = "replace-one"
    raw["algorithm"] = {"name": "ireduct"}
    res = release(tiny_table, parse_config(raw), rng=np.random.default_rng(9))
    for c in res.report["ledger"]:
        assert c["sensitivity"] == 2.0 and c["epsilon"] == scale_cost(2.0, c["scale"])
    assert res.report["privacy"]["epsilon_spent"] <= 1.0


def test_cli_non_private_oracle_writes_nothing(runner, tmp_path, root):
    """`dpsynth oracle`: figures as JSON on stdout, a NOT-private warning, and no file at all."""
    import json

    from dpsynth.cli import app
    from tests.helpers import shared_file

    pums = shared_file("pums", "PUMS.csv")
    out = tmp_path / "never.csv"
    res = runner.invoke(app, ["oracle", "-c", str(root / "configs" / "pums.yaml"), "-i", str(pums), "--seed", "1"])
    assert res.exit_code == 0, res.stderr
    figures = json.loads(res.stdout)
    assert figures["marginals"] == 15 and figures["sanity_bound"] == pytest.approx(0.1)
    assert figures["overall_error"] > 0 and figures["method"].startswith("oracle")
    assert res.stderr.startswith("dpsynth: WARNING: dpsynth oracle is NOT differentially private")
    assert list(tmp_path.iterdir()) == []
    res = runner.invoke(app, ["release", "-c", str(root / "configs" / "pums.yaml"), "-i", str(pums), "-o", str(out),
                              "--non-private-oracle"])
    assert res.exit_code == 2
    assert res.stderr == ("dpsynth: error: --non-private-oracle moved to its own command: "
                          "dpsynth oracle -c CONFIG -i INPUT\n")


@pytest.mark.parametrize("refresh", [0.02, 0.0])
def test_single_marginal_ends_exactly_laplace(refresh):
    """One marginal: every step fits until Δ/λ would exceed ε, so the final scale is deterministic
    (λ = 1 for ε = 1, Δ = 1 on the lattice 100 − k·0.5: the exact cost 1/1 fits, λ = 0.5 costs 2) and the released cells must be exactly
    Laplace(μ, λ) after the whole chain of NoiseDowns: KS over 2e4 cells, p > 1e-6."""
    from scipy import stats

    true = [np.full(20_000, 5, dtype=np.int64)]
    res = ireduct_marginals(true, sensitivity=1.0, epsilon=1.0, lambda_max=100.0, lambda_delta=0.5,
                            sanity_bound=1.0, rng=np.random.default_rng(21), refresh=refresh)
    assert res.scales[0] == pytest.approx(1.0)
    assert stats.kstest(res.values[0], stats.laplace(loc=5.0, scale=res.scales[0]).cdf).pvalue > 1e-6


@pytest.mark.parametrize("lambda_max", [1.0, 1.5, 2.0])
def test_first_draw_is_laplace_at_lambda_max(lambda_max):
    """Figure 4 line 4 draws every cell at λ_max, the scale the ledger's Theorem 1 argument starts from.

    With ε = Δ = 1, one marginal and λ_Δ = 0.5, the final scale is 1 after (λ_max − 1)/0.5 ∈ {0, 1, 2}
    NoiseDown steps, so the released cells are Laplace(μ, 1) only if the first draw had scale λ_max (a
    NoiseDown step from a too-narrow start stays too narrow): KS over 2e4 cells, false failure 1e-6 each.
    (The long chain of the test above forgets its start, which is why this one is needed.)"""
    from scipy import stats

    true = [np.full(20_000, 5, dtype=np.int64)]
    res = ireduct_marginals(true, sensitivity=1.0, epsilon=1.0, lambda_max=lambda_max, lambda_delta=0.5,
                            sanity_bound=1.0, rng=np.random.default_rng(22), refresh=0.0)
    assert res.scales[0] == 1.0
    assert stats.kstest(res.values[0], stats.laplace(loc=5.0, scale=1.0).cdf).pvalue > 1e-6

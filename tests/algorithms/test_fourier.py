"""Tests of the Fourier release (dpsynth/algorithms/fourier.py; Dwork survey §4.2, Barak et al. 2007)."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import yaml

from dpsynth.algorithms import fourier
from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.schema import CategoricalColumn, Domain, IntegerColumn
from dpsynth.errors import ConfigError
from dpsynth.privacy import Neighbouring
from dpsynth.privacy.accountant import Ledger


def _domain(*sizes: int) -> Domain:
    return Domain(tuple(IntegerColumn(f"c{i}", 0, m - 1) for i, m in enumerate(sizes)))


def _codes(domain: Domain, n: int, seed: int) -> np.ndarray:
    """Correlated rows: column i copies column i−1 with probability 1/2, else uniform."""
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, m, n) for m in domain.sizes], axis=1)
    for i in range(1, len(domain)):
        copy = rng.random(n) < 0.5
        codes[copy, i] = np.minimum(codes[copy, i - 1], domain.sizes[i] - 1)
    return codes


def _ctx(domain, codes, workload, *, epsilon=1.0, neighbouring=Neighbouring.ADD_REMOVE, rows=None):
    counts = ArrayCounts(codes, domain)
    return AlgorithmContext(domain=domain, counts=counts, ledger=Ledger(epsilon, 0.0), neighbouring=neighbouring,
                            n=float(counts.n), rows=rows or counts.n, workload=tuple(workload))


def _true_blocks(basis, counts):
    return dict(zip(basis.supports, basis.coefficients(lambda t: counts.marginal(t) if t else counts.n)))


# ------------------------------------------------------------------------------ the basis
def test_binary_characters_are_the_hadamard_characters():
    """For binary attributes χ_u(x) = (−1)^{⟨u, x⟩} (survey §4.2, Theorem 2: orthogonal, here unnormalised)."""
    domain = _domain(2, 2, 2, 2)
    basis = fourier.Basis.closure(domain, list(itertools.combinations(range(4), 4)))
    chars = basis.characters().astype(int)
    assert chars.shape == (16, 16) and basis.size == 16
    cells = np.indices(domain.sizes).reshape(4, -1).T
    for row, t in zip(chars, basis.supports):  # block sizes are 1 for binary attributes
        u = np.isin(np.arange(4), t).astype(int)
        np.testing.assert_array_equal(row, (-1) ** (cells @ u))
    np.testing.assert_array_equal(chars @ chars.T, 16 * np.eye(16, dtype=int))


@pytest.mark.parametrize("sizes", [(2, 2, 2), (2, 3, 4), (3, 1, 5, 2)])
def test_marginals_round_trip_through_their_coefficients(sizes):
    """Survey eq. (4): every workload marginal is recovered exactly from the coefficients u ⪯ it; the
    character matrix applied to the full table gives the same coefficients as the per-block transform."""
    domain = _domain(*sizes)
    codes = _codes(domain, 200, seed=1)
    counts = ArrayCounts(codes, domain)
    workload = list(itertools.combinations(range(len(sizes)), 2))
    basis = fourier.Basis.closure(domain, workload)
    blocks = _true_blocks(basis, counts)
    assert basis.size == sum(np.size(b) for b in blocks.values())
    for attrs in workload + [tuple(reversed(w)) for w in workload]:
        back = fourier.marginal_from_coefficients(domain, attrs, blocks)
        np.testing.assert_allclose(back, counts.marginal(attrs), atol=1e-9)
    table = counts.marginal(tuple(range(len(sizes)))).reshape(-1)
    np.testing.assert_array_equal(basis.characters().astype(np.int64) @ table, np.concatenate(list(blocks.values())))


def test_downward_closure_of_a_workload():
    domain = _domain(2, 3, 2, 2)
    basis = fourier.Basis.closure(domain, [(2, 0), (1, 3)])
    assert basis.supports == ((), (0,), (1,), (2,), (3,), (0, 2), (1, 3))
    assert basis.size == 1 + 1 + 2 + 1 + 1 + 1 + 2


# ---------------------------------------------------------------------------- sensitivity
@pytest.mark.parametrize("sizes", [(2, 2, 2, 2), (2, 3, 3), (4, 2, 3)])
def test_sensitivity_matches_a_brute_force_over_records(sizes):
    """Survey Theorem 3: a record moves every non-constant coefficient by exactly ±1, so adding or
    removing one moves the measured vector by |B′| in L1 (attained by every record); replacing one
    moves it by at most 2·|B′|.  Checked over every record and every pair of records of the domain."""
    domain = _domain(*sizes)
    workload = list(itertools.combinations(range(len(sizes)), 2))
    basis = fourier.Basis.closure(domain, workload)
    contrib = basis.characters()[1:].astype(np.int64)  # column x: what record x adds to θ_u, u ∈ B′
    measured = basis.size - 1
    add_remove = np.abs(contrib).sum(axis=0)
    assert np.all(add_remove == fourier.coefficient_sensitivity(measured, Neighbouring.ADD_REMOVE))
    replace = np.abs(contrib[:, :, None] - contrib[:, None, :]).sum(axis=0)
    declared = fourier.coefficient_sensitivity(measured, Neighbouring.REPLACE_ONE)
    assert replace.max() <= declared and replace.max() > measured


# ------------------------------------------------------------------------ the table fit
def test_zero_noise_recovery_by_the_linear_program():
    """With exact coefficients the true table is feasible with b = 0, so the LP reaches b = 0 and its
    table has exactly the true workload marginals (survey §4.2 step 3)."""
    domain = _domain(2, 3, 2, 2)
    counts = ArrayCounts(_codes(domain, 300, seed=2), domain)
    workload = list(itertools.combinations(range(4), 2))
    basis = fourier.Basis.closure(domain, workload)
    phi = np.concatenate(list(_true_blocks(basis, counts).values())).astype(float)
    table, info = fourier._fit_lp(basis.characters(), phi, time_limit=60)
    assert info["lp_status"] == "optimal" and info["lp_max_deviation"] == pytest.approx(0, abs=1e-6)
    assert table.min() >= 0
    for attrs in workload:
        np.testing.assert_allclose(fourier._project(domain, table, attrs), counts.marginal(attrs), atol=1e-6)


def test_zero_noise_mw_fit_converges_to_the_true_marginals():
    """MWEM §3.2's variant: with exact coefficients of the 1-way and 2-way marginals of a small table, MW
    passes converge to a table with those marginals (a numerical-convergence tolerance: 1% of n in L1)."""
    domain = _domain(2, 3, 2)
    counts = ArrayCounts(_codes(domain, 300, seed=3), domain)
    workload = list(itertools.combinations(range(3), 2))
    basis = fourier.Basis.closure(domain, workload)
    phi = np.concatenate(list(_true_blocks(basis, counts).values())).astype(float)
    table = fourier._fit_mw(basis.characters(), phi, 300.0, passes=300)
    assert table.min() > 0 and table.sum() == pytest.approx(300)
    for attrs in workload:
        assert np.abs(fourier._project(domain, table, attrs) - counts.marginal(attrs)).sum() <= 3.0


def test_released_marginals_are_consistent_nonnegative_integers():
    domain = _domain(2, 3, 2, 2)
    codes = _codes(domain, 400, seed=4)
    workload = list(itertools.combinations(range(4), 2))
    out = fourier.run(_ctx(domain, codes, workload, rows=250), fourier.Params(), rng=np.random.default_rng(0))
    assert out.codes.shape == (250, 4)
    by_attrs = {m.attrs: m.values for m in out.marginals}
    for attrs, values in by_attrs.items():
        assert values.min() >= 0 and np.all(values == np.rint(values)) and values.sum() == 250
        rows = ArrayCounts(out.codes, domain).marginal(attrs)
        np.testing.assert_array_equal(values, rows)  # they are the synthetic rows' marginals
    np.testing.assert_array_equal(by_attrs[(0, 1)].sum(axis=1), by_attrs[(0, 2)].sum(axis=1))


def test_theorem4_bound_holds():
    """Survey Theorem 4 (LP part): with probability ≥ 1 − δ every workload marginal of the LP table is
    within 2^{|α|}·2|B|·ln(|B|/δ)/ε of the truth (here for a mixed-size domain, the bound from
    ⊗Ĥ⁻¹).  δ = 1e-3: a correct implementation fails this fixed-seed test with probability ≤ 1e-3."""
    domain = _domain(2, 3, 2, 2)
    codes = _codes(domain, 300, seed=5)
    workload = list(itertools.combinations(range(4), 2))
    ctx = _ctx(domain, codes, workload)
    res = fourier.fit(ctx, fourier.Params(noise="continuous"), rng=np.random.default_rng(6))
    counts = ArrayCounts(codes, domain)
    for attrs in workload:
        err = np.abs(res.project(attrs) - counts.marginal(attrs)).sum()
        assert err <= fourier.theorem4_bound(domain, attrs, res.basis, res.scale, 1e-3)
    binary = fourier.theorem4_bound(domain, (0, 2), res.basis, res.scale, 1e-3)
    measured = res.basis.size - 1
    assert binary == pytest.approx(2**2 * 2 * res.scale * np.log(measured / 1e-3))


def test_one_charge_with_the_declared_sensitivity():
    domain = _domain(2, 3, 2)
    workload = list(itertools.combinations(range(3), 2))
    ctx = _ctx(domain, _codes(domain, 100, seed=7), workload, neighbouring=Neighbouring.REPLACE_ONE, epsilon=0.7)
    out = fourier.run(ctx, fourier.Params(), rng=np.random.default_rng(0))
    (charge,) = ctx.ledger.charges
    measured = fourier.Basis.closure(domain, workload).size - 1
    assert (charge.mechanism, charge.sensitivity, charge.epsilon) == ("discrete-laplace", 2.0 * measured, 0.7)
    assert charge.count == measured and out.details["noise_scale_per_coefficient"] == 2.0 * measured / 0.7


def test_same_seed_same_rows_other_seed_other_rows():
    domain = _domain(2, 3, 2)
    codes = _codes(domain, 200, seed=8)
    workload = [(0, 1), (1, 2)]
    runs = [fourier.run(_ctx(domain, codes, workload), fourier.Params(fit=f), rng=np.random.default_rng(s)).codes
            for f, s in [("lp", 1), ("lp", 1), ("lp", 2), ("mw", 1)]]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2]) and not np.array_equal(runs[0], runs[3])


# ------------------------------------------------------------------------ configuration
@pytest.mark.parametrize("raw, msg", [
    ({"mw_passes": 0}, "algorithm.params.mw_passes: must be >= 1, got 0"),
    ({"max_entries": 0}, "algorithm.params.max_entries: must be >= 1, got 0"),
    ({"lp_time_limit": 0}, "algorithm.params.lp_time_limit: must be > 0 seconds, got 0.0"),
    ({"mw_max_entries": 0}, "algorithm.params.mw_max_entries: must be >= 1, got 0"),
    ({"fit": "ip"}, "algorithm.params.fit: must be one of auto, lp, mw, got 'ip'"),
])
def test_bad_params(raw, msg):
    with pytest.raises(ConfigError, match=re.escape(msg)):
        fourier.parse_params(raw)


def _cli_config(tmp_path, columns: int, params: dict) -> str:
    raw = {
        "schema": {"columns": {f"a{i}": {"type": "categorical", "categories": [0, 1]} for i in range(columns)}},
        "privacy": {"epsilon": 1.0},
        "algorithm": {"name": "fourier", "params": params},
        "workload": {"marginals": {"k": 2}},
    }
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(raw))
    return str(path)


@pytest.mark.parametrize("params, msg", [
    ({"fit": "lp"}, ("algorithm.params.max_entries: the fourier LP table fit needs 65536 domain cells x 137 "
     "coefficients = 8978432 entries, more than the limit of 2000000 (use fit: mw or fit: auto, fewer or coarser "
     "columns, lower-order marginals, or raise max_entries)")),
    ({"mw_max_entries": 8_978_431}, ("algorithm.params.mw_max_entries: the fourier MW table fit needs 65536 domain "
     "cells x 137 coefficients = 8978432 entries, more than the limit of 8978431 (use fewer or coarser columns, "
     "lower-order marginals, or raise mw_max_entries)")),
])
def test_domain_size_guard_refuses_before_reading_the_data(runner, tmp_path, params, msg):
    """16 binary columns: 65,536 cells × 137 coefficients = 8,978,432 entries > 2,000,000 for the LP; refused
    from the configuration alone (the input file is not even valid CSV)."""
    bad = tmp_path / "in.csv"
    bad.write_bytes(b"\x00not,a,table")
    cfg = _cli_config(tmp_path, 16, params)
    res = runner.invoke(app, ["release", "-c", cfg, "-i", str(bad), "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 64
    assert res.stderr == f"dpsynth: error: {msg}\n"
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("sizes, workload, params, expected", [
    ((2,) * 6, [(0, 1, 2)], {}, "lp"),  # 64 cells x 8 coefficients: the LP
    ((2,) * 16, list(itertools.combinations(range(16), 2)), {}, "mw"),  # NLTCS, all 2-way: 8,978,432 > 2,000,000
    ((2,) * 6, [(0, 1, 2)], {"max_entries": 511}, "mw"),  # 512 entries: one over the LP's limit
    ((2,) * 6, [(0, 1, 2)], {"max_entries": 512}, "lp"),  # ... and at it
    ((2,) * 6, [(0, 1, 2)], {"fit": "mw"}, "mw"),  # explicit fits are kept
    ((2,) * 16, [(0, 1)], {"fit": "lp"}, "lp"),
])
def test_auto_fit_is_chosen_from_domain_cells_times_coefficients(sizes, workload, params, expected):
    chosen, why = fourier.resolve_fit(_domain(*sizes), workload, fourier.parse_params(params))
    assert chosen == expected
    assert why.startswith("fit: auto chose" if "fit" not in params else f"fit: {expected} as configured")


def test_default_fourier_release_of_the_nltcs_sample_uses_the_mw_fit_and_says_so(runner, tmp_path):
    """Issue 26: all 2-way marginals of NLTCS (16 binary columns) used to be refused by the LP's limit; the
    default (fit: auto) picks the MW fit from N x |B| (public) and the report states the choice and why."""
    import json
    from pathlib import Path

    nltcs = Path(__file__).resolve().parents[2] / "sample_data" / "nltcs.csv"
    cfg = _cli_config(tmp_path, 16, {})
    out = tmp_path / "o.csv"
    res = runner.invoke(app, ["release", "-c", cfg, "-i", str(nltcs), "-o", str(out), "--seed", "1", "--quiet"])
    assert res.exit_code == 0, res.stderr
    report = json.loads((tmp_path / "o.csv.report.json").read_text())
    why = ("fit: auto chose mw (multiplicative weights, MWEM §3.2) instead of the linear program: 65,536 domain "
           "cells x 137 coefficients = 8,978,432 entries, more than the LP's max_entries = 2,000,000; computed "
           "from the public domain and workload, no privacy cost")
    assert report["algorithm"]["params"]["fit"] == "mw"  # the resolved parameter, not "auto"
    assert report["algorithm"]["details"]["fit"] == "mw"
    assert report["algorithm"]["details"]["fit_choice"] == why
    assert why in report["warnings"]


def test_cli_release_with_fourier(runner, tmp_path):
    rng = np.random.default_rng(0)
    src = tmp_path / "in.csv"
    import pandas as pd

    pd.DataFrame(rng.integers(0, 2, (120, 5)), columns=[f"a{i}" for i in range(5)]).to_csv(src, index=False)
    cfg = _cli_config(tmp_path, 5, {"fit": "mw"})
    out = tmp_path / "o.csv"
    res = runner.invoke(app, ["release", "-c", cfg, "-i", str(src), "-o", str(out), "--seed", "1", "--quiet",
                              "--marginals", str(tmp_path / "m.csv")])
    assert res.exit_code == 0, res.stderr
    assert len(pd.read_csv(out)) == 120 and (tmp_path / "m.csv").exists()


def test_config_names_fourier():
    cfg = parse_config({"schema": {"columns": {"a": {"type": "categorical", "categories": ["x"]}}},
                        "privacy": {"epsilon": 1.0}, "algorithm": {"name": "fourier"},
                        "workload": {"marginals": [["a"]]}})
    ctx = _ctx(cfg.domain, np.zeros((5, 1), dtype=np.int64), cfg.marginals)
    with pytest.raises(ConfigError, match=re.escape(
            "workload.marginals: every column of the workload has a single value; there is no Fourier "
            "coefficient to measure")):
        fourier.run(ctx, cfg.params, rng=np.random.default_rng(0))


def test_categorical_columns_work_too():
    domain = Domain((CategoricalColumn("a", ("x", "y", "z")), CategoricalColumn("b", ("u", "v"))))
    codes = _codes(domain, 90, seed=9)
    out = fourier.run(_ctx(domain, codes, [(0, 1)]), fourier.Params(), rng=np.random.default_rng(3))
    assert out.codes.shape == (90, 2) and out.details["coefficients"] == 6

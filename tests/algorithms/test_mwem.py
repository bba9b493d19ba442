"""Tests of the MWEM algorithm (dpsynth/algorithms/mwem/) and range workloads (dpsynth/ranges.py)."""

from __future__ import annotations

import dataclasses
import itertools
import math
import re

import numpy as np
import pytest
import yaml
from scipy import stats

from dpsynth.algorithms import mwem
from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.cli import app
from dpsynth.config import PrivacyConfig, parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.schema import CategoricalColumn, Domain, IntegerColumn, NumericColumn
from dpsynth.errors import ConfigError
from dpsynth.models.mixture import MixtureModel
from dpsynth.privacy import Neighbouring
from dpsynth.privacy.accountant import Ledger, ZCDPComposition, approx_dp_to_zcdp
from dpsynth.workload.ranges import RangeQueries, parse_ranges
from dpsynth.workload.spec import Workload
from tests.helpers import ROOT


def _ctx(domain, codes, workload, *, epsilon=1.0, delta=0.0, composition=None, extra=None,
         neighbouring=Neighbouring.ADD_REMOVE):
    counts = ArrayCounts(codes, domain)
    ledger = Ledger(epsilon, delta, composition) if composition else Ledger(epsilon, delta)
    return AlgorithmContext(domain=domain, counts=counts, ledger=ledger, neighbouring=neighbouring,
                            n=float(counts.n), rows=counts.n, workload=tuple(workload),
                            queries=Workload(tuple(workload), tuple(parse_ranges((extra or {}).get("ranges"), domain))))


@pytest.fixture
def small():
    """4 columns (two ordered), 400 correlated rows, all 2-way marginals."""
    domain = Domain((
        CategoricalColumn("a", ("x", "y", "z")),
        IntegerColumn("b", 1, 5),
        NumericColumn("c", (0.0, 1.0, 2.0, 3.0, 4.0), missing=True),
        CategoricalColumn("d", (0, 1)),
    ))
    rng = np.random.default_rng(5)
    a = rng.integers(0, 3, 400)
    b = np.minimum(a + rng.integers(0, 3, 400), 4)
    c = rng.integers(0, 5, 400)
    d = (b > 2).astype(int)
    codes = np.stack([a, b, c, d], axis=1)
    return domain, codes, list(itertools.combinations(range(4), 2))


# ----------------------------------------------------------------------- parameters
@pytest.mark.parametrize("raw, msg", [
    ({"iterations": 0}, "algorithm.params.iterations: must be >= 1, got 0"),
    ({"mw_passes": -1}, "algorithm.params.mw_passes: must be >= 0, got -1"),
    ({"select_fraction": 1.0}, "algorithm.params.select_fraction: must be in (0, 1), got 1.0"),
    ({"init_fraction": 0}, "algorithm.params.init_fraction: must be in (0, 1), got 0.0"),
    ({"max_factor_cells": 0}, "algorithm.params.max_factor_cells: must be >= 1, got 0"),
    ({"init": "zeros"}, "algorithm.params.init: must be one of uniform, noisy, cells, got 'zeros'"),
    ({"passes": 3}, "algorithm.params.passes: unknown key"),
    ({"tolerance": -0.5}, "algorithm.params.tolerance: must be >= 0, got -0.5"),
    ({"anneal": 0.5}, "algorithm.params.anneal: must be a finite number >= 1 (the noise never grows), got 0.5"),
    ({"accounting": "rdp"}, "algorithm.params.accounting: must be one of auto, pure, zcdp, got 'rdp'"),
])
def test_params_validation(raw, msg):
    with pytest.raises(ConfigError, match=re.escape(msg)):
        mwem.parse_params(raw)


def test_zcdp_needs_delta():
    params = mwem.parse_params({"accounting": "zcdp"})
    with pytest.raises(ConfigError, match=re.escape(
        "algorithm.params.accounting: zcdp needs privacy.delta > 0 (e.g. 1e-6), got 0.0"
    )):
        mwem.composition(params, PrivacyConfig(1.0, 0.0))
    assert isinstance(mwem.composition(params, PrivacyConfig(1.0, 1e-6)), ZCDPComposition)


def test_too_many_iterations(small):
    domain, codes, wl = small
    params = mwem.parse_params({"variant": "paper", "iterations": 7})
    with pytest.raises(ConfigError, match=re.escape(
        "algorithm.params.iterations: 7 rounds but only 6 candidate queries "
        "(lower iterations, leave it unset, or set reselect: true)"
    )):
        mwem.run(_ctx(domain, codes, wl), params, rng=np.random.default_rng(0))


def test_default_iterations_adapt_to_the_candidates(small):
    """Issue 15 item 6 (variant paper): without an explicit iterations, 6 candidates give 6 rounds."""
    domain, codes, wl = small
    ctx = _ctx(domain, codes, wl)
    out = mwem.run(ctx, mwem.parse_params({"variant": "paper"}), rng=np.random.default_rng(0))
    assert out.details["iterations"] == 6 and len(out.details["selected"]) == 6
    assert out.details["iterations_note"] == (
        "iterations not set: 6 rounds, one per candidate query (fewer than the default 20)"
    )
    assert [c.stage for c in ctx.ledger.charges].count("mwem-measure") == 6
    assert mwem.effective_iterations(mwem.parse_params({}), 500) == mwem.DEFAULT_ITERATIONS == 20
    assert mwem.effective_iterations(mwem.parse_params({"reselect": True}), 3) == 20


# ------------------------------------------------------------------- privacy budget
@pytest.mark.parametrize("raw", [
    {},
    {"init": "uniform", "output": "average", "mw_passes": 0},
    {"marginal_queries": "cells", "iterations": 8},
    {"reselect": True, "iterations": 10, "select_fraction": 0.3},
    {"tolerance": 1.0, "clip": False, "bias_cells": True},
])
@pytest.mark.parametrize("nb", list(Neighbouring))
def test_ledger_sums_to_epsilon(small, raw, nb):
    """Every draw is charged, the charges add up to ε, and sensitivities follow the neighbouring relation."""
    domain, codes, wl = small
    params = mwem.parse_params({"variant": "paper", "iterations": 5, **raw})
    ctx = _ctx(domain, codes, wl, epsilon=0.7, neighbouring=nb)
    out = mwem.run(ctx, params, rng=np.random.default_rng(1))
    eps, delta = ctx.ledger.spent()
    assert eps == pytest.approx(0.7, rel=1e-12) and eps <= 0.7 and delta == 0
    stages = [c.stage for c in ctx.ledger.charges]
    T = params.iterations
    assert stages.count("mwem-select") == T and stages.count("mwem-measure") == T
    assert stages.count("mwem-init") == (4 if params.init == "noisy" else 0)
    cuboids = params.marginal_queries == "cuboids"
    for c in ctx.ledger.charges:
        if c.stage != "mwem-init" and not cuboids:  # one count, and its score: sensitivity 1
            assert c.sensitivity == 1.0 and c.count == 1
        else:  # histograms and cuboid scores
            assert c.sensitivity == nb.histogram_l1
    assert out.codes is None and out.model.sample(400, rng=np.random.default_rng(0)).shape == (400, 4)
    assert len(out.details["selected"]) == T


def test_zcdp_ledger(small):
    """zCDP: Gaussian measurements, ε²/8 selections; total converted ε equals the budget (margin 1e-9 in ρ)."""
    domain, codes, wl = small
    params = mwem.parse_params({"variant": "paper", "iterations": 4, "accounting": "zcdp"})
    ctx = _ctx(domain, codes, wl, epsilon=1.0, delta=1e-6, composition=ZCDPComposition())
    mwem.run(ctx, params, rng=np.random.default_rng(2))
    eps, delta = ctx.ledger.spent()
    assert eps == pytest.approx(1.0, rel=1e-8) and eps <= 1.0 and delta == 1e-6
    mechs = {c.stage: c.mechanism for c in ctx.ledger.charges}
    assert mechs == {"mwem-init": "discrete-gaussian", "mwem-select": "exponential", "mwem-measure": "discrete-gaussian"}
    rho = sum(c.rho for c in ctx.ledger.charges)
    assert rho == pytest.approx(approx_dp_to_zcdp(1.0, 1e-6), rel=1e-8)
    L = math.log(1e6)
    assert rho > (math.sqrt(L + 1) - math.sqrt(L)) ** 2  # the Rényi conversion allows more than Bun–Steinke


# -------------------------------------------------------------------------- selection
def test_selection_frequencies_chi_square(small):
    """First-round selection from a uniform A₀ follows exp(ε_sel·score/(2Δ)).

    score_i = Σ_cells |n/cells − B_c| for the 6 cuboids; ε_sel = ε·select_fraction/T with
    T = 1.  3000 seeded runs; chi-square test with 5 degrees of freedom at 1e-6
    (false-failure rate 1e-6).  ε is chosen so that no probability is below 2%.
    """
    domain, codes, wl = small
    counts = ArrayCounts(codes, domain)
    scores = np.array([np.abs(400 / counts.marginal(m).size - counts.marginal(m)).sum() for m in wl])
    eps = 0.02
    params = mwem.parse_params({"variant": "paper", "iterations": 1, "init": "uniform", "mw_passes": 0})
    logits = (eps * 0.5) * scores / 2.0
    p = np.exp(logits - logits.max())
    p /= p.sum()
    assert p.min() > 0.02
    rng = np.random.default_rng(123)
    names = ["marginal(" + ", ".join(domain.names[a] for a in m) + ")" for m in wl]
    hits = np.zeros(len(wl))
    runs = 3000
    for _ in range(runs):
        out = mwem.run(_ctx(domain, codes, wl, epsilon=eps), params, rng=rng)
        hits[names.index(out.details["selected"][0])] += 1
    chi2 = float(((hits - runs * p) ** 2 / (runs * p)).sum())
    assert chi2 < stats.chi2.isf(1e-6, df=len(wl) - 1)


# ------------------------------------------------------------------------ behaviour
def test_seeded_reproducibility(small):
    domain, codes, wl = small
    params = mwem.parse_params({"variant": "paper", "iterations": 4})
    a = mwem.run(_ctx(domain, codes, wl), params, rng=np.random.default_rng(9))
    b = mwem.run(_ctx(domain, codes, wl), params, rng=np.random.default_rng(9))
    c = mwem.run(_ctx(domain, codes, wl), params, rng=np.random.default_rng(10))
    rows = [out.model.sample(400, rng=np.random.default_rng(0)) for out in (a, b, c)]
    assert np.array_equal(rows[0], rows[1]) and a.details == b.details
    assert not np.array_equal(rows[0], rows[2])


def test_factor_cap_removes_candidates(small):
    """With a 20-cell cap, 2-way marginals needing more are never selected; the report counts them."""
    domain, codes, wl = small
    params = mwem.parse_params({"variant": "paper", "iterations": 3, "max_factor_cells": 20})
    out = mwem.run(_ctx(domain, codes, wl), params, rng=np.random.default_rng(4))
    assert out.details["largest_factor_cells"] <= 20
    big = [m for m in wl if domain.cells(m) > 20]  # sizes 3, 5, 6, 2: only (b, c) has 30 cells
    assert big == [(1, 2)] and out.details["candidates_removed_by_factor_cap"] >= 1
    for name in out.details["selected"]:
        cols = name[len("marginal("):-1].split(", ")
        assert domain.cells(domain.indices(cols)) <= 20


def test_average_output_samples_all_rows(small):
    domain, codes, wl = small
    params = mwem.parse_params({"variant": "paper", "iterations": 3, "output": "average"})
    ctx = dataclasses.replace(_ctx(domain, codes, wl), rows=123)
    out = mwem.run(ctx, params, rng=np.random.default_rng(0))
    assert isinstance(out.model, MixtureModel) and len(out.model.components) == 3
    rows = out.model.sample(123, rng=np.random.default_rng(0))
    assert rows.shape == (123, 4)
    assert np.all(rows < np.array(domain.sizes))


def test_mwem_beats_independence_on_correlated_data(small):
    """With ε = 50 the measured 2-way marginals must fit far better than the product of 1-ways.

    Noise scale per cell ≈ 2T/ε·(1−0.2) ≈ 0.1 counts, so the model's (a, b) marginal L1 error
    should be well under the independence error; the bound 0.5× is loose (6 s.e. of Laplace noise
    over 15 cells is < 0.02 of n = 400).
    """
    domain, codes, wl = small
    params = mwem.parse_params({"variant": "paper", "iterations": 6, "mw_passes": 50})
    out = mwem.run(_ctx(domain, codes, wl, epsilon=50.0), params, rng=np.random.default_rng(0))
    true = ArrayCounts(codes, domain).marginal((0, 1)) / 400
    syn = ArrayCounts(out.model.sample(400, rng=np.random.default_rng(1)), domain).marginal((0, 1)) / 400
    indep = np.outer(true.sum(1), true.sum(0))
    # sampling error of 400 rows over 15 cells: E|.| ≲ sqrt(15/400) ≈ 0.19; independence error:
    assert np.abs(indep - true).sum() > 0.6
    assert np.abs(syn - true).sum() < 0.5 * np.abs(indep - true).sum()


# ---------------------------------------------------------------------------- ranges
def test_range_answers_match_brute_force(small):
    domain, codes, _ = small
    rq = parse_ranges({"count": 50, "columns": ["b", "c"], "seed": 3}, domain)[0]
    marg = ArrayCounts(codes, domain).marginal(rq.attrs)
    brute = np.array([(marg * rq.indicator(j, marg.shape)).sum() for j in range(len(rq))])
    np.testing.assert_array_equal(rq.answers(marg), brute)
    assert rq.hi[:, 1].max() <= 3  # the null code 4 of column c is never inside a range
    assert np.all(rq.lo <= rq.hi)


def test_range_dims_splits_column_sets(small):
    domain, _, _ = small
    sets = parse_ranges({"count": 40, "columns": ["b", "c"], "dims": 1, "seed": 0}, domain)
    assert sorted(s.attrs for s in sets) == [(1,), (2,)]
    assert sum(len(s) for s in sets) == 40


@pytest.mark.parametrize("raw, msg", [
    ({"count": 5, "columns": ["a"]},
     "workload.ranges.columns[0]: column 'a' is categorical; range queries need an ordered (numeric or integer) column"),
    ({"count": 0, "columns": ["b"]}, "workload.ranges.count: must be >= 1, got 0"),
    ({"count": 5, "columns": ["b"], "dims": 2}, "workload.ranges.dims: must be <= the number of columns (1), got 2"),
    ({"count": 5, "columns": ["zz"]}, "workload.ranges.columns[0]: unknown column 'zz'"),
    ({"count": 5, "cols": ["b"]}, "workload.ranges.cols: unknown key (allowed: columns, count, dims, seed)"),
])
def test_range_config_errors(small, raw, msg):
    with pytest.raises(ConfigError, match=re.escape(msg)):
        parse_ranges(raw, small[0])


def test_mwem_with_ranges_only(small):
    domain, codes, wl = small
    extra = {"ranges": {"count": 30, "columns": ["b", "c"], "seed": 1}}
    params = mwem.parse_params({"variant": "paper", "iterations": 5, "marginal_queries": "none"})
    ctx = _ctx(domain, codes, wl, extra=extra, neighbouring=Neighbouring.REPLACE_ONE)
    out = mwem.run(ctx, params, rng=np.random.default_rng(0))
    assert out.details["query_classes"] == {"range": 30}
    assert all(name.startswith("range(") for name in out.details["selected"])
    sel = [c for c in ctx.ledger.charges if c.stage == "mwem-select"]
    assert all(c.sensitivity == 1.0 for c in sel)  # counts: sensitivity 1 under both relations
    assert ctx.ledger.spent()[0] == pytest.approx(1.0, rel=1e-12)


def test_marginal_queries_none_needs_ranges(small):
    domain, codes, wl = small
    params = mwem.parse_params({"variant": "paper", "marginal_queries": "none"})
    with pytest.raises(ConfigError, match=re.escape(
        "algorithm.params.marginal_queries: is 'none' but neither workload.ranges nor workload.linear is set; "
        "there is nothing to query"
    )):
        mwem.run(_ctx(domain, codes, wl), params, rng=np.random.default_rng(0))


def test_range_queries_describe(small):
    domain = small[0]
    rq = RangeQueries((1,), np.array([[1]]), np.array([[3]]))
    assert rq.describe(0, domain) == "range(b in 2..4)"


# ------------------------------------------------------------------------------- CLI
def _write_config(tmp_path, src, params, marginals=None):
    raw = yaml.safe_load((ROOT / "configs" / src).read_text())
    raw["algorithm"]["params"] = {"variant": "paper", **params}
    if marginals:
        raw["workload"]["marginals"] = marginals
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    parse_config(raw)  # valid
    return path


def test_cli_release_nltcs(tmp_path, runner):
    cfg = _write_config(tmp_path, "nltcs-mwem.yaml", {"iterations": 5, "mw_passes": 3})
    out = tmp_path / "syn.csv"
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(ROOT / "sample_data" / "nltcs.csv"),
                              "-o", str(out), "--seed", "1", "-q"])
    assert res.exit_code == 0, res.output
    import json

    report = json.loads((tmp_path / "syn.csv.report.json").read_text())
    assert report["algorithm"]["name"] == "mwem"
    assert report["privacy"]["epsilon_spent"] == pytest.approx(1.0, rel=1e-12)
    assert report["algorithm"]["details"]["rounds"] == 5
    lines = out.read_text().splitlines()
    assert lines[0].split(",") == [f"a{i}" for i in range(16)] and len(lines) == 21574 + 1


@pytest.mark.slow
def test_cli_release_adult_defaults(tmp_path, runner):
    """The shipped config end to end (about 10 s)."""
    out = tmp_path / "syn.csv"
    res = runner.invoke(app, ["release", "-c", str(ROOT / "configs" / "adult-mwem.yaml"),
                              "-i", str(ROOT / "sample_data" / "adult.csv"), "-o", str(out), "--seed", "3", "-q"])
    assert res.exit_code == 0, res.output
    assert len(out.read_text().splitlines()) == 32561 + 1


def test_fit_exposes_the_model_and_released_marginals(small):
    """fit(): the released marginals are the 4 noisy 1-way ones plus one per round (unclipped)."""
    domain, codes, wl = small
    params = mwem.parse_params({"variant": "paper", "iterations": 3, "output": "average"})
    res = mwem.fit(_ctx(domain, codes, wl), params, rng=np.random.default_rng(0))
    assert [m.attrs for m in res.released[:4]] == [(0,), (1,), (2,), (3,)]
    assert len(res.released) == 7 and len(res.snapshots) == 3
    avg = sum(s.project((0, 1)) for s in res.snapshots) / 3
    np.testing.assert_allclose(res.project((0, 1)), avg, rtol=0, atol=1e-9)
    assert res.project((0, 1)).sum() == pytest.approx(400.0, abs=1e-9)


# ------------------------------------------------------- §2.3.2: a noisy count for each element of the domain
def test_init_cells_measures_the_full_table_once(small):
    domain, codes, workload = small
    ctx = _ctx(domain, codes, workload, epsilon=1.0)
    params = mwem.parse_params({"init": "cells", "iterations": 3})
    mwem.fit(ctx, params, rng=np.random.default_rng(0))
    (init,) = [c for c in ctx.ledger.charges if c.stage == "mwem-init"]
    assert init.count == domain.cells() and init.sensitivity == 1.0
    assert init.epsilon == pytest.approx(0.2) and init.measured == f"full table ({domain.cells()} cells)"


def test_init_cells_starts_from_the_noisy_table(small):
    """At ε = 10⁶ the Laplace noise on each cell has scale 1/(0.2·10⁶) = 5·10⁻⁶ (sd 7·10⁻⁶), so A₀ is the
    true table mixed with 10⁻³ of uniform up to 10⁻⁴ per cell (14 sd: false failure < 10⁻⁴⁰ per cell)."""
    domain, codes, workload = small
    ctx = _ctx(domain, codes, workload, epsilon=1e6)
    params = mwem.resolve(ctx, mwem.parse_params({"init": "cells"}))  # init cells runs the paper variant
    model, released, measurements = mwem._initial_model(ctx, params, mwem._Budget(ctx, params, 20),
                                                        rng=np.random.default_rng(1))
    every = tuple(range(len(domain)))
    true = ArrayCounts(codes, domain).marginal(every)
    expected = (1 - 1e-3) * true + 1e-3 * len(codes) / domain.cells()
    np.testing.assert_allclose(model.project(every), expected, atol=1e-4)
    assert len(released) == len(measurements) == 1 and released[0].attrs == every


def test_init_cells_refused_when_the_domain_exceeds_the_factor_cap():
    raw = {"schema": {"columns": {f"c{i}": {"type": "categorical", "categories": [0, 1]} for i in range(5)}},
           "privacy": {"epsilon": 1.0},
           "algorithm": {"name": "mwem", "params": {"init": "cells", "max_factor_cells": 16, "iterations": 2}},
           "workload": {"marginals": {"k": 2}}}
    from dpsynth.pipeline import preflight

    with pytest.raises(ConfigError, match=re.escape(
            "algorithm.params.init: 'cells' measures every cell of the full domain (32 cells), more than "
            "max_factor_cells (16); use init: noisy (the 1-way marginals) or raise max_factor_cells")):
        preflight(parse_config(raw))

"""plan == ledger (issue 23): the stages ``dpsynth plan`` prints are the ones the release charges.

For every algorithm and every audit variant its spec declares (the privacy replay's list), under both
neighbouring relations (n public under replace-one, noisy under add-remove), a release of the tiny audit
table with a fixed seed is compared with :func:`dpsynth.plan.budget.planned_stages` at the release's public
n: the same stages in the same order; for a stage fixed by the configuration the same number of ledger
entries with the same ε (to 1e-12); for a stage whose ε is chosen at run time from noisy values (iReduct,
iResamp's resampling, TwoPhase's phase 2, MWEM pgm's adaptive rounds) the number of entries when fixed and
a total within the planned one.  Stages charged once per round (MWEM's select and measure) are matched round
by round.  MWEM is also checked beyond its audit variants (init modes, round counts, both variants) and
``auto`` when it chooses MWEM.  Deterministic (one seed): no false failures.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpsynth
from dpsynth.algorithms import algorithm_names, get_algorithm
from dpsynth.config import parse_config
from dpsynth.plan.budget import planned_stages, stage_lines
from tests.privacy.audit import tiny_neighbours, tiny_raw_config

VARIANTS = [(name, raw) for name in algorithm_names() for raw in get_algorithm(name).audit_params]
# MWEM's init modes and round counts beyond the audit variants (issue 23's example: init cells, 10 rounds)
EXTRA = [("mwem", {"variant": "paper", "init": "cells", "iterations": 10, "reselect": True}),
         ("mwem", {"variant": "paper", "init": "uniform", "iterations": 3}),
         ("mwem", {"variant": "paper", "reselect": True, "iterations": 7, "accounting": "zcdp"}),
         ("mwem", {"variant": "pgm", "iterations": 4}),
         ("mwem", {"variant": "pgm", "iterations": 4, "accounting": "zcdp"})]
CASES = VARIANTS + EXTRA


def _by_plan(planned, charges: list[dict]) -> list[tuple[object, list[dict]]]:
    """The ledger's entries matched to the planned stages in order: a stage takes the consecutive entries of
    its name; a block of ``per_round`` stages takes whole rounds (its names in turn, as often as they come).
    Fails when an entry is left over or a stage that is not per round has none."""
    out, i, k = [], 0, 0
    while k < len(planned):
        if not planned[k].per_round:
            start = i
            while i < len(charges) and charges[i]["stage"] == planned[k].stage:
                i += 1
            assert i > start, (planned[k].stage, charges[i]["stage"] if i < len(charges) else "end of ledger")
            out.append((planned[k], charges[start:i]))
            k += 1
            continue
        block = [planned[k]]
        while k + len(block) < len(planned) and planned[k + len(block)].per_round:
            block.append(planned[k + len(block)])
        names = [s.stage for s in block]
        entries: list[list[dict]] = [[] for _ in block]
        j = 0
        while i < len(charges) and charges[i]["stage"] == names[j % len(names)]:
            entries[j % len(names)].append(charges[i])
            i, j = i + 1, j + 1
        assert j % len(names) == 0, f"an incomplete round of {names}"
        out += list(zip(block, entries))
        k += len(block)
    assert i == len(charges), f"ledger entries not in the plan from {charges[i]['stage']!r}"
    return out


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize(("algorithm", "params"), CASES, ids=[f"{a}-{p}" for a, p in CASES])
def test_plan_stages_equal_the_ledger(algorithm, params, neighbouring):
    raw = tiny_raw_config(algorithm, neighbouring)
    raw["algorithm"]["params"].update(params)
    if get_algorithm(algorithm).needs_delta(params):
        raw["privacy"]["delta"] = 1e-3
    cfg = parse_config(raw)
    d, _ = tiny_neighbours(neighbouring)
    report = dpsynth.release(d, cfg, rng=np.random.default_rng(7)).report
    n = report["output"]["rows"]  # output.rows unset: the rows drawn are the (noisy when private) n, an integer
    planned = planned_stages(cfg, n)
    assert planned is not None, f"{algorithm}: no budget_plan"
    for plan, entries in _by_plan(planned, report["ledger"]):
        stage = plan.stage
        eps = [c["epsilon"] for c in entries]
        if plan.charges is not None:
            assert len(entries) == plan.charges, stage
        assert all(c["delta"] == plan.delta for c in entries), stage
        if plan.fixed:
            assert len(eps) == len(plan.epsilon), stage
            assert np.allclose(eps, plan.epsilon, rtol=0, atol=1e-12), (stage, eps, plan.epsilon)
        else:
            assert sum(eps) <= plan.total + 1e-12, (stage, sum(eps), plan.total)


def test_every_algorithm_plans_its_budget():
    assert all(get_algorithm(a).budget_plan is not None for a, _ in VARIANTS)


def test_mwem_paper_init_cells_plan_shows_the_init_stage_and_the_rounds():
    """Issue 23's example: ε 0.2 on the full table, then 10 rounds of select and measure at 0.04 each."""
    raw = tiny_raw_config("mwem", "add-remove")
    raw["algorithm"]["params"].update({"variant": "paper", "init": "cells", "iterations": 10, "reselect": True})
    raw["privacy"]["epsilon"] = 1.0
    raw["privacy"]["n"] = "public"
    cfg = parse_config(raw)
    planned = planned_stages(cfg, 100)
    assert [(s.stage, s.charges) for s in planned] == [("mwem-init", 1), ("mwem-select", 10), ("mwem-measure", 10)]
    assert planned[0].epsilon == pytest.approx((0.2,), rel=1e-12)
    assert planned[1].epsilon == pytest.approx((0.04,) * 10, rel=1e-12)
    assert planned[2].epsilon == pytest.approx((0.04,) * 10, rel=1e-12)
    assert stage_lines(planned) == [("mwem-init", "epsilon 0.2 on the full table (init: cells)"),
                                    ("mwem-select", "10 rounds, epsilon 0.04 each (exponential mechanism)"),
                                    ("mwem-measure", "10 rounds, epsilon 0.04 each (Laplace noise)")]

"""plan == ledger (issue 23): the stages ``dpsynth plan`` prints are the ones the release charges.

For every algorithm and every audit variant its spec declares (the privacy replay's list), under both
neighbouring relations (n public under replace-one, noisy under add-remove), a release of the tiny audit
table with a fixed seed is compared with :func:`dpsynth.plan.budget.planned_stages` at the release's public
n: the same stages in the same order; for a stage fixed by the configuration the same number of ledger
entries with the same ε (to 1e-12); for a stage whose ε is chosen at run time from noisy values (iReduct,
iResamp's resampling, TwoPhase's phase 2) the number of entries when fixed and a total within the planned
one.  Deterministic (one seed): no false failures.
"""

from __future__ import annotations

from itertools import groupby

import numpy as np
import pytest

import dpsynth
from dpsynth.algorithms import algorithm_names, get_algorithm
from dpsynth.config import parse_config
from dpsynth.plan.budget import planned_stages
from tests.privacy.audit import tiny_neighbours, tiny_raw_config

VARIANTS = [(name, raw) for name in algorithm_names() for raw in get_algorithm(name).audit_params]
PLANNED = [(a, p) for a, p in VARIANTS if get_algorithm(a).budget_plan is not None]


def _ledger_stages(charges: list[dict]) -> list[tuple[str, list[dict]]]:
    return [(stage, list(group)) for stage, group in groupby(charges, key=lambda c: c["stage"])]


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize(("algorithm", "params"), PLANNED, ids=[f"{a}-{p}" for a, p in PLANNED])
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
    if planned is None:  # auto choosing an algorithm that cannot plan its budget yet (mwem)
        pytest.skip(f"{algorithm}: the chosen algorithm has no budget_plan")
    ledger = _ledger_stages(report["ledger"])
    assert [s.stage for s in planned] == [stage for stage, _ in ledger]
    for plan, (stage, entries) in zip(planned, ledger):
        eps = [c["epsilon"] for c in entries]
        if plan.charges is not None:
            assert len(entries) == plan.charges, stage
        assert all(c["delta"] == plan.delta for c in entries), stage
        if plan.fixed:
            assert len(eps) == len(plan.epsilon), stage
            assert np.allclose(eps, plan.epsilon, rtol=0, atol=1e-12), (stage, eps, plan.epsilon)
        else:
            assert sum(eps) <= plan.total + 1e-12, (stage, sum(eps), plan.total)


def test_every_algorithm_but_mwem_plans_its_budget():
    """MWEM (and auto when it chooses MWEM) still uses plan's predictor until its budget module lands."""
    assert {a for a, _ in VARIANTS} - {a for a, _ in PLANNED} == {"mwem"}

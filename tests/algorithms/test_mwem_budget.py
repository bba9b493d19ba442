"""MWEM's budget split (dpsynth/algorithms/mwem/budget.py): what :func:`mwem.stages` predicts from the
configuration alone is what a ``variant: paper`` run charges, charge by charge."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpsynth.algorithms import mwem
from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.config import PrivacyConfig
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.schema import CategoricalColumn, Domain, IntegerColumn
from dpsynth.privacy import Neighbouring
from dpsynth.privacy.accountant import Ledger, ZCDPComposition, zcdp_available
from dpsynth.workload.ranges import parse_ranges
from dpsynth.workload.spec import Workload

DOMAIN = Domain((CategoricalColumn("a", ("x", "y", "z")), IntegerColumn("b", 1, 4), CategoricalColumn("c", (0, 1))))
RANGES = {"count": 6, "columns": ["b"], "seed": 0}


def _ctx(raw: dict, *, ranges: bool, delta: float) -> AlgorithmContext:
    rng = np.random.default_rng(3)
    codes = np.stack([rng.integers(0, s, 200) for s in DOMAIN.sizes], axis=1)
    marginals = tuple(itertools.combinations(range(len(DOMAIN)), 2))
    privacy = PrivacyConfig(1.0, delta)
    ledger = Ledger(1.0, delta, mwem.composition(mwem.parse_params(raw), privacy))
    queries = Workload(marginals, tuple(parse_ranges(RANGES if ranges else None, DOMAIN)))
    counts = ArrayCounts(codes, DOMAIN)
    return AlgorithmContext(domain=DOMAIN, counts=counts, ledger=ledger, neighbouring=Neighbouring.ADD_REMOVE,
                            n=float(counts.n), rows=counts.n, workload=marginals, queries=queries)


PAPER = [p for p in mwem.SPEC.audit_params if mwem.variant_of(mwem.parse_params(p), False) == "paper"]


@pytest.mark.parametrize("ranges", [False, True])
@pytest.mark.parametrize("raw", PAPER + [{"variant": "paper", "init": "uniform", "iterations": 3},
                                         {"variant": "paper", "reselect": True, "iterations": 30}], ids=str)
def test_stages_from_the_configuration_are_the_ledger_charges(raw, ranges):
    ctx = _ctx(raw, ranges=ranges, delta=1e-6 if raw.get("accounting") == "zcdp" else 0.0)
    zcdp = isinstance(ctx.ledger.composition, ZCDPComposition)
    available = zcdp_available(ctx.ledger) if zcdp else ctx.ledger.remaining()
    params = mwem.resolve_config(mwem.parse_params(raw), ctx.queries, zcdp=zcdp)
    predicted = mwem.stages(params, DOMAIN, ctx.queries, available)

    mwem.run(ctx, mwem.parse_params(raw), rng=np.random.default_rng(0))

    # ρ of a selection is recorded as ε²/8 of ε = sqrt(8ρ): equal up to rounding (relative 1e-12); ε exactly.
    charged = [(c.stage, c.rho if zcdp else c.epsilon) for c in ctx.ledger.charges]
    expected = [(s.stage, s.amount) for s in predicted for _ in range(s.count)]
    assert [s for s, _ in charged] == [s for s, _ in expected]
    assert [a for _, a in charged] == pytest.approx([a for _, a in expected], rel=1e-12 if zcdp else 0.0)
    assert {s.unit for s in predicted} == {"rho" if zcdp else "epsilon"}
    assert [s.stage for s in predicted][-2:] == ["mwem-select", "mwem-measure"]


def test_stages_merge_equal_parts_and_count_the_rounds():
    params = mwem.resolve_config(mwem.parse_params({"variant": "paper", "iterations": 5, "init": "cells"}), None,
                                 zcdp=False)
    split = mwem.split(params, 3, 5, 1.0)
    assert split.init == [pytest.approx(0.2)] and len(split.select) == len(split.measure) == 5
    assert sum(s.count for s in split.stages()) == 11
    assert sum(s.amount * s.count for s in split.stages()) == pytest.approx(1.0, rel=1e-12)

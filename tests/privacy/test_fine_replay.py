"""The fine view (``fine-decode``, issue 25) under the coupled replay: the numbers reach the output only
through its mechanisms.

D and D′ are worst-case neighbours in the numeric columns: replace-one moves a row from the lowest sub-cell of
the lowest bin to the highest sub-cell of the highest bin (its null k to a value); add-remove adds such a row.
With the same seed, every call on D′ must match the call recorded on D, each pre-noise fine histogram may
differ by at most its declared sensitivity (L1 for discrete Laplace, L2 for discrete Gaussian), and the run
on D′, fed D's noisy outputs, must give byte-identical synthetic rows and report.  Deterministic.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import dpsynth
from dpsynth.config import parse_config
from dpsynth.data.fine import STAGE
from dpsynth.privacy import mechanisms
from tests.privacy.test_replay import Coupling


def _tables(neighbouring: str, n: int = 60):
    rng = np.random.default_rng(3)
    d = pd.DataFrame({"a": rng.choice(["x", "y"], n), "x": rng.uniform(20, 60, n).round(3),
                      "k": pd.array(rng.integers(100, 500, n), dtype="Int64"),
                      "t": pd.to_datetime(rng.integers(1_600_000_000, 1_650_000_000, n), unit="s")
                      .strftime("%Y-%m-%d")})
    d.loc[0, "k"] = pd.NA  # the changed row's k goes from null to a value (it then counts in one sub-cell)
    far = {"a": "y", "x": 100.0, "k": 1000, "t": "2022-12-31"}
    if neighbouring == "replace-one":
        d2 = d.copy()
        d2.loc[0, list(far)] = list(far.values())
    else:
        d2 = pd.concat([d, pd.DataFrame([far])], ignore_index=True)
    return d, d2


def _config(algorithm: str, neighbouring: str, params: dict, delta: float) -> dict:
    privacy: dict = {"epsilon": 1.0, "delta": delta, "neighbouring": neighbouring}
    if neighbouring == "add-remove":
        privacy["n"] = {"epsilon": 0.2}
    return {"schema": {"columns": {
        "a": {"type": "categorical", "categories": ["x", "y"]},
        "x": {"type": "numeric", "lower": 0, "upper": 100, "bins": 4},
        "k": {"type": "numeric", "lower": 0, "upper": 1000, "bins": 5, "integer": True, "missing": "category"},
        "t": {"type": "datetime", "lower": "2020-01-01", "upper": "2023-01-01", "bins": 3}}},
        "privacy": privacy, "algorithm": {"name": algorithm, "params": params},
        "workload": {"marginals": [["a", "x"], ["a", "k"], ["x", "t"]]},
        "decode": {"fine": "on", "cells": 8}}


def _release(table, cfg):
    res = dpsynth.release(table, cfg, rng=np.random.default_rng(11))
    return res, json.loads(json.dumps(res.report))


CASES = [("laplace", {}, 0.0, "discrete-laplace"),
         ("mwem", {"accounting": "zcdp", "iterations": 3}, 1e-3, "discrete-gaussian")]


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize(("algorithm", "params", "delta", "kind"), CASES, ids=[c[0] for c in CASES])
def test_fine_view_coupled_replay(algorithm, params, delta, kind, neighbouring, monkeypatch):
    cfg = parse_config(_config(algorithm, neighbouring, params, delta))
    d, d2 = _tables(neighbouring)
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    first, report1 = _release(d, cfg)
    coupling.mode = "replay"
    second, report2 = _release(d2, cfg)
    assert coupling.i == len(coupling.calls) > 0, "D′ made fewer sampling calls than D"
    fine = [i for i, c in enumerate(coupling.calls) if dict(c[1]).get("stage") == STAGE]
    assert len(fine) == 3 and {coupling.calls[i][0] for i in fine} == {kind}  # x, k and t, one histogram each
    for mechanism, dist, sens in coupling.distances:
        assert dist <= sens * (1 + 1e-12), (mechanism, dist, sens)
    offset = len(coupling.calls) - len(coupling.distances)
    moved = [coupling.distances[i - offset][1] for i in fine]
    assert all(m > 0 for m in moved), moved  # the pair is worst case in every fine histogram
    assert report1["decode"]["fine"] == "on" and report1["decode"]["columns"] == ["x", "k", "t"]
    pd.testing.assert_frame_equal(first.synthetic, second.synthetic)
    assert report1 == report2
    assert first.model.sha256 == second.model.sha256


def test_fine_view_charges_its_share_before_the_algorithm():
    """Basic composition: share 0.1 of ε, split equally over the three columns, as the first stage; the
    algorithm spends the rest, and the total is the budget."""
    cfg = parse_config(_config("laplace", "replace-one", {}, 0.0))
    d, _ = _tables("replace-one")
    ledger = dpsynth.release(d, cfg, rng=np.random.default_rng(1)).report["ledger"]
    fine = [c for c in ledger if c["stage"] == STAGE]
    assert [c["stage"] for c in ledger[:3]] == [STAGE] * 3
    assert [c["sensitivity"] for c in fine] == [2.0] * 3
    assert sum(c["epsilon"] for c in fine) == pytest.approx(0.1, rel=1e-12)
    assert sum(c["epsilon"] for c in ledger) == pytest.approx(1.0, rel=1e-9)
    assert sum(c["epsilon"] for c in ledger) <= 1.0

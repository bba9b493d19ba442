"""Mutant of MWEM's ``init: cells`` (the noisy full table, §2.3.2) that the coupled replay must catch."""

from __future__ import annotations

from dpsynth.algorithms.mwem import budget as mwem_budget
from dpsynth.config import parse_config
from dpsynth.privacy import mechanisms
from tests.privacy.audit import tiny_neighbours, tiny_raw_config
from tests.privacy.test_replay import Coupling, _release


def _replay(monkeypatch, neighbouring: str) -> Coupling:
    raw = tiny_raw_config("mwem", neighbouring)
    raw["algorithm"]["params"] = {**raw["algorithm"]["params"], "init": "cells"}
    cfg = parse_config(raw)
    d, d2 = tiny_neighbours(neighbouring)
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    _release(d, cfg, seed=6)
    coupling.mode = "replay"
    _release(d2, cfg, seed=6)
    return coupling


def test_full_table_init_is_measured_at_histogram_sensitivity(monkeypatch):
    coupling = _replay(monkeypatch, "replace-one")
    init = [(dist, sens) for (mech, dist, sens), call in zip(coupling.distances, coupling.calls)
            if dict(call[1])["stage"] == "mwem-init"]
    assert init == [(2.0, 2.0)]  # the (x, x) -> (z, z) move changes two cells of the full table


def test_half_sensitivity_on_the_full_table_is_caught(monkeypatch):
    original = mwem_budget.geometric_mechanism  # MWEM's default (noise: discrete) measurement

    def halved(true, *, sensitivity, stage, **kw):
        return original(true, sensitivity=sensitivity / 2 if stage == "mwem-init" else sensitivity, stage=stage,
                        **kw)

    monkeypatch.setattr(mwem_budget, "geometric_mechanism", halved)
    coupling = _replay(monkeypatch, "replace-one")
    assert any(dist > sens for _, dist, sens in coupling.distances)

"""Mutants of DualQuery's best response and accuracy outlook that the coupled replay must catch.

The best response (local search, CBC, and the fallback when CBC fails) must be a function of the
sampled clauses alone, and the outlook a function of public information (the noisy n when n is
private).  Each mutant below breaks one of these; the coupled replay (tests/privacy/test_replay.py)
then sees D and D′ diverge.  A failing CBC, in contrast, keeps the replay identical.  Deterministic.
"""

from __future__ import annotations

import stat
import sys

import numpy as np
import pandas as pd
import pytest

from dpsynth.algorithms.dualquery import core as dq
from dpsynth.algorithms.dualquery import solver
from dpsynth.config import parse_config
from dpsynth.privacy import mechanisms
from tests.privacy.audit import tiny_neighbours, tiny_raw_config
from tests.privacy.test_replay import Coupling, _release


def _replay(monkeypatch, **params):
    raw = tiny_raw_config("dualquery", "add-remove")  # n noisy: the outlook must use the noisy count
    raw["privacy"]["delta"] = 0.0
    raw["algorithm"]["params"].update(params)
    cfg = parse_config(raw)
    d, d2 = tiny_neighbours("add-remove")
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    first, report1 = _release(d, cfg, seed=11)
    coupling.mode = "replay"
    second, report2 = _release(d2, cfg, seed=11)
    return (first, report1), (second, report2)


def _identical(a, b) -> bool:
    (first, report1), (second, report2) = a, b
    return first.synthetic.equals(second.synthetic) and report1 == report2


def _leak_counts(monkeypatch) -> dict:
    """Let mutants reach the private counts (as a buggy best response or outlook might)."""
    holder: dict = {}
    original = dq.conjunction_counts  # run() computes the true answers from ctx.counts first

    def spy(counts, queries):
        holder["counts"] = counts
        return original(counts, queries)

    monkeypatch.setattr(dq, "conjunction_counts", spy)
    return holder


def test_unmutated_release_replays_identically(monkeypatch):
    assert _identical(*_replay(monkeypatch))


def test_best_response_reading_the_data_is_caught(monkeypatch):
    """A fallback row chosen from the true counts (not from the sampled clauses)."""
    holder = _leak_counts(monkeypatch)
    original = dq.best_response

    def leaky(clauses, domain, params, *, previous, rng):
        rec, info = original(clauses, domain, params, previous=previous, rng=rng)
        rec = rec.copy()
        rec[0] = int(holder["counts"].marginal((0,)).sum()) % domain.sizes[0]
        return rec, info

    monkeypatch.setattr(dq, "best_response", leaky)
    with pytest.raises(AssertionError):
        a, b = _replay(monkeypatch)
        pd.testing.assert_frame_equal(a[0].synthetic, b[0].synthetic)


def test_outlook_from_the_true_n_is_caught(monkeypatch):
    """The outlook (a warning in the report) computed from the true row count instead of the noisy one."""
    holder = _leak_counts(monkeypatch)
    original = dq.expected_error
    monkeypatch.setattr(dq, "expected_error", lambda n, *a, **kw: original(
        float(holder["counts"].n), *a, **kw))
    assert not _identical(*_replay(monkeypatch))


@pytest.fixture
def failing_cbc(tmp_path, monkeypatch):
    path = tmp_path / "cbc"
    path.write_text(f"#!{sys.executable}\nimport sys\nsys.exit(3)\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    original = solver.cbc_command
    monkeypatch.setattr(solver, "cbc_command", lambda *a: [str(path), *original(*a)[1:]])


def test_failing_cbc_keeps_the_replay_identical(monkeypatch, failing_cbc):
    """Failures come from the solver, not the data: D and D′ fail alike and the releases coincide."""
    a, b = _replay(monkeypatch, best_response="hybrid")
    assert _identical(a, b)
    assert a[1]["algorithm"]["details"]["rounds_solver_failed"] == {"nonzero-exit": 3}
    assert np.all(a[0].synthetic.to_numpy() == b[0].synthetic.to_numpy())

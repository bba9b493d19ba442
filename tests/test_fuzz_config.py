"""Fuzzed configurations never produce a traceback or an undocumented exit code.

Hypothesis mutates a valid tiny configuration of every algorithm (set a key to an odd value, delete
a key, add a known or unknown key, at any depth) and runs ``dpsynth release`` in-process on a small
valid table.  Every outcome must be exit code 0, 2, 3, 64, 65, 66 or 73 (70, the internal-error
code, means a bug), with exactly one ``dpsynth: error:`` line on failure and no traceback.  A hang
guard (SIGALRM, 30 s) turns a runaway configuration into a failure instead of a stuck CI job.
Derandomized (fixed example sequence) and without an example database, so the run is reproducible.

Values are bounded (integers up to 50, floats within ±1000 plus NaN and ±inf): configurations that
legitimately ask for enormous work (10⁹ MWEM rounds) are resource limits, tested separately below.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import signal
from contextlib import contextmanager

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsynth.algorithms import algorithm_names, get_algorithm
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.errors import ConfigError
from tests.privacy.audit import tiny_neighbours, tiny_raw_config

ALLOWED_EXIT_CODES = {0, 2, 3, 64, 65, 66, 73}


class Hang(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` in the CLI swallows it."""


@contextmanager
def hang_guard(seconds: int):
    def fire(signum, frame):
        raise Hang(f"no result after {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _param_names() -> list[str]:
    names = set()
    for alg in algorithm_names():
        for f in dataclasses.fields(get_algorithm(alg).Params):
            names.add(f.name)
    return sorted(names)


KEYS = _param_names() + ["epsilon", "delta", "n", "neighbouring", "name", "params", "k", "sample", "seed",
                         "marginals", "ranges", "conjunctions", "linear", "file", "queries", "weights", "rows",
                         "numeric", "max_cells", "type", "categories", "lower", "upper", "bins", "missing", "unknown", "columns", "bogus", ""]
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 50),
    st.floats(-1000, 1000),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e-9, 0.5, 1.0]),
    st.text(max_size=6),
    st.sampled_from(["x", "z", "a", "public", "add-remove", "replace-one", "laplace", "mwem", "dualquery",
                     "ireduct", "twophase", "iresamp", "noisy", "uniform", "cells", "none", "zcdp", "pure", "auto",
                     "local", "ip", "hybrid", "sum", "mean", "discrete", "continuous", "categorical", "numeric"]),
    st.lists(st.one_of(st.integers(-2, 3), st.sampled_from(["a", "b", "x"])), max_size=3),
    st.dictionaries(st.sampled_from(KEYS), st.integers(-2, 5), max_size=2),
)


def _containers(obj, path=()):
    if isinstance(obj, dict):
        yield path
        for k, v in obj.items():
            yield from _containers(v, (*path, k))


def _get(obj, path):
    for k in path:
        obj = obj[k]
    return obj


@st.composite
def fuzzed_config(draw):
    alg = draw(st.sampled_from(algorithm_names()))
    raw = tiny_raw_config(alg, draw(st.sampled_from(["replace-one", "add-remove"])))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_containers(raw))
        target = _get(raw, draw(st.sampled_from(paths)))
        op = draw(st.sampled_from(["set", "set", "delete", "add"]))
        if op != "add" and target:
            key = draw(st.sampled_from(sorted(target, key=str)))
            if op == "delete":
                del target[key]
            else:
                target[key] = draw(VALUES)
        else:
            target[draw(st.sampled_from(KEYS))] = draw(VALUES)
    return raw


@pytest.fixture(scope="module")
def tiny_csv(tmp_path_factory):
    p = tmp_path_factory.mktemp("fuzz") / "in.csv"
    tiny_neighbours("replace-one", n=30)[0].to_csv(p, index=False)
    return p


@settings(max_examples=100, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(raw=fuzzed_config())
def test_fuzzed_config_never_crashes(raw, tiny_csv, tmp_path_factory, runner):
    out = tmp_path_factory.mktemp("o")
    cfg = out / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(raw, allow_unicode=True))
    with hang_guard(30):
        res = runner.invoke(app, ["release", "-q", "-c", str(cfg), "-i", str(tiny_csv), "-o", str(out / "o.csv"),
                                  "--seed", "1"])
    assert res.exit_code in ALLOWED_EXIT_CODES, (res.exit_code, res.stderr, raw)
    assert "Traceback" not in res.stderr
    if res.exit_code != 0:
        assert res.stderr.count("dpsynth: error: ") == 1 and res.stderr.endswith("\n"), res.stderr
        assert not (out / "o.csv").exists()


def test_yaml_that_is_not_a_mapping(runner, tiny_csv, tmp_path):
    for text in ["- 1\n- 2\n", "just a string\n", "42\n", "{schema: [1, 2]}\n", "schema: {columns: {a: 3}}\n",
                 "\t- bad: [indent\n", "a: !!python/object:os.system {}\n"]:
        cfg = tmp_path / "c.yaml"
        cfg.write_text(text)
        res = runner.invoke(app, ["release", "-q", "-c", str(cfg), "-i", str(tiny_csv), "-o", str(tmp_path / "o.csv")])
        assert res.exit_code == 64, (text, res.exit_code, res.stderr)
        assert res.stderr.startswith("dpsynth: error: ") and res.stderr.count("\n") == 1


def test_dualquery_refuses_more_rounds_than_max_T():
    """Found by the fuzzer's hang guard: T = 10**9 used to be accepted, and the parameter solver then built
    10**9 ledger charges (memory exhaustion).  T and max_T are now bounded before any data is read."""
    raw = tiny_raw_config("dualquery")
    raw["algorithm"]["params"] = {"T": 10**9, "s": 1}
    with pytest.raises(ConfigError, match=re.escape("algorithm.params.T: must be <= max_T (2000), got 1000000000")):
        parse_config(raw)
    raw["algorithm"]["params"] = {"max_T": 10**9}
    with pytest.raises(ConfigError, match=re.escape("algorithm.params.max_T: must be <= 10000, got 1000000000")):
        parse_config(raw)


def test_dualquery_report_is_strict_json_without_delta(runner, tiny_csv, tmp_path):
    """Found by the fuzzer: with δ = 0 the δ-based accountings are infinite, and the report (written with
    allow_nan=False) crashed with exit 70 on every DualQuery release; they are now null."""
    cfg = tmp_path / "dq.yaml"
    cfg.write_text(yaml.safe_dump(tiny_raw_config("dualquery")))
    out = tmp_path / "o.csv"
    res = runner.invoke(app, ["release", "-q", "-c", str(cfg), "-i", str(tiny_csv), "-o", str(out), "--seed", "3"])
    assert res.exit_code == 0, res.stderr
    report = json.loads((tmp_path / "o.csv.report.json").read_text())
    assert report["algorithm"]["details"]["epsilon_by_accounting"]["zcdp"] is None

"""workload.queries: conjunctions of value sets, their exact sensitivity and generalized sensitivity."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from dpsynth.config import parse_config
from dpsynth.errors import ConfigError
from dpsynth.privacy.allocation import PatternCostAllocation, scale_cost
from dpsynth.workload import cellsets
from tests.privacy.audit import tiny_raw_config

QUERIES = [
    {"where": {"a": ["x", "y"]}},
    {"where": {"a": "z", "b": ["x"]}, "sanity_bound": 2, "name": "zx"},
    {"where": {"b": ["x", "z"]}},
    {"where": {"a": ["y", "z"], "b": ["x", "y"]}},
]


def _cfg(queries, algorithm="ireduct", **params):
    raw = tiny_raw_config(algorithm, "replace-one")
    raw["algorithm"]["params"].update(params)
    raw["workload"] = {"queries": queries}
    return parse_config(raw)


def _brute(q, sizes, weights):
    """max over every possible row of Σ_{i∋row} weights_i, by enumerating the whole domain."""
    best = 0.0
    for row in itertools.product(*[range(s) for s in sizes]):
        inside = np.ones(len(q), dtype=bool)
        for pos, a in enumerate(q.attrs):
            inside &= q.member[pos][:, row[a]]
        best = max(best, float(np.asarray(weights)[inside].sum()))
    return best


def test_hand_case_patterns_depth_and_answers():
    q = _cfg(QUERIES).workload.queries
    assert q.names == ("q0", "zx", "q2", "q3") and q.attrs == (0, 1)
    # row (y, x) is in q0, q2 and q3; no row is in more than three queries
    assert q.depth == 3
    assert np.array_equal(np.isnan(q.sanity_bounds), [True, False, True, True])
    assert q.bounds(7.0).tolist() == [7.0, 2.0, 7.0, 7.0]
    marginal = np.arange(9, dtype=float).reshape(3, 3)  # (a, b) counts, a and b coded x, y, z = 0, 1, 2
    assert q.answers(marginal).tolist() == [0 + 1 + 2 + 3 + 4 + 5, 6, 0 + 2 + 3 + 5 + 6 + 8, 3 + 4 + 6 + 7]
    assert q.masks(None).sum(axis=1).tolist() == [6, 1, 6, 4]


@pytest.mark.parametrize("seed", range(5))
def test_generalized_sensitivity_matches_brute_force(seed):
    """Random conjunctions on a 3 × 4 × 2 domain: max over possible rows of Σ 1/λ_i, by enumeration."""
    rng = np.random.default_rng(seed)
    raw = tiny_raw_config("ireduct", "add-remove")
    raw["schema"]["columns"]["c"] = {"type": "categorical", "categories": ["p", "q", "r", "s"]}
    raw["schema"]["columns"]["d"] = {"type": "categorical", "categories": ["u", "v"]}
    labels = {"a": ["x", "y", "z"], "b": ["x", "y", "z"], "c": ["p", "q", "r", "s"], "d": ["u", "v"]}
    queries = []
    for _ in range(12):
        cols = rng.choice(list(labels), size=rng.integers(1, 4), replace=False)
        queries.append({"where": {c: list(rng.choice(labels[c], size=rng.integers(1, len(labels[c])),
                                                     replace=False)) for c in cols}})
    raw["workload"] = {"queries": queries}
    cfg = parse_config(raw)
    q = cfg.workload.queries
    scales = rng.uniform(0.5, 4.0, size=len(q))
    sizes = cfg.domain.sizes
    assert q.depth == _brute(q, sizes, np.ones(len(q)))
    assert q.load(1.0 / scales) == pytest.approx(_brute(q, sizes, 1.0 / scales), rel=1e-12)
    for factor in (1.0, 2.0):  # the allocation's total is an upper bound, within rounding of the exact value
        alloc = PatternCostAllocation(10.0, factor, q.patterns, scales)
        exact = factor * _brute(q, sizes, [scale_cost(1.0, s) for s in scales])
        assert exact <= alloc.total <= exact * (1 + 1e-12)
        assert alloc.sensitivity == factor * q.depth


def test_allocation_fits_and_sub_sensitivity():
    q = _cfg(QUERIES).workload.queries
    alloc = PatternCostAllocation(1.0, 2.0, q.patterns, np.full(4, 8.0))  # GS = 2·3/8 = 0.75
    assert alloc.total == pytest.approx(0.75)
    ok, cost = alloc.fits_with(0, 4.0)  # row (y, x): 1/4 + 2/8 → 2·0.5 = 1.0 ≤ 1
    assert ok and cost == 0.25
    assert not alloc.fits_with(0, 3.0)[0]
    assert alloc.sub_sensitivity([1]) == 2.0 and alloc.sub_sensitivity([0, 1]) == 2.0  # q0 and zx are disjoint
    assert alloc.sub_sensitivity(np.array([True, False, True, True])) == 6.0


@pytest.mark.parametrize(("queries", "message"), [
    ([], "workload.queries: expected a non-empty list of queries such as {where: {sex: [Female]}}"),
    ([{"where": {"c": ["x"]}}], "workload.queries[0].where: unknown column 'c'"),
    ([{"where": {"a": ["w"]}}], "workload.queries[0].where.a: 'w' is not a value of column 'a' (values: x, y, z)"),
    ([{"where": {"a": []}}], "workload.queries[0].where.a: the list of values is empty"),
    ([{"where": {}}], "workload.queries[0].where: name at least one column and its values"),
    ([{"where": {"a": "x"}, "sanity_bound": 0}],
     "workload.queries[0].sanity_bound: a sanity bound must be a finite number > 0 (a count, e.g. 10), got 0"),
    ([{"where": {"a": "x"}, "name": "n"}, {"where": {"b": "x"}, "name": "n"}], "workload.queries: query name 'n' is used twice"),
    ([{"where": {"a": "x"}, "size": 3}], "workload.queries[0].size: unknown key (allowed: name, sanity_bound, where)"),
])
def test_bad_queries_are_config_errors(queries, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        _cfg(queries)


def test_queries_with_marginals_or_other_algorithms_or_mw_synthesis_are_refused():
    raw = tiny_raw_config("ireduct", "replace-one")
    raw["workload"]["queries"] = QUERIES
    with pytest.raises(ConfigError, match=re.escape(
            "workload.marginals: a workload of counting queries (workload.queries) is released on its own; "
            "remove workload.marginals or workload.queries")):
        parse_config(raw)
    with pytest.raises(ConfigError, match=re.escape("workload.queries: not used by algorithm 'twophase'")):
        _cfg(QUERIES, algorithm="twophase")
    with pytest.raises(ConfigError, match=re.escape(
            "algorithm.params.synthesis: rows from a workload of counting queries come from the graphical model "
            "only; use synthesis: pgm")):
        _cfg(QUERIES, synthesis="mw")


def test_sensitivity_work_guard(monkeypatch):
    monkeypatch.setattr(cellsets, "MAX_WORK", 10)
    with pytest.raises(ConfigError, match=re.escape(
            "workload.queries: computing the sensitivity needs 36 query-row combinations, more than 10; use fewer "
            "queries or fewer distinct value sets per column")):
        _cfg(QUERIES)


def test_queries_from_a_yaml_file(tmp_path, monkeypatch):
    import yaml

    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.yaml").write_text(yaml.safe_dump(QUERIES))
    from_file = _cfg({"file": "q.yaml"}).workload.queries
    inline = _cfg(QUERIES).workload.queries
    assert from_file.names == inline.names and np.array_equal(from_file.patterns, inline.patterns)
    assert list(from_file.spec) == QUERIES  # kept inline: a saved model does not need the file
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump([{"where": {"c": "x"}}]))
    with pytest.raises(ConfigError, match=re.escape("workload.queries (bad.yaml)[0].where: unknown column 'c'")):
        _cfg({"file": "bad.yaml"})
    with pytest.raises(ConfigError, match=re.escape(
            "workload.queries.file: expected an existing .yaml file holding the list of queries, got 'no.yaml'")):
        _cfg({"file": "no.yaml"})
    with pytest.raises(ConfigError, match=re.escape("workload.queries: expected a list of queries or {file: queries.yaml}")):
        _cfg({"path": "q.yaml"})

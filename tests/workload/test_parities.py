"""Parity queries (Gaboardi et al. 2014, §6, Definition 6.1): workload parsing, evaluation, exact counts."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

from dpsynth.config import parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.schema import CategoricalColumn, Domain
from dpsynth.errors import ConfigError
from dpsynth.workload.parities import Parities, ParityClauses, parity_counts, parity_workload


def _domain(sizes):
    return Domain(tuple(CategoricalColumn(f"c{i}", tuple(range(s))) for i, s in enumerate(sizes)))


def _definition_6_1(row, attrs, values) -> int:
    """Definition 6.1 literally: x_i = +1 when the literal holds, q_S = +1 iff an even number of +1."""
    x = [1 if row[a] == v else -1 for a, v in zip(attrs, values)]
    return 1 if sum(1 for xi in x if xi == 1) % 2 == 0 else -1


def test_binary_columns_are_one_bit_and_wider_columns_one_hot():
    """Binary columns contribute their second category (code 1) only; a 3-valued column each of its values."""
    d = _domain([2, 2, 3])
    q = parity_workload({"k": 2}, d)
    pairs = {tuple(zip(a.tolist(), v.tolist())) for a, v in zip(q.attrs, q.values)}
    assert pairs == {((0, 1), (1, 1)), ((0, 1), (2, 0)), ((0, 1), (2, 1)), ((0, 1), (2, 2)),
                     ((1, 1), (2, 0)), ((1, 1), (2, 1)), ((1, 1), (2, 2))}
    assert len(parity_workload({"k": 3}, _domain([2] * 16))) == math.comb(16, 3)


def test_answers_equal_definition_6_1_by_brute_force():
    """Every row of a small domain, random weights: the 0/1 answer is (1 + mean of q_S)/2."""
    d = _domain([2, 3, 2, 2, 4])
    q = parity_workload({"k": 3}, d)
    rows = np.array(list(itertools.product(*[range(s) for s in d.sizes])))
    w = np.random.default_rng(0).integers(0, 5, size=len(rows)).astype(float)
    signed = np.array([[_definition_6_1(r, a, v) for r in rows] for a, v in zip(q.attrs, q.values)])
    expected = (1 + signed @ w / w.sum()) / 2
    np.testing.assert_allclose(q.answers(rows, w), expected, rtol=0, atol=1e-12)
    for r in rows[::17]:
        np.testing.assert_array_equal(q.satisfied(r), [_definition_6_1(r, a, v) == 1 for a, v in zip(q.attrs, q.values)])
    counts = np.repeat(rows, w.astype(int), axis=0)  # the same table as rows with multiplicities
    np.testing.assert_array_equal(parity_counts(ArrayCounts(counts, d), q), np.rint(expected * w.sum()).astype(int))


def test_negated_clauses_are_complements():
    """Sample index i >= Q is the negation of parity i - Q (§6's q̄_S): answered 1 exactly when p_S is 0."""
    d = _domain([2, 3, 2, 2])
    q = parity_workload({"k": 3}, d)
    cl = ParityClauses.from_samples(q, np.arange(2 * len(q)))
    for rec in itertools.product(*[range(s) for s in d.sizes]):
        sat = cl.satisfied(np.array(rec))
        assert np.array_equal(sat[: len(q)], ~sat[len(q):])
        assert cl.objective(np.array(rec)) == len(q)


def test_sampled_parities_are_distinct_seeded_and_over_distinct_columns():
    d = _domain([2, 3, 2, 4, 2, 2])
    a = parity_workload({"k": 3, "count": 40, "seed": 1}, d)
    b = parity_workload({"k": 3, "count": 40, "seed": 1}, d)
    c = parity_workload({"k": 3, "count": 40, "seed": 2}, d)
    assert len(a) == 40 and np.array_equal(a.attrs, b.attrs) and np.array_equal(a.values, b.values)
    assert not (np.array_equal(a.attrs, c.attrs) and np.array_equal(a.values, c.values))
    assert np.all(np.diff(a.attrs, axis=1) > 0)
    keys = {tuple(zip(x.tolist(), y.tolist())) for x, y in zip(a.attrs, a.values)}
    assert len(keys) == 40
    everything = parity_workload({"k": 3}, d)
    assert keys <= {tuple(zip(x.tolist(), y.tolist())) for x, y in zip(everything.attrs, everything.values)}


def test_listed_sets():
    d = _domain([2, 2, 3, 2])
    q = parity_workload({"sets": [["c0", "c1"], ["c3", "c2"]]}, d)
    assert isinstance(q, Parities) and len(q) == 1 + 3 and q.k == 2
    assert q.attrs.tolist() == [[0, 1], [2, 3], [2, 3], [2, 3]]


@pytest.mark.parametrize(("raw", "message"), [
    ({"kk": 3}, "workload.parities.kk: unknown key (allowed: count, k, seed, sets)"),
    ({"k": 3, "seed": 1}, "workload.parities.seed: only meaningful with count"),
    ({"k": 5}, "workload.parities.k: must be <= the number of columns (4) and <= 20, got 5"),
    ({"k": 2, "count": 7}, ("workload.parities.count: 7 exceeds the 6 distinct 2-wise parities of this schema "
                           "(or the limit)")),
    ({"sets": [["c0", "c9"]]}, "workload.parities.sets[0]: 'c9' is not a column of the schema"),
    ({"sets": [["c0", "c0"]]}, "workload.parities.sets[0]: a column appears twice"),
    ({"sets": [["c0", "c1"], ["c2"]]}, "workload.parities.sets: all sets must have the same size (k), got sizes [1, 2]"),
    ({"sets": [["c0", "c1"]], "k": 3}, "workload.parities.k: the sets have 2 columns, got k=3"),
    ({"sets": [["c0", "c1"]], "count": 3}, ("workload.parities.sets: lists the column sets itself; remove count "
                                           "and seed")),
    ({"sets": []}, "workload.parities.sets: expected a non-empty list of column lists like [[a, b, c]]"),
    ([3], "workload.parities: expected a mapping like {k: 3, count: 500, seed: 0} or {sets: [[a, b, c]]}"),
])
def test_parsing_messages(raw, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parity_workload(raw, _domain([2] * 4))


def _raw(algorithm="dualquery", **workload):
    return {"schema": {"columns": {f"c{i}": {"type": "categorical", "categories": [0, 1]} for i in range(4)}},
            "privacy": {"epsilon": 1.0}, "algorithm": {"name": algorithm}, "workload": workload}


def test_config_sections():
    cfg = parse_config(_raw(parities={"k": 3}))
    assert len(cfg.workload.parities) == 4 and cfg.workload.conjunctions is None
    described = cfg.workload.describe(cfg.domain, frozenset({"marginals", "conjunctions", "parities"}))
    assert described["parities"]["spec"] == {"k": 3} and described["parities"]["queries"] == 4
    assert "conjunctions" not in described and "marginals" not in described
    with pytest.raises(ConfigError, match=re.escape(
            "workload.parities: give either conjunctions or parities (DualQuery plays one query class at a time)")):
        parse_config(_raw(parities={"k": 3}, conjunctions={"k": 3}))
    with pytest.raises(ConfigError, match=re.escape("workload.parities: not used by algorithm 'mwem'")):
        parse_config(_raw("mwem", parities={"k": 3}))

"""workload.linear: general linear queries q(x) ∈ [−1, 1] from a CSV of terms, an NPZ of dense weights, or inline."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

from dpsynth.config import parse_config
from dpsynth.errors import ConfigError
from dpsynth.workload import linear as L
from dpsynth.workload.spec import parse_workload

TERMS = """query,weight,color,size,flag
red minus blue,1,red,,
red minus blue,-1,blue,,
big and flagged,0.5,,"[8, 10]",1
big and flagged,0.25,,"[6, 8)",1
"""


@pytest.fixture
def domain(tiny_raw_config):
    return parse_config(tiny_raw_config).domain


def _parse(raw, domain):
    return parse_workload({"linear": raw}, domain, accepted=frozenset({"marginals", "linear"}), algorithm="mwem")


def _write(tmp_path, text: str, name: str = "q.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_terms_file_builds_dense_weights_per_support(tmp_path, domain):
    path = _write(tmp_path, TERMS)
    wl = _parse({"file": path}, domain).linear
    assert len(wl) == 2 and [s.names for s in wl.sets] == [("red minus blue",), ("big and flagged",)]
    color, rest = wl.sets
    assert color.attrs == (0,) and color.weights.tolist() == [[1.0, 0.0, -1.0]]
    assert rest.attrs == (1, 3)  # size × flag, in schema order
    w = rest.weights.reshape(5, 2)
    expected = np.zeros((5, 2))
    expected[4, 1], expected[3, 1] = 0.5, 0.25
    np.testing.assert_array_equal(w, expected)
    assert wl.describe(domain) == {
        "source": path, "sha256": hashlib.sha256(TERMS.encode()).hexdigest(), "queries": 2,
        "sets": [{"columns": ["color"], "queries": 1}, {"columns": ["size", "flag"], "queries": 1}]}


def test_answers_are_the_weighted_sums(tmp_path, domain):
    wl = _parse({"file": _write(tmp_path, TERMS)}, domain).linear
    marginal = np.arange(10.0).reshape(5, 2)  # counts over (size, flag)
    assert wl.sets[1].answers(marginal) == pytest.approx(0.5 * 9 + 0.25 * 7)
    assert wl.sets[0].integral and not wl.sets[1].integral


def test_overlapping_terms_add_up(tmp_path, domain):
    """q(x) is the sum of the weights of every term x satisfies: 0.75 + 0.25 on (red, 1)."""
    text = "query,weight,color,flag\nq,0.75,red,\nq,0.25,,1\n"
    (s,) = _parse({"file": _write(tmp_path, text)}, domain).linear.sets
    np.testing.assert_array_equal(s.weights.reshape(3, 2), [[0.75, 1.0], [0, 0.25], [0, 0.25]])


def test_dense_npz_and_inline_round_trip(tmp_path, domain):
    w = np.linspace(-1, 1, 2 * 6).reshape(2, 3, 2)  # two queries over (color, flag)
    p = tmp_path / "q.npz"
    np.savez(p, weights=w, columns=np.array(["color", "flag"]), names=np.array(["first", "second"]))
    workload = _parse({"file": str(p)}, domain)
    (s,) = workload.linear.sets
    assert s.attrs == (0, 3) and s.names == ("first", "second")
    np.testing.assert_array_equal(s.weights, w.reshape(2, -1))
    again = parse_workload(workload.to_raw(domain), domain, accepted=frozenset({"marginals", "linear"}),
                           algorithm="mwem")  # what a saved model's configuration holds: inline weights
    np.testing.assert_array_equal(again.linear.sets[0].weights, s.weights)
    assert again.linear.source == {"source": "inline"}


def test_dense_npz_defaults_to_every_column(tmp_path, domain):
    p = tmp_path / "q.npz"
    np.savez(p, weights=np.full((1, domain.cells()), 0.5) * (np.arange(domain.cells()) % 2))
    (s,) = _parse({"file": str(p)}, domain).linear.sets
    assert s.attrs == (0, 1, 2, 3) and s.names == ("query 1",)


CSV_ERRORS = [
    ("q,w,color\nx,1,red\n", "line 1: the header must be query,weight followed by schema columns"),
    ("query,weight,colour\nx,1,red\n", "line 1: unknown column 'colour'"),
    ("query,weight,color,color\nx,1,red,red\n", "line 1: a column appears twice"),
    ("query,weight,color\nx,one,red\n", "line 2: weight 'one' is not a number"),
    ("query,weight,color\nx,nan,red\n", "line 2: weight 'nan' is not a finite number"),
    ("query,weight,color\nx,1,purple\n",
     "line 2: column 'color' has no value 'purple' (values: red, green, blue)"),
    ("query,weight,size\nx,1,[8, 10]\n",
     'line 2: expected 3 fields, got 4 (put values with commas in double quotes, e.g. "[17, 20)")'),
    ("query,weight,color\n,1,red\n", "line 2: the query name is empty"),
    ("query,weight,color\n", ": no queries (the file has a header only)"),
    ("query,weight,color\nx,0.5,\n", (": query 'x' has no column value in any term, so q(x) is the same for every "
                                     "record; give each query at least one condition")),
]


@pytest.mark.parametrize(("text", "msg"), CSV_ERRORS)
def test_terms_file_errors(tmp_path, domain, text, msg):
    path = _write(tmp_path, text)
    where = f"workload.linear.file: {path}"
    with pytest.raises(ConfigError, match=re.escape(where + ("" if msg.startswith(":") else " ") + msg) + "$"):
        _parse({"file": path}, domain)


@pytest.mark.parametrize(("text", "msg"), [
    ("query,weight,color,flag\nq,0.75,red,\nq,0.5,,1\n",
     ("workload.linear: query 'q' has q(x) = 1.25 on some records; every q(x) must lie in [-1, 1] (the sum of "
     "the weights of the terms a record satisfies)")),
    ("query,weight,color\nq,-2,red\n",
     ("workload.linear: query 'q' has q(x) = -2 on some records; every q(x) must lie in [-1, 1] (the sum of "
     "the weights of the terms a record satisfies)")),
    ("query,weight,color\nq,1,red\nq,1,green\nq,1,blue\n",
     ("workload.linear: query 'q' has q(x) = 1 for every record (a constant query says nothing about the "
     "data); remove it")),
])
def test_weights_checked_on_the_sum_of_terms(tmp_path, domain, text, msg):
    with pytest.raises(ConfigError, match=re.escape(msg) + "$"):
        _parse({"file": _write(tmp_path, text)}, domain)


def test_sums_within_rounding_of_one_are_accepted_and_clipped(tmp_path, domain):
    text = "query,weight,color\nq,0.1,red\nq,0.2,red\nq,0.7,red\n"  # 0.1 + 0.2 + 0.7 = 1.0000000000000002
    (s,) = _parse({"file": _write(tmp_path, text)}, domain).linear.sets
    assert s.weights.max() == 1.0


def test_file_and_section_errors(tmp_path, domain):
    cases = [
        ({"file": str(tmp_path / "nope.csv")}, f"workload.linear.file: file not found: {tmp_path / 'nope.csv'}"),
        ({"file": "q.txt"}, "workload.linear.file: expected a .csv (terms) or .npz (dense weights) file, got 'q.txt'"),
        ({"file": 3}, "workload.linear.file: expected a path to a .csv or .npz file, got 3"),
        ({"path": "q.csv"}, ("workload.linear: expected a mapping with one key, file (a .csv or .npz file) or "
                            "queries (a list)")),
        ({"queries": []}, "workload.linear.queries: expected a non-empty list of {name, columns, weights}"),
        ({"queries": [{"columns": ["flag"]}]},
         "workload.linear.queries[0]: expected a mapping with columns, weights and an optional name"),
        ({"queries": [{"columns": ["flag"], "weights": [1, "x"]}]},
         "workload.linear.queries[0].weights: expected a non-empty list of numbers"),
        ({"queries": [{"columns": ["flag"], "weights": [1, 0, 0]}]},
         ("workload.linear.queries[0].weights: 3 weights, but columns (flag) have 2 cells (one weight per cell, "
         "codes in C order over the columns)")),
        ({"queries": [{"columns": ["hue"], "weights": [1, 0]}]}, ("workload.linear.queries[0].columns[0]: unknown "
                                                                 "column 'hue'")),
        ({"queries": [{"name": "a", "columns": ["flag"], "weights": [1, 0]},
                      {"name": "a", "columns": ["flag"], "weights": [0, 1]}]},
         "workload.linear: duplicate query name 'a'"),
    ]
    for raw, msg in cases:
        with pytest.raises(ConfigError, match=re.escape(msg) + "$"):
            _parse(raw, domain)


def test_npz_errors(tmp_path, domain):
    p = tmp_path / "q.npz"
    where = f"workload.linear.file: {p}"
    np.savez(p, weights=np.zeros((2, 5)), columns=np.array(["color", "flag"]))
    with pytest.raises(ConfigError, match=re.escape(
            f"{where}: weights has 5 entries per query, but the columns have 6 cells (3 × 2, codes in C order "
            "over the columns)") + "$"):
        _parse({"file": str(p)}, domain)
    np.savez(p, w=np.zeros((2, 6)))
    with pytest.raises(ConfigError, match=re.escape(
            f"{where}: expected arrays weights and optionally columns and names, got w") + "$"):
        _parse({"file": str(p)}, domain)
    np.savez(p, weights=np.ones((2, 6)) * [[1], [0.5]] * (np.arange(6) % 2), names=np.array(["one"]),
             columns=np.array(["color", "flag"]))
    with pytest.raises(ConfigError, match=re.escape(f"{where}: names has 1 entries for 2 queries") + "$"):
        _parse({"file": str(p)}, domain)
    p.write_bytes(b"not a zip")
    with pytest.raises(ConfigError, match=re.escape(
            f"{where}: not a readable .npz file (numpy.savez of arrays weights, columns, names)") + "$"):
        _parse({"file": str(p)}, domain)


def test_domain_size_guards(tmp_path, monkeypatch, domain):
    """A query's support is bounded (dense weights over its cells), from the schema alone."""
    monkeypatch.setattr(L, "MAX_SUPPORT_CELLS", 20)
    with pytest.raises(ConfigError, match=re.escape(
            f"workload.linear.file: {tmp_path / 'q.csv'}: query 'q': depends on columns (color, size, flag) with "
            "30 cells, more than the limit of 20") + "$"):
        _parse({"file": _write(tmp_path, "query,weight,color,size,flag\nq,1,red,\"[0, 2)\",1\n")}, domain)
    p = tmp_path / "q.npz"
    np.savez(p, weights=np.zeros((1, domain.cells())))
    with pytest.raises(ConfigError, match=re.escape(
            f"workload.linear.file: {p}: the columns have {domain.cells()} cells, more than the limit of 20 for "
            "dense weights; write the queries as terms (.csv) over fewer columns") + "$"):
        _parse({"file": str(p)}, domain)
    monkeypatch.setattr(L, "MAX_WEIGHTS", 5)
    with pytest.raises(ConfigError, match=re.escape(
            f"workload.linear.file: {tmp_path / 'q.csv'}: the queries store more than 5 weights (the cells of their "
            "supports); use fewer queries or fewer columns per query") + "$"):
        _parse({"file": _write(tmp_path, "query,weight,color,flag\nq,1,red,1\n")}, domain)


def test_section_refused_by_algorithms_that_do_not_measure_it(tiny_raw_config):
    raw = {**tiny_raw_config, "workload": {"linear": {"queries": [{"columns": ["flag"], "weights": [1, 0]}]}}}
    with pytest.raises(ConfigError, match=re.escape(
            "workload.linear: not used by algorithm 'laplace', which measures marginals; remove the section or "
            "choose another algorithm")):
        parse_config(raw)


def test_query_file_path_is_relative_to_the_config_file(tmp_path, monkeypatch):
    """A user writes ``file: queries.csv`` beside the config and runs from anywhere."""
    from dpsynth.config import load_config

    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "q.csv").write_text("query,weight,color\nred,1,red\n", encoding="utf-8")
    (folder / "c.yaml").write_text(
        "schema:\n  columns:\n    color: {type: categorical, categories: [red, blue]}\n"
        "privacy: {epsilon: 1.0}\nalgorithm: {name: mwem}\nworkload:\n  linear: {file: q.csv}\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    cfg = load_config(folder / "c.yaml")
    assert len(cfg.workload.linear) == 1
    assert cfg.workload.linear.source["source"] == str(folder / "q.csv")
    monkeypatch.chdir(tmp_path)
    assert load_config("cfg/c.yaml").workload.linear.source["source"] == "cfg/q.csv"


def test_cell_set_query_file_beside_the_config_reads_yaml_1_2_numbers(tmp_path, monkeypatch):
    """workload.queries.file: relative to the config's folder, and ``1e-5`` is a number as in the config."""
    from dpsynth.config import load_config

    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "q.yaml").write_text("- {name: red, where: {color: red}, sanity_bound: 1e-5}\n", encoding="utf-8")
    (folder / "c.yaml").write_text(
        "schema:\n  columns:\n    color: {type: categorical, categories: [red, blue]}\n"
        "privacy: {epsilon: 1.0}\nalgorithm: {name: ireduct}\nworkload:\n  queries: {file: q.yaml}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    cfg = load_config("cfg/c.yaml")
    assert len(cfg.workload.queries) == 1
    (folder / "q.yaml").write_text("- {name: red, where: {color: red}, name: blue}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config("cfg/c.yaml")
    assert str(err.value) == ("workload.queries.file: cfg/q.yaml: duplicate key 'name' at line 1 (first at line 1); "
                              "keep one of them")

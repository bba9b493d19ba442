"""Config validation: every error names the key path, with the exact message."""

from __future__ import annotations

import copy
import re

import pytest

from dpsynth.config import Config, load_config, parse_config
from dpsynth.data.schema import CategoricalColumn, IntegerColumn, NumericColumn
from dpsynth.errors import ConfigError, InputMissingError
from dpsynth.privacy import Neighbouring


def _with(raw: dict, path: str, value) -> dict:
    raw = copy.deepcopy(raw)
    *parents, last = path.split(".")
    node = raw
    for p in parents:
        node = node.setdefault(p, {})
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return raw


_DELETE = object()


def test_valid_config_parses(tiny_raw_config):
    cfg = parse_config(tiny_raw_config)
    assert cfg.domain.names == ("color", "size", "count", "flag")
    assert cfg.domain.sizes == (3, 5, 4, 2)
    assert isinstance(cfg.domain.columns[0], CategoricalColumn)
    assert isinstance(cfg.domain.columns[1], NumericColumn)
    assert isinstance(cfg.domain.columns[2], IntegerColumn)
    assert cfg.domain.columns[1].edges == (0.0, 2.0, 4.0, 6.0, 8.0, 10.0)
    assert cfg.privacy.neighbouring is Neighbouring.ADD_REMOVE and cfg.privacy.n_public
    assert len(cfg.marginals) == 6  # C(4, 2)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("privacy.epsilon", 0, "privacy.epsilon: must be > 0, got 0.0"),
        ("privacy.epsilon", -1, "privacy.epsilon: must be > 0, got -1.0"),
        ("privacy.epsilon", "one", "privacy.epsilon: expected a number, got 'one'"),
        ("privacy.epsilon", _DELETE, "privacy.epsilon: required"),
        ("privacy.delta", 1.5, "privacy.delta: must be < 1, got 1.5"),
        ("privacy.neighboring", "swap", "privacy.neighboring: must be one of add-remove, replace-one, got 'swap'"),
        ("privacy.n", {"epsilon": 2.0}, "privacy.n.epsilon: must be smaller than privacy.epsilon (2 >= 1)"),
        ("privacy.n", "secret", "privacy.n: must be 'public' or {epsilon: <number>}"),
        ("privacy.budget", 1, "privacy.budget: unknown key (allowed: epsilon, n, neighboring, neighbouring, delta)"),
        ("algorithm.name", "magic", "algorithm.name: must be one of "),
        ("algorithm.params", {"noise": "pink"}, "algorithm.params.noise: must be one of discrete, continuous, snapping, got 'pink'"),
        ("algorithm.params", {"speed": 1}, "algorithm.params.speed: unknown key (allowed: model_cells, noise, sampling, synthesis, synthesis_iterations, synthesis_passes)"),
        ("workload.marginals", {"k": 9}, "workload.marginals.k: must be <= the number of columns (4), got 9"),
        ("workload.marginals", [["color", "shape"]], "workload.marginals[0][1]: unknown column 'shape'"),
        ("workload.marginals", [["color", "color"]], "workload.marginals[0]: a column appears twice"),
        ("workload.marginals", {"k": 2, "seed": 3}, "workload.marginals.seed: only meaningful with sample"),
        ("workload.cubes", 1, ("workload.cubes: unknown key (allowed: conjunctions, linear, marginals, parities, "
                               "queries, ranges, sanity_bounds)")),
        ("output.rows", 0, "output.rows: must be >= 1, got 0"),
        ("output.numeric", "mean", "output.numeric: must be one of uniform, midpoint, got 'mean'"),
        ("seed", -4, "seed: must be >= 0, got -4"),
        ("colour", 1, "colour: unknown key (allowed: algorithm, decode, limits, output, privacy, schema, seed, workload)"),
        ("schema.columns.size.bins", 0, "schema.columns.size.bins: must be >= 1, got 0"),
        ("schema.columns.size.upper", -1, "schema.columns.size.upper: must be greater than lower (-1 <= 0)"),
        ("schema.columns.size.type", "float", "schema.columns.size.type: must be one of numeric, integer, categorical, datetime, got 'float'"),
        ("schema.columns.count.upper", 0, "schema.columns.count.upper: must be >= lower (0 < 1)"),
        ("schema.columns.color.categories", [], "schema.columns.color.categories: expected a non-empty list"),
        ("schema.columns.color.categories", ["a", "a"], "schema.columns.color.categories: duplicate category 'a'"),
        ("schema.columns.color.missing", "drop", "schema.columns.color.missing: must be one of error, category, fill, got 'drop'"),
        ("schema.unknown", "ignore", "schema.unknown: must be one of error, other, got 'ignore'"),
        ("schema.columns", {}, "schema.columns: expected a non-empty mapping of column name to spec"),
        ("limits.max_cells", 0, "limits.max_cells: must be >= 1, got 0"),
    ],
)
def test_config_errors_name_the_key_path(tiny_raw_config, path, value, message):
    raw = _with(tiny_raw_config, path, value)
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    if message.endswith("one of "):
        assert str(info.value).startswith(message)
    else:
        # allowed-key lists are sorted; compare as sets where order is incidental
        assert _norm(str(info.value)) == _norm(message)


def _norm(msg: str) -> str:
    m = re.match(r"(.*\(allowed: )(.*)(\))$", msg)
    if m:
        return m.group(1) + ",".join(sorted(m.group(2).split(", "))) + m.group(3)
    return msg


def test_numeric_edges_and_bins_are_exclusive(tiny_raw_config):
    raw = _with(tiny_raw_config, "schema.columns.size.edges", [0, 1, 2])
    with pytest.raises(ConfigError, match=re.escape("schema.columns.size: give either edges or lower/upper/bins, not both")):
        parse_config(raw)


def test_edges_must_increase(tiny_raw_config):
    raw = _with(tiny_raw_config, "schema.columns.size", {"type": "numeric", "edges": [0, 2, 1]})
    with pytest.raises(ConfigError, match=re.escape("schema.columns.size.edges: must be increasing")):
        parse_config(raw)


def test_sampled_workload_is_public_and_reproducible(tiny_raw_config):
    raw = _with(tiny_raw_config, "workload.marginals", {"k": 2, "sample": 3, "seed": 7})
    a, b = parse_config(raw), parse_config(raw)
    assert a.marginals == b.marginals and len(a.marginals) == 3


def test_load_config_missing_and_bad_yaml(tmp_path):
    with pytest.raises(InputMissingError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: [\n")
    with pytest.raises(ConfigError, match=re.escape(
        f"{bad}: invalid YAML at line 2, column 1: expected the node content, but found '<stream end>' "
        "(while parsing a flow node)"
    )):
        load_config(bad)


@pytest.mark.parametrize(("text", "value"), [
    ("1e-5", 1e-5), ("1e6", 1e6), ("1E+3", 1e3), (".5", 0.5), ("5.", 5.0), ("1_000", 1000), ("-2.5e-3", -2.5e-3),
    ("1.0e5", 1e5), ("2.5E-1", 0.25), ("1", 1), ("0.1", 0.1),
])
def test_yaml_numbers_as_people_write_them(tmp_path, text, value):
    """Issue 15 item 2: YAML 1.2 / programming-language number spellings load as numbers."""
    p = tmp_path / "c.yaml"
    p.write_text(f"x: {text}\ny: '{text}'\n")
    from dpsynth.params import load_yaml

    loaded = load_yaml(p.read_text())
    assert loaded == {"x": value, "y": text} and type(loaded["x"]) is type(value)


def test_duplicate_key_is_an_error(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("privacy:\n  epsilon: 1.0\n  delta: 0\n  epsilon: 2.0\n")
    with pytest.raises(ConfigError, match=re.escape(
        f"{p}: duplicate key 'epsilon' at line 4 (first at line 2); keep one of them"
    )):
        load_config(p)


def test_shipped_configs_load(root):
    for path in sorted((root / "configs").glob("*.yaml")):
        cfg = load_config(path)
        assert len(cfg.domain) > 0 or cfg.discover is not None, path  # schema: {discover: ...} learns it


# ----------------------------------------------------------------------------- Config.build
def test_build_is_the_document_it_stands_for(tiny_raw_config):
    columns = tiny_raw_config["schema"]["columns"]
    document = {k: v for k, v in tiny_raw_config.items() if k != "decode"}  # build() leaves decode at its default
    assert Config.build(columns=columns, epsilon=1.0, algorithm="laplace", marginals=2) == parse_config(document)
    raw = {
        "schema": {"columns": columns, "unknown": "other"},
        "privacy": {"epsilon": 2.0, "delta": 1e-6, "neighbouring": "replace-one", "n": {"epsilon": 0.1}},
        "algorithm": {"name": "ireduct", "params": {"pick": "max"}},
        "workload": {"marginals": [["color", "size"], ["count"]], "sanity_bounds": {"default": 5}},
        "output": {"rows": 77},
        "seed": 3,
        "limits": {"max_cells": 1000},
    }
    built = Config.build(columns=columns, epsilon=2.0, delta=1e-6, neighbouring="replace-one", n_epsilon=0.1,
                         algorithm="ireduct", params={"pick": "max"}, marginals=[("color", "size"), ["count"]],
                         workload={"sanity_bounds": {"default": 5}}, unknown="other", rows=77, seed=3, max_cells=1000)
    assert built == parse_config(raw)
    assert built.marginals == ((0, 1), (2,)) and built.params.pick == "max" and built.output.rows == 77
    assert built.privacy.neighbouring is Neighbouring.REPLACE_ONE and built.privacy.n_epsilon == 0.1


def test_build_defaults_to_auto_on_all_two_way_marginals(tiny_raw_config):
    built = Config.build(columns=tiny_raw_config["schema"]["columns"], epsilon=1.0)
    assert built.algorithm == "auto" and len(built.marginals) == 6 and built.privacy.delta == 0.0


@pytest.mark.parametrize(("kwargs", "path", "value"), [
    ({"epsilon": -1.0}, "privacy.epsilon", -1.0),
    ({"algorithm": "nope"}, "algorithm.name", "nope"),
    ({"params": {"pick": "max"}}, "algorithm.params", {"pick": "max"}),
    ({"marginals": [["colour"]]}, "workload.marginals", [["colour"]]),
    ({"neighbouring": "swap"}, "privacy.neighbouring", "swap"),
])
def test_build_errors_are_the_yaml_ones(tiny_raw_config, kwargs, path, value):
    """The same mistake gives the same one-line message (with its key path) as in the YAML document."""
    with pytest.raises(ConfigError) as from_yaml:
        parse_config(_with(tiny_raw_config, path, value))
    assert str(from_yaml.value).startswith(path)
    args = {"columns": tiny_raw_config["schema"]["columns"], "epsilon": 1.0, "algorithm": "laplace", "marginals": 2}
    with pytest.raises(ConfigError, match="^" + re.escape(str(from_yaml.value)) + "$"):
        Config.build(**{**args, **kwargs})


def test_build_refuses_marginals_given_twice(tiny_raw_config):
    with pytest.raises(ConfigError, match=re.escape(
            "workload.marginals: given twice (the marginals argument and workload); keep one")):
        Config.build(columns=tiny_raw_config["schema"]["columns"], epsilon=1.0, marginals=2,
                     workload={"marginals": {"k": 1}})


def test_build_column_errors_are_the_yaml_ones(tiny_raw_config):
    columns = {**tiny_raw_config["schema"]["columns"], "size": {"type": "numeric", "lower": 5, "upper": 1, "bins": 2}}
    with pytest.raises(ConfigError, match=re.escape("schema.columns.size.upper: must be greater than lower (1 <= 5)")):
        Config.build(columns=columns, epsilon=1.0)


# ------------------------------------------------------------------------ missing: fill (issue 27)
def _fill_raw(column: dict) -> dict:
    return {"schema": {"columns": {"c": column}}, "privacy": {"epsilon": 1.0}}


@pytest.mark.parametrize(("column", "fill", "code"), [
    ({"type": "categorical", "categories": ["no", "yes"], "fill": "yes"}, "yes", 1),
    ({"type": "categorical", "categories": [0, 1], "fill": "1"}, 1, 1),  # the label as written: 1 stays an int
    ({"type": "numeric", "lower": 0, "upper": 10, "bins": 5, "fill": 3.5}, 3.5, 1),
    ({"type": "numeric", "edges": [0, 1, 1, 5], "fill": 1}, 1.0, 1),  # the point bin
    ({"type": "integer", "lower": 1, "upper": 4, "fill": 4}, 4, 3),
])
def test_missing_fill_parses_and_has_no_null_code(column, fill, code):
    from dpsynth.data.schema import null_code
    from dpsynth.modelfile import config_document

    col = parse_config(_fill_raw({**column, "missing": "fill"})).domain.columns[0]
    assert col.fill == fill and not col.missing and "null" not in col.labels() and null_code(col) == code
    doc = config_document(parse_config(_fill_raw({**column, "missing": "fill"})))
    assert doc["schema"]["columns"]["c"]["missing"] == "fill" and doc["schema"]["columns"]["c"]["fill"] == fill
    assert parse_config(doc).domain.columns[0] == col  # the written config reads back to the same column


@pytest.mark.parametrize(("column", "message"), [
    ({"type": "categorical", "categories": ["a"], "missing": "fill"}, "schema.columns.c.fill: 'missing: fill' needs"),
    ({"type": "categorical", "categories": ["a"], "fill": "a"}, "schema.columns.c.fill: only with 'missing: fill'"),
    ({"type": "categorical", "categories": ["a"], "missing": "category", "fill": "a"}, "only with 'missing: fill'"),
    ({"type": "categorical", "categories": ["a"], "missing": "fill", "fill": "b"}, "'b' is not one of the declared"),
    ({"type": "numeric", "lower": 0, "upper": 1, "bins": 2, "missing": "fill", "fill": 2}, "outside the column's range"),
    ({"type": "numeric", "lower": 0, "upper": 1, "bins": 2, "missing": "fill", "fill": "x"}, "expected a number"),
    ({"type": "integer", "lower": 0, "upper": 3, "missing": "fill", "fill": 1.5}, "expected an integer in [0, 3]"),
    ({"type": "datetime", "lower": "2020-01-01", "upper": "2021-01-01", "bins": 2, "missing": "fill",
      "fill": "2020-06-01"}, "'fill' is not available for datetime columns"),
    ({"type": "integer", "lower": 0, "upper": 3, "missing": "zero"}, "schema.columns.c.missing"),
])
def test_missing_fill_errors(column, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(_fill_raw(column))

"""The typed workload: validated when the config is parsed, per algorithm, and reported as measured."""

from __future__ import annotations

import copy
import re

import pytest

import dpsynth
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.errors import ConfigError


def _cfg(raw: dict, algorithm: str, workload: dict, **params) -> dict:
    raw = copy.deepcopy(raw)
    raw["algorithm"] = {"name": algorithm, "params": params}
    raw["workload"] = workload
    return raw


def test_section_not_used_by_the_algorithm_is_a_config_error(tiny_raw_config):
    raw = _cfg(tiny_raw_config, "ireduct", {"conjunctions": {"k": 2, "count": 10}})
    msg = ("workload.conjunctions: not used by algorithm 'ireduct', which measures marginals, queries; "
           "remove the section or choose another algorithm")
    with pytest.raises(ConfigError, match=re.escape(msg)):
        parse_config(raw)


def test_ranges_on_a_categorical_column_fail_at_parse_time(tiny_raw_config):
    raw = _cfg(tiny_raw_config, "mwem", {"ranges": {"count": 5, "columns": ["color"]}})
    msg = ("workload.ranges.columns[0]: column 'color' is categorical; range queries need an ordered "
           "(numeric or integer) column")
    with pytest.raises(ConfigError, match=re.escape(msg)):
        parse_config(raw)


def test_cli_refuses_an_unused_section_before_reading_data(runner, tmp_path, tiny_raw_config):
    """Exit 64 (config) even though the input file does not exist (exit 66 would mean it was looked at)."""
    import yaml

    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(_cfg(tiny_raw_config, "laplace", {"ranges": {"count": 3, "columns": ["size"]}})))
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(tmp_path / "missing.csv"), "-o",
                              str(tmp_path / "o.csv")])
    assert res.exit_code == 64
    assert res.stderr == ("dpsynth: error: workload.ranges: not used by algorithm 'laplace', which measures "
                          "marginals; remove the section or choose another algorithm\n")


def test_report_lists_what_dualquery_measured(tiny_raw_config, tiny_table):
    raw = _cfg(tiny_raw_config, "dualquery", {"conjunctions": {"k": 2, "count": 40, "seed": 3}},
               T=3, s=4, best_response="local")
    res = dpsynth.release(tiny_table, parse_config(raw), rng=__import__("numpy").random.default_rng(0))
    assert res.report["workload"] == {"conjunctions": {"spec": {"k": 2, "count": 40, "seed": 3}, "queries": 40}}


def test_report_lists_mwem_ranges_and_marginals(tiny_raw_config, tiny_table):
    raw = _cfg(tiny_raw_config, "mwem", {"marginals": [["color", "size"]],
                                         "ranges": {"count": 6, "columns": ["size", "count"], "seed": 1}},
               iterations=2)
    res = dpsynth.release(tiny_table, parse_config(raw), rng=__import__("numpy").random.default_rng(0))
    wl = res.report["workload"]
    assert wl["marginals"] == [["color", "size"]]
    assert sum(s["queries"] for s in wl["ranges"]["sets"]) == 6
    assert "conjunctions" not in wl

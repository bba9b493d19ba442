"""The report and the model file record the parameters a release ran with (issue 23), not the YAML's.

Every parameter of the algorithm's params dataclass is listed, after the algorithm's own resolution
(MWEM's variant defaults and accounting, auto's choice); a config changed with ``dataclasses.replace``
reports its new parameters; a model file written by an older dpsynth (the YAML's parameters only) still
loads.  Deterministic (fixed seeds).
"""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile

import numpy as np
import pytest

import dpsynth
from dpsynth import modelfile
from dpsynth.algorithms import algorithm_names, get_algorithm
from dpsynth.config import parse_config
from dpsynth.modelfile import model_from_bytes
from dpsynth.params import params_to_mapping
from dpsynth.report import validate_report


def _release(cfg, table):
    return dpsynth.release(table, cfg, rng=np.random.default_rng(3), seeded=True)


def _fields(name: str) -> set[str]:
    return {f.name for f in dataclasses.fields(get_algorithm(name).params)}


def test_default_params_are_listed_in_full(tiny_raw_config, tiny_table):
    cfg = parse_config(tiny_raw_config)  # algorithm laplace, no params section
    report = _release(cfg, tiny_table).report
    validate_report(report)
    params = report["algorithm"]["params"]
    assert set(params) == _fields("laplace")
    assert params == params_to_mapping(get_algorithm("laplace").parse_params({}))


def test_mwem_reports_its_resolved_params(tiny_raw_config, tiny_table):
    tiny_raw_config["algorithm"] = {"name": "mwem", "params": {"iterations": 3}}
    report = _release(parse_config(tiny_raw_config), tiny_table).report
    params = report["algorithm"]["params"]
    assert set(params) == _fields("mwem")
    # unset in the YAML, resolved by the run: the variant, its defaults and the accounting (δ = 0: pure)
    assert (params["variant"], params["accounting"], params["iterations"]) == ("pgm", "pure", 3)
    assert (params["select_fraction"], params["init_fraction"]) == (0.1, 0.1)


def test_auto_reports_the_chosen_algorithms_resolved_params(tiny_raw_config, tiny_table):
    tiny_raw_config["algorithm"] = {"name": "auto"}
    report = _release(parse_config(tiny_raw_config), tiny_table).report
    assert report["algorithm"]["params"] == {"sampling": "systematic"}
    chosen = report["algorithm"]["details"]["auto"]
    assert chosen["chosen"].startswith("mwem")  # n*epsilon = 500 >= 5*d^2 = 80, delta = 0: rule 3
    assert set(chosen["params"]) == _fields("mwem")
    assert (chosen["params"]["variant"], chosen["params"]["accounting"]) == ("pgm", "pure")


def test_replaced_params_are_the_ones_reported(tiny_raw_config, tiny_table):
    cfg = parse_config(tiny_raw_config)
    new = get_algorithm("laplace").parse_params({"noise": "continuous", "synthesis": "mw"})
    assert new != cfg.params
    result = _release(dataclasses.replace(cfg, params=new), tiny_table)
    assert result.report["algorithm"]["params"] == params_to_mapping(new)
    config = json.loads(zipfile.ZipFile(io.BytesIO(result.model.to_bytes())).read("config.json"))
    assert config["algorithm"]["params"] == params_to_mapping(new)


def test_model_file_records_resolved_params_and_reloads(tiny_raw_config, tiny_table):
    tiny_raw_config["algorithm"] = {"name": "mwem", "params": {"iterations": 3}}
    model = _release(parse_config(tiny_raw_config), tiny_table).model
    data = model.to_bytes()
    config = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("config.json"))
    assert config["algorithm"]["params"]["variant"] == "pgm"
    reloaded = model_from_bytes(data)
    assert reloaded.config.params == model.config.params
    assert reloaded.sha256 == model.sha256


def test_model_file_of_an_older_dpsynth_still_loads(tiny_raw_config, tiny_table, monkeypatch):
    """Older files hold the YAML's parameters (here none): they parse to the defaults."""
    model = _release(parse_config(tiny_raw_config), tiny_table).model
    current = modelfile.config_document

    def older(cfg):  # what dpsynth wrote before the resolved parameters: the YAML's, here none
        doc = current(cfg)
        doc["algorithm"]["params"] = {}
        return doc

    monkeypatch.setattr(modelfile, "config_document", older)
    data = model.to_bytes()
    monkeypatch.undo()
    assert json.loads(zipfile.ZipFile(io.BytesIO(data)).read("config.json"))["algorithm"]["params"] == {}
    reloaded = model_from_bytes(data)
    assert reloaded.config.params == get_algorithm("laplace").parse_params({})
    rows = reloaded.sample(50, rng=np.random.default_rng(0))
    assert len(rows) == 50


@pytest.mark.parametrize("name", algorithm_names())
def test_every_algorithms_params_survive_the_mapping(name):
    spec = get_algorithm(name)
    for raw in spec.audit_params:
        params = spec.parse_params(raw)
        mapping = params_to_mapping(params)
        json.dumps(mapping, allow_nan=False)  # the report is strict JSON
        assert spec.parse_params(mapping) == params

"""The algorithm registry: every algorithm is a declared AlgorithmSpec, so tests and docs can iterate it."""

from __future__ import annotations

import dataclasses
import re

import pytest

from dpsynth.algorithms import AlgorithmSpec, algorithm_names, get_algorithm
from tests.helpers import ROOT


@pytest.mark.parametrize("name", algorithm_names())
def test_every_algorithm_declares_a_valid_spec(name):
    spec = get_algorithm(name)
    assert isinstance(spec, AlgorithmSpec) and spec.name == name
    assert dataclasses.is_dataclass(spec.params) and spec.params.__dataclass_params__.frozen
    assert spec.workload <= {"marginals", "ranges", "conjunctions", "parities", "linear", "queries"}
    for raw in spec.audit_params:  # every variant the privacy tests run must be a valid configuration
        spec.parse_params(raw)


def test_spec_validation_rejects_bad_declarations():
    spec = get_algorithm("laplace")
    with pytest.raises(ValueError, match=re.escape("workload sections must be a non-empty subset")):
        dataclasses.replace(spec, workload=frozenset({"cubes"}))
    with pytest.raises(ValueError, match=re.escape("audit_params needs at least one variant")):
        dataclasses.replace(spec, audit_params=())


@pytest.mark.parametrize("name", algorithm_names())
def test_every_algorithm_and_param_is_documented(name):
    """Each algorithm has a section in the README's algorithm table and each Params field appears in its docs."""
    docs = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    assert f"`{name}`" in docs, f"algorithm {name} is not documented"
    fields = dataclasses.fields(get_algorithm(name).params)
    missing = [f.name for f in fields if not re.search(rf"`{f.name}`|\b{f.name}:", docs)]
    assert not missing, f"{name}: parameters not documented: {missing}"

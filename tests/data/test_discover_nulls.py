"""Discovery's ``missing`` decision (discover/nulls.py, issue 27): a column whose profile shows no null past the
cut gets ``missing: fill`` (no null cell), read off noisy counts only; nulls that stand out keep a null category."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth.config import parse_config
from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover.evidence import Evidence, one_way_queries
from dpsynth.data.discretize import encode
from dpsynth.data.schema import CategoricalColumn
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger
from tests.helpers import Replay


def _table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "colour": rng.choice(["red", "green", "blue"], size=n, p=[0.5, 0.3, 0.2]),
        "age": rng.integers(18, 90, size=n),
        "flag": rng.choice([0, 1], size=n, p=[0.3, 0.7]),
        "income": np.where(rng.random(n) < 0.3, np.nan, rng.lognormal(10, 1, n)),
    })


def _discover(table, seed=0, hints=None):
    spec = parse_discover({"epsilon": 2.0, "delta": 1e-6, **({"columns": hints} if hints else {})})
    ledger = Ledger(spec.epsilon, spec.delta)
    return discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed)), ledger


@pytest.mark.parametrize("seed", range(3))
def test_columns_without_nulls_get_a_fill_and_nulls_that_stand_out_a_category(seed):
    found, _ = _discover(_table(), seed)
    cols = found.schema["columns"]
    assert cols["colour"]["missing"] == "fill" and cols["colour"]["fill"] == "red"  # the largest noisy count
    assert cols["flag"]["missing"] == "fill" and cols["flag"]["fill"] == 1
    assert cols["age"]["missing"] == "fill" and 40 <= cols["age"]["fill"] <= 68  # the noisy median's cell
    assert cols["income"] == {**cols["income"], "missing": "category"} and "fill" not in cols["income"]
    assert any("no nulls stood out of the noise: a null is encoded as 'red'" in x
               for x in found.columns["colour"]["learned"])
    assert any("missing: category (the noisy null count stood out" in x for x in found.columns["income"]["learned"])
    cfg = parse_config({"schema": found.schema, "privacy": {"epsilon": 1.0}})
    assert [c.size for c in cfg.domain.columns][2] == 2  # the binary column has 2 codes, not 3
    table = _table().astype({"flag": "float", "age": object})
    table.loc[:9, "flag"] = np.nan  # a few nulls anyway: encoded as the fill value, never a refusal
    table.loc[10:19, "age"] = "n/a"
    codes = encode(table, cfg.domain, unknown=cfg.unknown)
    assert (codes[:10, 2] == 1).all() and len(set(codes[10:20, 1])) == 1


def test_a_hint_missing_category_keeps_the_null_category():
    found, _ = _discover(_table(), 0, hints={"flag": {"type": "numeric", "missing": "category"}})
    assert found.schema["columns"]["flag"]["missing"] == "category" and "fill" not in found.schema["columns"]["flag"]
    assert found.schema["columns"]["colour"]["missing"] == "fill"


def test_the_missing_decision_and_fill_are_read_off_noisy_counts_only(monkeypatch):
    """The schema of a table without nulls; then, with every mechanism output replayed, the same schema on a table
    whose flag is a fifth null, whose ages are older and whose colours swap red and blue: a decision on the
    true null count would give the flag a null category, a fill read off the true counts another fill value."""
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    table = _table()
    found, ledger = _discover(table, 0)
    assert found.schema["columns"]["flag"]["missing"] == "fill"
    replay.mode = "replay"
    other = table.astype({"flag": "float"})
    other.loc[:599, "flag"] = np.nan
    other["colour"] = other["colour"].map({"red": "blue", "blue": "red", "green": "green"})
    other["age"] = np.minimum(other["age"] + 15, 89)
    again, ledger2 = _discover(other, 0)
    assert replay.i == len(replay.calls)
    assert again.schema == found.schema
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]


def test_evidence_adds_the_noisy_nulls_to_the_fill_codes_answer():
    """Under missing: fill the fill value's code holds the nulls too: its label's noisy count gets the noisy null
    count added (the variances add), and no query counts a null cell."""
    col = CategoricalColumn("c", ("a", "b", "c"), fill="a", other=True)
    ev = Evidence(null=(3.0, 2.0), labels=("a", "b", "c"), label_counts=np.array([100.0, 60.0, 20.0]), label_sd=1.5)
    queries = one_way_queries(ev, col)
    assert [(q.tolist(), v.tolist(), sd) for q, v, sd in queries] == [
        ([[0, 1, 0, 0]], [60.0], 1.5), ([[1, 0, 0, 0]], [103.0], 2.5)]
    bare = Evidence(labels=("a", "b", "c"), label_counts=np.array([100.0, 60.0, 20.0]), label_sd=1.5)
    assert [q.tolist() for q, _, _ in one_way_queries(bare, col)] == [[[0, 1, 0, 0]]]  # no null count: left out


def test_a_number_columns_text_that_stands_out_keeps_the_null_category():
    """Text in a number column is read as null (unknown: other): when the profile shows it, nulls stand out."""
    table = _table().astype({"age": object})
    table.loc[:299, "age"] = "n/a"
    found, _ = _discover(table, 0)
    assert found.schema["columns"]["age"]["type"] == "numeric" and found.schema["columns"]["age"]["missing"] == "category"


def test_an_integral_columns_fill_is_an_integer_even_when_its_median_cell_spans_two_bins():
    """doctor_visits_aus' ``actdays`` (86 % zeros, bins [0, 0.5) and [0.5, 2) of an integral column): the noisy
    median's fine cell [0, 1) has its middle at 0.5, in the second bin; the fill was 0.5, a value the column never
    holds.  It is the cell's integer, 0."""
    from dpsynth.data.discover.nulls import fill_value

    ev = Evidence()
    ev.cells, ev.cell_counts, ev.cell_sd = np.array([0.0, 1.0, 2.0, 3.0]), np.array([860.0, 80.0, 60.0]), 30.0
    spec = {"type": "numeric", "edges": [0, 0.5, 2, 3], "integer": True}
    got = fill_value(ev, spec)
    assert got == 0 and isinstance(got, int)

"""--where: parsing against the public schema, and exact conditional sampling (not rejection).

Statistical tests: fixed seeds, chi-square / KS critical values at 1e-6 (false-failure rate 1e-6 each).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats

from dpsynth.config import parse_config
from dpsynth.errors import UsageError
from dpsynth.modelfile import ReleasedModel
from dpsynth.models.condition import parse_where
from dpsynth.models.factored import FactoredModel, Measurement

CRIT = 1e-6

RAW = {
    "schema": {"columns": {
        "color": {"type": "categorical", "categories": ["red", "green", "blue"], "missing": "category"},
        "size": {"type": "numeric", "lower": 0, "upper": 10, "bins": 5},
        "age": {"type": "numeric", "edges": [0, 18, 40, 65, 100], "integer": True},
        "count": {"type": "integer", "lower": 1, "upper": 4},
    }},
    "privacy": {"epsilon": 1.0},
    "workload": {"marginals": {"k": 2}},
}


@pytest.fixture
def cfg():
    return parse_config(RAW)


def _model(cfg) -> ReleasedModel:
    rng = np.random.default_rng(0)
    model = FactoredModel(cfg.domain.sizes, 1000.0)
    model.mw_update(Measurement((0, 1), rng.uniform(0, 200, cfg.domain.shape((0, 1)))))
    model.mw_update(Measurement((2, 3), rng.uniform(0, 200, cfg.domain.shape((2, 3)))))
    return ReleasedModel(cfg, model)


@pytest.mark.parametrize(("where", "message"), [
    ("shape=round", "--where: unknown column 'shape' (columns: color, size, age, count)"),
    ("color=purple", "--where: column 'color' has no value 'purple' (values: red, green, blue, null)"),
    ("count=7", "--where: column 'count' has no value '7' (integers 1 to 4)"),
    ("color<red", "--where: 'color<red': column 'color' is categorical; use = or !="),
    ("size!=3", "--where: 'size!=3': column 'size' is numeric; use =, <, <=, > or >="),
    ("age>=old", "--where: 'age>=old': column 'age' holds numbers, got 'old'"),
    ("age", ("--where: cannot parse 'age' (use column=value, column!=value, column<value, <=, > or >=; "
             "separate conditions with commas)")),
    (" , ", "--where: empty condition (e.g. --where 'sex=Female,age>=40')"),
    ("color>null", "--where: 'color>null': null can only be compared with = or !="),
])
def test_bad_conditions_are_one_line_usage_errors(cfg, where, message):
    with pytest.raises(UsageError, match="^" + re.escape(message) + "$") as info:
        parse_where(where, cfg.domain)
    assert info.value.exit_code == 2


def test_weights_follow_the_decoded_values(cfg):
    cond = parse_where("color=red|null,size>=3,age<30,count!=2", cfg.domain)
    w = cond.weights
    assert w[0].tolist() == [1, 0, 0, 1]
    # size bins [0,2) [2,4) [4,6) ...: [2,4) keeps [3,4), half of it (uniform decoding)
    assert w[1].tolist() == [0, 0.5, 1, 1, 1]
    # age (integers): [0,18) all of 0..17, [18,40) has 18..39 of which 18..29 (12 of 22), others none
    assert w[2].tolist() == pytest.approx([1, 12 / 22, 0, 0])
    assert w[3].tolist() == [1, 0, 1, 1]
    assert cond.bounds[1] == (3.0, np.inf) and cond.bounds[2] == (-np.inf, 29.0)
    mid = parse_where("size>=3", cfg.domain, numeric="midpoint")
    assert mid.weights[1].tolist() == [0, 1, 1, 1, 1]  # the decoded value is the midpoint 3 of [2,4)
    assert parse_where("size>3", cfg.domain, numeric="midpoint").weights[1].tolist() == [0, 0, 1, 1, 1]


def test_conditional_rows_satisfy_the_condition_and_have_the_conditional_law(cfg):
    released = _model(cfg)
    where = "color=red|blue,size>=3,age<30"
    rows = released.sample(30_000, rng=np.random.default_rng(1), where=where)
    assert rows["color"].isin(["red", "blue"]).all()
    assert (rows["size"] >= 3).all() and (rows["age"] < 30).all()
    # joint law of the codes: p(code)·w(code), normalised (Bayes' rule), chi-square
    cond = parse_where(where, cfg.domain)
    model = released.model
    joint = model.project((0, 1, 2)) / model.total
    w = cond.weights
    target = joint * w[0][:, None, None] * w[1][None, :, None] * w[2][None, None, :]
    target = (target / target.sum()).reshape(-1)
    color = rows["color"].map({"red": 0, "green": 1, "blue": 2}).to_numpy()
    size = np.minimum((rows["size"].to_numpy() // 2).astype(int), 4)
    age = np.searchsorted([18, 40, 65], rows["age"].to_numpy(), side="right")
    seen = np.bincount(np.ravel_multi_index((color, size, age), (4, 5, 4)), minlength=target.size)
    live = target > 0
    assert seen[~live].sum() == 0
    chi2 = float(((seen[live] - len(rows) * target[live]) ** 2 / (len(rows) * target[live])).sum())
    assert chi2 < stats.chi2.isf(CRIT, df=int(live.sum()) - 1)
    # inside the cut bin [2, 4) the values are uniform on [3, 4): KS test
    cut = rows["size"].to_numpy()[size == 1]
    assert stats.kstest(cut, stats.uniform(loc=3, scale=1).cdf).pvalue > CRIT
    # integers of the cut age bin [18, 40) are uniform on 18..29: chi-square
    ages = rows["age"].to_numpy()[age == 1]
    counts = np.bincount(ages - 18, minlength=12)
    assert counts.size == 12 and stats.chisquare(counts).pvalue > CRIT


def test_rare_condition_is_drawn_without_rejection(cfg):
    """A condition of probability ~1e-9 still gives exactly the requested rows."""
    rng = np.random.default_rng(0)
    model = FactoredModel.independent(cfg.domain.sizes, 1000.0, [None, None, None, None])
    model.factors[3].probs = np.array([1.0 - 3e-9, 1e-9, 1e-9, 1e-9])
    released = ReleasedModel(cfg, model)
    p = model.probability(parse_where("count=4", cfg.domain).weights)
    assert p == pytest.approx(1e-9)
    rows = released.sample(500, rng=rng, where="count=4")
    assert len(rows) == 500 and (rows["count"] == 4).all()


def test_probability_zero_is_refused(cfg):
    released = _model(cfg)
    with pytest.raises(UsageError, match=re.escape("--where: 'age>100' has probability 0 under the model "
                                                   "(no synthetic row can satisfy it)")):
        released.sample(10, rng=np.random.default_rng(0), where="age>100")
    with pytest.raises(UsageError, match="probability 0"):
        released.sample(10, rng=np.random.default_rng(0), where="size=3")  # a point of a continuous column

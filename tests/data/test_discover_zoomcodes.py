"""Fractional codes that the first fine histogram holds side by side and only a zoom shows apart
(dpsynth/data/discover/codes.py): held-out-20's powerlifting_meets, ``weight_class_kg`` (class labels 43 … 125,
some a half apart: 67.5, 82.5).  Before, the heaps reserve measured the zoom's cells again and ten quantile bins
decoded continuous values (no synthetic value a class); now it runs partition selection over the observed values,
and every value it releases decodes exactly (a point bin, or a category when they hold nearly every row)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger
from dpsynth.privacy.neighbouring import Neighbouring
from tests.data.test_discover import _Coupling

# weight classes and their rows in powerlifting_meets (the numeric ones)
_CLASSES = np.array([82.5, 75, 67.5, 90, 52, 60, 100, 56, 110, 93, 83, 105, 74, 125, 120, 66, 63, 72, 57, 84, 59,
                     48, 47, 44, 53, 43])
_ROWS = np.array([2768, 2744, 2721, 2621, 2450, 2066, 1977, 1830, 1791, 1623, 1591, 1564, 1423, 1391, 1259, 1092,
                  1091, 1072, 980, 821, 760, 662, 573, 425, 182, 133], dtype=float)


def _classes(n: int, seed: int, spread: int = 0) -> pd.DataFrame:
    """Weight classes for ``n`` rows and six smooth columns beside them (a budget as thin as the real table's);
    ``spread`` rows of distinct numbers (two decimals) over [43, 125] among them."""
    rng = np.random.default_rng(seed)
    wc = _CLASSES[rng.choice(_CLASSES.size, size=n, p=_ROWS / _ROWS.sum())]
    wc[:spread] = np.round(np.linspace(43.01, 124.99, spread), 2)
    table = {"wc": wc}
    for k in range(6):
        table[f"x{k}"] = np.round(rng.normal(100, 20, n), 1)
    return pd.DataFrame(table)


def _discover(table, seed=0):
    spec = parse_discover({"epsilon": 1.0, "delta": 1e-6})
    ledger = Ledger(spec.epsilon, spec.delta)
    found = discover_schema(table, spec, ledger=ledger, neighbouring=Neighbouring.ADD_REMOVE,
                            rng=np.random.default_rng(seed))
    return found, ledger


def test_codes_a_zoom_shows_apart_decode_exactly():
    """The classes holding 4% of the rows or more each get a point bin (or a category): before, none did (ten
    quantile bins, "no heavy cell in the last fine histogram"); the column spends its allotment, no more."""
    found, _ = _discover(_classes(30_000, 1))
    spec, info = found.schema["columns"]["wc"], found.columns["wc"]
    assert any("few distinct numbers in the last fine histogram" in x for x in info["learned"]), info["learned"]
    if spec["type"] == "categorical":
        exact = set(np.asarray(spec["categories"], dtype=float).tolist())
    else:
        edges = np.asarray(spec["edges"], dtype=float)
        exact = set(edges[:-1][np.diff(edges) == 0].tolist())  # point bins: the value written twice
    big = _CLASSES[_ROWS / _ROWS.sum() >= 0.04]
    assert set(big.tolist()) <= exact, (sorted(exact), spec)
    assert exact <= set(_CLASSES.tolist())  # only the column's own values
    assert info["epsilon_spent"] <= info["epsilon"] + 1e-12 and info["epsilon_spent"] >= 0.99 * info["epsilon"]


def test_whether_the_zoom_shows_codes_is_read_off_noisy_counts(monkeypatch):
    """Discovery on D (classes, 600 rows of distinct numbers among them) records every mechanism output; replayed
    on D′ (8,000 class rows moved onto those numbers: the zoom's true cells no longer show few distinct numbers,
    and no observed value is new) it gives the same schema, ledger and evidence."""
    d = _classes(30_000, 1, spread=600)
    d2 = d.copy()
    moved = np.flatnonzero(np.isin(d["wc"].to_numpy(), _CLASSES))[:8000]
    d2.loc[moved, "wc"] = d["wc"].to_numpy()[np.arange(8000) % 600]
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found, ledger = _discover(d)
    assert any("few distinct numbers in the last fine histogram" in x for x in found.columns["wc"]["learned"])
    coupling.mode = "replay"
    found2, ledger2 = _discover(d2)
    assert found2.schema == found.schema and found2.columns == found.columns
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]

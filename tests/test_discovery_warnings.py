"""A zero-config release says where discovery lost labels (issue 27: "categories lost, silently"; post-processing
of the released model), and a discovery hint for one column keeps every other column."""

from __future__ import annotations

import numpy as np
import pandas as pd

import dpsynth
from dpsynth.config import parse_config, zero_config


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rare = np.array([f"label_{i:02d}" for i in range(40)])  # 40 labels of 1.25 % each: none passes at n = 2,000
    return pd.DataFrame({"kind": rng.choice(rare, n), "side": rng.choice(["left", "right"], n),
                         "size": rng.integers(0, 50, n)})


def test_a_column_of_labels_too_rare_to_discover_gets_a_warning_and_a_balanced_one_none():
    """'kind' (40 labels of 25 rows at n = 2,000) keeps few or none: most synthetic rows are __other__, and the
    warning says so with its share; 'side' (two halves) keeps both and its __other__ cell holds noise only
    (well under 2 %: its share is read from the same model)."""
    r = dpsynth.release(_table(2_000), zero_config(1.0, 1e-6), rng=0)
    warned = [w for w in r.report["warnings"] if w.startswith("column 'kind': about ")]
    assert len(warned) == 1 and "schema.discover.columns.kind.categories" in warned[0]
    share, said = (r.synthetic["kind"] == "__other__").mean(), float(warned[0].split("about ")[1].split("%")[0])
    assert share > 0.5 and abs(share - said / 100) <= 0.01  # (the model's mass, rounded to a percent)
    assert not any(w.startswith("column 'side'") for w in r.report["warnings"])


def test_a_hint_for_one_column_discovers_every_other_column_too():
    """Hints add public facts and drop nothing (issue 27: one column hint dropped every other column)."""
    cfg = parse_config({"schema": {"discover": {"epsilon": 0.5, "delta": 1e-6,
                                                "columns": {"side": {"categories": ["left", "right"]}}}},
                        "privacy": {"epsilon": 1.0, "delta": 1e-6}})
    r = dpsynth.release(_table(500), cfg, rng=0)
    assert list(r.synthetic.columns) == ["kind", "side", "size"]
    assert r.report["privacy"]["discovery"]["columns"]["side"]["public"] == ["categories", "type"]

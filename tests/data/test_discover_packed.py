"""Logarithmic fine cells for a numeric column whose numbers are packed at the bottom of its range (issue 27's
held-out-10 check: car_exports' ``value``, six indices near 1 for 86 % of its rows and trade values from 10 to
10⁸ for the rest).  The 10 %-90 % quantile rule (SKEW_RATIO) misses it — the 90 % quantile still falls among the
indices — and linear cells over [0, 10⁴) put every index in the first cell: three bins, 1-way TV 0.55 under the
judge's quantile bins.  A noisy median whose bucket ends under 1/PACKED of the coarse range's top makes the
cells logarithmic too (dpsynth/data/discover/column.py, ``_skew``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.data.test_discover_allot import _zcdp


def _packed(seed: int, n: int = 20_000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    index = rng.normal(0.9, 0.2, n).clip(0.1, 1.6)
    trade = 10 ** rng.uniform(1, 8, n)
    value = np.where(rng.random(n) < 0.86, index, trade)
    return pd.DataFrame({"value": value, "kind": rng.choice(["a", "b"], n)})


def test_numbers_packed_at_the_bottom_of_their_range_get_logarithmic_cells():
    """Seeds 0-2 (one discovery each, ~1 s): logarithmic cells, and at least four bin edges among the indices
    (under 2), where linear cells gave one bin [0, 100).  The profile's buckets for 17,000 indices stand far
    past its cut, so the median's bucket is certain; fails before the rule on each seed."""
    for seed in range(3):
        found, _, _ = _zcdp(_packed(seed), seed=seed)
        learned = found.columns["value"]["learned"]
        assert any(note.startswith("skewed") for note in learned), learned
        edges = found.schema["columns"]["value"]["edges"]
        assert sum(e < 2 for e in edges) >= 4, edges

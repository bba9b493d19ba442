"""A column's kind read off four noisy counts (null, text, dates, numbers) before its profile: a column of text
needs nothing else its profile measures.

The profile (:data:`~dpsynth.data.discover.column.PROFILE_SHARE` of a column's allotment, one noisy histogram of
371 cells) finds a numeric column's integrality, range and skew; of a categorical column it only reads the type,
the noisy non-null rows and the null cell, which four cells tell as well.  So every column whose kind is unknown
first spends :data:`KIND_SHARE` of its allotment on one histogram of four cells (each row in exactly one: the
profile's sensitivity): a column this calls categorical skips its profile, and the rest of its allotment goes to
its selections (and, through the pool, to the others'); any other column runs its profile as before, whose counts
decide (the four cells cost it KIND_SHARE of its stage).  A text column's selections then also release its null
rows as a public cell (:func:`~dpsynth.data.discover.values.select_categories`), averaged with the four cells'
(:func:`~dpsynth.data.discover.nulls.fuse_nulls`).  Every decision reads the noisy counts only (post-processing).

Only where the discovery is starved: a zero-config release whose share of ρ is at
:data:`~dpsynth.data.discover.MAX_SHARE` (``DiscoverSpec.kind_first``, from the public row and column counts:
:func:`~dpsynth.data.discover.share_for`), where a category of
:data:`~dpsynth.data.discover.allot.TARGET_SHARE` is out of the selections' reach and every share of the budget
they get keeps more categories (the seen tables up to about 20,000 rows).  Elsewhere the number columns' stages
would pay for categories already found.
"""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.data.discover.nulls import NULL_SD

__all__ = ["KIND_SHARE", "text_kind"]

KIND_SHARE = 0.1
"""Share of a column's allotment for its four-cell kind histogram (:func:`text_kind`). The text column's probe
(:data:`~dpsynth.data.discover.values.PROBE_SHARE` of its stage) tests the rows its values leave out against the
noisy non-null rows, now the four cells': per unit of allotment that difference's variance is top/(PROBE_SHARE·(1 −
K)) + 1/K against top/(PROBE_SHARE·(1 − PROFILE_SHARE)) + 1/PROFILE_SHARE with the profile; for two values kept,
24.8 against 22.4 at K = 0.1 (+5% sd; 30.9 at 0.06, 22.4 at 0.15), while a text column's stage is 0.9 of its
allotment instead of 0.7 (less what :func:`~dpsynth.data.discover.allot.refund` gives back to the number columns).
Issue 27's small tables (the 23 seen tables of 2,000-4,400 rows; zero-config 2-way L1, seeds 2-7, geometric mean of
after / before): **x0.989** (ucla_courses x0.89, breast_rotterdam x0.89, city_weather x0.94, schooling and migraine
x0.95, planes x0.96; worse: cracker_choice x1.09, wilms_tumor x1.05, wife_hours x1.04, wage x1.03; acs_2012 x1.00:
x0.91 on seeds 2-5, then ``income`` bounded [0, 1] on seed 7, a number column's draw); seeds 2-5 alone x0.980 at 0.1
and x1.013 at 0.15 (the number columns' stages, before :func:`~dpsynth.data.discover.allot.refund`), x0.990 at 0.06
without the selections' null cell (acs_2012's ``lang``, 5% null, lost its nulls on 3 of 4 seeds: the four cells' sd
is 97 rows there; the null cell alone, without the four cells, x0.995). The larger seen tables whose share is capped
(seeds 2-5): x0.944 (health_insurance x0.91, resume and phone_churn x0.93, hotels x0.97, wa_churn x0.98); those
under the cap (adult, german_health, gss_wages, nesarc_drinks, seattle_pets) are unchanged."""

TEXT_SD = 2.0
"""A column is text (categorical) when its noisy text cell passes the histogram's cut and TEXT_SD sds, and holds
more than its noisy numbers and dates (the profile's rule, ``column.FALLBACK_TEXT_SD``)."""


def text_kind(col, budget: ColumnBudget, edges: np.ndarray) -> bool:
    """One noisy histogram of ``col``'s rows (a :class:`~dpsynth.data.discover.column.ColumnDiscovery`) in four
    cells, null, text, dates and numbers (the profile's cells over the public ``edges``, the numbers summed), with
    ``budget``.  True when the column is text: then its type, noisy non-null rows (the cells past the cut, as the
    profile's) and null evidence are set, as its profile would set them, and the profile is not needed."""
    col.kind_tested = True  # (allot.refund: a column the four cells did not call text owes them to the text ones)
    cells = np.asarray(col.profile.profile_counts(edges))
    counts = np.array([cells[0], cells[1], cells[2], cells[3:].sum()], dtype=np.int64)
    noisy = budget.histogram(counts, "rows per kind (null, text, dates, numbers: 4 cells)")
    cut = budget.block_cut(1, noisy.size)
    kept = np.where(noisy >= cut, noisy, 0)
    text, dates, numbers = float(kept[1]), float(kept[2]), float(kept[3])
    if not (text > max(numbers, dates) and text >= TEXT_SD * budget.sd):
        return False
    col.kind, col.no_profile = "categorical", True
    col.evidence.null = (float(noisy[0]), budget.sd)
    col.non_null = float(max(1.0, text + dates + numbers))
    col.non_null_sd = budget.sd * math.sqrt(max(1, int(np.count_nonzero(kept[1:]))))
    col.quiet_nulls = bool(noisy[0] < min(cut, NULL_SD * budget.sd))
    col.learned.append("type categorical (noisy null, text, date and number counts: 4 cells; no profile)")
    return True


"""Discovery of a date or timestamp column (docs/privacy.md, "Dates"): its spelling, then its calendar span and
bins, each read off a noisy histogram of :class:`~dpsynth.data.discover.noise.ColumnBudget`.  The functions take
the column's :class:`~dpsynth.data.discover.column.ColumnDiscovery` (``disc``: its profile boundary, hint, noisy
row count and what it learned); column.py calls :func:`discover_datetime` for a column typed ``datetime``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth.data.discover.noise import FILL, FINE_SHARE, MIN_CELLS, ColumnBudget, quantile_edges, support
from dpsynth.data.timestamps import DAY, HOUR, SPELLING_CELLS, SPELLINGS, calendar_edges, resolution, spelled_format

__all__ = ["DATETIME_RANGE", "discover_datetime", "spelling"]

DATETIME_RANGE = (-2208988800.0, 4102444800.0)
"""The public range of a discovered date column: 1900-01-01 to 2100-01-01 (seconds since the epoch, UTC)."""

SPELLING_SHARE, SPELLING_MOST, TIME_SHARE, DATE_CELLS = 0.1, 0.5, 0.05, 400
"""A datetime column's stage spends SPELLING_SHARE of its budget on the histogram of its spellings; a spelling
holding SPELLING_MOST of the noisy readable rows is its ``format``; unpadded fields and times of day count when
their cells past the cut hold TIME_SHARE of the rows; its calendar grid has at most DATE_CELLS cells."""
_UNIT_SECONDS = {"month": 31 * DAY, "day": DAY, "hour": HOUR}


def discover_datetime(disc, budget: ColumnBudget) -> dict:
    """A date or timestamp column (docs/privacy.md, "Dates"): its spelling (:func:`spelling`, with
    :data:`SPELLING_SHARE` of the stage's budget), then a noisy histogram of its instants per calendar year
    over the public range :data:`DATETIME_RANGE` (:data:`FINE_SHARE` of the rest) whose support is the year
    span, then one over that span in the finest calendar unit (month, day, hour; no finer than the spelling
    writes) of which it holds at most :data:`DATE_CELLS` cells and the noisy rows fill: its support gives the
    bounds and its noisy quantiles the edges, all on the calendar grid."""
    ask, budget = budget.split(SPELLING_SHARE)
    fmt, step = spelling(disc, ask)
    disc.profile = disc.profile.as_instants()
    lo, rest = DATETIME_RANGE[0], budget  # a time of day (no date in its spelling) is read on that public day
    hi = lo + DAY
    if fmt is None or "%Y" in fmt:
        first, rest = budget.split(FINE_SHARE)
        years = calendar_edges(*DATETIME_RANGE, "year", "datetime")
        noisy = first.histogram(disc.profile.cell_counts(years), f"rows per calendar year ({years.size - 1} "
                                "public cells)")
        found = support(noisy, first)
        if found is None:  # nothing stands out: the year with the largest noisy count
            found = (int(np.argmax(noisy)),) * 2
        lo, hi = float(years[found[0]]), float(years[found[1] + 1])
    fill = disc.non_null / (FILL * rest.block_cut(1, DATE_CELLS)) if disc.non_null is not None else DATE_CELLS
    unit = "year"
    for cand in ("month", "day", "hour"):  # the finest calendar unit the span and the rows allow
        size = (hi - lo) / _UNIT_SECONDS[cand]
        if _UNIT_SECONDS[cand] < step or size > min(DATE_CELLS, max(fill, MIN_CELLS)):
            break
        unit = cand
    grid = calendar_edges(lo, hi - 1.0, unit, "datetime")  # (whole years: the year histogram's cells)
    noisy = rest.histogram(disc.profile.cell_counts(grid), f"rows per calendar {unit} of the noisy span "
                           f"({grid.size - 1} public cells)")
    disc._cells(grid, noisy, rest.sd)
    found = support(noisy, rest)
    a, b = found if found is not None else (0, grid.size - 2)
    lo, hi = float(grid[a]), float(grid[b + 1])
    bins = disc.hint.bins or disc.spec.bins
    edges = quantile_edges(grid[a:b + 2], np.clip(noisy[a:b + 1], 0, None).astype(float), bins, lo, hi)
    text = "%Y-%m-%d" if np.all(edges % DAY == 0) else "%Y-%m-%dT%H:%M:%S"
    iso = [pd.Timestamp(e, unit="s", tz="UTC").strftime(text) for e in edges]  # one per edge (≤ bins + 1)
    disc.learned.append(f"{len(iso) - 1} date bins from {iso[0]} to {iso[-1]} on a calendar {unit} grid "
                        "(noisy histograms per year, then per " + unit + ")")
    spec: dict = {"type": "datetime", "edges": iso}
    if fmt is not None:
        spec["format"] = fmt
    return spec


def spelling(disc, budget: ColumnBudget) -> tuple[str | None, float]:
    """The spelling the column's values are written in: one noisy histogram over the public spelling cells
    (:func:`~dpsynth.data.timestamps.spelling_cells`: spelling × zero-padded or not × midnight / whole hour /
    finer).  Cells past the cut count (post-processing).  The spelling whose cells hold the most rows is the
    column's ``format`` when it holds :data:`SPELLING_MOST` of them; not zero-padded when such cells pass the
    cut and hold :data:`TIME_SHARE` of its rows; with a time part when non-midnight cells do (else its time
    fields are written as literal zeros), to the hour unless finer ones do.  Without such a spelling, an ISO
    timestamp format when the column carries times of day, else None (ISO dates).  Returns (format or None,
    the step in seconds decoded values are drawn in: a day, an hour or a second)."""
    noisy = budget.histogram(disc.profile.spelling_counts(), f"rows per public spelling ({SPELLING_CELLS} cells: "
                             "spelling, zero padding, time part)")
    cut = budget.block_cut(1, noisy.size)
    kept = np.where(noisy >= cut, noisy, 0).astype(float).reshape(len(SPELLINGS) + 1, 2, 3)
    per = kept.sum(axis=(1, 2))
    total = float(per.sum())
    winner = int(np.argmax(per))
    held = float(per[winner])
    times = kept[:, :, 1:].sum()  # rows past the cut with a time of day, over every spelling
    finer = kept[:, :, 2].sum()
    step = DAY if times < TIME_SHARE * max(total, 1.0) else (HOUR if finer < TIME_SHARE * total else 1.0)
    state = 0 if step == DAY else (1 if step == HOUR else 2)
    if total <= 0 or winner == len(SPELLINGS) or held < SPELLING_MOST * total:
        if state == 0:
            disc.learned.append("no public spelling holds most of the rows (noisy counts): written as ISO dates")
            return None, step
        fmt = spelled_format("%Y-%m-%dT%H:%M:%S", False, state)  # the times of day are kept
        disc.learned.append(f"no public spelling holds most of the rows (noisy counts): written as {fmt!r}")
        return fmt, resolution(fmt)
    unpadded = bool(kept[winner, 1].sum() >= TIME_SHARE * held)
    fmt = spelled_format(SPELLINGS[winner], unpadded, state)
    disc.learned.append(f"format {fmt!r}: its spelling holds about {held / total:.0%} of the dates (noisy counts)")
    return fmt, resolution(fmt)

"""When an integral column's first fine histogram (cells wider than one integer) is measured again per integer
(:meth:`~dpsynth.data.discover.column.ColumnDiscovery._fine`, "tied integers in a short range"): post-processing of
that noisy histogram and the profile's noisy row count only.

Two cases, either suffices:

* **tied values** (years): the support is at most ``few_cells`` wide cells holding ``concentrated`` of the
  column's noisy rows.  The cells are counted on the *core*, the cells whose own noisy count passes the cut, when
  the rings of :func:`~dpsynth.data.discover.noise.support` reached further: a ring passes on noise alone with
  probability up to 1% by design, and one such cell made anes_therms' survey years (1978-2012, cells of 50) a
  support of 4 cells, zoomed without trimming: bounds [1850, 2050] and bins 130 years wide (issue 27, 1-way TV
  0.043 on one seed of two; the per-integer histogram over the wider support still finds the years' own bounds);
* **few integers for the rows**: the support holds at most as many integers as the column's noisy rows fill
  (``fill``: cells filled FILL times over the cut, as for the first histogram's own cells) and at most
  ``unit_cells``.  A coarse range wider than the data (nlswork's weeks worked, 0-104, in [1.5, 300)) gets cells of
  3 whose support is the data; one cell per integer over that support keeps the spikes at 52, 98 and 104 weeks
  (a third of the rows) that cells of 3 spread evenly (issue 27, 1-way TV 0.117 against 0.009 by hand).
"""

from __future__ import annotations

import numpy as np

from dpsynth.data.discover.noise import ColumnBudget

__all__ = ["filled", "tied_cells"]


def tied_cells(noisy: np.ndarray, found: tuple[int, int] | None, budget: ColumnBudget, *, non_null: float | None,
         few_cells: int, concentrated: float) -> bool:
    """Tied values (see the module docstring): the first fine histogram ``noisy`` (measured with ``budget``,
    support ``found``) shows at most ``few_cells`` cells, or a core of at most that many, holding
    ``concentrated`` of the profile's noisy rows ``non_null``."""
    if found is None:
        return False
    core = np.flatnonzero(noisy[found[0]:found[1] + 1] >= budget.block_cut(1, noisy.size))
    if found[1] - found[0] + 1 > few_cells and (core.size == 0 or core[-1] - core[0] + 1 > few_cells):
        return False
    return non_null is None or float(noisy[found[0]:found[1] + 1].sum()) >= concentrated * non_null


def filled(found: tuple[int, int] | None, width: float, most: float) -> bool:
    """Few integers for the rows (see the module docstring): the support ``found`` of cells ``width`` integers
    wide (more than one) holds at most ``most`` integers (what the noisy rows fill, at most the unit cells')."""
    return found is not None and width > 1 and (found[1] - found[0] + 1) * width <= most

"""The privacy core: neighbouring relations, mechanisms (every random draw on private data), the ledger.

This layer imports numpy and :mod:`dpsynth.errors` only: no pandas, no files, no algorithms, no CLI
(enforced by ``make lint``).  ``accountant`` holds all budget arithmetic (``allocation``: budgets planned
before they are charged); ``mechanisms`` charges it before each draw; ``noisedown`` is iReduct's exact noise-reduction sampler.
"""

from dpsynth.privacy.neighbouring import Neighbouring

__all__ = ["Neighbouring"]

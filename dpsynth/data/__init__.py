"""The data layer: the public schema, row encoding, file I/O and the counts engines.

:mod:`dpsynth.data.counts` is the privacy boundary: algorithms see the private table only through a
``Counts`` object (exact marginals and n), whose answers must pass through a mechanism before release.
"""

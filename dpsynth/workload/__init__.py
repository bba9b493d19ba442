"""Workloads: the public query classes an algorithm measures (marginals, ranges, conjunctions, general linear queries)."""

"""The :func:`evaluate` entry point: encodes both tables and assembles every section's result."""

from __future__ import annotations

import copy
import math

import numpy as np
import pandas as pd

from dpsynth._version import __version__
from dpsynth.config import Config
from dpsynth.errors import UsageError
from dpsynth.nonprivate.evaluate.classifier import _classifier
from dpsynth.nonprivate.evaluate.columns import column_fidelity, unrepresentable
from dpsynth.nonprivate.evaluate.counting import _Counter, _encode
from dpsynth.nonprivate.evaluate.marginals import _evaluate_k, _full_table_re, _range_queries
from dpsynth.nonprivate.evaluate.neutral import (
    CHECK_BINS,
    NEUTRAL_METHODS,
    neutral_codes,
    neutral_marginals,
    verdict,
    verdict_k,
    with_instants,
)
from dpsynth.nonprivate.evaluate.options import METHODS, NOT_PRIVATE, EvalOptions
from dpsynth.nonprivate.evaluate.workload import (
    _configured_workload,
    _released_errors,
    _workload_conjunctions,
    _workload_linear,
    _workload_marginals,
    _workload_parities,
    _workload_queries,
    _workload_ranges,
    parse_released_marginals,
)
from dpsynth.progress import Progress, no_progress
from dpsynth.workload.marginals import default_sanity_bound

_DEFAULT_OPTIONS = EvalOptions()
RELEASE_BINS = ("the sections from 'domain' on are computed in the release's own schema bins: they cannot see "
                "values the schema merged into one bin, into __other__, or clamped; read 'neutral' first")


def evaluate(
    real_table: pd.DataFrame,
    synthetic_table: pd.DataFrame,
    config: Config,
    *,
    rng: np.random.Generator,
    options: EvalOptions = _DEFAULT_OPTIONS,
    released: pd.DataFrame | None = None,
    released_queries: list[dict] | None = None,
    progress: Progress = no_progress,
) -> dict:
    """Compare a synthetic table (and optionally released noisy marginals) with the real table.

    Returns a JSON-ready dict (see docs/evaluate.md); key order is fixed and,
    for a fixed ``rng`` seed, so are all values.  NOT PRIVATE (module docstring).
    """
    domain = config.domain
    target = None
    if options.target is not None:
        if options.target not in domain.names:
            raise UsageError(f"--target '{options.target}' is not a column of the config's schema")
        target = domain.index(options.target)
    if not options.workload and max(options.ks) > len(domain):
        raise UsageError(f"--k {max(options.ks)} is larger than the number of schema columns ({len(domain)})")
    real_codes = _encode(real_table, config, "real")
    synth_codes = _encode(synthetic_table, config, "synthetic")
    released_m = parse_released_marginals(released, domain) if released is not None else None
    real, synth = _Counter(real_codes, domain.sizes), _Counter(synth_codes, domain.sizes)
    delta = _default_sanity_bound(config, options, real.n)
    own = dict(config.workload.sanity_bounds.per_marginal)

    def delta_of(attrs) -> float:  # per-marginal sanity bounds of the config (§2), else the default
        return own.get(tuple(sorted(attrs)), delta)
    one_way = [real.counts((a,)).astype(float) for a in range(len(domain))]
    sample_rng, range_rng, cv_rng, fold_rng, neutral_rng = rng.spawn(5)
    ctx = {"names": domain.names, "sample": options.sample_marginals, "rng": sample_rng,
           "max_cells": options.max_cells, "delta_of": delta_of, "one_way": one_way}
    if options.workload:
        marginals, range_sets, conj = _configured_workload(config)
        ks = sorted({len(m) for m in marginals})
        blocks = _workload_marginals(real, synth, marginals, ctx, progress)
        ranges = _workload_ranges(real, synth, range_sets, domain, one_way)
        n_ranges = int(sum(len(rq) for rq in range_sets))
        conjunctions = (_workload_conjunctions(real_codes, synth_codes, conj, domain, one_way, real.n)
                        if conj is not None else None)
        par = config.workload.parities
        parities = _workload_parities(real_codes, synth_codes, par, domain, one_way, real.n) if par is not None else None
        linear = _workload_linear(real, synth, config.workload.linear, domain, one_way)
        wq = config.workload.queries
        queries = (_workload_queries(real, synth, wq, wq.bounds(delta), one_way, released_queries)
                   if wq is not None else None)
    else:
        ks, n_ranges = list(options.ks), options.ranges
        conjunctions = linear = parities = queries = None
        blocks = [_evaluate_k(real, synth, k, ctx, progress) for k in options.ks]
        ranges = _range_queries(real, synth, domain, options.ranges, range_rng, one_way)
    real_raw, synth_raw = with_instants(real_table, domain), with_instants(synthetic_table, domain)  # raw values
    neutral = _neutral(real_raw, synth_raw, config, options, neutral_rng, progress)
    checks = neutral.pop("checks")
    return {
        "warning": NOT_PRIVATE,
        "dpsynth_version": __version__,
        "rows": {"real": real.n, "synthetic": synth.n},
        "verdict": verdict(neutral["marginals"], blocks, checks),
        "neutral": neutral,
        "unrepresentable": unrepresentable(real_raw, synth_raw, config),
        "release_bins": RELEASE_BINS,
        "domain": {"columns": len(domain), "cells": math.prod(domain.sizes)},
        "settings": {"k": ks, "sample_marginals": options.sample_marginals,
                     "sanity_bound": delta, "ranges": n_ranges, "target": options.target,
                     "workload": options.workload},
        "methods": list(METHODS),
        "marginals": blocks,
        "relative_entropy": _full_table_re(real, synth, one_way),
        "range_queries": ranges,
        "conjunctions": conjunctions,
        "parities": parities,
        "linear_queries": linear,
        "queries": queries,
        "released_marginals": _released_errors(real, synth, released_m, delta_of, one_way) if released_m else None,
        "classifier": (_classifier(real, synth, target, domain.names, released_m, options.folds, cv_rng,
                                   (config, fold_rng, progress) if options.release_per_fold else None)
                       if target is not None else None),
    }


def _default_sanity_bound(config: Config, options: EvalOptions, n: int) -> float:
    """δ of marginals without their own bound: ``--sanity-bound``, else the config's
    ``workload.sanity_bounds.default``, else its algorithm's ``sanity_bound``, else 10⁻⁴·n (iReduct §6.1)."""
    for value in (options.sanity_bound, config.workload.sanity_bounds.default,
                  getattr(config.params, "sanity_bound", None)):
        if value is not None:
            return float(value)
    return default_sanity_bound(n)


def _neutral(real_table: pd.DataFrame, synthetic_table: pd.DataFrame, config: Config, options: EvalOptions,
             rng: np.random.Generator, progress: Progress) -> dict:
    """The neutral view (:mod:`.neutral`): its marginals and every column's raw-value figures."""
    names = config.domain.names
    cols, real_codes, synth_codes = neutral_codes(real_table, synthetic_table, names)
    sizes = tuple(c.size for c in cols)
    real, synth = _Counter(real_codes, sizes), _Counter(synth_codes, sizes)
    ks = [k for k in options.ks if k <= len(names)]
    sample_state = copy.deepcopy(rng)  # the binning checks score the same sampled marginals
    marginals = neutral_marginals(real, synth, names, ks, options.sample_marginals, rng, options.max_cells, progress)
    checks = {}
    k = verdict_k(marginals)
    if k is not None and any(c.kind == "numeric" for c in cols):  # (other kinds do not depend on the bins)
        for bins in CHECK_BINS:  # the verdict's k again with numbers in other quantile bins (neutral.verdict)
            other, r_codes, s_codes = neutral_codes(real_table, synthetic_table, names, bins)
            size = tuple(c.size for c in other)
            checks[bins] = neutral_marginals(_Counter(r_codes, size), _Counter(s_codes, size), names, [k],
                                             options.sample_marginals, copy.deepcopy(sample_state),
                                             options.max_cells, progress)[0]
    return {
        "about": NEUTRAL_ABOUT,
        "methods": list(NEUTRAL_METHODS),
        "marginals": marginals,
        "checks": checks,
        "columns": [column_fidelity(c, real_table[c.name], synthetic_table[c.name], real_codes[:, j],
                                    synth_codes[:, j]) for j, c in enumerate(cols)],  # loop over columns
    }


NEUTRAL_ABOUT = ("bins chosen from the REAL table alone, not the release's schema: numbers at the real column's "
                 "distinct deciles (integers with at most 20 values: one bin each; integer codes, at most 200 values "
                 "filling at most half their range: their 20 most frequent, a code the real column lacks is other), "
                 "text as its 20 most frequent "
                 "values; plus an other and a null bin per column. l1 = sum of |p - q| over a marginal's cells "
                 "(0 equal, 2 disjoint), tv = l1/2")

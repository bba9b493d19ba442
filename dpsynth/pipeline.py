"""The release pipeline: table → public domain → codes → algorithm → decode → report.

This is the documented Python API behind ``dpsynth release``::

    import numpy as np, pandas as pd, dpsynth
    cfg = dpsynth.load_config("configs/adult.yaml")
    result = dpsynth.release(pd.read_csv("adult.csv"), cfg, rng=np.random.default_rng())
    result.synthetic.to_csv("synth.csv", index=False)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dpsynth.algorithms import AlgorithmContext, get_algorithm
from dpsynth.algorithms.base import NoisyMarginal
from dpsynth.algorithms.bounds import release_bounds
from dpsynth.config import Config
from dpsynth.data.counts import ArrayCounts, Counts
from dpsynth.data.discretize import Decoded, check_columns, column_numbers, encode
from dpsynth.data.fine import FineView, decide, measure_fine
from dpsynth.data.source import InputOptions
from dpsynth.errors import ConfigError
from dpsynth.modelfile import CHUNK_ROWS, ReleasedModel, draw_chunks
from dpsynth.models.base import code_dtype
from dpsynth.models.estimation import LinearMeasurement
from dpsynth.models.mixture import RecordsModel
from dpsynth.privacy.accountant import BudgetError, Charge, Ledger, recorded_charge
from dpsynth.privacy.mechanisms import geometric_mechanism
from dpsynth.privacy.neighbouring import Neighbouring
from dpsynth.progress import Progress, no_progress
from dpsynth.report import build_report

if TYPE_CHECKING:
    from dpsynth.data.discover.tables import DiscoveryTable

__all__ = [
    "ReleaseResult",
    "marginals_table",
    "preflight",
    "release",
    "release_discovered",
    "release_from_counts",
    "release_from_source",
]


@dataclass
class ReleaseResult:
    """A release: the report, the released model, the noisy marginals, and the synthetic rows.

    The rows are drawn lazily and in chunks (:meth:`chunks`), from a generator
    seeded by the release's ``rng``, so the CLI can write any number of rows in
    bounded memory; :attr:`synthetic` materialises them (the same rows) as one
    DataFrame.  ``model`` (a :class:`~dpsynth.modelfile.ReleasedModel`) draws
    further rows at no privacy cost: ``result.model.sample(n, rng=...)``.
    :attr:`marginals` (the long-format table of ``release --marginals``) is built on
    first access: it has one row per cell and a label per column, about 100 bytes per
    cell against the 8 of the noisy counts (a 3,003-marginal Adult workload: 25 GB).
    """

    report: dict
    model: ReleasedModel
    rows: int
    diagnostics: dict = field(default_factory=dict)  # not in the report (e.g. run times)
    draw_entropy: tuple[int, ...] = ()
    codes: np.ndarray | None = None  # rows fixed by the algorithm itself (DualQuery)
    config_document: dict | None = None  # a discovered schema's release config, reusable (all of it DP output)

    def chunks(self, chunk_rows: int = CHUNK_ROWS) -> Iterator[Decoded]:
        """The synthetic rows, ``chunk_rows`` at a time (the same rows on every call)."""
        rng = np.random.default_rng(list(self.draw_entropy))
        source = self.codes if self.codes is not None else self.model.model
        return draw_chunks(source, self.model.config, self.rows, rng=rng, chunk_rows=chunk_rows, fine=self.model.fine)

    @property
    def marginals(self) -> pd.DataFrame | None:
        """The released noisy marginals in long format (built on first access; cached)."""
        if "_marginals" not in self.__dict__:
            released = list(self.model.measurements)
            self.__dict__["_marginals"] = marginals_table(released, self.model.config) if released else None
        return self.__dict__["_marginals"]

    @property
    def synthetic(self) -> pd.DataFrame:
        """All synthetic rows as one DataFrame (memory proportional to the rows; cached)."""
        cached = self.__dict__.get("_synthetic")
        if cached is None:
            frames = [c.to_pandas() for c in self.chunks()]
            cached = self.__dict__["_synthetic"] = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        return cached


def preflight(config: Config) -> None:
    """Checks that need only the configuration; run before any data is read."""
    worst = max((config.domain.cells(m) for m in config.marginals), default=0)
    if worst > config.max_cells:
        raise ConfigError(
            f"workload.marginals: the largest marginal has {worst} cells, more than the limit of "
            f"{config.max_cells} (raise --max-cells / limits.max_cells or use coarser bins)"
        )
    linear = config.workload.linear
    worst = max((config.domain.cells(s.attrs) for s in linear.sets), default=0) if linear is not None else 0
    if worst > config.max_cells:
        raise ConfigError(
            f"workload.linear: the largest query support has {worst} cells, more than the limit of "
            f"{config.max_cells} (raise --max-cells / limits.max_cells or use queries over fewer columns)"
        )
    spec = get_algorithm(config.algorithm)
    if spec.preflight is not None:  # the algorithm's own size guards, from the configuration alone
        spec.preflight(config.domain, config.marginals, config.params)
    if spec.check_workload is not None:
        spec.check_workload(config.domain, config.workload, config.params)
    if config.privacy.neighbouring is Neighbouring.REPLACE_ONE and not config.privacy.n_public:
        raise ConfigError(
            "privacy.n: under replace-one neighbours n is public; set 'n: public' "
            "instead of spending budget on it"
        )


def release(
    table: pd.DataFrame,
    config: Config | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rng: np.random.Generator | int | None = None,
    seeded: bool | None = None,
    progress: Progress = no_progress,
    notice: Callable[[str], None] = lambda msg: None,
    prior_charges: Sequence[Charge] = (),
    prior_measurements: Sequence[LinearMeasurement] = (),
) -> ReleaseResult:
    """Release differentially private synthetic rows of ``table`` under ``config``.

    Without ``config``, the zero-config release: ``dpsynth.release(df, epsilon=1.0)`` discovers the schema
    privately in the same budget and runs ``auto`` (:func:`dpsynth.config.zero_config`; ``delta`` defaults to
    :data:`dpsynth.config.DEFAULT_DELTA`); ``result.config_document`` is the reusable configuration.

    ``rng`` supplies all randomness: a Generator, an int seed, or None for OS entropy (normalised once with
    ``np.random.default_rng``, scientific-python SPEC 7); ``seeded`` only changes what the report says about
    it: True ("seeded"), False ("os-entropy") or None: "seeded" for an int, "os-entropy" for None, and
    "caller-supplied generator" for a Generator (the library cannot know how it was made).
    ``notice`` receives human-readable remarks (dropped columns) that are not
    part of the report.  A config with ``schema: {discover: ...}`` learns its
    schema first, in the same budget (:func:`release_discovered`).
    """
    if config is None:
        if epsilon is None:
            raise ConfigError("epsilon: required for a release without a configuration (e.g. epsilon=1.0)")
        from dpsynth.config import zero_config

        config = zero_config(epsilon, delta)
    elif epsilon is not None or delta is not None:
        raise ConfigError("epsilon/delta: give them in the configuration (privacy.epsilon) when a config is passed")
    if seeded is None and not isinstance(rng, np.random.Generator):
        seeded = rng is not None
    rng = np.random.default_rng(rng)
    if config.discover is not None:
        return release_discovered(table, config, rng=rng, seeded=seeded, progress=progress, notice=notice)
    preflight(config)
    dropped = check_columns(table.columns, config.domain)
    if dropped:
        notice(f"ignoring {len(dropped)} input column(s) not in the schema: {', '.join(dropped)}")
    codes = encode(table, config.domain, unknown=config.unknown)
    return release_from_counts(ArrayCounts(codes, config.domain), config, rng=rng, seeded=seeded, progress=progress,
                               notice=notice, prior_charges=prior_charges, prior_measurements=prior_measurements,
                               numbers=_numbers(table, config))


def _numbers(table: pd.DataFrame, config: Config) -> Callable[[Sequence[str]], dict]:
    """The raw (values, isnull) of named numeric columns, read on demand: PRIVATE, for the fine view's mechanism."""
    def read(names: Sequence[str]) -> dict:
        specs = [config.domain.columns[config.domain.index(name)] for name in names]
        return {s.name: column_numbers(table[s.name], s, table[s.name].isna().to_numpy(), config.unknown)
                for s in specs}
    return read


def release_from_source(
    path: str,
    config: Config,
    *,
    engine: str = "numpy",
    rng: np.random.Generator,
    seeded: bool | None = None,
    progress: Progress = no_progress,
    notice: Callable[[str], None] = lambda msg: None,
    spark_master: str | None = None,
    options: InputOptions | None = None,
) -> ReleaseResult:
    """:func:`release` of the table in file ``path``, counted by ``engine`` (numpy, stream or spark).

    The configuration checks (:func:`preflight`) and, for the stream and spark
    engines, the input's header against the schema run before any engine work;
    every engine gives the same counts, so a seeded release is byte-identical.
    ``options``: how to read the file (:class:`~dpsynth.data.source.InputOptions`; default: comma,
    UTF-8, and the configuration's ``schema.strip``).
    """
    from dpsynth.data.engines import check_engine, open_counts, read_header

    options = options if options is not None else InputOptions(strip=config.strip)
    preflight(config)
    if engine != "numpy" and config.decode.fine == "on":
        raise ConfigError(f"decode.fine: the fine view reads the raw numbers, which only the numpy engine holds; "
                          f"use --engine numpy or set decode.fine: off (not {engine})")
    if config.discover is not None:
        return _release_discovered_file(path, config, engine=engine, rng=rng, seeded=seeded, progress=progress,
                                        notice=notice, spark_master=spark_master, options=options)
    check_engine(config.domain, engine, config.unknown)
    if engine == "numpy":
        from dpsynth.data.io import read_table

        strings = config.domain.text_columns
        table = read_table(path, string_columns=strings, options=options)
        return release(table, config, rng=rng, seeded=seeded, progress=progress, notice=notice)
    dropped = read_header(path, config.domain, options)
    if dropped:
        notice(f"ignoring {len(dropped)} input column(s) not in the schema: {', '.join(dropped)}")
    counts = open_counts(path, config.domain, engine=engine, unknown=config.unknown, spark_master=spark_master,
                         progress=progress, options=options)
    try:
        return release_from_counts(counts, config, rng=rng, seeded=seeded, progress=progress, notice=notice)
    finally:
        counts.close()


def _release_discovered_file(path: str, config: Config, *, engine: str, rng: np.random.Generator,
                             seeded: bool | None, progress: Progress, notice: Callable[[str], None],
                             spark_master: str | None, options: InputOptions) -> ReleaseResult:
    """Discovery read by ``engine`` (every CSV column as text), then the release counted by the same engine."""
    from dpsynth.data.engines import discovery_table, open_counts, read_header

    table = discovery_table(path, engine=engine, spark_master=spark_master, progress=progress, options=options)
    try:
        if engine == "numpy":
            return release_discovered(table.frame, config, rng=rng, seeded=seeded, progress=progress, notice=notice)

        def release_inner(inner: Config, prior: Sequence[Charge],
                          measured: Sequence[LinearMeasurement]) -> ReleaseResult:
            preflight(inner)
            dropped = read_header(path, inner.domain, options)
            if dropped:
                notice(f"ignoring {len(dropped)} input column(s) not in the schema: {', '.join(dropped)}")
            counts = open_counts(path, inner.domain, engine=engine, unknown=inner.unknown, spark_master=spark_master,
                                 progress=progress, options=options)
            try:
                return release_from_counts(counts, inner, rng=rng, seeded=seeded, progress=progress, notice=notice,
                                           prior_charges=prior, prior_measurements=measured)
            finally:
                counts.close()

        return release_discovered(table, config, rng=rng, seeded=seeded, progress=progress, notice=notice,
                                  release_inner=release_inner)
    finally:
        getattr(table, "close", lambda: None)()


def release_from_counts(
    counts: Counts,
    config: Config,
    *,
    rng: np.random.Generator,
    seeded: bool | None = None,
    progress: Progress = no_progress,
    notice: Callable[[str], None] = lambda msg: None,
    prior_charges: Sequence[Charge] = (),
    prior_measurements: Sequence[LinearMeasurement] = (),
    numbers: Callable[[Sequence[str]], dict] | None = None,
) -> ReleaseResult:
    """The same release from any counts engine (the data are reached only through ``counts``).

    ``prior_charges``: what an earlier phase on the same data already charged to this budget (a discovery in the
    same zCDP ledger); a schema that records its discovery's spend (``schema.discovery``) adds one more entry.
    The algorithm spends what they leave, and the report's totals include them.  ``prior_measurements``: that
    phase's released noisy counts as linear measurements over this schema's codes, which an estimator may
    reuse (post-processing, :attr:`AlgorithmContext.prior`).  ``numbers``: the raw values of named numeric
    columns (numpy engine), for the fine view of ``config.decode`` (:mod:`dpsynth.data.fine`), measured after
    the row count as the ledger stage ``fine-decode``; without it the fine view is off."""
    if config.discover is not None:
        raise ConfigError("schema.discover: a release from counts needs a public schema")
    preflight(config)
    alg = get_algorithm(config.algorithm)
    prior = list(prior_charges)
    if config.schema_spend is not None:
        sp = config.schema_spend
        prior.insert(0, recorded_charge(epsilon=sp["epsilon_spent"], delta=sp["delta_spent"], rho=sp["rho_spent"],
                                        approx_delta=sp["approx_delta"],
                                        measured="the private discovery of the schema (schema.discovery)"))
    ledger = Ledger(config.privacy.epsilon, config.privacy.delta, alg.composition(config.params, config.privacy),
                    charges=prior)
    if prior and not ledger.would_fit(replace(prior[0], epsilon=0.0, delta=0.0, rho=0.0, approx_delta=0.0)):
        eps, dlt = ledger.spent()
        raise BudgetError(f"privacy.epsilon: the schema's discovery already spent epsilon={eps:.6g}, "
                          f"delta={dlt:.3g} of this budget (epsilon={config.privacy.epsilon:g}, "
                          f"delta={config.privacy.delta:g}); raise privacy.epsilon/delta to include it")
    n = _row_count(counts, config, ledger, rng)
    decision = decide(config.domain, config.decode, n=n, ledger=ledger, neighbouring=config.privacy.neighbouring,
                      available=numbers is not None)
    fine: FineView | None = None
    if decision.on and numbers is not None:
        fine = measure_fine(numbers(decision.columns), decision, config.domain, config.decode, ledger=ledger,
                            neighbouring=config.privacy.neighbouring, rng=rng)
    rows = config.output.rows if config.output.rows is not None else max(1, round(n))
    ctx = AlgorithmContext(
        domain=config.domain,
        counts=counts,
        ledger=ledger,
        neighbouring=config.privacy.neighbouring,
        n=n,
        rows=rows,
        workload=config.marginals,
        queries=config.workload,
        progress=progress,
        notice=notice,
        prior=tuple(prior_measurements),
    )
    out = alg.run(ctx, config.params, rng=rng)
    codes = None if out.codes is None else np.asarray(out.codes).astype(code_dtype(config.domain.sizes), copy=False)
    rows = len(codes) if codes is not None else rows
    used = config if out.params is None else replace(config, params=out.params)  # the params the run resolved
    report = build_report(
        used,
        ledger,
        details=out.details,
        warnings=out.warnings,
        rows=rows,
        seeded=seeded,
        marginals_released=len(out.marginals),
    )
    if out.model is not None:
        fitted = out.model
    else:
        assert codes is not None, "an algorithm returns a model or rows"
        fitted = _records_model(codes, config.domain.sizes)
    report["decode"] = decision.to_dict()
    report["error_bounds"] = release_bounds(config.algorithm, out, config.marginals, config.domain, n=n,
                                            n_epsilon=None if config.privacy.n_public else config.privacy.n_epsilon)
    model = ReleasedModel(used, fitted, list(out.marginals), privacy=report["privacy"], ledger=report["ledger"],
                          fine=fine)
    report["model"] = {"sha256": model.sha256, "kind": fitted.kind}
    # The rows are post-processing of the model: drawn later, in chunks, from a generator
    # seeded here by the release's own randomness.
    entropy = tuple(int(x) for x in rng.integers(0, 2**63, size=4))
    return ReleaseResult(report=report, model=model, rows=rows, diagnostics=out.diagnostics,
                         draw_entropy=entropy, codes=codes)


def _records_model(codes: np.ndarray, sizes) -> RecordsModel:
    """For an algorithm that returns rows only: the distinct rows, weighted by their counts."""
    records, counts = np.unique(codes, axis=0, return_counts=True)
    return RecordsModel(records, sizes, counts.astype(float))


def release_discovered(
    table: pd.DataFrame | DiscoveryTable,
    config: Config,
    *,
    rng: np.random.Generator,
    seeded: bool | None = False,
    progress: Progress = no_progress,
    notice: Callable[[str], None] = lambda msg: None,
    release_inner: Callable[[Config, Sequence[Charge], Sequence[LinearMeasurement]], ReleaseResult] | None = None,
) -> ReleaseResult:
    """Schema discovery (``config.discover``, its share of the budget), then the release with the rest.

    Under a zCDP algorithm (δ > 0) both phases share one zCDP ledger: the discovery takes
    ``discover.epsilon / privacy.epsilon`` of the ρ the budget allows once its partition selections' δ is set aside
    (:func:`~dpsynth.privacy.accountant.zcdp_share`) and measures with discrete Gaussian noise; the release spends
    what is left.  Otherwise the discovery has its own basic-composition ledger of (``discover.epsilon``,
    ``discover.delta``) and the release gets what is left (:func:`~dpsynth.privacy.accountant.budget_after`).
    Either way the report's ledger lists the discovery charges first and its totals cover both phases.
    ``table``: a DataFrame, or a file scanned by an engine with ``release_inner(config, prior_charges,
    prior_measurements)`` doing the release phase (:func:`release_from_source`).
    """
    from dpsynth.config import release_document, with_discovered_schema
    from dpsynth.data.discover.tables import as_discovery_table

    source = as_discovery_table(table)
    if release_inner is None:
        def release_inner(inner: Config, prior: Sequence[Charge],
                          measured: Sequence[LinearMeasurement]) -> ReleaseResult:
            return release(table, inner, rng=rng, seeded=seeded, progress=progress, notice=notice,
                           prior_charges=prior, prior_measurements=measured)

    from dpsynth.data.discover import MAX_SHARE, discover_schema, share_for
    from dpsynth.privacy.accountant import ZCDPComposition, budget_after, zcdp_share, zcdp_spent
    from dpsynth.report import add_discovery

    spec, privacy = config.discover, config.privacy
    composition = get_algorithm(config.algorithm).composition(config.params, privacy)
    if isinstance(composition, ZCDPComposition) and privacy.delta > spec.delta:
        ledger = Ledger(privacy.epsilon, privacy.delta, composition)
        share = spec.epsilon / privacy.epsilon
        if spec.share_by_size and privacy.n_public:  # zero-config: sized from the public n and column count
            share = share_for(n=source.n_rows(), columns=len(source.names), epsilon=privacy.epsilon,
                              delta=privacy.delta, approx_delta=spec.delta, l1=privacy.neighbouring.histogram_l1)
            spec = replace(spec, kind_first=share >= MAX_SHARE)  # (a starved discovery: kind.py)
        rho = zcdp_share(privacy.epsilon, privacy.delta, share, spec.delta)
        found = discover_schema(source, spec, ledger=ledger, neighbouring=privacy.neighbouring, rng=rng, rho=rho)
        found_charges = list(ledger.charges)
        inner = _fine_from_discovery(with_discovered_schema(config, found.schema, epsilon=privacy.epsilon,
                                                            delta=privacy.delta))
        result = release_inner(inner, found_charges, discovery_measurements(found, inner))
        alone = Ledger(privacy.epsilon, privacy.delta, composition, charges=found_charges)
        eps_d, delta_d = alone.spent()
        spent = {"epsilon_spent": eps_d, "delta_spent": delta_d, "rho_spent": zcdp_spent(found_charges),
                 "approx_delta": sum(c.approx_delta for c in found_charges)}
        result.report = add_discovery(result.report, found, alone, epsilon=privacy.epsilon, delta=privacy.delta,
                                      shared=True)
        result.report["privacy"]["discovery"]["rho_share"] = share
    else:
        ledger = Ledger(spec.epsilon, spec.delta)
        found = discover_schema(source, spec, ledger=ledger, neighbouring=privacy.neighbouring, rng=rng)
        eps, delta = budget_after(privacy.epsilon, privacy.delta, ledger.spent_exact())
        inner = _fine_from_discovery(with_discovered_schema(config, found.schema, epsilon=eps, delta=delta))
        result = release_inner(inner, (), discovery_measurements(found, inner))
        result.report = add_discovery(result.report, found, ledger, epsilon=privacy.epsilon, delta=privacy.delta)
        spent = {"epsilon_spent": ledger.spent()[0], "delta_spent": ledger.spent()[1]}
    view = discovery_fine_view(found, inner) if config.decode.fine == "auto" else None
    if view is not None:  # decoded within bins from the discovery's fine histograms (post-processing)
        result.model = replace(result.model, fine=view)
        result.report["decode"] = {"fine": "on", "setting": "auto", "columns": sorted(view.columns),
                                   "cells_per_bin": 0,
                                   "reason": "the schema's discovery already released a fine histogram of these "
                                             "columns: numbers are decoded within their bins from it (post-"
                                             "processing, no stage of its own)"}
    result.model = replace(result.model, privacy=result.report["privacy"], ledger=result.report["ledger"])
    result.report["model"] = {**result.report["model"], "sha256": result.model.sha256}  # the model changed
    result.diagnostics["discovered_schema"] = found.schema
    result.report["warnings"] = [*result.report["warnings"], *other_warnings(found.schema, result.model)]
    result.config_document = release_document(config, found.schema, spent=spent)
    return result


OTHER_WARN = 0.02
"""A discovered categorical column whose ``__other__`` holds at least this share of the released model's rows gets a
warning (:func:`other_warnings`)."""


def other_warnings(schema: dict, model: ReleasedModel) -> list[str]:
    """One warning per discovered categorical column whose ``__other__`` code holds at least :data:`OTHER_WARN` of
    the released model's mass (post-processing of the model: the share of synthetic rows it writes so): values the
    discovery could not name at its budget, or the noise of that cell (issue 27: categories lost silently)."""
    from dpsynth.data.schema import OTHER_LABEL

    domain, out = model.config.domain, []
    for name, spec in schema.get("columns", {}).items():  # loop over columns
        if spec.get("type") != "categorical" or name not in domain.names:
            continue
        a = domain.index(name)
        labels = list(domain.columns[a].labels())
        if OTHER_LABEL not in labels:
            continue
        weights: list[np.ndarray | None] = [None] * len(domain.names)
        weights[a] = (np.arange(len(labels)) == labels.index(OTHER_LABEL)).astype(float)
        share = model.model.probability(weights)
        if share >= OTHER_WARN:
            k = len(spec.get("categories") or ())
            out.append(f"column '{name}': about {share:.0%} of the synthetic rows are '{OTHER_LABEL}': values the "
                       f"{k} discovered categor{'y does' if k == 1 else 'ies do'} not name (too rare to find privately at "
                       "this budget) and that cell's noise; to keep labels you know, give them as a discovery hint "
                       f"(schema.discover.columns.{name}.categories)")
    return out


def _fine_from_discovery(inner: Config) -> Config:
    """A discovered schema's release measures no fine view of its own under ``decode.fine: auto``: the
    discovery's fine histograms serve (:func:`discovery_fine_view`), on every engine alike."""
    if inner.decode.fine != "auto":
        return inner
    return replace(inner, decode=replace(inner.decode, fine="off"))


def discovery_fine_view(found, config: Config) -> FineView | None:
    """The fine view of a discovered schema's numeric and date columns from the discovery's last fine histogram
    of each (``found.evidence``): sub-cell counts below one noise sd weigh 0 (:func:`~dpsynth.data.fine.
    floor_noise`).  Post-processing of mechanism outputs; None when no column has one."""
    from dpsynth.data.fine import FineColumn, floor_noise
    from dpsynth.data.schema import DatetimeColumn, NumericColumn

    cols = {}
    for name, ev in getattr(found, "evidence", {}).items():
        kept = _kept_integers(ev, config, name)
        if kept is not None:
            cols[name] = kept
            continue
        if name not in config.domain.names or ev.cells is None or ev.cell_counts is None:
            continue
        spec = config.domain.columns[config.domain.index(name)]
        if not isinstance(spec, NumericColumn) or isinstance(spec, DatetimeColumn):
            continue  # date cells are in seconds, not the decoder's whole units: uniform within bins
        edges = np.asarray(ev.cells, dtype=float)
        if spec.integral:
            step = spec.step or 1.0
            if np.all(np.diff(np.ceil(np.asarray(spec.edges, dtype=float) / step)) <= 1):
                continue  # one integer (multiple of the step) per bin: nothing to decode within
            if np.all(edges % 1 == 0.5):  # unit cells k ± 0.5: integer k is the decoder's unit [k, k + 1)
                edges = edges + 0.5
            elif np.any(edges % 1 != 0):
                continue
        counts = ev.cell_counts
        if getattr(ev, "points", None) is not None and len(ev.points.values):
            from dpsynth.data.discover.points import residual  # the point masses decode exactly: not within bins

            counts = residual(np.asarray(ev.cells, dtype=float), counts, ev.points)
        weights = floor_noise(counts, ev.cell_sd)
        if weights.sum() > 0:
            cols[name] = FineColumn(edges, weights)
    if not cols:
        return None
    return FineView(cols, {"source": "the schema's discovery (its last fine histogram per column)"})


def _kept_integers(ev, config: Config, name: str):
    """The fine view of an integral column whose discovery kept its integers by partition selection (codes such
    as ZIP codes, tied years): within each bin the decoder draws only kept integers, in proportion to their noisy
    counts, so it never writes a code the selection did not release.  None for any other column."""
    from dpsynth.data.fine import FineColumn
    from dpsynth.data.schema import DatetimeColumn, NumericColumn

    if getattr(ev, "kept", None) is None or name not in config.domain.names:
        return None
    spec = config.domain.columns[config.domain.index(name)]
    if not isinstance(spec, NumericColumn) or isinstance(spec, DatetimeColumn) or not spec.integral or \
            spec.step not in (None, 1):
        return None
    values, mass = (np.asarray(a, dtype=float) for a in ev.kept)
    if values.size < 2 or mass.sum() <= 0:
        return None
    # the decoder's unit of integer k is [k, k + 1): a cell per kept integer, weight 0 over the gaps between them
    starts = np.concatenate([values[:-1] + 1.0, values])  # gaps first: at a tie the kept integer sorts last
    weights = np.concatenate([np.zeros(values.size - 1), mass])
    order = np.argsort(starts, kind="stable")
    starts, weights = starts[order], weights[order]
    keep = np.append(np.diff(starts) > 0, True)  # adjacent kept integers leave no gap (the last of a tie stays)
    return FineColumn(np.append(starts[keep], values[-1] + 1.0), weights[keep])


def discovery_measurements(found, config: Config) -> list[LinearMeasurement]:
    """A discovery's released counts (``found.evidence``) as 1-way linear measurements over ``config``'s codes
    (:mod:`dpsynth.data.discover.evidence`; post-processing of mechanism outputs)."""
    from dpsynth.data.discover.evidence import one_way_queries

    out = []
    for name, ev in getattr(found, "evidence", {}).items():
        if name not in config.domain.names:
            continue
        a = config.domain.index(name)
        for query, values, sd in one_way_queries(ev, config.domain.columns[a]):
            if sd > 0:
                out.append(LinearMeasurement((a,), values, sd, query=query))
    return out


def _row_count(counts: Counts, config: Config, ledger: Ledger, rng: np.random.Generator) -> float:
    if config.privacy.n_public:
        return float(counts.n)
    assert config.privacy.n_epsilon is not None  # n is private: the config gives its epsilon
    noisy = geometric_mechanism(
        np.array([counts.n]),
        sensitivity=1.0,
        epsilon=config.privacy.n_epsilon,
        ledger=ledger,
        rng=rng,
        stage="row-count",
        measured="number of rows n",
    )
    return float(max(1, int(noisy[0])))


def marginals_table(marginals: list[NoisyMarginal], config: Config) -> pd.DataFrame:
    """Long format: one row per cell with marginal id, column labels, noisy count, noise scale."""
    domain = config.domain
    labels = [np.array(c.labels(), dtype=object) for c in domain.columns]
    frames = []
    for mid, m in enumerate(marginals):
        shape = domain.shape(m.attrs)
        idx = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), dtype=int)
        cols = {
            "marginal_id": np.full(idx.shape[1], mid),
            "marginal": np.full(idx.shape[1], "|".join(domain.names[a] for a in m.attrs), dtype=object),
        }
        for name in domain.names:
            cols[name] = np.full(idx.shape[1], None, dtype=object)
        for row, a in enumerate(m.attrs):
            cols[domain.names[a]] = labels[a][idx[row]]
        cols["noisy_count"] = np.asarray(m.values, dtype=float).reshape(-1)
        cols["noise_scale"] = np.full(idx.shape[1], float(m.scale))
        frames.append(pd.DataFrame(cols))
    return pd.concat(frames, ignore_index=True)

"""The released model file holds only public configuration and mechanism outputs: mutants that must be caught.

The check: refitting the file's own noisy measurements (no data) reproduces the file's parameters bit for bit
(the model is post-processing of what the file says it was fitted to).  The report's only hash, the
model's digest, is checked in tests/test_robustness.py.
"""

from __future__ import annotations

import numpy as np

import dpsynth
from dpsynth.algorithms import base
from dpsynth.config import parse_config
from dpsynth.modelfile import model_from_bytes
from dpsynth.models.base import model_to_arrays
from dpsynth.models.synthesis import fit_model


def _parameters_are_post_processing(raw, table) -> bool:
    cfg = parse_config(raw)
    result = dpsynth.release(table, cfg, rng=np.random.default_rng(8))
    back = model_from_bytes(result.model.to_bytes())
    refit, _, _ = fit_model(cfg.domain, back.measurements, total=back.model.total, **cfg.params.synthesis_kwargs())
    stored, again = model_to_arrays(back.model), model_to_arrays(refit)
    return stored[0] == again[0] and all(np.array_equal(stored[1][k], again[1][k]) for k in stored[1])


def test_the_released_model_is_post_processing(tiny_raw_config, tiny_table):
    assert _parameters_are_post_processing(tiny_raw_config, tiny_table)


def test_mutant_model_fitted_to_true_counts_is_caught(monkeypatch, tiny_raw_config, tiny_table):
    """Mutant: the model is fitted to the true marginals (the file still stores the noisy ones)."""
    original = base.fit_model

    def on_true_counts(domain, marginals, **kw):
        counts = on_true_counts.ctx.counts
        true = [base.NoisyMarginal(m.attrs, counts.marginal(m.attrs).astype(float), m.scale) for m in marginals]
        return original(domain, true, **kw)

    real_release = base.release_marginals

    def spy(ctx, params, measure, *, rng):
        on_true_counts.ctx = ctx
        return real_release(ctx, params, measure, rng=rng)

    monkeypatch.setattr(base, "fit_model", on_true_counts)
    from dpsynth.algorithms import laplace

    monkeypatch.setattr(laplace, "release_marginals", spy)
    assert not _parameters_are_post_processing(tiny_raw_config, tiny_table)


"""Downstream utility: Naive Bayes accuracy on the real table (iReduct §6.5), from synthetic rows,
released marginals, real rows, and optionally one release per training fold."""

from __future__ import annotations

import numpy as np

from dpsynth.config import Config
from dpsynth.data.discretize import encode
from dpsynth.nonprivate import metrics as M
from dpsynth.nonprivate.evaluate.counting import _Counter
from dpsynth.nonprivate.evaluate.workload import parse_released_marginals
from dpsynth.progress import Progress
from dpsynth.workload.marginals import default_sanity_bound


def _fit_rows(codes: np.ndarray, target: int, features: list[int], sizes) -> tuple:
    y = codes[:, target]
    joints = [np.bincount(y * sizes[f] + codes[:, f], minlength=sizes[target] * sizes[f]).reshape(sizes[target], sizes[f])
              for f in features]  # loop over features
    return M.naive_bayes_fit(np.bincount(y, minlength=sizes[target]), joints)


def _fit_released(released, target: int, features: list[int], sizes) -> tuple[tuple | None, list[str]]:
    """Naive Bayes from noisy marginals: class counts and (class × feature) tables projected from them."""
    def project(attrs, values, keep):
        axes = tuple(i for i, a in enumerate(attrs) if a not in keep)
        kept = [a for a in attrs if a in keep]
        v = values.sum(axis=axes) if axes else values
        return np.transpose(v, [kept.index(a) for a in keep])

    with_target = [(a, v) for a, v in released if target in a]
    if not with_target:
        return None, []
    prior = np.mean([project(a, v, (target,)) for a, v in with_target], axis=0)
    joints, used, dropped = [], [], []
    for f in features:  # loop over features
        hit = next(((a, v) for a, v in with_target if f in a), None)
        if hit is None:
            dropped.append(f)
        else:
            joints.append(project(hit[0], hit[1], (target, f)))
            used.append(f)
    return (M.naive_bayes_fit(prior, joints), used), dropped


def _classifier(real: _Counter, synth: _Counter, target: int, names, released, folds: int, rng,
                per_fold=None) -> dict:
    """Naive Bayes accuracy on the real table (iReduct §6.5): from synthetic rows, released marginals, real rows.

    ``per_fold`` (config, rng, progress): also run the §6.5 protocol, one release per training fold
    (:func:`_release_per_fold`), on the same folds as the real table's cross-validation.
    """
    sizes, n = real.sizes, real.n
    features = [j for j in range(len(sizes)) if j != target]
    y, x = real.codes[:, target], real.codes[:, features]
    fold_acc = []
    splits = np.array_split(rng.permutation(n), folds)
    for test in splits:  # loop over the 10 folds
        train = np.ones(n, dtype=bool)
        train[test] = False
        model = _fit_rows(real.codes[train], target, features, sizes)
        fold_acc.append(M.accuracy(M.naive_bayes_predict(model, x[test]), y[test]))
    out = {
        "target": names[target],
        "majority_class_rate": float(np.bincount(y).max() / n),
        "real_cross_validated": float(np.mean(fold_acc)),
        "folds": folds,
        "synthetic": M.accuracy(M.naive_bayes_predict(_fit_rows(synth.codes, target, features, sizes), x), y),
        "released_marginals": None,
    }
    if released is not None:
        fitted, dropped = _fit_released(released, target, features, sizes)
        if fitted is not None:
            model, used = fitted
            pred = M.naive_bayes_predict(model, real.codes[:, used])
            out["released_marginals"] = {"accuracy": M.accuracy(pred, y),
                                         "features_without_marginal": [names[f] for f in dropped]}
    if per_fold is not None:
        out["release_per_fold"] = _release_per_fold(real.codes, target, splits, *per_fold)
    return out


def _release_per_fold(codes: np.ndarray, target: int, splits, config: Config, rng, progress: Progress) -> dict:
    """iReduct §6.5: for each fold, release the Naive Bayes marginals of the other folds with the configured
    algorithm and budget, then score (i) their overall relative error (Def. 6, δ = 10⁻⁴ of the training
    rows) against the training table and (ii) the accuracy on the held-out fold of Naive Bayes built from
    them (footnote 3 smoothing) and from the release's synthetic rows.  Averages over the folds."""
    import dataclasses

    from dpsynth.algorithms import get_algorithm
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.errors import DpsynthError
    from dpsynth.pipeline import release_from_counts
    from dpsynth.workload.spec import Workload

    domain, sizes, n = config.domain, config.domain.sizes, len(codes)
    features = [j for j in range(len(sizes)) if j != target]
    pairs = tuple((target, f) for f in features)
    # A 1-way class marginal and one (class, feature) marginal per feature; conjunction-based algorithms
    # (DualQuery) need marginals of one size, and the 2-way ones already hold the class counts.
    conj = "conjunctions" in get_algorithm(config.algorithm).workload
    nb = pairs if conj else ((target,), *pairs)
    cfg = dataclasses.replace(config, workload=Workload(marginals=nb, given=frozenset({"marginals"})))
    errors, acc_released, acc_synth = [], [], []
    for i, (test, fold_rng) in enumerate(zip(splits, rng.spawn(len(splits)))):  # one release per fold
        train = np.ones(n, dtype=bool)
        train[test] = False
        counts = ArrayCounts(codes[train], domain)
        try:
            res = release_from_counts(counts, cfg, rng=fold_rng)
        except DpsynthError as exc:
            raise type(exc)(f"--release-per-fold: the configured release on the {len(nb)} Naive Bayes "
                            f"marginals failed: {exc}") from None
        x, y = codes[test][:, features], codes[test, target]
        synth = encode(res.synthetic, domain, unknown=config.unknown)
        acc_synth.append(M.accuracy(M.naive_bayes_predict(_fit_rows(synth, target, features, sizes), x), y))
        if res.marginals is not None:
            released = parse_released_marginals(res.marginals, domain)
            truth = [counts.marginal(a) for a, _ in released]
            errors.append(M.overall_relative_error([v for _, v in released], truth,
                                                   default_sanity_bound(int(train.sum()))))
            fitted, _ = _fit_released(released, target, features, sizes)
            if fitted is not None:
                model, used = fitted
                acc_released.append(M.accuracy(M.naive_bayes_predict(model, codes[test][:, used]), y))
        progress("release per fold", i + 1, len(splits))
    def mean(values: list) -> float | None:
        return float(np.mean(values)) if values else None

    return {"algorithm": config.algorithm, "epsilon": config.privacy.epsilon, "folds": len(splits),
            "marginals": [[domain.names[a] for a in m] for m in nb],
            "overall_relative_error": mean(errors), "released_marginals_accuracy": mean(acc_released),
            "synthetic_accuracy": mean(acc_synth),
            "per_fold": {"overall_relative_error": errors, "released_marginals_accuracy": acc_released,
                         "synthetic_accuracy": acc_synth}}

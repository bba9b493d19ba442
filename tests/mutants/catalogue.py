"""Catalogue of privacy mutants for ``make mutants`` (tools/mutants.py).  Every entry must be CAUGHT.

Format: ``MUTANTS`` is a list of dicts, one per mutant:

* ``id``:    short unique name, ``area-what`` (e.g. ``laplace-halved-scale``);
* ``file``:  path of the source file to mutate, relative to the repository root;
* ``old``:   exact text that occurs EXACTLY ONCE in that file (include context lines to make it unique);
* ``new``:   its replacement: the plausible privacy bug (must still import and run);
* ``tests``: pytest selections (files or node ids) that must catch it; fast tests only (``-m "not slow"``
             is applied), so keep them few and quick;
* ``why``:   one line: the bug in words (what a reviewer would miss).

The harness applies one mutant at a time to a temporary copy of the repository (never the working
tree), runs ``pytest -x`` on ``tests`` there, and reports the first failing test or SURVIVED.  If the
code moves so that ``old`` no longer occurs exactly once, the harness stops with "stale": update the
entry with the new text rather than deleting it.  A survivor means the tests miss a real bug: add a
test that fails for the *kind* of bug (a privacy property), not a check for this exact text.

To add an entry for a privacy-relevant change of yours: copy one below, run
``python tools/mutants.py --only <id>`` and check it is caught.
"""

# ruff: noqa: C408  (dict(...) reads better than literals for catalogue entries)
from __future__ import annotations

MECH = "dpsynth/privacy/mechanisms.py"
ACC = "dpsynth/privacy/accountant.py"
NB = "dpsynth/privacy/neighbouring.py"
ND = "dpsynth/privacy/noisedown.py"
T_MECH = ["tests/privacy/test_mechanisms.py", "tests/privacy/test_audit_mechanisms.py"]
T_ACC = ["tests/privacy/test_accountant.py", "tests/privacy/test_guarantee.py"]
T_REPLAY = ["tests/privacy/test_replay.py"]
T_LEDGER = ["tests/privacy/test_ledger_exact.py"]

MUTANTS: list[dict] = [
    # ------------------------------------------------------------------ mechanisms
    dict(id="laplace-halved-scale", file=MECH, why="Laplace noise at half the scale Δ/ε the ledger records",
         old="    out = values + laplace_noise(scale, values.shape, rng=rng)\n",
         new="    out = values + laplace_noise(scale / 2, values.shape, rng=rng)\n",
         tests=T_MECH),
    dict(id="laplace-missing-charge", file=MECH, why="Laplace mechanism draws without charging the ledger",
         old='''    ledger.charge(
        Charge(
            stage=stage,
            mechanism="laplace",''',
         new='''    (lambda c: c)(
        Charge(
            stage=stage,
            mechanism="laplace",''',
         tests=["tests/privacy/test_mechanisms.py", *T_LEDGER]),
    dict(id="laplace-charges-half-epsilon", file=MECH, why="Laplace charges ε/2 for noise of scale Δ/ε",
         old='''            mechanism="laplace",
            sensitivity=sensitivity,
            epsilon=epsilon,''',
         new='''            mechanism="laplace",
            sensitivity=sensitivity,
            epsilon=epsilon / 2,''',
         tests=["tests/privacy/test_mechanisms.py", *T_LEDGER]),
    dict(id="geometric-scale-off", file=MECH, why="discrete Laplace with parameter e^(−2/scale): half the noise",
         old="    p = -math.expm1(-1.0 / scale)\n",
         new="    p = -math.expm1(-2.0 / scale)\n",
         tests=T_MECH),
    dict(id="geometric-missing-charge", file=MECH, why="discrete Laplace (counts, noisy n) never charged",
         old='''    ledger.charge(
        Charge(
            stage=stage,
            mechanism="discrete-laplace",''',
         new='''    (lambda c: c)(
        Charge(
            stage=stage,
            mechanism="discrete-laplace",''',
         tests=["tests/privacy/test_mechanisms.py", *T_LEDGER]),
    dict(id="geometric-true-value-plus-zero", file=MECH, why="geometric mechanism returns the true counts",
         old="    out = values.astype(np.int64) + discrete_laplace_noise(scale, values.shape, rng=rng)\n",
         new="    out = values.astype(np.int64) + 0 * discrete_laplace_noise(scale, values.shape, rng=rng)\n",
         tests=T_MECH),
    dict(id="gaussian-sigma-halved", file=MECH, why="Gaussian noise at σ/2 for the ρ charged",
         old="    out = values + rng.normal(0.0, sigma, size=values.shape)\n",
         new="    out = values + rng.normal(0.0, sigma / 2, size=values.shape)\n",
         tests=T_MECH),
    dict(id="gaussian-charges-half-rho", file=MECH, why="Gaussian measurement charged ρ/2",
         old='''            mechanism="gaussian",
            sensitivity=l2_sensitivity,
            epsilon=eps,
            delta=ledger.delta,
            scale=sigma,
            rho=rho,''',
         new='''            mechanism="gaussian",
            sensitivity=l2_sensitivity,
            epsilon=eps,
            delta=ledger.delta,
            scale=sigma,
            rho=rho / 2,''',
         tests=T_MECH),
    dict(id="discrete-gaussian-sigma-halved", file=MECH, why="discrete Gaussian at σ/2 for the ρ charged",
         old="    out = values.astype(np.int64) + discrete_gaussian_noise(sigma, values.shape, rng=rng)\n",
         new="    out = values.astype(np.int64) + discrete_gaussian_noise(sigma / 2, values.shape, rng=rng)\n",
         tests=T_MECH),
    dict(id="discrete-gaussian-no-rejection", file=MECH,
         why="discrete Gaussian sampler returns its discrete-Laplace proposals (no rejection step)",
         old="        accept = rng.random(todo.size) < np.exp(-((np.abs(y) - sigma**2 / t) ** 2) / (2.0 * sigma**2))\n",
         new="        accept = np.ones(todo.size, dtype=bool)\n",
         tests=T_MECH),
    dict(id="em-without-factor-2", file=MECH, why="exponential mechanism weights exp(ε·u/Δ) instead of exp(ε·u/(2Δ))",
         old="    factor = epsilon / (2.0 * sensitivity)\n",
         new="    factor = epsilon / sensitivity\n",
         tests=T_MECH),
    dict(id="em-rho-too-small", file=MECH, why="exponential mechanism's zCDP cost recorded as ε²/16 (not ε²/8)",
         old="            rho=epsilon**2 / 8.0,\n",
         new="            rho=epsilon**2 / 16.0,\n",
         tests=T_MECH),
    dict(id="snapping-no-slack", file=MECH, why="snapping scale without Mironov's (1 + 2⁻⁴⁹·B) factor",
         old="    lam = sensitivity * (1.0 + _SNAP_SLACK * bound) / epsilon\n",
         new="    lam = sensitivity / epsilon\n",
         tests=T_MECH),
    dict(id="snapping-no-input-clamp", file=MECH, why="snapping adds noise to the unclamped value (Mironov's proof needs clamp_B)",
         old="    noisy = np.clip(values, -bound, bound) + sign * lam * np.log(_uniform_doubles(values.shape, rng))\n",
         new="    noisy = values + sign * lam * np.log(_uniform_doubles(values.shape, rng))\n",
         tests=T_MECH),
    # ------------------------------------------------------------------ accountant
    dict(id="basic-composition-drops-delta", file=ACC, why="basic composition forgets the δ of later charges",
         old="        return (state[0] + Fraction(float(charge.epsilon)), state[1] + Fraction(float(charge.delta)))\n",
         new="        return (state[0] + Fraction(float(charge.epsilon)), state[1])\n",
         tests=T_ACC),
    dict(id="zcdp-pure-charge-quarter", file=ACC, why="zCDP counts a pure ε charge as ε²/4·½ (too little)",
         old="        return state + (charge.rho if charge.rho is not None else charge.epsilon**2 / 2.0)\n",
         new="        return state + (charge.rho if charge.rho is not None else charge.epsilon**2 / 4.0)\n",
         tests=T_ACC),
    dict(id="zcdp-conversion-missing-2", file=ACC, why="ρ → ε conversion without the factor 2 on the sqrt term",
         old="    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))\n",
         new="    return rho + math.sqrt(rho * math.log(1.0 / delta))\n",
         tests=T_ACC),
    dict(id="bounded-range-epsilon-too-large", file=ACC,
         why="ρ → ε of the exponential mechanism as sqrt(16ρ): selections under zCDP spend twice the ρ charged",
         old="    return math.sqrt(8.0 * rho)\n", new="    return math.sqrt(16.0 * rho)\n",
         tests=["tests/privacy/test_accountant.py", *T_LEDGER]),
    dict(id="ledger-never-refuses", file=ACC, why="the ledger records an overspending charge",
         old="        if not self.would_fit(charge):\n",
         new="        if False:\n",
         tests=T_ACC),
    dict(id="split-budget-not-rounded-down", file=ACC, why="budget shares whose float sum exceeds the total",
         old="    while exact_sum(parts) > target:\n",
         new="    while False:\n",
         tests=T_ACC),
    dict(id="replace-one-equivalent-not-doubled", file=ACC, why="report claims ε (not 2ε) for equal-size datasets",
         old="        return 2.0 * eps, _round_up((1.0 + math.exp(eps)) * delta) if delta > 0 else 0.0\n",
         new="        return eps, delta\n",
         tests=T_ACC),
    # ------------------------------------------------------------------ neighbouring relation
    dict(id="histogram-l2-1-under-replace-one", file=NB, why="L2 sensitivity 1 (not √2) under replace-one (issue 13)",
         old="        return 1.0 if self is Neighbouring.ADD_REMOVE else 2.0**0.5\n",
         new="        return 1.0\n",
         tests=T_REPLAY),
    dict(id="histogram-l1-1-under-replace-one", file=NB, why="L1 sensitivity 1 (not 2) under replace-one",
         old="        return 1.0 if self is Neighbouring.ADD_REMOVE else 2.0\n",
         new="        return 1.0\n",
         tests=T_REPLAY),
    # ------------------------------------------------------------------ NoiseDown
    dict(id="noisedown-fresh-draw", file=ND, why="NoiseDown replaced by a fresh Laplace draw at the new scale",
         old="    pieces = noise_down_pieces(mu, y, scale, new_scale)\n",
         new="    return np.asarray(mu, dtype=float) + rng.laplace(0.0, np.broadcast_to(new_scale, np.shape(y)))\n"
             "    pieces = noise_down_pieces(mu, y, scale, new_scale)\n",
         tests=["tests/privacy/test_noisedown.py", "tests/privacy/test_audit_mechanisms.py"]),
    # ------------------------------------------------------------------ pipeline
    dict(id="pipeline-true-n-for-noisy-n", file="dpsynth/pipeline.py",
         why="the algorithm gets the true n although n is private",
         old="    return float(max(1, int(noisy[0])))\n",
         new="    return float(counts.n)\n",
         tests=T_REPLAY),
    dict(id="report-randomness-claims-os-entropy", file="dpsynth/report.py",
         why="a library caller's (maybe seeded) generator reported as os-entropy (issue 13)",
         old='RANDOMNESS = {True: "seeded", False: "os-entropy", None: "caller-supplied generator"}',
         new='RANDOMNESS = {True: "seeded", False: "os-entropy", None: "os-entropy"}',
         tests=["tests/privacy/test_guarantee.py"]),
    # ------------------------------------------------------------------ encoding (issue 13 §1)
    dict(id="encoding-whole-column-float-labels", file="dpsynth/data/discretize.py",
         why="float categories labelled '1' only if every value is integral (one row relabels all)",
         old="        return match_numbers(col.to_numpy(dtype=float, na_value=np.nan), category_numbers(spec))\n",
         new="        v = col.dropna()\n"
             "        if not (np.isfinite(v).all() and (v == np.round(v)).all()):\n"
             "            return np.full(len(col), -1, dtype=np.int64)\n"
             "        return match_numbers(col.to_numpy(dtype=float, na_value=np.nan), category_numbers(spec))\n",
         tests=["tests/data/test_row_independence.py"]),
    dict(id="discovery-labels-whole-column", file="dpsynth/data/discretize.py",
         why="schema discovery's value labels decided for the whole float column (one row relabels all)",
         old="    if pd.api.types.is_float_dtype(col):\n        return float_labels(col.to_numpy(dtype=float, na_value=np.nan))\n",
         new="    if pd.api.types.is_float_dtype(col):\n"
             "        v = col.dropna()\n"
             "        if not (np.isfinite(v).all() and (v == np.round(v)).all()):\n"
             "            return col.astype(\"string\").to_numpy(dtype=object, na_value=None)\n"
             "        return float_labels(col.to_numpy(dtype=float, na_value=np.nan))\n",
         tests=["tests/data/test_row_independence.py"]),
    dict(id="mwem-discrete-measure-sensitivity-1", file="dpsynth/algorithms/mwem.py",
         why="MWEM's (default, discrete) measurement at sensitivity 1 under replace-one",
         old="        noisy = mech(true, sensitivity=l1, epsilon=part,",
         new="        noisy = mech(true, sensitivity=1.0, epsilon=part,",
         tests=T_REPLAY),
    # ------------------------------------------------------------------ algorithms
    dict(id="laplace-alg-sensitivity-1", file="dpsynth/algorithms/laplace.py",
         why="laplace algorithm measures marginals at sensitivity 1 under replace-one",
         old="    sens = ctx.neighbouring.histogram_l1\n    mech = geometric_mechanism",
         new="    sens = 1.0\n    mech = geometric_mechanism",
         tests=T_REPLAY),
    dict(id="laplace-alg-full-epsilon-per-marginal", file="dpsynth/algorithms/laplace.py",
         why="every marginal measured with the whole ε (no composition)",
         old="    shares = split_budget(epsilon, [1.0] * len(attr_sets))\n",
         new="    shares = [epsilon] * len(attr_sets)\n",
         tests=T_LEDGER),
    dict(id="mwem-score-sensitivity-min", file="dpsynth/algorithms/mwem.py",
         why="MWEM selection at the smaller of cuboid/range sensitivities (issue 13)",
         old="    score_sens = max(f.l1 for f in fams)\n",
         new="    score_sens = min(f.l1 for f in fams)\n",
         tests=T_REPLAY),
    dict(id="mwem-true-n-in-measurement", file="dpsynth/algorithms/mwem.py",
         why="MWEM clips measurements to the true n although n is private",
         old="        m = _measurement(attrs, values, queries, scale, params, ctx.n, budget.zcdp, _value_range(fams[fi], i))\n",
         new="        m = _measurement(attrs, values, queries, scale, params, ctx.counts.n, budget.zcdp, "
             "_value_range(fams[fi], i))\n",
         tests=T_REPLAY),
    dict(id="linear-replace-one-sensitivity-1", file=NB,
         why="a [−1, 1] linear query under replace-one at the add-remove sensitivity max|q| (it moves by max − min)",
         old="        return float(high) - float(low)\n",
         new="        return max(abs(float(low)), abs(float(high)))\n",
         tests=["tests/algorithms/test_mwem_linear.py", *T_REPLAY]),
    dict(id="mwem-linear-sensitivity-1", file="dpsynth/algorithms/mwem.py",
         why="MWEM's linear queries selected and measured at sensitivity 1 whatever the neighbouring relation",
         old="        self.l1 = self.l2 = max(nb.linear_sensitivity(lo, hi) for lo, hi in zip(self.low, self.high))\n",
         new="        self.l1 = self.l2 = 1.0\n",
         tests=T_REPLAY),
    dict(id="mwem-linear-score-signed", file="dpsynth/algorithms/mwem.py",
         why="linear-query score q(A) − q(B) without the absolute value: under-estimated queries are never chosen",
         old="            out[self.offsets[g] : self.offsets[g + 1]] = np.abs(s.answers(model.project(s.attrs)) - self.true[g])\n",
         new="            out[self.offsets[g] : self.offsets[g + 1]] = s.answers(model.project(s.attrs)) - self.true[g]\n",
         tests=["tests/algorithms/test_mwem_linear.py"]),
    dict(id="mwem-linear-integer-noise-on-fractions", file="dpsynth/algorithms/mwem.py",
         why="integer (discrete Laplace) noise on a fractional answer: rounded true value, lattice reveals it",
         old="        discrete = self.discrete and integral\n",
         new="        discrete = self.discrete\n",
         tests=["tests/algorithms/test_mwem_linear.py", *T_REPLAY]),
    dict(id="mwem-zcdp-select-epsilon", file="dpsynth/algorithms/mwem.py",
         why="MWEM zCDP selection at ε = sqrt(16ρ) (pays ρ, spends 2ρ)",
         old="        return bounded_range_epsilon(self.select[t]) if self.zcdp else self.select[t]\n",
         new="        return math.sqrt(16.0 * self.select[t]) if self.zcdp else self.select[t]\n",
         tests=T_LEDGER),
    dict(id="ireduct-lambda-max-true-n", file="dpsynth/algorithms/ireduct.py",
         why="iReduct's default λ_max = n/10 from the true n when n is private (issue 13)",
         old="        lam_max, raised = default_scales(ctx.n, m, sens, epsilon)\n",
         new="        lam_max, raised = default_scales(ctx.counts.n, m, sens, epsilon)\n",
         tests=T_REPLAY),
    dict(id="ireduct-initial-draw-half-scale", file="dpsynth/algorithms/ireduct.py",
         why="iReduct's first draw at λ_max/2 while the ledger assumes λ_max (issue 13)",
         old="    y = mu + rng.laplace(0.0, lambda_max, size=mu.shape)  # Figure 4 line 4\n",
         new="    y = mu + rng.laplace(0.0, lambda_max / 2, size=mu.shape)  # Figure 4 line 4\n",
         tests=["tests/algorithms/test_ireduct.py"]),
    dict(id="ireduct-charges-half", file="dpsynth/algorithms/ireduct.py",
         why="iReduct charges Δ/(2λ_j) per marginal",
         old="                epsilon=scale_cost(sens, lam),\n",
         new="                epsilon=scale_cost(sens, lam) / 2,\n",
         tests=["tests/algorithms/test_ireduct.py", *T_LEDGER]),
    dict(id="ireduct-no-charge", file="dpsynth/algorithms/ireduct.py",
         why="iReduct never charges its final scales",
         old='    charge_final_scales(ctx, res.scales, stage="measure", mechanism="laplace+noisedown")\n',
         new="",
         tests=["tests/algorithms/test_ireduct.py", *T_LEDGER]),
    dict(id="twophase-phase2-sensitivity-1", file="dpsynth/algorithms/twophase.py",
         why="two-phase's second measurement at sensitivity 1 under replace-one",
         old="            ctx.counts.marginal(m1.attrs), sensitivity=sens, epsilon=e2,",
         new="            ctx.counts.marginal(m1.attrs), sensitivity=1.0, epsilon=e2,",
         tests=T_REPLAY),
    dict(id="twophase-weights-from-true-counts", file="dpsynth/algorithms/twophase.py",
         why="two-phase rescaling weights computed from the true counts",
         old="    weights = rescale_weights([m.values for m in first], delta)  # from noisy counts only\n",
         new="    weights = rescale_weights([ctx.counts.marginal(m.attrs) for m in first], delta)\n",
         tests=T_REPLAY),
    dict(id="iresamp-resample-sensitivity-1", file="dpsynth/algorithms/iresamp.py",
         why="iResamp's resampling draws at sensitivity 1 under replace-one",
         old='''        y = mech(ctx.counts.marginal(attrs), sensitivity=sens, epsilon=e, ledger=ctx.ledger,
                 rng=rng, stage="resample",''',
         new='''        y = mech(ctx.counts.marginal(attrs), sensitivity=1.0, epsilon=e, ledger=ctx.ledger,
                 rng=rng, stage="resample",''',
         tests=T_REPLAY),
    dict(id="dualquery-round-cost-halved", file="dpsynth/algorithms/dualquery/accounting.py",
         why="DualQuery per-sample cost η(t−1)/n instead of 2η(t−1)/n (Theorem 4.2)",
         old="    return 2.0 * eta * (t - 1) / n\n",
         new="    return eta * (t - 1) / n\n",
         tests=["tests/algorithms/test_dualquery_accounting.py", *T_REPLAY]),
    dict(id="dualquery-advanced-drops-linear-term", file="dpsynth/algorithms/dualquery/accounting.py",
         why="advanced composition without its Σ ε(e^ε − 1) term",
         old="        return math.sqrt(2.0 * log_inv * sq) + lin\n",
         new="        return math.sqrt(2.0 * log_inv * sq)\n",
         tests=["tests/algorithms/test_dualquery_accounting.py"]),
    dict(id="dualquery-zcdp-rho-too-small", file="dpsynth/algorithms/dualquery/accounting.py",
         why="DualQuery bounded-range ρ = Σ ε²/16 (not /8)",
         old="    rho = sum(c * e * e for e, c in zip(eps, counts)) / 8.0\n",
         new="    rho = sum(c * e * e for e, c in zip(eps, counts)) / 16.0\n",
         tests=["tests/algorithms/test_dualquery_accounting.py"]),
    dict(id="dualquery-true-n", file="dpsynth/algorithms/dualquery/core.py",
         why="DualQuery normalises by the true n although n is private",
         old="    n = float(ctx.n)\n",
         new="    n = float(ctx.counts.n)\n",
         tests=T_REPLAY),
    # parity queries (§6): measured in their 0/1 form so that q(D) moves by at most 1/n
    dict(id="dualquery-parity-signed-loss", file="dpsynth/algorithms/dualquery/core.py",
         why="MW loss on the ±1 parities of Definition 6.1 (range 2) while each sample is charged for range 1",
         old="        r += true - queries.satisfied(rec)\n",
         new="        r += (2.0 if isinstance(queries, Parities) else 1.0) * (true - queries.satisfied(rec))\n",
         tests=T_REPLAY),
    dict(id="dualquery-parity-count-doubled", file="dpsynth/workload/parities.py",
         why="parity count = rows + (even − odd), i.e. twice the even rows: the true answers move by 2/n",
         old="        out[idx] = (int(table.sum()) + signed) // 2\n",
         new="        out[idx] = int(table.sum()) + signed\n",
         tests=["tests/workload/test_parities.py", *T_REPLAY]),
]

# ------------------------------------------------------------ schema discovery (issue 18)
SEL = "dpsynth/privacy/selection.py"
DISC = "dpsynth/data/discover.py"
REP = "dpsynth/report.py"
T_SEL = ["tests/privacy/test_selection.py"]
T_DISC = ["tests/data/test_discover.py"]
T_ONE = ["tests/test_discover_release.py"]
MUTANTS += [
    dict(id="partition-threshold-one-lower", file=SEL, why="threshold T one lower: a single-row value appears with probability e^ε·δ",
         old="    return scale, m + 1\n", new="    return scale, m\n", tests=T_SEL),
    dict(id="partition-missing-charge", file=SEL, why="partition selection draws without charging (ε, δ)",
         old='''    ledger.charge(
        Charge(
            stage=stage,
            mechanism="partition-selection",''',
         new='''    (lambda c: c)(
        Charge(
            stage=stage,
            mechanism="partition-selection",''', tests=[*T_SEL, *T_DISC]),
    dict(id="partition-noiseless", file=SEL, why="partition selection thresholds the true counts",
         old="    noisy = counts.astype(np.int64) + discrete_laplace_noise(scale, counts.shape, rng=rng)\n",
         new="    noisy = counts.astype(np.int64) + 0 * discrete_laplace_noise(scale, counts.shape, rng=rng)\n", tests=T_SEL),
    dict(id="partition-ignores-sensitivity", file=SEL, why="noise scale 1/ε under replace-one (histogram sensitivity 2)",
         old="    scale = sensitivity / epsilon\n    alpha = math.exp(-1.0 / scale)\n",
         new="    scale = 1.0 / epsilon\n    alpha = math.exp(-1.0 / scale)\n", tests=T_SEL),
    dict(id="quantile-missing-factor-2", file=SEL, why="exponential mechanism weights exp(ε·u) instead of exp(ε·u/2Δ)",
         old="    logits = (scores - scores.max(axis=1, keepdims=True)) * (each / 2.0)\n",
         new="    logits = (scores - scores.max(axis=1, keepdims=True)) * each\n", tests=T_SEL),
    dict(id="quantile-charges-one-of-m", file=SEL, why="m quantiles charged as one (ε/m instead of ε)",
         old='''            mechanism="exponential-quantiles",
            sensitivity=1.0,
            epsilon=epsilon,''',
         new='''            mechanism="exponential-quantiles",
            sensitivity=1.0,
            epsilon=each,''', tests=[*T_SEL, *T_DISC]),
    dict(id="discover-columns-not-split", file=DISC, why="every column gets the whole ε (columns compose, a row touches all)",
         old="    eps_parts = split_budget(spec.epsilon, [1.0] * len(learn)) if learn else []\n",
         new="    eps_parts = [spec.epsilon] * len(learn)\n", tests=T_DISC),
    dict(id="discover-delta-not-split", file=DISC, why="every categorical column gets the whole δ",
         old="    delta_parts = split_budget(spec.delta, [1.0] * len(maybe_cat)) if maybe_cat else []\n",
         new="    delta_parts = [spec.delta] * len(maybe_cat)\n", tests=T_DISC),
    dict(id="discover-true-kind-counts", file=DISC, why="null/type/integrality decided on the true kind counts",
         old="        null, whole, frac, text = (max(0, int(v)) for v in noisy)\n",
         new="        null, whole, frac, text = (max(0, int(v)) for v in self.profile.kind_counts())\n", tests=T_DISC),
    dict(id="discover-true-bounds", file=DISC, why="bounds from the true bucket counts",
         old="        shown = np.flatnonzero(noisy >= cut)\n",
         new="        shown = np.flatnonzero(counts > 0)\n", tests=T_DISC),
    dict(id="budget-after-ignores-discovery", file=ACC, why="the release gets the whole budget after discovery",
         old="        exact = Fraction(float(total)) - Fraction(float(used))\n",
         new="        exact = Fraction(float(total))\n", tests=[*T_ONE, "tests/privacy/test_selection.py"]),
    dict(id="report-drops-discovery-charges", file=REP, why="the release report omits the discovery charges",
         old='    ledger = [c.to_dict() for c in discovery_ledger.charges] + list(report["ledger"])\n',
         new='    ledger = list(report["ledger"])\n', tests=T_ONE),
]

# ------------------------------------------- budget arithmetic, estimator-era algorithms (issues 12, 14, 19)
MUTANTS += [
    dict(id="scale-cost-rounds-down", file=ACC, why="ε = Δ/λ rounded to nearest: a planned iReduct allocation may sum above ε",
         old="    if Fraction(q) * Fraction(float(scale)) >= Fraction(float(sensitivity)):\n        return q\n",
         new="    if True:\n        return q\n",
         tests=["tests/privacy/test_accountant.py"]),
    dict(id="cost-allocation-trusts-float-sum", file=ACC, why="planned costs within the float margin are accepted without the exact check",
         old="        return exact <= Fraction(self.epsilon), cost\n",
         new="        return True, cost\n",
         tests=["tests/privacy/test_accountant.py"]),
    dict(id="iresamp-ignores-the-ledger", file="dpsynth/algorithms/iresamp.py",
         why="iResamp resamples without asking whether the draw still fits the budget",
         old='        if not ctx.ledger.would_fit(Charge(stage="resample", mechanism="laplace", sensitivity=sens, epsilon=e)):\n',
         new="        if False:\n",
         tests=["tests/privacy/test_ledger_exact.py"]),
    dict(id="mwem-pgm-measure-sensitivity-1", file="dpsynth/algorithms/mwem_pgm.py",
         why="MWEM (pgm) measures a marginal at sensitivity 1 under replace-one (true L1 distance 2)",
         old="        return geometric_mechanism(true, sensitivity=nb.histogram_l1, epsilon=part, **kw)\n",
         new="        return geometric_mechanism(true, sensitivity=1.0, epsilon=part, **kw)\n",
         tests=T_REPLAY),
    dict(id="fourier-replace-one-at-add-remove-sensitivity", file="dpsynth/algorithms/fourier.py",
         why="Fourier coefficients under replace-one charged at the add-remove sensitivity",
         old="    per = 1.0 if neighbouring is Neighbouring.ADD_REMOVE else 2.0\n",
         new="    per = 1.0\n",
         tests=["tests/algorithms/test_fourier.py", *T_REPLAY]),
]

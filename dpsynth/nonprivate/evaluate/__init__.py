"""Table-level fidelity evaluation of synthetic data (``dpsynth evaluate``).

NOT PRIVATE: this module reads the *real* table, so everything it returns is
computed from private data without noise.  It is a tool for the data custodian
before publishing; its numbers must not be published with the release.

The headline comes first from a *neutral* view (:mod:`.neutral`): both tables binned
from the real table alone, so a release whose own schema hides its errors (one bin,
``__other__``, clamped bounds) cannot look good; see :mod:`.columns` for the raw-value
figures.  Then, in the release's own bins: both tables are encoded with the configuration's public domain
(:func:`dpsynth.data.discretize.encode`), so every metric is computed on the
schema's discretization.  For each k, the k-way marginals (all of them, or a
random sample) of the real table are compared with those of the synthetic rows
and of three baselines computed on the spot (with ``workload=True``: the
configuration's own marginals, range queries, conjunctions and linear queries,
rebuilt from its public seeds and files exactly as the release measured them):

* ``uniform``: the uniform distribution over the domain (DualQuery §7's
  "uniform data set", MWEM's starting point);
* ``zeros``: the all-zeros record set of DualQuery §7, generalised to
  non-binary columns as *every record takes code 0 in every column* (the
  first category, lowest bin or lower bound).  For 0/1 columns declared as
  ``categories: [0, 1]`` this is exactly DualQuery's data set;
* ``independent``: the product of the true 1-way marginals (the best a
  synthesizer that ignores correlations can do).

See docs/evaluate.md for the metrics and the output schema.  Modules: ``options``
(methods, limits, :class:`EvalOptions`), ``counting`` (marginal counts, baselines,
encoding), ``marginals`` (per-k marginals, relative entropy, range queries),
``workload`` (the release's own workload, released marginals), ``classifier``
(Naive Bayes), ``neutral`` (bins from the real table alone, the verdict), ``columns``
(raw-value distances per column, values the schema could not represent), ``core``
(:func:`evaluate`), ``render`` (text tables).
"""

from dpsynth.nonprivate.evaluate.core import evaluate
from dpsynth.nonprivate.evaluate.options import METHODS, NOT_PRIVATE, EvalOptions
from dpsynth.nonprivate.evaluate.render import summary_tables
from dpsynth.nonprivate.evaluate.workload import parse_released_marginals, released_query_answers

__all__ = ["METHODS", "NOT_PRIVATE", "EvalOptions", "evaluate", "parse_released_marginals", "released_query_answers",
           "summary_tables"]

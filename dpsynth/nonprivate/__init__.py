"""NOT PRIVATE: code that reads data without a mechanism (evaluation, metrics, plots, schema draft, Oracle).

Nothing here may feed a release.  Only the CLI and benchmarks import this package (enforced by
``make lint``); its outputs say NOT PRIVATE.
"""

"""Shared fixtures: paths, small configs, a CLI runner."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.helpers import ROOT, SHARED_DATA, shared_file  # noqa: F401  (re-exported for tests)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def adult_path() -> Path:
    return ROOT / "sample_data" / "adult.csv"


@pytest.fixture
def adult_config_path() -> Path:
    return ROOT / "configs" / "adult.yaml"


@pytest.fixture
def tiny_raw_config() -> dict:
    """A small public config: two categorical columns, one numeric, one integer."""
    return {
        "schema": {
            "columns": {
                "color": {"type": "categorical", "categories": ["red", "green", "blue"]},
                "size": {"type": "numeric", "lower": 0, "upper": 10, "bins": 5},
                "count": {"type": "integer", "lower": 1, "upper": 4},
                "flag": {"type": "categorical", "categories": [0, 1]},
            }
        },
        "privacy": {"epsilon": 1.0},
        "algorithm": {"name": "laplace"},
        "workload": {"marginals": {"k": 2}},
        # the algorithms' own ledgers: the fine view of numbers (its own stage, tests/data/test_fine.py) is off
        "decode": {"fine": "off"},
    }


@pytest.fixture
def tiny_table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 500
    return pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], size=n),
            "size": rng.uniform(0, 10, size=n),
            "count": rng.integers(1, 5, size=n),
            "flag": rng.integers(0, 2, size=n),
        }
    )


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for every engine test (skipped, with the reason, without PySpark or Java).

    ``make test`` installs the spark extra wherever Java exists, so these tests run in CI there.
    """
    from dpsynth.data.engines.spark import spark_available

    reason = spark_available()
    if reason:
        pytest.skip(reason)
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # discovery runs dpsynth's Python on the executors
    session = (SparkSession.builder.master("local[2]").appName("dpsynth-tests").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.ui.showConsoleProgress", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("OFF")
    yield session
    session.stop()


# The longest tests are documentation walk-throughs and the Spark tests (the first one starts the session): one
# of them started last keeps a worker busy while the other has nothing left.  Sent first (pytest-xdist's load
# scheduling hands tests out in collection order), they overlap the short tests.
_LONG_FIRST = ("tests/test_batch_doc.py", "tests/test_readme.py", "tests/test_python_api_doc.py",
               "tests/test_benchmarks_smoke.py", "tests/test_fuzz_config.py")


def pytest_collection_modifyitems(config, items):
    """Spark tests, then the long walk-throughs, then the rest (longest first: the shortest tail)."""

    def rank(item) -> int:
        if "spark" in getattr(item, "fixturenames", ()):
            return 0
        return 1 if item.nodeid.split("::")[0] in _LONG_FIRST else 2

    items.sort(key=rank)  # stable: the order within each rank is pytest's

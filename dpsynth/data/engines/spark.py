"""The ``spark`` engine: count the table with Apache Spark (PySpark, the optional ``dpsynth[spark]`` extra).

Spark reads the input (CSV with every column as text, or Parquet), discretizes
it with Spark SQL expressions that follow :func:`dpsynth.data.discretize.encode`
rule by rule, and runs ONE job: a group-by on (a packed bigint key of all
codes, a bit word of per-row rule flags) with a count.  Collected to the driver
(Arrow), it gives at once

* ``n`` (the sum of the counts);
* for each column and rule of the numpy encoder (nulls, undeclared categories,
  non-numeric text, fractional integers, out-of-range numbers) whether any row
  breaks it.  If so, the error raised is the numpy engine's message for the
  first column in schema order and its first failing rule (the text comes from
  the numpy encoder itself, run on a public placeholder value);
* the counts of the occupied cells of the full contingency table (at most
  min(n, cells) rows).

Every marginal the algorithm asks for, adaptively, is then a weighted bincount
of those rows on the driver: no further Spark job, and the session is stopped
before the algorithm runs.  If more than ``max_distinct`` cells are occupied
(wide tables), the codes are cached in Spark, a second job aggregates the
flags and ``n``, and each marginal is its own group-by.

Cluster use: ``--spark-master spark://host:7077`` (or ``yarn``, ``k8s://…``),
or set ``SPARK_REMOTE=sc://host:15002`` for Spark Connect; the default is
``local[*]``.  The input path must be readable by the executors.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import warnings
from pathlib import Path
from typing import Self

import numpy as np
import pandas as pd

from dpsynth.data.counts import CachedCounts
from dpsynth.data.discover.tables import ScannedTable
from dpsynth.data.discretize import category_numbers, encode_column
from dpsynth.data.io import table_format
from dpsynth.data.schema import CategoricalColumn, ColumnSpec, DatetimeColumn, Domain, IntegerColumn, null_code
from dpsynth.errors import DataError, DpsynthError, EngineError, InputMissingError

__all__ = ["SparkCounts", "SparkDiscoveryTable", "spark_available"]

MAX_DISTINCT = 2_000_000


def spark_available() -> str | None:
    """None when PySpark and Java are present, else the reason they are not."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "the spark engine needs PySpark: pip install 'dpsynth[spark]'"
    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and Path(java_home, "bin", "java").exists()):
        return "the spark engine needs Java 17 or later (no java on PATH and no JAVA_HOME)"
    return None


def _session(master: str | None):
    reason = spark_available()
    if reason:
        raise EngineError(reason)
    from pyspark.sql import SparkSession

    if SparkSession.getActiveSession() is not None:  # e.g. a notebook's or a test's session: reuse, never stop
        return SparkSession.getActiveSession(), False
    builder = SparkSession.builder.appName("dpsynth")
    if master:
        builder = builder.master(master)
    elif os.environ.get("SPARK_REMOTE"):
        builder = builder.remote(os.environ["SPARK_REMOTE"])
    else:
        builder = builder.master("local[*]")
    if not os.environ.get("SPARK_REMOTE") and (master or "local").startswith("local"):
        # discovery runs dpsynth's own Python on the executors: in local mode, this interpreter (its packages)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        session = (
            builder.config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "8")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        session.sparkContext.setLogLevel("ERROR")
    except Exception as exc:  # noqa: BLE001 - Java gateway or cluster failures: one line, no traceback
        raise EngineError(f"could not start Spark ({type(exc).__name__}); check Java and --spark-master") from None
    return session, True


# ----------------------------------------------------------------- expressions
def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


_FLOATS = ("float", "double")


def _is_null(F, name: str, dtype: str, fmt: str):
    """Row flag: the cell is null, as the numpy engine sees it (NaN in a float column; "" in a CSV)."""
    col = F.col(_q(name))
    if dtype in _FLOATS:
        return col.isNull() | F.isnan(col)
    if fmt != "parquet" and dtype == "string":  # io.read_table reads empty CSV fields as null
        return col.isNull() | (col == F.lit(""))
    return col.isNull()


def _text(F, name: str, dtype: str):
    """A non-float column as text, as pandas' ``astype("string")`` writes each value (booleans True/False)."""
    col = F.col(_q(name))
    if dtype == "boolean":
        return F.when(col, F.lit("True")).otherwise(F.lit("False"))
    return col if dtype == "string" else col.cast("string")


def _categorical(F, spec: CategoricalColumn, name: str, dtype: str, isnull):
    """(code, {rule: bad-row flag}) of a categorical column, from each row's value alone.

    Float columns match by value against ``discretize.category_numbers`` (the
    numpy engine's rule); other columns match by text.
    """
    if dtype in _FLOATS:
        value_of, keys = F.col(_q(name)).cast("double"), category_numbers(spec)
        targets = [(i, F.lit(float(k))) for i, k in enumerate(keys) if not np.isnan(k)]
    else:
        value_of = _text(F, name, dtype)
        targets = [(i, F.lit(str(c))) for i, c in enumerate(spec.categories)]
    code = F.lit(None).cast("int")
    for i, target in reversed(targets):  # loop over categories (public, few): the first match wins
        code = F.when(value_of == target, F.lit(i)).otherwise(code)
    code = F.when(isnull, F.lit(None).cast("int")).otherwise(code)
    unknown = ~isnull & code.isNull()
    if spec.other:
        code = F.when(unknown, F.lit(len(spec.categories))).otherwise(code)
        unknown = F.lit(False)
    return code, {"outside its declared categories": unknown}


def _numeric(F, spec: ColumnSpec, raw: str, dtype: str, isnull, unknown: str):
    """(code, {rule: bad-row flag}) of a numeric or integer column (raw: the Spark column, any type)."""
    v = F.expr(f"try_cast({raw} AS DOUBLE)")
    present = ~isnull
    if dtype == "string":  # text "NaN" is not a number for pandas.to_numeric
        v = F.when(F.isnan(v), F.lit(None).cast("double")).otherwise(v)
    finite = v.isNotNull() & ~F.isnan(v) & (F.abs(v) != float("inf"))
    if isinstance(spec, IntegerColumn):
        lo, hi = float(spec.lower), float(spec.upper)
    else:
        lo, hi = float(spec.edges[0]), float(spec.edges[-1])
    clipped = F.least(F.greatest(F.when(F.isnan(v), F.lit(lo)).otherwise(v), F.lit(lo)), F.lit(hi))
    if isinstance(spec, IntegerColumn):
        code = (F.rint(clipped) - F.lit(lo)).cast("int")  # as numpy: half to even
    else:
        below = sum((F.when(clipped >= F.lit(float(e)), 1).otherwise(0) for e in spec.edges), F.lit(0))
        # a value equal to a point (an edge written twice) is in its point bin (schema.bin_index)
        at_point = sum((F.when(clipped == F.lit(p), 1).otherwise(0) for p in spec.points), F.lit(0))
        code = F.least(F.greatest(below - 1 - at_point, F.lit(0)), F.lit(spec.n_bins - 1))
    outside = present & v.isNotNull() & ~(finite & (v >= F.lit(lo)) & (v <= F.lit(hi)))
    flags = {
        "has non-numeric values": present & v.isNull(),
        "outside its declared range": outside if unknown != "other" else F.lit(False),
    }
    if isinstance(spec, IntegerColumn) and unknown != "other":
        flags["fractional values"] = present & finite & ((v % F.lit(1.0)) != F.lit(0.0))  # floor() is a bigint: overflows
    return code, flags


def _datetime_code(F, spec: DatetimeColumn, unknown: str):
    """A datetime column's codes computed on the executors by :func:`dpsynth.data.discretize.encode_column`
    itself (a pandas UDF), so instants are parsed exactly as the numpy engine parses them.  Only for a column
    that maps unparseable cells and nulls to its missing bin (:func:`dpsynth.data.engines.check_engine`)."""
    from pyspark.sql.functions import pandas_udf

    def codes(col: pd.Series) -> pd.Series:
        return pd.Series(encode_column(col.reset_index(drop=True), spec, unknown).astype(np.int32))

    with _quiet_pandas_warning():
        return pandas_udf(codes, "int")(F.col(_q(spec.name)))  # type: ignore[call-overload]


@contextlib.contextmanager
def _quiet_pandas_warning():
    """PySpark 4.x warns that pandas 3 is not fully supported when a pandas or Arrow UDF is made: the UDFs here
    only hand Arrow batches to dpsynth's own code (tested on PySpark 4.3 with pandas 3)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
        yield


def _bits(F, flags: list) -> list:
    """The per-row rule flags packed into bigint words b0, b1, … (62 flags a word)."""
    words = []
    for k in range(0, len(flags), 62):  # loop over words (one per 62 rules)
        word = F.lit(0).cast("bigint")
        for i, flag in enumerate(flags[k : k + 62]):
            word = word + F.when(flag, F.lit(1 << i).cast("bigint")).otherwise(F.lit(0).cast("bigint"))
        words.append(word.alias(f"b{k // 62}"))
    return words


def _collect(df) -> dict[str, np.ndarray]:
    """A small Spark result as numpy columns on the driver (Arrow transfer, no pandas)."""
    if hasattr(df, "toArrow"):  # Spark >= 4.0
        table = df.toArrow()
        return {name: table.column(name).to_numpy() for name in table.column_names}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # PySpark 3.5 warns about pandas 3
        pdf = df.toPandas()
    return {name: pdf[name].to_numpy() for name in pdf.columns}


# ---------------------------------------------------------------- error messages
def _message(spec: ColumnSpec, rule: str, unknown: str) -> str:
    """The numpy encoder's own message for ``rule`` (made from a public placeholder value, not data)."""
    probes = {
        "has null values": pd.Series([None], dtype=object),
        "outside its declared categories": pd.Series(["\x00"], dtype=object),
        "values are not numbers": pd.Series([True]),
        "has non-numeric values": pd.Series(["\x00"], dtype=object),
        "fractional values": pd.Series([0.5]),
        "outside its declared range": pd.Series([float("inf")]),
    }
    try:
        encode_column(probes[rule], spec, unknown)
    except DataError as exc:
        return str(exc)
    return f"column '{spec.name}' breaks its schema"  # not reached: every probe breaks its rule


# ----------------------------------------------------------------------- engine
class SparkCounts(CachedCounts):
    """Counts of a CSV/Parquet table computed by Spark (see the module docstring)."""

    def __init__(
        self,
        path: str | Path,
        domain: Domain,
        *,
        unknown: str = "error",
        master: str | None = None,
        spark=None,
        max_distinct: int = MAX_DISTINCT,
    ):
        self.domain = domain
        self._cache: dict[tuple[int, ...], np.ndarray] = {}
        self._codes_df, self._rows, self._spark, self._own = None, None, None, False
        fmt = table_format(path)
        if not Path(path).is_file():
            raise InputMissingError(f"input file not found: {path}")
        self._spark, self._own = (spark, False) if spark is not None else _session(master)
        try:
            self._scan(str(path), fmt, unknown, max_distinct)
        finally:
            if self._codes_df is None:
                self.close()

    def _read(self, path: str, fmt: str):
        return _read_frame(self._spark, path, fmt)

    def _scan(self, path: str, fmt: str, unknown: str, max_distinct: int) -> None:
        from pyspark.sql import functions as F

        try:
            df = self._read(path, fmt)
            codes, flags = self._expressions(F, df, unknown, fmt)
            bits = _bits(F, [f for _, _, f in flags])
            coded = df.select(*[c.alias(f"c{j}") for j, c in enumerate(codes)], *bits)
            names = [f"b{k}" for k in range(len(bits))]
            key = self._key(F)
            got = None
            if key is not None:  # one job: rule flags, n and the occupied cells together
                got = _collect(coded.groupBy(key.alias("key"), *names).count().limit(max_distinct + 1))
                if len(got["count"]) > max_distinct:
                    got = None
            if got is None:  # too many occupied cells: keep the codes in Spark, one group-by per marginal
                coded = coded.cache()
                got = _collect(coded.agg(F.count(F.lit(1)).alias("count"), *[F.bit_or(b).alias(b) for b in names]))
                self._codes_df = coded
        except DpsynthError:
            raise
        except Exception as exc:  # noqa: BLE001 - any Spark failure becomes one line
            raise DataError(f"{path}: Spark could not read the input ({type(exc).__name__}; malformed CSV or Parquet?)"
                            ) from None
        word = [int(np.bitwise_or.reduce(got[b].astype(np.int64))) if len(got[b]) else 0 for b in names]
        self._raise_first(flags, [bool(word[i // 62] >> (i % 62) & 1) for i in range(len(flags))], unknown)
        self._n = int(got["count"].astype(np.int64).sum())
        if self._n == 0:
            raise DataError(f"{path}: the input has no data rows")
        if self._codes_df is None:
            narrow = np.min_scalar_type(max(self.domain.sizes))
            cols = np.unravel_index(got["key"].astype(np.int64), self.domain.sizes)
            self._rows = np.stack([c.astype(narrow) for c in cols], axis=1)
            self._weights = got["count"].astype(np.int64)

    def _key(self, F):
        """All codes packed in one bigint (mixed radix), or None when the full table has ≥ 2**62 cells."""
        sizes = self.domain.sizes
        if float(np.prod([float(s) for s in sizes])) >= 2.0**62:
            return None
        key = F.lit(0).cast("bigint")
        for j, size in enumerate(sizes):  # loop over columns
            key = key * F.lit(int(size)) + F.col(f"c{j}").cast("bigint")
        return key

    def _expressions(self, F, df, unknown: str, fmt: str):
        types = dict(df.dtypes)
        codes, flags = [], []  # flags: (column index, rule, bad-row flag)
        for j, spec in enumerate(self.domain.columns):  # loop over columns; each is one expression
            dtype = types[spec.name]
            isnull = _is_null(F, spec.name, dtype, fmt)
            if isinstance(spec, CategoricalColumn):
                code, rules = _categorical(F, spec, spec.name, dtype, isnull)
            elif isinstance(spec, DatetimeColumn):  # breaks no rule (check_engine): the numpy encoder, per batch
                code, rules = _datetime_code(F, spec, unknown), {}
            elif dtype == "boolean" and unknown == "other" and null_code(spec) is not None:
                code, rules, isnull = F.lit(0), {}, F.lit(True)
            elif dtype == "boolean":
                code, rules = F.lit(0), {"values are not numbers": F.lit(True)}
            else:
                code, rules = _numeric(F, spec, _q(spec.name), dtype, isnull, unknown)
                if unknown == "other" and null_code(spec) is not None:  # unplaceable values are missing (discretize)
                    isnull = isnull | rules.pop("has non-numeric values")
            if null_code(spec) is not None:  # the null category, or the fill value's code under missing: fill
                code = F.when(isnull, F.lit(null_code(spec))).otherwise(code)
            else:
                flags.append((j, "has null values", isnull))
            codes.append(code)
            flags.extend((j, rule, flag) for rule, flag in rules.items())
        return codes, flags

    def _raise_first(self, flags, broken_flags: list[bool], unknown: str) -> None:
        from dpsynth.data.engines.stream import _rule

        broken = [(j, _rule(rule), rule) for (j, rule, _), bad in zip(flags, broken_flags) if bad]
        if broken:
            j, _, rule = min(broken)
            raise DataError(_message(self.domain.columns[j], rule, unknown))

    @property
    def n(self) -> int:
        return self._n

    def _count(self, attrs: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
        if self._rows is None:
            return self._group_by(attrs, shape)
        flat = np.ravel_multi_index(tuple(self._rows[:, a] for a in attrs), shape)
        # float64 weights are exact integers below 2**53 rows
        out = np.rint(np.bincount(flat, weights=self._weights, minlength=int(np.prod(shape))))
        return out.astype(np.int64).reshape(shape)

    def _group_by(self, attrs: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
        pdf = _collect(self._codes_df.groupBy(*[f"c{a}" for a in attrs]).count())
        out = np.zeros(shape, dtype=np.int64)
        out[tuple(pdf[f"c{a}"].astype(np.int64) for a in attrs)] = pdf["count"].astype(np.int64)
        return out

    def close(self) -> None:
        if self._codes_df is not None:
            self._codes_df.unpersist()
            self._codes_df = None
        if self._own and self._spark is not None:
            self._spark.stop()
        self._spark = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ------------------------------------------------------------------------ discovery
def _answer_batches(batches, *, question: str, args: tuple, instants: bool, keyed: bool, text: bool):
    """Runs on Spark's executors (``mapInArrow``): each Arrow batch of one column answered as on the driver by
    the stream engine (:func:`~dpsynth.data.discover.tables.batch_answer`), as (key, count) rows: the cell index
    of a count vector, or the observed value."""
    import pyarrow as pa

    from dpsynth.data.discover.tables import batch_answer, keyed_part
    from dpsynth.data.io import arrow_to_pandas

    for batch in batches:
        answer = batch_answer(arrow_to_pandas(batch.column(0)), question, args, instants)
        if keyed:
            keys, counts = keyed_part(answer, text=text)
        else:
            cells = np.flatnonzero(answer)
            keys, counts = pa.array(cells.astype(np.int64)), answer[cells].astype(np.int64)
        yield pa.RecordBatch.from_arrays([keys, pa.array(counts, type=pa.int64())], names=["key", "count"])


class SparkDiscoveryTable(ScannedTable):
    """A CSV/Parquet table read by Spark for private schema discovery: each question is one Spark job over one
    column (the input is cached in Spark after the first): the executors answer it batch by batch with the
    driver-side code of the stream engine (``mapInArrow``; dpsynth must be importable there), a group-by adds
    the answers up, and the driver receives one count vector or one column's distinct values with their counts.
    So the schema for a seed is the numpy engine's."""

    def __init__(self, path: str | Path, *, master: str | None = None, spark=None):
        fmt = table_format(path)
        if not Path(path).is_file():
            raise InputMissingError(f"input file not found: {path}")
        self._path = str(path)
        self._own: bool = False
        self._spark, self._own = (spark, False) if spark is not None else _session(master)
        self._df = None
        try:
            df = self._spark_call(lambda: _read_frame(self._spark, self._path, fmt))
            names = list(df.columns)
            if len(set(names)) != len(names):
                dup = next(h for h in names if names.count(h) > 1)
                raise DataError(f"{path}: the header repeats the column name '{dup}'")
            self._df = df.cache()
        except BaseException:
            self.close()
            raise
        super().__init__(names, lambda name, consume: None, self._rows)

    def _spark_call(self, job):
        try:
            return job()
        except DpsynthError:
            raise
        except Exception as exc:  # noqa: BLE001 - any Spark failure becomes one line
            raise DataError(f"{self._path}: Spark could not read the input ({type(exc).__name__}; malformed CSV or "
                            "Parquet?)") from None

    def _rows(self) -> int:
        n = int(self._spark_call(self._df.count))
        if n == 0:
            raise DataError(f"{self._path}: the input has no data rows")
        return n

    def scan(self, name: str, question: str, args: tuple, instants: bool):
        from functools import partial

        from pyspark.sql import functions as F

        from dpsynth.data.discover.tables import QUESTIONS, KeyedSum, batch_answer

        self.scans += 1
        keyed, text = QUESTIONS[question] == "keyed", question == "value_counts"
        fn = partial(_answer_batches, question=question, args=args, instants=instants, keyed=keyed, text=text)
        key_type = "string" if text else "double" if keyed else "bigint"
        with _quiet_pandas_warning():
            agg = (self._df.select(F.col(_q(name)).alias("v")).mapInArrow(fn, f"key {key_type}, count bigint")
                   .groupBy("key").agg(F.sum("count").alias("count")))
            got = self._spark_call(lambda: _collect_arrow(agg))
        counts = got.column("count").to_numpy().astype(np.int64)
        if not keyed:
            out = np.zeros_like(batch_answer(pd.Series([], dtype=object), question, args, instants))
            out[got.column("key").to_numpy().astype(np.int64)] = counts
            return out
        acc = KeyedSum(text=text)
        if got.num_rows:
            acc.add(got.column("key").combine_chunks(), counts)
        return acc.result()

    def close(self) -> None:
        if self._df is not None:
            self._df.unpersist()
            self._df = None
        if self._own and self._spark is not None:
            self._spark.stop()
        self._spark = None


def _read_frame(spark, path: str, fmt: str):
    """The input as Spark reads it for every engine: Parquet with its types, CSV with every column as text."""
    if fmt == "parquet":
        return spark.read.parquet(path)
    from pyspark.sql.types import StringType, StructField, StructType

    header = spark.read.option("header", "true").csv(path).columns
    schema = StructType([StructField(c, StringType()) for c in header])
    return (spark.read.option("header", "true").option("mode", "FAILFAST").option("encoding", "UTF-8")
            .schema(schema).csv(path))


def _collect_arrow(df):
    """A small Spark result as an Arrow table on the driver."""
    import pyarrow as pa

    if hasattr(df, "toArrow"):  # Spark >= 4.0
        return df.toArrow()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # PySpark 3.5 warns about pandas 3
        return pa.Table.from_pandas(df.toPandas(), preserve_index=False)

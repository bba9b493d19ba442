"""How an input table is read: format, delimiter, encoding, padding (one place for every engine).

:class:`InputOptions` is what ``--delimiter``, ``--encoding`` and ``schema.strip``
say; :mod:`dpsynth.data.io` (numpy engine), :mod:`dpsynth.data.engines.stream`
and the ``check`` command all read through it, so every engine parses a file the
same way and reports a problem with the same message.  Messages name columns,
line numbers and counts, never a value.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from dataclasses import dataclass

from dpsynth.errors import UsageError

__all__ = ["DEFAULT", "InputOptions", "first_ragged_row", "header_hint", "one_column_hint", "ragged_message"]

_DELIMITERS = (";", "\t", "|", ",")


@dataclass(frozen=True)
class InputOptions:
    """``delimiter``: one character (CSV); ``encoding``: a Python codec name (``utf-8``, ``latin-1``, ...);
    ``strip``: remove spaces around every field (``schema.strip: true``; UCI files pad fields as ", ")."""

    delimiter: str = ","
    encoding: str = "utf-8"
    strip: bool = False

    def __post_init__(self) -> None:
        if len(self.delimiter) != 1 or self.delimiter in ('"', "\n", "\r"):
            shown = self.delimiter.encode("unicode_escape").decode()
            raise UsageError(f"--delimiter must be one character other than a quote or newline, got '{shown}'")
        try:
            name = codecs.lookup(self.encoding).name
        except LookupError:
            raise UsageError(f"--encoding: unknown encoding '{self.encoding}' (e.g. utf-8, latin-1, cp1252)") from None
        object.__setattr__(self, "encoding", name)

    @property
    def utf8(self) -> bool:
        return self.encoding == "utf-8"

    @property
    def default(self) -> bool:
        return self == DEFAULT


DEFAULT = InputOptions()


def header_hint(names: Sequence[str], expected: Sequence[str]) -> str:
    """Why a header may not match the schema: another delimiter, or spaces around the names.

    A name that still contains a delimiter was not split by it, so the file uses that one; a name
    equal to a schema column once stripped means the fields are padded (``schema.strip: true``).
    """
    names = [str(n) for n in names]
    for d in _DELIMITERS:
        split = [part.strip() for name in names for part in name.split(d)]
        if len(split) > len(names) and any(c in split for c in expected):
            shown = "\\t" if d == "\t" else d
            return f"; the header looks '{shown}'-separated: pass --delimiter '{shown}'"
    if any(n != n.strip() and n.strip() in expected for n in names):
        return "; the header has spaces around its names: set 'schema.strip: true'"
    return ""


def one_column_hint(names: Sequence[str], delimiter: str) -> str:
    """A table read as ONE column whose name holds another delimiter was not split: say which to pass."""
    if len(names) != 1:
        return ""
    for d in _DELIMITERS:
        if d != delimiter and d in str(names[0]):
            shown = "\\t" if d == "\t" else d
            return f"the header looks '{shown}'-separated (one column was read): pass --delimiter '{shown}'"
    return ""


def ragged_message(name: str, line: int, actual: int, expected: int) -> str:
    return f"{name}: malformed CSV (line {line} has {actual} fields, expected {expected})"


def first_ragged_row(data: bytes, names: Sequence[str], delimiter: str) -> tuple[int, int, int] | None:
    """(line, fields, expected) of the first row whose field count differs from the header's, or None.

    ``data``: UTF-8 CSV bytes with the header line ``names``.  Parsed by Arrow in blocks (bounded memory),
    converting only the first column, with the row handler the stream engine uses, so both engines
    report the same line.  Other parse problems are left to the caller's parser.
    """
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not names:
        return None
    bad: list[tuple[int, int, int]] = []

    def on_bad_row(row) -> str:
        bad.append((row.number, row.actual_columns, row.expected_columns))
        return "skip"

    try:
        reader = pacsv.open_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(use_threads=False, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, invalid_row_handler=on_bad_row),
            convert_options=pacsv.ConvertOptions(include_columns=[names[0]], column_types={names[0]: pa.string()}),
        )
        for _ in reader:
            if bad:
                break
    except (pa.ArrowException, ValueError):
        return bad[0] if bad else None
    return bad[0] if bad and bad[0][0] is not None else None

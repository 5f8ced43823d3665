"""Reading raw inputs (plain, ``.gz``, ``.xz``, ``.bz2``), strict integer tables, sha256, and
writing outputs atomically and byte-reproducibly.

Every reader raises :class:`~gradcode.data.errors.DataError` with a one-line message that starts
with the file's name; nothing is skipped, clipped or repaired.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import hashlib
import lzma
import os
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

from gradcode.data.errors import DataError

#: file suffix -> (compression name, module with ``open``)
COMPRESSIONS = {".gz": ("gzip", gzip), ".xz": ("xz", lzma), ".bz2": ("bzip2", bz2)}

# int64 holds every 18-digit decimal; longer fields are rejected rather than wrapped
_MAX_DIGITS = 18
_POW10 = 10 ** np.arange(_MAX_DIGITS, dtype=np.int64)
# tables are parsed in slices of about this many bytes (cut at line ends) to bound memory
_CHUNK_BYTES = 1 << 22
# zip entries get this fixed date so that the same arrays always give the same bytes
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class RawFile:
    """One input file, decompressed into memory.

    ``name`` is the logical name (``train.csv`` for ``train.csv.xz``), ``file`` the name on
    disk; ``sha256`` and ``size`` describe the decompressed ``content``, so they do not depend
    on how the file was compressed.
    """

    name: str
    file: str
    compression: str | None
    content: bytes
    sha256: str

    @property
    def size(self) -> int:
        return len(self.content)


def logical_name(path: str | os.PathLike[str]) -> str:
    """``dir/train.csv.xz`` -> ``train.csv``: the file name without a compression suffix."""
    name = Path(path).name
    suffix = Path(name).suffix
    return name[: -len(suffix)] if suffix in COMPRESSIONS else name


def read_raw(path: str | os.PathLike[str]) -> RawFile:
    """Read ``path`` whole, decompressing by suffix (``.gz``, ``.xz``, ``.bz2``, else plain).

    A missing file, a corrupt or truncated compressed stream, or an unreadable file raises
    ``DataError``.
    """
    path = Path(path)
    name = logical_name(path)
    compression, module = COMPRESSIONS.get(path.suffix, (None, None))
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "not found"
        raise DataError(f"{path.name}: {what} ({path})")
    try:
        if module is None:
            content = path.read_bytes()
        else:
            with module.open(path, "rb") as stream:
                content = stream.read()
    except EOFError:
        raise DataError(
            f"{path.name}: truncated {compression} stream (the file ends before the end "
            "of its compressed data)"
        ) from None
    except (OSError, lzma.LZMAError, zlib.error) as error:
        if module is not None:
            detail = str(error).strip() or type(error).__name__
            raise DataError(f"{path.name}: not a valid {compression} file ({detail})") from None
        raise DataError(f"{path.name}: cannot read ({error.strerror or error})") from None
    return RawFile(
        name=name,
        file=path.name,
        compression=compression,
        content=content,
        sha256=hashlib.sha256(content).hexdigest(),
    )


def sha256_file(path: str | os.PathLike[str]) -> str:
    """sha256 (hex) of the bytes of ``path`` as stored, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _normalise_line_ends(content: bytes, name: str) -> bytes:
    """CRLF -> LF; a carriage return anywhere else is an error, not whitespace."""
    if b"\r" not in content:
        return content
    stray = content.replace(b"\r\n", b"\n").find(b"\r")
    if stray >= 0:
        line = content[:stray].count(b"\n") - content[:stray].count(b"\r\n") + 1
        raise DataError(f"{name}: line {line}: stray carriage return")
    return content.replace(b"\r\n", b"\n")


def split_header(content: bytes, name: str) -> tuple[list[str], bytes]:
    """The comma-separated header of a CSV file and the bytes after it.

    Raises ``DataError`` for an empty file, a non-ASCII header or a header without a line end.
    """
    content = _normalise_line_ends(content, name)
    if not content:
        raise DataError(f"{name}: empty file")
    end = content.find(b"\n")
    if end < 0:
        raise DataError(f"{name}: header line has no line end (no data rows)")
    try:
        header = content[:end].decode("ascii")
    except UnicodeDecodeError:
        raise DataError(f"{name}: line 1: header is not ASCII text") from None
    return header.split(","), content[end + 1 :]


def read_int_csv(raw: RawFile, columns: Sequence[str]) -> np.ndarray:
    """The integer table of a headed CSV file, columns in the order of ``columns``.

    The header must name exactly ``columns`` (any order, no repeats); every row must have one
    non-negative decimal integer per column. Returns an int64 array of shape
    ``(rows, len(columns))``.
    """
    header, body = split_header(raw.content, raw.file)
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise DataError(f"{raw.file}: column(s) {', '.join(repeated)} appear more than once")
    missing = [c for c in columns if c not in header]
    extra = [c for c in header if c not in columns]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing column(s) {', '.join(missing)}")
        if extra:
            parts.append(f"unexpected column(s) {', '.join(repr(c) for c in extra)}")
        raise DataError(f"{raw.file}: header: {'; '.join(parts)}")
    table = parse_int_table(
        body, name=raw.file, n_fields=len(header), delimiter=",", first_line=2, field_names=header
    )
    order = [header.index(c) for c in columns]
    return table[:, order]


def parse_int_table(
    content: bytes,
    *,
    name: str,
    n_fields: int,
    delimiter: str | None,
    first_line: int = 1,
    signed: bool = False,
    field_names: Sequence[str] | None = None,
    max_value: int | None = None,
    dtype: type = np.int64,
) -> np.ndarray:
    """Parse lines of ``n_fields`` decimal integers into an array ``(lines, n_fields)``.

    ``delimiter`` is one character (``","``: empty fields are errors) or ``None`` for fields
    separated by runs of spaces or tabs (leading and trailing blanks allowed, as in the UCI
    GISETTE files). Lines end in LF or CRLF; the last line end may be missing. Only digits
    (and a leading ``-`` when ``signed``) are accepted: no ``+``, decimal point, exponent or
    quotes. ``first_line`` is the file line number of the first line of ``content``, for
    messages. A value above ``max_value`` is an error; the result has type ``dtype`` (the
    caller makes sure the values fit, e.g. with ``max_value``). Vectorised over slices of
    about 4 MiB, converted to ``dtype`` slice by slice to bound memory.
    """
    content = _normalise_line_ends(content, name)
    if not content:
        raise DataError(f"{name}: no data rows")
    if not content.endswith(b"\n"):
        content += b"\n"
    tables = []
    line = first_line
    start = 0
    while start < len(content):
        end = content.rfind(b"\n", start, start + _CHUNK_BYTES) + 1
        if end <= start:  # one line longer than a chunk: take it whole
            end = content.index(b"\n", start) + 1
        chunk = np.frombuffer(content, dtype=np.uint8, count=end - start, offset=start)
        table = _parse_chunk(
            chunk,
            name=name,
            n_fields=n_fields,
            delimiter=delimiter,
            first_line=line,
            signed=signed,
            field_names=field_names,
            max_value=max_value,
            dtype=dtype,
        )
        tables.append(table)
        line += table.shape[0]
        start = end
    return tables[0] if len(tables) == 1 else np.concatenate(tables)


def _parse_chunk(
    a: np.ndarray,
    *,
    name: str,
    n_fields: int,
    delimiter: str | None,
    first_line: int,
    signed: bool,
    field_names: Sequence[str] | None,
    max_value: int | None,
    dtype: type,
) -> np.ndarray:
    """``a``: uint8 bytes of whole lines, ending in LF. Returns ``(lines, n_fields)``."""
    chunk = _Chunk(a, name, delimiter, first_line, field_names)
    kind = "an integer" if signed else "a non-negative integer"
    allowed = chunk.digit | chunk.boundary | (chunk.minus if signed else False)
    if not allowed.all():
        chunk.fail_token(int(np.argmin(allowed)), f"is not {kind}")
    chunk.check_no_empty_line()
    if delimiter is not None:
        chunk.check_no_empty_field()

    # The large arrays from here on live in this one frame until it returns: with them made
    # and freed in helpers, glibc's malloc gave memory back between chunks, and a 22 MB
    # GISETTE-like table took twice the page faults and 30 % longer to parse.
    token = ~chunk.boundary
    is_start = token & ~np.concatenate(([False], token[:-1]))
    starts = np.flatnonzero(is_start)
    ends = np.flatnonzero(token & ~np.concatenate((token[1:], [False])))
    chunk.check_fields_per_line(starts, n_fields)

    negative = chunk.minus[starts] if signed else np.zeros(starts.size, dtype=bool)
    if signed:
        chunk.check_minus_signs(is_start, kind)
    first_digit = starts + negative
    n_digits = ends - first_digit + 1
    long = np.flatnonzero(n_digits > _MAX_DIGITS)
    if long.size:
        chunk.fail_token(int(starts[long[0]]), f"has more than {_MAX_DIGITS} digits")

    digits = np.flatnonzero(chunk.digit)
    owner = np.cumsum(is_start)[digits] - 1
    place = ends[owner] - digits
    contribution = (a[digits].astype(np.int64) - ord("0")) * _POW10[place]
    values = np.add.reduceat(contribution, np.cumsum(chunk.digit)[first_digit] - 1)
    values[negative] *= -1
    table = values.reshape(chunk.line_ends.size, n_fields)
    if max_value is not None:
        above = np.flatnonzero(values > max_value)
        if above.size:
            row, field = divmod(int(above[0]), n_fields)
            raise DataError(
                f"{name}: line {first_line + row}, {chunk.field_label(field + 1)}: value "
                f"{table[row, field]} above the largest allowed, {max_value}"
            )
    return table.astype(dtype, copy=False)


class _Chunk:
    """One slice of a table (whole lines, ending in LF): its byte classes, which every check
    reads, and where a byte is in the file, for the messages."""

    def __init__(
        self,
        a: np.ndarray,
        name: str,
        delimiter: str | None,
        first_line: int,
        field_names: Sequence[str] | None,
    ) -> None:
        self.a, self.name, self.delimiter = a, name, delimiter
        self.first_line, self.field_names = first_line, field_names
        self.newline = a == ord("\n")
        if delimiter is None:
            self.separator = (a == ord(" ")) | (a == ord("\t"))
        else:
            self.separator = a == ord(delimiter)
        self.boundary = self.separator | self.newline
        self.digit = (a >= ord("0")) & (a <= ord("9"))
        self.minus = a == ord("-")
        self.line_ends = np.flatnonzero(self.newline)
        self.line_starts = np.concatenate(([0], self.line_ends[:-1] + 1))

    def where(self, index: int) -> tuple[int, int]:
        """(line number in the file, 1-based field number) of byte ``index``."""
        row = int(np.searchsorted(self.line_ends, index))
        lo = int(self.line_starts[row])
        if self.delimiter is None:
            token = ~self.boundary[lo : index + 1]
            field = int(np.count_nonzero(token & ~np.concatenate(([False], token[:-1]))))
        else:
            field = int(np.count_nonzero(self.separator[lo:index])) + 1
        return self.first_line + row, max(field, 1)

    def field_label(self, field: int) -> str:
        if self.field_names is not None and field <= len(self.field_names):
            return f"column {self.field_names[field - 1]}"
        return f"field {field}"

    def fail_token(self, index: int, problem: str) -> NoReturn:
        """Raise ``DataError`` naming the line, the field and the text of the field that holds
        byte ``index``."""
        lo, hi = index, index
        while lo > 0 and not self.boundary[lo - 1]:
            lo -= 1
        while not self.boundary[hi]:
            hi += 1
        text = bytes(self.a[lo:hi]).decode("ascii", errors="replace")
        if len(text) > 24:
            text = text[:21] + "..."
        line, field = self.where(index)
        raise DataError(f"{self.name}: line {line}, {self.field_label(field)}: {text!r} {problem}")

    def check_no_empty_line(self) -> None:
        empty_lines = np.flatnonzero(self.line_starts == self.line_ends)
        if empty_lines.size:
            raise DataError(f"{self.name}: line {self.first_line + int(empty_lines[0])} is empty")

    def check_no_empty_field(self) -> None:
        """With a delimiter: an empty field is a delimiter at a line start, after another
        delimiter, or before LF."""
        seps = np.flatnonzero(self.separator)
        before = np.where(seps > 0, self.boundary[np.maximum(seps - 1, 0)], True)
        after = self.newline[seps + 1]
        bad = seps[before | after]
        if bad.size:
            index = int(bad[0])
            line, field = self.where(index)
            if not before[np.searchsorted(seps, index)]:
                field += 1  # the empty field is the one after this delimiter
            raise DataError(f"{self.name}: line {line}, {self.field_label(field)} is empty")

    def check_fields_per_line(self, starts: np.ndarray, n_fields: int) -> None:
        """``starts``: the first byte of every field."""
        # cumulative counts instead of searchsorted: one pass over the bytes, no log factor
        per_line = np.bincount(np.cumsum(self.newline)[starts], minlength=self.line_ends.size)
        wrong = np.flatnonzero(per_line != n_fields)
        if wrong.size:
            row = int(wrong[0])
            raise DataError(
                f"{self.name}: line {self.first_line + row} has {int(per_line[row])} fields, "
                f"expected {n_fields}"
            )

    def check_minus_signs(self, is_start: np.ndarray, kind: str) -> None:
        """``-`` only as the first character of a field (``is_start``) and followed by a
        digit."""
        signs = np.flatnonzero(self.minus)
        misplaced = signs[~is_start[signs]]
        if misplaced.size:
            self.fail_token(int(misplaced[0]), f"is not {kind}")
        lone = signs[~self.digit[signs + 1]]
        if lone.size:
            self.fail_token(int(lone[0]), f"is not {kind}")


def write_npz(path: str | os.PathLike[str], arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` that ``np.load`` reads.

    Unlike ``np.savez`` (whose zip entries carry the current time), entries are written in
    sorted key order with a fixed date, so equal arrays always give byte-identical files.
    Entries are stored, not deflated, so the bytes do not depend on the zlib version either.
    """
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for key in sorted(arrays):
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            with archive.open(info, "w", force_zip64=True) as stream:
                np.lib.format.write_array(stream, np.asarray(arrays[key]), allow_pickle=False)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8 with LF line ends, whatever the platform."""
    with open(path, "w", encoding="utf-8", newline="\n") as stream:
        stream.write(text)


@contextlib.contextmanager
def atomic_directory(out: str | os.PathLike[str], *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a fresh temporary directory that becomes ``out`` only if the block succeeds.

    The temporary directory sits beside ``out`` (same file system, so the final rename is
    atomic). On any exception it is removed, together with parent directories created for it,
    and ``out`` is untouched. An existing ``out`` is an error unless ``overwrite``, in which
    case it is replaced only after the new content is complete.
    """
    out = Path(out)
    if out.exists() and not overwrite:
        raise DataError(f"{out.name}: output directory already exists ({out}); pass overwrite")
    if out.exists() and not out.is_dir():
        raise DataError(f"{out.name}: exists and is not a directory ({out})")
    created = []
    parent = out.parent.absolute()
    for ancestor in reversed([parent, *parent.parents]):
        if not ancestor.exists():
            created.append(ancestor)
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DataError(f"{out.name}: cannot create {parent} ({error.strerror})") from None
    scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=parent))
    try:
        yield scratch
        if out.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=parent))
            out.rename(retired / out.name)
            scratch.rename(out)
            shutil.rmtree(retired)
        else:
            scratch.rename(out)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise

"""Reading raw inputs strictly, and writing outputs atomically and reproducibly."""

import bz2
import gzip
import hashlib
import lzma
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.data import io
from gradcode.data.errors import DataError
from tests.helpers.data import assert_nothing_written


def parse(text: str, n_fields: int, delimiter: str | None = ",", **kwargs) -> np.ndarray:
    return io.parse_int_table(
        text.encode(), name="t.csv", n_fields=n_fields, delimiter=delimiter, **kwargs
    )


def test_parse_csv_and_blank_separated():
    assert parse("1,22,333\n4,5,6\n", 3).tolist() == [[1, 22, 333], [4, 5, 6]]
    # UCI GISETTE style: a blank before every line end, runs of blanks allowed
    assert parse("1 0 7 \n0  2 3\t\n", 3, None).tolist() == [[1, 0, 7], [0, 2, 3]]
    # CRLF line ends and a missing final line end are both fine
    assert parse("1,2\r\n3,4", 2).tolist() == [[1, 2], [3, 4]]
    assert parse("-1\n1\n007\n", 1, None, signed=True).ravel().tolist() == [-1, 1, 7]
    big = "123456789012345678"
    assert parse(f"{big}\n", 1).item() == int(big)


@pytest.mark.parametrize(
    "text, kwargs, message",
    [
        ("1,2\n3\n", {}, "t.csv: line 2 has 1 fields, expected 2"),
        ("1,2\n3,4,5\n", {}, "t.csv: line 2 has 3 fields, expected 2"),
        ("1,2\n3,x4\n", {}, "t.csv: line 2, field 2: 'x4' is not a non-negative integer"),
        ("1,2.5\n", {}, "t.csv: line 1, field 2: '2.5' is not a non-negative integer"),
        ("1,+2\n", {}, "'+2' is not a non-negative integer"),
        ("1,-2\n", {}, "t.csv: line 1, field 2: '-2' is not a non-negative integer"),
        ('1,"2"\n', {}, "'\"2\"' is not a non-negative integer"),
        ("1, 2\n", {}, "t.csv: line 1, field 2: ' 2' is not a non-negative integer"),
        ("1,2\n\n3,4\n", {}, "t.csv: line 2 is empty"),
        ("1,,2\n", {"n": 3}, "t.csv: line 1, field 2 is empty"),
        (",1,2\n", {"n": 3}, "t.csv: line 1, field 1 is empty"),
        ("1,2,\n", {"n": 3}, "t.csv: line 1, field 3 is empty"),
        ("1,2\r3,4\n", {}, "t.csv: line 1: stray carriage return"),
        ("1," + "9" * 19 + "\n", {}, "has more than 18 digits"),
        ("1,2-3\n", {"signed": True}, "'2-3' is not an integer"),
        ("1,-\n", {"signed": True}, "'-' is not an integer"),
        ("1,--3\n", {"signed": True}, "'--3' is not an integer"),
        ("", {}, "t.csv: no data rows"),
    ],
)
def test_parse_errors_are_one_line_and_located(text, kwargs, message):
    n = kwargs.pop("n", 2)
    with pytest.raises(DataError) as caught:
        parse(text, n, **kwargs)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_parse_names_columns_when_given():
    with pytest.raises(DataError, match="line 3, column B: 'q' is not"):
        io.parse_int_table(
            b"1,2\n3,q\n",
            name="t.csv",
            n_fields=2,
            delimiter=",",
            first_line=2,
            field_names=["A", "B"],
        )


def test_parse_in_chunks_matches_and_keeps_line_numbers(monkeypatch):
    rng = np.random.default_rng(1)
    table = rng.integers(0, 10**6, size=(500, 7))
    text = "".join(",".join(map(str, row)) + "\n" for row in table)
    monkeypatch.setattr(io, "_CHUNK_BYTES", 97)  # far smaller than the text, not line aligned
    assert np.array_equal(parse(text, 7), table)
    lines = text.splitlines()
    lines[321] = lines[321].replace(",", ",,", 1)
    with pytest.raises(DataError, match="line 322, field 2 is empty"):
        parse("\n".join(lines) + "\n", 7)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(-(10**18) + 1, 10**18 - 1), min_size=3, max_size=3),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from([",", None]),
)
def test_parse_round_trips_any_table(rows, delimiter):
    joiner = delimiter or "  "
    text = "".join(joiner.join(map(str, row)) + "\n" for row in rows)
    assert parse(text, 3, delimiter, signed=True).tolist() == rows


def write_compressed(path, content: bytes):
    opener = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}.get(path.suffix)
    if opener is None:
        path.write_bytes(content)
    else:
        with opener(path, "wb") as stream:
            stream.write(content)
    return path


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz", ".bz2"])
def test_read_raw_decompresses_by_suffix(tmp_path, suffix):
    content = b"A,B\n1,2\n"
    raw = io.read_raw(write_compressed(tmp_path / f"x.csv{suffix}", content))
    assert raw.content == content and raw.name == "x.csv" and raw.file == f"x.csv{suffix}"
    # the sha256 is of the decompressed content, whatever the compression
    assert raw.sha256 == hashlib.sha256(content).hexdigest() and raw.size == len(content)


@pytest.mark.parametrize("suffix, kind", [(".gz", "gzip"), (".xz", "xz"), (".bz2", "bzip2")])
def test_truncated_and_corrupt_streams(tmp_path, suffix, kind):
    whole = write_compressed(tmp_path / f"a.csv{suffix}", b"A,B\n" + b"1,2\n" * 5000)
    cut = tmp_path / f"cut.csv{suffix}"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(DataError, match=rf"^cut.csv{suffix}: truncated {kind} stream"):
        io.read_raw(cut)
    fake = tmp_path / f"fake.csv{suffix}"
    fake.write_bytes(b"A,B\n1,2\n")
    with pytest.raises(DataError, match=rf"^fake.csv{suffix}: not a valid {kind} file"):
        io.read_raw(fake)


def test_missing_input(tmp_path):
    with pytest.raises(DataError, match=r"^nope.csv: not found"):
        io.read_raw(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="is a directory"):
        io.read_raw(tmp_path)


@pytest.mark.parametrize(
    "header, message",
    [
        ("A,C", "missing column(s) B; unexpected column(s) 'C'"),
        ("A", "missing column(s) B"),
        ("A,B,C", "unexpected column(s) 'C'"),
        ("A,B,A", "column(s) A appear more than once"),
    ],
)
def test_csv_header_errors(tmp_path, header, message):
    path = tmp_path / "h.csv"
    path.write_text(f"{header}\n" + ",".join(["1"] * len(header.split(","))) + "\n")
    with pytest.raises(DataError) as caught:
        io.read_int_csv(io.read_raw(path), ["A", "B"])
    assert str(caught.value).startswith("h.csv: ") and message in str(caught.value)


def test_csv_columns_selected_by_name(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("B,A\n1,2\n3,4\n")
    assert io.read_int_csv(io.read_raw(path), ["A", "B"]).tolist() == [[2, 1], [4, 3]]
    path.write_text("")
    with pytest.raises(DataError, match=r"^h\.csv: empty file$"):
        io.read_int_csv(io.read_raw(path), ["A", "B"])
    path.write_text("A,B\n")
    with pytest.raises(DataError, match=r"^h\.csv: no data rows$"):
        io.read_int_csv(io.read_raw(path), ["A", "B"])


def test_npz_is_byte_reproducible_and_loadable(tmp_path, monkeypatch):
    arrays = {"b": np.arange(5.0), "a": np.array([[1, 2]], dtype=np.int32)}
    io.write_npz(tmp_path / "one.npz", arrays)
    # a different wall clock must not change the bytes (np.savez stamps the current time)
    monkeypatch.setattr("time.time", lambda: 2_000_000_000.0)
    io.write_npz(tmp_path / "two.npz", arrays)
    assert (tmp_path / "one.npz").read_bytes() == (tmp_path / "two.npz").read_bytes()
    with zipfile.ZipFile(tmp_path / "one.npz") as archive:
        assert [i.filename for i in archive.infolist()] == ["a.npy", "b.npy"]
        assert {i.date_time for i in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    with np.load(tmp_path / "one.npz", allow_pickle=False) as loaded:
        assert loaded["a"].dtype == np.int32 and loaded["a"].tolist() == [[1, 2]]
        assert np.array_equal(loaded["b"], arrays["b"])


def test_atomic_directory_leaves_nothing_on_failure(tmp_path):
    out = tmp_path / "new" / "deeper" / "out"
    with pytest.raises(RuntimeError), io.atomic_directory(out) as scratch:
        (scratch / "data.npz").write_bytes(b"partial")
        raise RuntimeError("fails half way")
    assert not (tmp_path / "new").exists()
    with io.atomic_directory(out) as scratch:
        (scratch / "f").write_text("1")
    assert (out / "f").read_text() == "1"
    with pytest.raises(DataError, match="already exists"), io.atomic_directory(out):
        pass
    with pytest.raises(RuntimeError), io.atomic_directory(out, overwrite=True) as scratch:
        raise RuntimeError
    assert (out / "f").read_text() == "1"
    assert_nothing_written(out.parent / "other")
    with io.atomic_directory(out, overwrite=True) as scratch:
        (scratch / "g").write_text("2")
    assert sorted(p.name for p in out.iterdir()) == ["g"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]

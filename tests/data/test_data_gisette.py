"""GISETTE from the UCI and LIBSVM formats (on small fixture files), and the stand-in."""

import gzip
import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from gradcode.data import DataError, load_prepared, prepare
from gradcode.data import gisette as gisette_module
from gradcode.data.gisette import PUBLISHED
from gradcode.data.io import read_raw
from tests.helpers.data import assert_nothing_written, real_file


def fixture_table(folder: Path, split: str) -> np.ndarray:
    with gzip.open(folder / f"gisette_{split}.data.gz", "rt") as stream:
        return np.array([[int(v) for v in line.split()] for line in stream])


def fixture_labels(folder: Path, split: str) -> np.ndarray:
    return np.array([int(v) for v in (folder / f"gisette_{split}.labels").read_text().split()])


@pytest.mark.parametrize(
    "name", sorted(set(PUBLISHED) - {"gisette_train.data", "gisette_valid.data"})
)
def test_shared_files_match_published_sha256(name):
    path = real_file("gisette", name)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == PUBLISHED[name].sha256


def test_shared_labels_and_param_parse():
    labels = gisette_module.read_labels(read_raw(real_file("gisette", "gisette_train.labels")))
    assert labels.size == 6000 and int((labels == 1).sum()) == 3000
    valid = gisette_module.read_labels(read_raw(real_file("gisette", "gisette_valid.labels")))
    assert valid.size == 1000 and int((valid == 1).sum()) == 500
    param = gisette_module.read_param(read_raw(real_file("gisette", "gisette.param")))
    assert param["features"] == 5000
    assert param["Train"] == {
        "positive": 3000,
        "negative": 3000,
        "total": 6000,
        "value_sum": 3_164_568_508,
    }
    assert param["Valid"]["value_sum"] == 535_016_668 and param["Valid"]["total"] == 1000


def test_uci_loader_on_fixture(tmp_path, gisette_fixture):
    data = prepare("gisette", tmp_path / "out", raw=[gisette_fixture], verify_checksums=False)
    train, valid = fixture_table(gisette_fixture, "train"), fixture_table(gisette_fixture, "valid")
    assert data.X_train.shape == (6, 5001) and data.X_test.shape == (4, 5001)
    assert np.array_equal(data.X_train.toarray()[:, :5000], train)
    assert np.array_equal(data.X_test.toarray()[:, :5000], valid)
    assert np.all(data.X_train.toarray()[:, 5000] == 1) and np.all(
        data.X_test.toarray()[:, 5000] == 1
    )
    assert np.array_equal(data.y_train, fixture_labels(gisette_fixture, "train"))
    assert np.array_equal(data.y_test, fixture_labels(gisette_fixture, "valid"))
    assert data.train_rows.tolist() == list(range(6)) and data.test_rows.tolist() == [6, 7, 8, 9]
    assert data.meta["verify_checksums"] is False and not data.stand_in
    assert {r["name"]: r["verified"] for r in data.meta["inputs"]} == dict.fromkeys(
        gisette_module.UCI_FILES, False
    )
    assert data.meta["shapes"]["X_train"] == [6, 5001]
    assert load_prepared(tmp_path / "out").meta == data.meta


def test_paper001_split(tmp_path, monkeypatch, gisette_fixture):
    # the real split takes 6552 of 7000 rows; on the 10 fixture rows, take 7
    monkeypatch.setattr(gisette_module, "PAPER_001_TRAIN_ROWS", 7)
    data = prepare(
        "gisette",
        tmp_path / "out",
        raw=[gisette_fixture],
        variant="paper001",
        verify_checksums=False,
    )
    both = np.vstack(
        [fixture_table(gisette_fixture, "train"), fixture_table(gisette_fixture, "valid")]
    )
    assert data.train_rows.tolist() == list(range(7)) and data.test_rows.tolist() == [7, 8, 9]
    assert np.array_equal(data.X_train.toarray()[:, :5000], both[:7])
    assert np.array_equal(data.X_test.toarray()[:, :5000], both[7:])
    labels = np.concatenate(
        [fixture_labels(gisette_fixture, "train"), fixture_labels(gisette_fixture, "valid")]
    )
    assert np.array_equal(np.concatenate([data.y_train, data.y_test]), labels)


def test_paper001_size_is_documented():
    assert gisette_module.PAPER_001_TRAIN_ROWS == 6552 == 6 * np.lcm(84, 156)
    assert 7 * np.lcm(84, 156) > 6000 + 1000


def test_checksums_are_checked_by_default(tmp_path, gisette_fixture):
    out = tmp_path / "out"
    with pytest.raises(DataError, match=r"^gisette_train\.data\.gz: sha256 mismatch"):
        prepare("gisette", out, raw=[gisette_fixture])
    assert_nothing_written(out)


def copy_fixture(folder, tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(folder, raw)
    return raw


def rewrite_data(raw, split, transform):
    path = raw / f"gisette_{split}.data.gz"
    with gzip.open(path, "rt") as stream:
        lines = stream.read().splitlines()
    with gzip.open(path, "wt") as stream:
        stream.write("".join(f"{line}\n" for line in transform(lines)))


def set_value(lines, row, column, value):
    fields = lines[row].split()
    fields[column] = value
    lines[row] = " ".join(fields) + " "
    return lines


BAD = {
    "value sum": (
        lambda raw: rewrite_data(
            raw, "train", lambda ls: set_value(ls, 2, 10, str(int(ls[2].split()[10]) + 1))
        ),
        "gisette_train.data.gz: value sum",
    ),
    "value out of range": (
        lambda raw: rewrite_data(raw, "valid", lambda ls: set_value(ls, 1, 4, "1000")),
        "gisette_valid.data.gz: line 2, field 5: value 1000 above the largest allowed, 999",
    ),
    "non-integer": (
        lambda raw: rewrite_data(raw, "train", lambda ls: set_value(ls, 0, 7, "0.5")),
        "gisette_train.data.gz: line 1, field 8: '0.5' is not a non-negative integer",
    ),
    "ragged row": (
        lambda raw: rewrite_data(
            raw, "train", lambda ls: [*ls[:3], ls[3].rsplit(" ", 2)[0], *ls[4:]]
        ),
        "gisette_train.data.gz: line 4 has 4999 fields, expected 5000",
    ),
    "missing row": (
        lambda raw: rewrite_data(raw, "train", lambda ls: ls[:-1]),
        "gisette_train.labels: 6 labels but gisette_train.data.gz has 5 rows",
    ),
    "wrong label": (
        lambda raw: (raw / "gisette_valid.labels").write_text("1\n0\n-1\n-1\n"),
        "gisette_valid.labels: line 2: label 0, expected 1 or -1",
    ),
    "class counts": (
        lambda raw: (raw / "gisette_valid.labels").write_text("1\n1\n1\n-1\n"),
        "gisette_valid.labels: 3 positive / 1 negative, gisette.param says 2 / 2",
    ),
    "param without Train": (
        lambda raw: (raw / "gisette.param").write_text(
            "\n".join(
                line
                for line in (raw / "gisette.param").read_text().splitlines()
                if not line.startswith("Train")
            )
        ),
        "gisette.param: no 'Train' row",
    ),
    "truncated gzip": (
        lambda raw: (raw / "gisette_valid.data.gz").write_bytes(
            (raw / "gisette_valid.data.gz").read_bytes()[:-100]
        ),
        "gisette_valid.data.gz: truncated gzip stream",
    ),
    "missing file": (
        lambda raw: (raw / "gisette_valid.labels").unlink(),
        "gisette_valid.labels: not found; place it",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_uci_input(tmp_path, case, gisette_fixture):
    make, message = BAD[case]
    raw = copy_fixture(gisette_fixture, tmp_path)
    make(raw)
    out = tmp_path / "out"
    with pytest.raises(DataError) as caught:
        prepare("gisette", out, raw=[raw], verify_checksums=False)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert str(caught.value).split(":")[0] in message
    assert_nothing_written(out)


def test_libsvm_reader(tmp_path, gisette_fixture):
    data = prepare(
        "gisette", tmp_path / "out", raw=[gisette_fixture], variant="libsvm", verify_checksums=False
    )
    assert data.X_train.shape == (6, 5001) and data.X_test.shape == (4, 5001)
    first = (gisette_fixture / "gisette_scale").read_text().splitlines()[0].split()
    row = data.X_train.toarray()[0]
    for pair in first[1:]:
        column, value = pair.split(":")
        assert row[int(column) - 1] == float(value)  # LIBSVM columns are 1-based
    assert row[5000] == 1.0 and np.count_nonzero(row) == len(first)
    assert data.y_train.tolist() == [1, -1, 1, -1, 1, -1]
    assert [r["expected_sha256"] for r in data.meta["inputs"]] == [None, None]


@pytest.mark.parametrize(
    "line, message",
    [
        ("2 1:0.5", "gisette_scale: line 1: label 2, expected 1 or -1"),
        ("1 1:1.5", "gisette_scale: values outside [-1, 1]"),
        ("1 0:0.5", "gisette_scale: not a LIBSVM file with 5000 features"),
        ("1 5001:0.5", "gisette_scale: not a LIBSVM file with 5000 features"),
        ("1 3:x", "gisette_scale: not a LIBSVM file with 5000 features"),
    ],
)
def test_bad_libsvm_input(tmp_path, line, message, gisette_fixture):
    raw = copy_fixture(gisette_fixture, tmp_path)
    (raw / "gisette_scale").write_text(line + "\n")
    with pytest.raises(DataError) as caught:
        prepare("gisette", tmp_path / "out", raw=[raw], variant="libsvm", verify_checksums=False)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


# ---- the stand-in -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    return prepare("gisette-standin", tmp_path_factory.mktemp("standin") / "out")


def test_standin_is_labelled_as_such(standin):
    assert standin.name == "gisette-standin" and standin.stand_in
    assert standin.meta["stand_in"] is True
    assert standin.meta["description"].startswith("STAND-IN, NOT GISETTE")
    assert standin.meta["inputs"] == []


def test_standin_matches_gisette_shape_range_density_balance(standin):
    assert standin.X_train.shape == (6000, 5001) and standin.X_test.shape == (1000, 5001)
    features = standin.X_train[:, :5000]
    assert 0.125 < features.nnz / (6000 * 5000) < 0.135
    values = features.data
    assert values.min() >= 1 and values.max() <= 999 and np.all(values == np.round(values))
    # GISETTE's train value sum from gisette.param, per entry
    assert abs(features.sum() / (6000 * 5000) - 3_164_568_508 / (6000 * 5000)) < 2
    assert np.all(standin.X_train[:, [5000]].toarray() == 1)
    assert int((standin.y_train == 1).sum()) == 3000 and int((standin.y_test == 1).sum()) == 500
    assert set(np.unique(standin.y_train)) == {-1.0, 1.0}


def test_standin_labels_carry_signal(standin):
    from sklearn.linear_model import LogisticRegression

    # a linear model trained on half the rows predicts the other half well above chance (~0.7;
    # real GISETTE is much easier, ~0.97): the labels are a function of x, not noise
    x = standin.X_train[:, :5000] / 999.0
    model = LogisticRegression(max_iter=300).fit(x[:3000], standin.y_train[:3000])
    assert model.score(x[3000:], standin.y_train[3000:]) > 0.65


def test_standin_paper001_shape_and_seed(tmp_path):
    a = prepare("gisette-standin", tmp_path / "a", variant="paper001", seed=5)
    assert a.X_train.shape == (6552, 5001) and a.X_test.shape == (448, 5001)
    assert int((a.y_train == 1).sum()) == 3276 and int((a.y_test == 1).sum()) == 224
    b = prepare("gisette-standin", tmp_path / "b", variant="paper001", seed=5)
    assert a.meta["outputs"] == b.meta["outputs"]
    assert (tmp_path / "a" / "meta.json").read_bytes() == (
        tmp_path / "b" / "meta.json"
    ).read_bytes()


def test_real_folder_without_feature_files_says_what_to_place(tmp_path):
    folder = real_file("gisette", "gisette.param").parent
    if (folder / "gisette_train.data").exists():
        pytest.skip("the GISETTE feature files are present")
    out = tmp_path / "out"
    with pytest.raises(DataError) as caught:
        prepare("gisette", out, raw=[folder])
    assert str(caught.value) == (
        f"gisette_train.data: not found; place it (plain, .gz, .xz or .bz2) in {folder}, "
        f"or run `gradcode data download gisette --to {folder}` "
        "(also missing: gisette_valid.data)"
    )
    assert_nothing_written(out)

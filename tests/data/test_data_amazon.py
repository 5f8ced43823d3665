"""Amazon Employee Access: Tandon et al.'s recipe, its variants, and every kind of bad input."""

import csv
import gzip
import hashlib
import io
import itertools
import json
import lzma
import re

import numpy as np
import pytest
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import LabelEncoder, OneHotEncoder

from gradcode.data import DataError, load_prepared, prepare
from gradcode.data.amazon import COLUMNS, PUBLISHED, VARIANTS
from tests.helpers.data import assert_nothing_written, real_file

TRAIN_SHA256 = "c50b119438fb8c8e84b2ddb9c0a28c76cb01afa3dc78b920cfea36eb506843a7"
TEST_SHA256 = "ab59d6e7980f181c342374d5e55fb2d79bfcf2313b1dcb2f7156c4a4e51b35cc"


def tandon_reference(text: str):
    """Their pipeline, written independently: LabelEncoder, hashed pairs, OneHotEncoder.

    Returns (X (n, p) CSR in file row order, y, category sizes per block).
    """
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    table = np.array([[int(v) for v in row] for row in body], dtype=np.int64)
    order = [header.index(c) for c in COLUMNS]
    x = table[:, order]
    y = 2 * table[:, header.index("ACTION")] - 1
    for j in range(x.shape[1]):
        x[:, j] = LabelEncoder().fit_transform(x[:, j])
    pairs = [
        [hash(tuple(v)) for v in x[:, list(p)]]
        for p in itertools.combinations(range(9), 2)
        if not (5 in p and 7 in p) and not (2 in p and 3 in p)
    ]
    x = np.hstack([x, np.array(pairs, dtype=np.int64).T])
    for j in range(x.shape[1]):
        x[:, j] = LabelEncoder().fit_transform(x[:, j])
    x = np.hstack([x, np.ones((x.shape[0], 1), dtype=np.int64)])
    encoder = OneHotEncoder().fit(x)
    return encoder.transform(x).tocsr(), y, [len(c) for c in encoder.categories_]


def assert_same_as_reference(data, text: str):
    ref_x, ref_y, ref_sizes = tandon_reference(text)
    blocks = data.meta["recipe"]["feature_blocks"]
    assert [b["size"] for b in blocks] == ref_sizes
    assert data.n_features == ref_x.shape[1] == sum(ref_sizes)
    n = ref_x.shape[0]
    expected_train, expected_test = train_test_split(np.arange(n), test_size=0.2, random_state=0)
    assert np.array_equal(data.train_rows, expected_train)
    assert np.array_equal(data.test_rows, expected_test)
    assert np.array_equal(data.y_train, ref_y[expected_train])
    assert np.array_equal(data.y_test, ref_y[expected_test])
    ours = np.empty((n, len(blocks)), dtype=np.int64)
    ours[data.train_rows] = data.X_train.indices.reshape(-1, len(blocks))
    ours[data.test_rows] = data.X_test.indices.reshape(-1, len(blocks))
    ref_x.sort_indices()
    theirs = ref_x.indices.reshape(n, len(blocks))
    assert np.all(data.X_train.data == 1) and np.all(data.X_test.data == 1)
    for j, block in enumerate(blocks):
        mine, other = ours[:, j] - block["offset"], theirs[:, j] - block["offset"]
        if "*" in block["name"]:
            # their interaction columns follow CPython tuple hashes: equal up to a relabelling
            assert len(set(zip(mine, other, strict=True))) == len(set(mine)) == block["size"]
            assert len(set(other)) == block["size"]
        else:
            assert np.array_equal(mine, other), block["name"]


@pytest.fixture
def fixture_text(amazon_fixture) -> str:
    """The generated train.csv, as text."""
    return (amazon_fixture / "train.csv").read_text()


def test_recipe_matches_tandon_pipeline_on_fixture(tmp_path, amazon_fixture, fixture_text):
    data = prepare("amazon", tmp_path / "out", raw=[amazon_fixture], verify_checksums=False)
    assert_same_as_reference(data, fixture_text)
    assert [b["name"] for b in data.meta["recipe"]["feature_blocks"]][8:11] == [
        "ROLE_CODE",
        "RESOURCE*MGR_ID",
        "RESOURCE*ROLE_ROLLUP_1",
    ]
    names = [b["name"] for b in data.meta["recipe"]["feature_blocks"]]
    assert len(names) == 9 + 34 + 1 and names[-1] == "bias"
    assert "ROLE_ROLLUP_1*ROLE_ROLLUP_2" not in names and "ROLE_TITLE*ROLE_FAMILY" not in names
    assert data.meta["verify_checksums"] is False
    assert data.meta["inputs"][0]["verified"] is False
    assert data.meta["inputs"][0]["expected_sha256"] == TRAIN_SHA256
    loaded = load_prepared(tmp_path / "out")
    assert (loaded.X_train != data.X_train).nnz == 0 and np.array_equal(loaded.y_test, data.y_test)


def test_variants_on_fixture(tmp_path, amazon_fixture):
    def run(variant):
        return prepare(
            "amazon",
            tmp_path / variant,
            raw=[amazon_fixture],
            variant=variant,
            verify_checksums=False,
        )

    tandon, all_pairs, first, vocab = (
        run(v) for v in ("tandon", "tandon-all-pairs", "first-order", "tandon-kaggle-vocab")
    )
    per_row = {
        d.variant: np.unique(np.diff(d.X_train.indptr)).tolist()
        for d in (tandon, all_pairs, first, vocab)
    }
    assert per_row == {
        "tandon": [44],
        "tandon-all-pairs": [46],
        "first-order": [10],
        "tandon-kaggle-vocab": [44],
    }
    # Kaggle's test.csv adds categories (three RESOURCE values, and pairs) never seen in train
    assert vocab.n_features > tandon.n_features
    resource = vocab.meta["recipe"]["feature_blocks"][0]
    assert resource["size"] == tandon.meta["recipe"]["feature_blocks"][0]["size"] + 3
    assert [i["name"] for i in vocab.meta["inputs"]] == ["test.csv", "train.csv"]
    unseen = np.setdiff1d(np.arange(vocab.n_features), vocab.X_train.indices)
    assert unseen.size >= 3


def test_seed_changes_only_the_split(tmp_path, amazon_fixture):
    a = prepare("amazon", tmp_path / "a", raw=[amazon_fixture], verify_checksums=False)
    b = prepare("amazon", tmp_path / "b", raw=[amazon_fixture], seed=7, verify_checksums=False)
    assert b.meta["recipe"]["split"]["random_state"] == 7 and b.meta["seed"] == 7
    assert not np.array_equal(a.train_rows, b.train_rows)
    assert a.n_features == b.n_features


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
def test_compressed_inputs_give_identical_data(tmp_path, suffix, amazon_fixture):
    content = (amazon_fixture / "train.csv").read_bytes()
    path = tmp_path / f"train.csv{suffix}"
    opener = {"": open, ".gz": gzip.open, ".xz": lzma.open}[suffix]
    with opener(path, "wb") as stream:
        stream.write(content)
    plain = prepare("amazon", tmp_path / "plain", raw=[amazon_fixture], verify_checksums=False)
    other = prepare("amazon", tmp_path / "other", raw=[path], verify_checksums=False)
    assert other.meta["outputs"] == plain.meta["outputs"]
    assert other.meta["inputs"][0]["sha256"] == hashlib.sha256(content).hexdigest()
    assert other.meta["inputs"][0]["file"] == f"train.csv{suffix}"


def edit(text: str, line: int, column: str, value: str) -> str:
    lines = text.splitlines()
    fields = lines[line - 1].split(",")
    fields[lines[0].split(",").index(column)] = value
    lines[line - 1] = ",".join(fields)
    return "\n".join(lines) + "\n"


def drop_column(text: str, column: str) -> str:
    index = text.splitlines()[0].split(",").index(column)
    rows = [line.split(",") for line in text.splitlines()]
    return "\n".join(",".join(r[:index] + r[index + 1 :]) for r in rows) + "\n"


def ragged(text: str, line: int) -> str:
    lines = text.splitlines()
    lines[line - 1] = lines[line - 1].rsplit(",", 1)[0]
    return "\n".join(lines) + "\n"


BAD_TRAIN = {
    "missing column": (
        lambda t: drop_column(t, "ROLE_CODE"),
        "train.csv: header: missing column(s) ROLE_CODE",
    ),
    "extra column": (
        lambda t: (
            "\n".join(line + ",0" for line in t.splitlines()).replace(
                "ROLE_CODE,0", "ROLE_CODE,EXTRA", 1
            )
            + "\n"
        ),
        "train.csv: header: unexpected column(s) 'EXTRA'",
    ),
    "missing label column": (
        lambda t: drop_column(t, "ACTION"),
        "train.csv: header: missing column(s) ACTION",
    ),
    "non-integer category": (
        lambda t: edit(t, 5, "MGR_ID", "abc"),
        "train.csv: line 5, column MGR_ID: 'abc' is not a non-negative integer",
    ),
    "decimal category": (
        lambda t: edit(t, 6, "RESOURCE", "12.0"),
        "train.csv: line 6, column RESOURCE: '12.0' is not a non-negative integer",
    ),
    "negative category": (
        lambda t: edit(t, 6, "ROLE_CODE", "-3"),
        "train.csv: line 6, column ROLE_CODE: '-3' is not a non-negative integer",
    ),
    "ragged row": (lambda t: ragged(t, 7), "train.csv: line 7 has 9 fields, expected 10"),
    "empty field": (
        lambda t: edit(t, 4, "ROLE_TITLE", ""),
        "train.csv: line 4, column ROLE_TITLE is empty",
    ),
    "label 2": (
        lambda t: edit(t, 3, "ACTION", "2"),
        "train.csv: line 3: ACTION is 2, expected 0 or 1",
    ),
    "label -1": (
        lambda t: edit(t, 9, "ACTION", "-1"),
        "train.csv: line 9, column ACTION: '-1' is not a non-negative integer",
    ),
    "blank line": (
        lambda t: "\n".join([*t.splitlines()[:2], "", *t.splitlines()[2:]]) + "\n",
        "train.csv: line 3 is empty",
    ),
    "truncated mid-row": (
        lambda t: t[: t.index("\n", 1000) - 12],
        "train.csv: line 16 has 9 fields, expected 10",
    ),
    "empty file": (lambda t: "", "train.csv: empty file"),
    "header only": (lambda t: t.splitlines()[0] + "\n", "train.csv: no data rows"),
}


@pytest.mark.parametrize("case", sorted(BAD_TRAIN))
def test_bad_train_csv(tmp_path, case, fixture_text):
    make, message = BAD_TRAIN[case]
    path = tmp_path / "train.csv"
    path.write_text(make(fixture_text))
    out = tmp_path / "out"
    with pytest.raises(DataError) as caught:
        prepare("amazon", out, raw=[path], verify_checksums=False)
    assert message in str(caught.value) and str(caught.value).startswith("train.csv")
    assert "\n" not in str(caught.value)
    assert_nothing_written(out)


def test_checksum_mismatch(tmp_path, amazon_fixture):
    out = tmp_path / "out"
    with pytest.raises(DataError) as caught:
        prepare("amazon", out, raw=[amazon_fixture])
    message = str(caught.value)
    assert message.startswith("train.csv: sha256 mismatch: got ")
    assert "expected c50b119438fb8c8e..." in message and "truncated?" in message
    assert_nothing_written(out)


@pytest.mark.parametrize("suffix, opener", [(".xz", lzma.open), (".gz", gzip.open)])
def test_truncated_compressed_file(tmp_path, suffix, opener, fixture_text):
    whole = tmp_path / f"whole{suffix}"
    with opener(whole, "wb") as stream:
        stream.write(fixture_text.encode())
    path = tmp_path / f"train.csv{suffix}"
    path.write_bytes(whole.read_bytes()[:-30])
    out = tmp_path / "out"
    with pytest.raises(DataError, match=rf"^train\.csv{suffix}: truncated"):
        prepare("amazon", out, raw=[path], verify_checksums=False)
    assert_nothing_written(out)


def test_missing_and_misplaced_inputs(tmp_path, amazon_fixture, fixture_text):
    out = tmp_path / "out"
    (tmp_path / "raw").mkdir()
    with pytest.raises(DataError) as caught:
        prepare("amazon", out, raw=[tmp_path / "raw"])
    assert str(caught.value) == (
        f"train.csv: not found; place it (plain, .gz, .xz or .bz2) in {tmp_path / 'raw'}, "
        f"or run `gradcode data download amazon --to {tmp_path / 'raw'}`"
    )
    with pytest.raises(DataError, match=r"^test\.csv: not found"):
        prepare(
            "amazon",
            out,
            raw=[amazon_fixture / "train.csv"],
            variant="tandon-kaggle-vocab",
            verify_checksums=False,
        )
    with pytest.raises(DataError, match=r"^test\.csv: not an input of amazon variant tandon"):
        prepare("amazon", out, raw=[amazon_fixture / "test.csv"], verify_checksums=False)
    (tmp_path / "raw" / "train.csv").write_text(fixture_text)
    with gzip.open(tmp_path / "raw" / "train.csv.gz", "wt") as stream:
        stream.write(fixture_text)
    with pytest.raises(DataError, match=r"^train\.csv: ambiguous, .* holds train\.csv, train"):
        prepare("amazon", out, raw=[tmp_path / "raw"], verify_checksums=False)
    assert_nothing_written(out)


def test_bad_kaggle_test_file(tmp_path, amazon_fixture, fixture_text):
    (tmp_path / "train.csv").write_text(fixture_text)
    text = (amazon_fixture / "test.csv").read_text().replace("id,", "ACTION,", 1)
    (tmp_path / "test.csv").write_text(text)
    with pytest.raises(DataError) as caught:
        prepare(
            "amazon",
            tmp_path / "out",
            raw=[tmp_path],
            variant="tandon-kaggle-vocab",
            verify_checksums=False,
        )
    assert str(caught.value) == (
        "test.csv: header: missing column(s) id; unexpected column(s) 'ACTION'"
    )


# ---- the real Kaggle file (skipped where GRADCODE_DATA_DIR does not hold it) ----------------


@pytest.fixture(scope="module")
def real_train():
    return real_file("amazon", "train.csv.xz")


@pytest.fixture(scope="module")
def tandon_dir(real_train, tmp_path_factory):
    out = tmp_path_factory.mktemp("amazon") / "tandon"
    prepare("amazon", out, raw=[real_train])
    return out


@pytest.fixture(scope="module")
def tandon(tandon_dir):
    return load_prepared(tandon_dir)


def test_real_input_checksums(real_train):
    content = lzma.decompress(real_train.read_bytes())
    assert hashlib.sha256(content).hexdigest() == TRAIN_SHA256 == PUBLISHED["train.csv"].sha256
    assert len(content) == 2_037_893
    test = lzma.decompress(real_file("amazon", "test.csv.xz").read_bytes())
    assert hashlib.sha256(test).hexdigest() == TEST_SHA256 == PUBLISHED["test.csv"].sha256


def test_real_tandon_numbers(tandon):
    assert tandon.n_features == 241_915
    assert (tandon.n_train, tandon.n_test) == (26_215, 6_554)
    assert tandon.X_train.shape == (26_215, 241_915) and tandon.X_test.shape == (6_554, 241_915)
    assert tandon.X_train.nnz == 44 * 26_215 and tandon.X_test.nnz == 44 * 6_554
    labels = tandon.meta["labels"]
    assert labels["train"]["1"] + labels["test"]["1"] == 30_872
    assert labels["train"]["-1"] + labels["test"]["-1"] == 1_897
    assert tandon.meta["inputs"] == [
        {
            "bytes": 2_037_893,
            "expected_sha256": TRAIN_SHA256,
            "file": "train.csv.xz",
            "name": "train.csv",
            "sha256": TRAIN_SHA256,
            "verified": True,
        }
    ]
    assert tandon.meta["comparison"] == {
        "paper": "000 (Ye & Abbe, ICML 2018), Section 4",
        "reported_features": 343_474,
        "reported_train_rows": 26_220,
        "features": 241_915,
        "train_rows": 26_215,
        "feature_difference": -101_559,
        "train_row_difference": -5,
    }
    # the bias is the last column and every row has it
    assert tandon.X_train[:, [241_914]].sum() == 26_215


def test_real_matches_tandon_pipeline(tandon, real_train):
    assert_same_as_reference(tandon, lzma.decompress(real_train.read_bytes()).decode())


def test_real_is_byte_reproducible(tandon_dir, real_train, tmp_path):
    # same input (here given as its directory rather than the file) and seed: same bytes
    again = prepare("amazon", tmp_path / "again", raw=[real_train.parent])
    for name in ("data.npz", "meta.json"):
        assert (tmp_path / "again" / name).read_bytes() == (tandon_dir / name).read_bytes()
    assert json.loads((tandon_dir / "meta.json").read_text()) == again.meta
    meta_text = (tandon_dir / "meta.json").read_text()
    assert str(real_train.parent) not in meta_text and str(tandon_dir) not in meta_text


@pytest.mark.parametrize("variant", ["tandon-all-pairs", "first-order", "tandon-kaggle-vocab"])
def test_real_variant_feature_counts(real_train, tmp_path, variant):
    data = prepare("amazon", tmp_path / variant, raw=[real_train.parent], variant=variant)
    assert data.n_features == VARIANTS[variant].features_on_train_csv
    assert {"tandon-all-pairs": 242_445, "first-order": 15_627, "tandon-kaggle-vocab": 372_083}[
        variant
    ] == data.n_features
    assert (data.n_train, data.n_test) == (26_215, 6_554)


def test_real_trim_and_partitions(real_train, tmp_path):
    data = prepare("amazon", tmp_path / "t", raw=[real_train], trim_to_multiple=60, partitions=20)
    assert data.n_train == 26_160 and data.n_test == 6_554
    assert data.meta["trim"]["rows_dropped"] == 55
    assert data.meta["partitions"]["sizes"] == [1_308] * 20
    assert [p.size for p in data.partitions()] == [1_308] * 20
    full_split, _ = train_test_split(np.arange(32_769), test_size=0.2, random_state=0)
    assert np.array_equal(data.train_rows, full_split[:26_160])
    assert data.meta["comparison"]["train_rows"] == 26_160
    assert re.search("dropped", data.meta["trim"]["rule"])

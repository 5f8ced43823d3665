"""amazon-standin: a synthetic table of Amazon's shape, through the real amazon pipeline."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from gradcode.data import amazon_standin as standin
from gradcode.data import load_prepared, prepare
from gradcode.data.amazon import COLUMNS, LABEL, interaction_pairs, one_hot_indices, read_train
from gradcode.data.io import read_raw
from tests.helpers.data import real_file
from tests.helpers.data import run_data_cli as run_cli

#: Kaggle's train.csv: 32,769 rows, 30,872 of ACTION = 1, and these distinct values per column
REAL_ROWS, REAL_POSITIVES = 32_769, 30_872
REAL_CARDINALITIES = (7518, 4243, 128, 177, 449, 343, 2358, 67, 343)
#: sizes of the 34 interaction blocks of the tandon recipe on train.csv, in recipe order
REAL_PAIR_BLOCKS = (
    27626,
    11091,
    13422,
    17354,
    19043,
    22734,
    13195,
    19043,
    4461,
    4623,
    5045,
    7484,
    7973,
    5483,
    7484,
    1185,
    1506,
    3282,
    750,
    1506,
    1398,
    2125,
    3949,
    1045,
    2125,
    2946,
    4553,
    1613,
    2946,
    3013,
    343,
    2586,
    3013,
    343,
)


@pytest.fixture(scope="module")
def tandon_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("amazon-standin") / "tandon"
    prepare("amazon-standin", out)
    return out


@pytest.fixture(scope="module")
def tandon(tandon_dir):
    return load_prepared(tandon_dir)


def table_of(data):
    """The categorical codes of every row (table order) from the one-hot blocks."""
    blocks = data.meta["recipe"]["feature_blocks"]
    rows = np.empty((data.n_train + data.n_test, len(blocks)), dtype=np.int64)
    rows[data.train_rows] = data.X_train.indices.reshape(data.n_train, -1)
    rows[data.test_rows] = data.X_test.indices.reshape(data.n_test, -1)
    return rows - np.array([b["offset"] for b in blocks])


def test_labelled_as_standin(tandon):
    assert tandon.name == "amazon-standin" and tandon.stand_in
    assert tandon.meta["stand_in"] is True and tandon.meta["inputs"] == []
    assert tandon.meta["description"].startswith("STAND-IN, NOT THE AMAZON DATA")
    assert tandon.meta["recipe"]["imitates"] == "amazon tandon"
    assert any("never report" in note for note in tandon.meta["notes"])
    assert tandon.meta["comparison"] is None


def test_shape_split_and_labels_as_amazon_tandon(tandon):
    assert (tandon.n_train, tandon.n_test) == (26_215, 6_554)
    assert 200_000 < tandon.n_features < 280_000  # train.csv: 241,915
    for x in (tandon.X_train, tandon.X_test):
        assert np.all(np.diff(x.indptr) == 44) and np.all(x.data == 1)
        assert np.all(x.indices.reshape(-1, 44)[:, -1] == tandon.n_features - 1)  # bias
    blocks = tandon.meta["recipe"]["feature_blocks"]
    assert tuple(b["size"] for b in blocks[:9]) == REAL_CARDINALITIES
    # how the columns go together sets the interaction blocks: each within a factor 1.6
    ratios = np.array([b["size"] for b in blocks[9:-1]]) / np.array(REAL_PAIR_BLOCKS)
    assert ratios.size == 34 and np.all((ratios > 1 / 1.6) & (ratios < 1.6))
    assert np.median(np.abs(np.log(ratios))) < np.log(1.2)
    assert [b["name"] for b in blocks[:9]] == list(COLUMNS) and blocks[-1]["name"] == "bias"
    expected_train, expected_test = train_test_split(
        np.arange(REAL_ROWS), test_size=0.2, random_state=0
    )
    assert np.array_equal(tandon.train_rows, expected_train)
    assert np.array_equal(tandon.test_rows, expected_test)
    labels = tandon.meta["labels"]
    assert labels["train"]["1"] + labels["test"]["1"] == REAL_POSITIVES
    assert labels["train"]["-1"] + labels["test"]["-1"] == REAL_ROWS - REAL_POSITIVES
    assert set(np.unique(tandon.y_train)) == {-1.0, 1.0}


def test_the_amazon_builder_gives_the_same_arrays_from_the_table(tandon, tmp_path):
    # written as a train.csv (synthetic values) and prepared as "amazon": identical output
    action, categories = standin.draw_table(0)
    lines = [",".join((LABEL, *COLUMNS))]
    lines += [",".join(map(str, [a, *row])) for a, row in zip(action, categories, strict=True)]
    (tmp_path / "train.csv").write_text("\n".join(lines) + "\n")
    real_format = prepare("amazon", tmp_path / "out", raw=[tmp_path], verify_checksums=False)
    for key in ("X_train", "X_test"):
        assert (getattr(real_format, key) != getattr(tandon, key)).nnz == 0
    for key in ("y_train", "y_test", "train_rows", "test_rows"):
        assert np.array_equal(getattr(real_format, key), getattr(tandon, key))
    recipe = tandon.meta["recipe"]
    assert recipe["feature_blocks"] == real_format.meta["recipe"]["feature_blocks"]
    assert recipe["split"] == real_format.meta["recipe"]["split"]


def test_value_frequencies(tandon):
    table = table_of(tandon)
    for column in standin.LAYOUT:
        counts = np.sort(np.bincount(table[:, COLUMNS.index(column)]))[::-1]
        assert np.array_equal(counts, standin.value_counts(standin.FREQUENCIES[column]))
    for column in standin.DERIVED:
        measured = standin.frequencies(table[:, COLUMNS.index(column)])
        wanted = standin.FREQUENCIES[column]
        assert measured.cardinality == wanted.cardinality
        assert measured.head[0][1] == pytest.approx(wanted.head[0][1], rel=0.1)
    title, code = table[:, COLUMNS.index("ROLE_TITLE")], table[:, COLUMNS.index("ROLE_CODE")]
    assert np.unique(np.stack([title, code]), axis=1).shape[1] == 343  # a relabelling
    assert np.unique(table, axis=0).shape[0] == REAL_ROWS  # no row repeats, as in train.csv
    # how columns go together: a manager nearly fixes the department, a title its family
    for a, b, low, high in (
        ("MGR_ID", "ROLE_DEPTNAME", 4_243, 6_000),  # train.csv: 5,045
        ("ROLE_TITLE", "ROLE_FAMILY", 343, 343),  # train.csv: 343
        ("RESOURCE", "MGR_ID", 22_000, 33_000),  # train.csv: 27,626
    ):
        i, j = COLUMNS.index(a), COLUMNS.index(b)
        assert low <= np.unique(table[:, [i, j]], axis=0).shape[0] <= high


def test_value_counts_follow_their_anchors():
    for column, wanted in standin.FREQUENCIES.items():
        counts = standin.value_counts(wanted)
        assert counts.sum() == REAL_ROWS and np.all(np.diff(counts) <= 0)
        measured = standin.frequencies(np.repeat(np.arange(counts.size), counts))
        assert measured.tail == wanted.tail and measured.cardinality == wanted.cardinality
        for (rank, rows), (same_rank, got) in zip(wanted.head, measured.head, strict=True):
            assert rank == same_rank and got == pytest.approx(rows, rel=0.1), column


def test_deterministic_and_seeded(tandon_dir, tandon, tmp_path):
    again = prepare("amazon-standin", tmp_path / "again")
    for name in ("data.npz", "meta.json"):
        assert (tmp_path / "again" / name).read_bytes() == (tandon_dir / name).read_bytes()
    other = prepare("amazon-standin", tmp_path / "other", seed=1, variant="first-order")
    assert other.meta["seed"] == 1 and other.meta["recipe"]["split"]["random_state"] == 1
    assert other.n_features == 15_627 == sum(REAL_CARDINALITIES) + 1  # as train.csv's
    assert not np.array_equal(other.train_rows, again.train_rows)
    assert np.array_equal(np.diff(other.X_train.indptr), np.full(26_215, 10))


def test_variants_share_the_table(tandon, tmp_path):
    first = prepare("amazon-standin", tmp_path / "first", variant="first-order")
    assert np.array_equal(first.y_train, tandon.y_train)
    assert np.array_equal(first.train_rows, tandon.train_rows)
    # the first 9 blocks are the same one-hot columns
    first_table = first.X_train.indices.reshape(-1, 10)[:, :9]
    assert np.array_equal(first_table, tandon.X_train.indices.reshape(-1, 44)[:, :9])


def test_logistic_regression_finds_the_signal(tandon):
    # train.csv's tandon features give 0.88 with the same model
    model = LogisticRegression(C=1.0, fit_intercept=False, max_iter=1000)
    model.fit(tandon.X_train, tandon.y_train)
    auc = roc_auc_score(tandon.y_test, model.decision_function(tandon.X_test))
    assert 0.8 < auc < 0.95


def test_cli_summary_says_stand_in(tandon_dir, capsys):
    status, out, _ = run_cli(["data", "info", str(tandon_dir)], capsys)
    assert status == 0 and out.startswith("STAND-IN ")
    assert "STAND-IN, NOT THE AMAZON DATA" in out and "amazon-standin (variant tandon)" in out
    status, out, _ = run_cli(["data", "list"], capsys)
    assert "\namazon-standin " in out and "STAND-IN, NOT AMAZON" in out


def test_frequencies_are_those_of_train_csv():
    action, table = read_train(read_raw(real_file("amazon", "train.csv.xz")))
    assert table.shape[0] == REAL_ROWS and int(action.sum()) == REAL_POSITIVES
    for j, column in enumerate(COLUMNS):
        wanted = standin.FREQUENCIES["ROLE_TITLE" if column == "ROLE_CODE" else column]
        assert standin.frequencies(table[:, j]) == wanted, column
    _, blocks = one_hot_indices(table, interaction_pairs("tandon"))
    sizes = tuple(b["size"] for b in blocks)
    assert sizes == (*REAL_CARDINALITIES, *REAL_PAIR_BLOCKS, 1) and sum(sizes) == 241_915

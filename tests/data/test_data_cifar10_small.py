"""CIFAR-10's variant ``small`` (1,260 + 500 class-balanced images, for MPI runs of a network
on a small machine): on fabricated batches in the real format, on the real files where
``$GRADCODE_DATA_DIR`` has them, and on the labelled stand-in."""

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from gradcode.data import DataError, OptionError, prepare
from gradcode.data.cifar10 import SMALL_PER_CLASS, held_out_rows, train_rows_wanted
from tests.helpers.formats import cifar10

BALANCED = {"train": {str(c): 126 for c in range(10)}, "test": {str(c): 50 for c in range(10)}}


@pytest.fixture(scope="module")
def enough_batches(tmp_path_factory) -> Path:
    """Fabricated batches of 500 images each: 250 training and 50 test images per class."""
    root = tmp_path_factory.mktemp("cifar10-500")
    cifar10(np.random.default_rng(7), root, per_batch=500)
    return root / "cifar-10-batches-py"


def _batch(folder: Path, name: str) -> dict:
    with (folder / name).open("rb") as stream:
        return pickle.load(stream, encoding="bytes")


def test_small_is_a_seeded_class_balanced_subset_of_the_files(tmp_path, enough_batches):
    data = prepare("cifar10", tmp_path / "a", raw=[enough_batches], variant="small")
    assert data.X_train.shape == (1260, 3072) and data.X_test.shape == (500, 3072)
    assert data.meta["labels"] == BALANCED and not data.stand_in
    names = [f"data_batch_{i}" for i in range(1, 6)]
    images = np.concatenate([_batch(enough_batches, name)[b"data"] for name in names])
    labels = np.concatenate([_batch(enough_batches, name)[b"labels"] for name in names])
    test = _batch(enough_batches, "test_batch")
    # rows in file order, each the file's own image and label
    assert np.all(np.diff(data.train_rows) > 0) and data.train_rows.max() < 2500
    assert np.array_equal(data.X_train, images[data.train_rows] / 255.0)
    assert np.array_equal(data.y_train, labels[data.train_rows])
    # the test batch has exactly 50 of each class: all of it, numbered after the training rows
    assert np.array_equal(data.test_rows, np.arange(2500, 3000))
    assert np.array_equal(data.X_test, test[b"data"] / 255.0)
    assert "per class" in data.meta["recipe"]["subset"]
    again = prepare("cifar10", tmp_path / "b", raw=[enough_batches], variant="small")
    assert (tmp_path / "a" / "data.npz").read_bytes() == (tmp_path / "b" / "data.npz").read_bytes()
    other = prepare("cifar10", tmp_path / "c", raw=[enough_batches], variant="small", seed=1)
    assert not np.array_equal(other.train_rows, again.train_rows)
    assert other.meta["labels"] == BALANCED


def test_small_fails_when_a_class_has_too_few_images(tmp_path, cifar10_fixture):
    with pytest.raises(DataError, match=r"data_batch_1\.\.5: class 0 has 5 rows, 126 asked"):
        prepare("cifar10", tmp_path / "out", raw=[cifar10_fixture], variant="small")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("dataset", ["cifar10", "cifar10-standin"])
def test_small_has_its_own_test_images(tmp_path, cifar10_fixture, dataset):
    raw = [cifar10_fixture] if dataset == "cifar10" else None
    with pytest.raises(OptionError, match="variant 'small' has its own 500 test images"):
        prepare(dataset, tmp_path / "out", raw=raw, variant="small", test_rows=10)
    assert not (tmp_path / "out").exists()


def test_small_sizes():
    per_class = SMALL_PER_CLASS
    assert train_rows_wanted("small", {}) == 10 * per_class[0] == 1260
    assert held_out_rows("small", {}) == 10 * per_class[1] == 500
    assert held_out_rows("custom", {"test_rows": 9}) == 9 and held_out_rows("full", {}) is None


def test_standin_small_is_labelled_balanced_and_seeded(tmp_path):
    data = prepare("cifar10-standin", tmp_path / "a", variant="small")
    assert data.stand_in and data.meta["description"].startswith("STAND-IN, NOT CIFAR-10")
    assert "1260 + 500 images" in data.meta["description"]
    assert data.meta["recipe"]["imitates"] == "cifar10 small"
    assert data.X_train.shape == (1260, 3072) and data.X_test.shape == (500, 3072)
    assert data.meta["labels"] == BALANCED
    prepare("cifar10-standin", tmp_path / "b", variant="small")
    assert (tmp_path / "a" / "data.npz").read_bytes() == (tmp_path / "b" / "data.npz").read_bytes()


def _real_cifar10() -> Path | None:
    root = os.environ.get("GRADCODE_DATA_DIR")
    folder = Path(root, "cifar-10-batches-py") if root else None
    return folder if folder is not None and (folder / "test_batch").exists() else None


@pytest.mark.skipif(
    _real_cifar10() is None,
    reason="CIFAR-10's files are not in $GRADCODE_DATA_DIR/cifar-10-batches-py (not on our "
    "machines; the fabricated batches above test the same code)",
)
def test_small_on_the_real_files(tmp_path):
    data = prepare("cifar10", tmp_path / "out", raw=[_real_cifar10()], variant="small")
    assert data.X_train.shape == (1260, 3072) and data.X_test.shape == (500, 3072)
    assert data.meta["labels"] == BALANCED and not data.stand_in
    assert data.train_rows.max() < 50_000 and data.test_rows.min() >= 50_000

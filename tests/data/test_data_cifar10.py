"""CIFAR-10 from its python batches (small files fabricated in that exact format) and its
stand-in."""

import gzip
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

from gradcode.data import DataError, OptionError, load_prepared, prepare
from gradcode.data.location import raw_dirs
from gradcode.pipeline import stand_ins
from gradcode.pipeline.stand_ins import resolve_data
from tests.helpers.data import assert_nothing_written, run_data_cli
from tests.helpers.formats import cifar10_batch, python2_pickle


def batch(folder: Path, name: str) -> dict:
    with (folder / name).open("rb") as stream:
        return pickle.load(stream, encoding="bytes")


def test_fixture_is_a_python2_pickle_like_the_real_files(cifar10_fixture):
    content = (cifar10_fixture / "data_batch_1").read_bytes()
    assert content.startswith(b"\x80\x02}")  # protocol 2, a dict
    assert b"cnumpy.core.multiarray\n_reconstruct\n" in content
    assert b"U\x04data" in content and b"X" not in content[:40]  # keys as Python 2 str


def test_loader_on_fabricated_batches(tmp_path, cifar10_fixture):
    data = prepare("cifar10", tmp_path / "out", raw=[cifar10_fixture])
    files = [batch(cifar10_fixture, f"data_batch_{i}") for i in range(1, 6)]
    images = np.concatenate([f[b"data"] for f in files])
    test = batch(cifar10_fixture, "test_batch")
    assert data.X_train.shape == (50, 3072) and data.X_test.shape == (10, 3072)
    assert np.array_equal(data.X_train, images / 255.0)
    assert np.array_equal(data.X_test, test[b"data"] / 255.0)
    assert np.array_equal(data.y_train, np.concatenate([f[b"labels"] for f in files]))
    assert np.array_equal(data.y_test, test[b"labels"])
    assert data.X_train.min() >= 0 and data.X_train.max() <= 1
    # channel-first, row-major: value 1024 + 5 * 32 + 7 is green, row 5, column 7
    assert data.X_train.reshape(-1, 3, 32, 32)[0, 1, 5, 7] == images[0, 1024 + 5 * 32 + 7] / 255
    assert np.array_equal(data.train_rows, np.arange(50))
    assert np.array_equal(data.test_rows, np.arange(50, 60))
    meta = data.meta
    assert meta["task"] == "multiclass" and not meta["stand_in"]
    assert meta["labels"]["train"] == {str(c): 5 for c in range(10)}
    assert meta["recipe"]["label_names"][0] == "airplane"
    assert meta["recipe"]["channel_mean"][1] == pytest.approx(
        (images[:, 1024:2048] / 255).mean(), abs=1e-6
    )
    assert [r["verified"] for r in meta["inputs"]] == [False] * 7
    again = load_prepared(tmp_path / "out")
    assert np.array_equal(again.X_train, data.X_train) and again.meta == meta


def test_subsets_are_seeded_and_sorted(tmp_path, cifar10_fixture):
    def rows(seed, out):
        data = prepare(
            "cifar10",
            tmp_path / out,
            raw=[cifar10_fixture],
            variant="custom",
            rows=20,
            test_rows=4,
            seed=seed,
        )
        return data.train_rows, data.test_rows

    first, again, other = rows(3, "a"), rows(3, "b"), rows(4, "c")
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[1], again[1])
    assert not np.array_equal(first[0], other[0])
    assert first[0].size == 20 and np.all(np.diff(first[0]) > 0)
    assert first[1].size == 4 and np.all(first[1] >= 50)
    assert (tmp_path / "a" / "data.npz").read_bytes() == (tmp_path / "b" / "data.npz").read_bytes()


def test_paper001_needs_the_real_number_of_images(tmp_path, cifar10_fixture):
    out = tmp_path / "out"
    with pytest.raises(DataError, match=r"^data_batch_1..5: 49920 rows asked, the files have 50$"):
        prepare("cifar10", out, raw=[cifar10_fixture], variant="paper001")
    assert_nothing_written(out)
    with pytest.raises(OptionError, match="option 'rows' needs variant 'custom'"):
        prepare("cifar10", out, raw=[cifar10_fixture], rows=10)


def test_compressed_batches_are_read(tmp_path, cifar10_fixture):
    folder = tmp_path / "raw"
    shutil.copytree(cifar10_fixture, folder)
    with (
        (folder / "data_batch_2").open("rb") as plain,
        gzip.open(folder / "data_batch_2.gz", "wb") as packed,
    ):
        packed.write(plain.read())
    (folder / "data_batch_2").unlink()
    data = prepare("cifar10", tmp_path / "out", raw=[folder])
    expected = prepare("cifar10", tmp_path / "plain", raw=[cifar10_fixture])
    assert np.array_equal(data.X_train, expected.X_train)


def _rewrite(folder: Path, name: str, change) -> None:
    content = batch(folder, name)
    python2_pickle(change(content), folder / name)


def _wrong_labels(content: dict, labels: list) -> dict:
    return {**content, b"labels": labels}


BAD_INPUTS = [
    ("data_batch_3", None, r"^data_batch_3: not found; place it"),
    ("data_batch_2", b"truncated", r"^data_batch_2: not a readable pickle \("),
    ("test_batch", b"plain text\n", r"^test_batch: not a readable pickle \("),
    (
        "data_batch_1",
        b"\x80\x02cposix\nsystem\nq\x00U\x04trueq\x01\x85q\x02Rq\x03.",
        r"^data_batch_1: not a readable pickle \(refers to posix.system, not a numpy array\)$",
    ),
    ("data_batch_4", lambda c: [c], r"^data_batch_4: holds a list, expected a dict$"),
    (
        "data_batch_5",
        lambda c: {k: v for k, v in c.items() if k != b"labels"},
        r"^data_batch_5: no 'labels' entry \(has batch_label, data, filenames\)$",
    ),
    (
        "data_batch_1",
        lambda c: {**c, b"data": c[b"data"][:, :3000]},
        r"^data_batch_1: data has shape \(10, 3000\), expected \(10, 3072\)",
    ),
    (
        "data_batch_1",
        lambda c: {**c, b"data": c[b"data"][:9]},
        r"^data_batch_1: data has shape \(9, 3072\), expected \(10, 3072\) \(batches.meta: 10 ",
    ),
    (
        "data_batch_2",
        lambda c: {**c, b"data": c[b"data"].astype(np.float32)},
        r"^data_batch_2: data is float32 \(10, 3072\), expected a uint8 array",
    ),
    (
        "data_batch_2",
        lambda c: _wrong_labels(c, c[b"labels"][:9]),
        r"^data_batch_2: 9 labels for 10 images$",
    ),
    (
        "test_batch",
        lambda c: _wrong_labels(c, [10, *c[b"labels"][1:]]),
        r"^test_batch: label 10 at row 0, expected 0..9$",
    ),
    (
        "test_batch",
        lambda c: _wrong_labels(c, [0, 0, *c[b"labels"][2:]]),
        r"^test_batch: class counts \[2, .*\], CIFAR-10 has every class equally often$",
    ),
    (
        "batches.meta",
        lambda c: {**c, b"num_vis": 1024},
        r"^batches.meta: num_vis is 1024, expected 3072",
    ),
    (
        "batches.meta",
        lambda c: {**c, b"label_names": c[b"label_names"][:9]},
        r"^batches.meta: label_names is not a list of 10 names$",
    ),
]


@pytest.mark.parametrize(("name", "change", "message"), BAD_INPUTS)
def test_bad_inputs_fail_naming_the_file(tmp_path, cifar10_fixture, name, change, message):
    folder = tmp_path / "raw"
    shutil.copytree(cifar10_fixture, folder)
    if change is None:
        (folder / name).unlink()
    elif isinstance(change, bytes):
        content = (folder / name).read_bytes()
        (folder / name).write_bytes(content[:200] if change == b"truncated" else change)
    else:
        _rewrite(folder, name, change)
    out = tmp_path / "out"
    with pytest.raises(DataError, match=message) as error:
        prepare("cifar10", out, raw=[folder])
    assert "\n" not in str(error.value)
    assert_nothing_written(out)


def test_found_through_the_data_dir_else_the_stand_in(monkeypatch, data_fixtures, tmp_path):
    monkeypatch.setenv("GRADCODE_DATA_DIR", str(data_fixtures))
    assert raw_dirs("cifar10") == [data_fixtures / "cifar-10-batches-py"]
    stand_ins.raw_files_present.cache_clear()
    try:
        assert resolve_data("cifar10", None, "auto") == ("cifar10", "full")
        monkeypatch.setenv("GRADCODE_DATA_DIR", str(tmp_path))
        stand_ins.raw_files_present.cache_clear()
        assert resolve_data("cifar10", "paper001", "auto") == ("cifar10-standin", "paper001")
        with pytest.raises(ValueError, match=r"\$GRADCODE_DATA_DIR/cifar-10-batches-py"):
            resolve_data("cifar10", None, "never")
    finally:
        stand_ins.raw_files_present.cache_clear()


def _nearest_mean_accuracy(data) -> float:
    means = np.stack([data.X_train[data.y_train == c].mean(axis=0) for c in range(10)])
    distances = ((data.X_test[:, None, :] - means[None]) ** 2).sum(axis=2)
    return float(np.mean(distances.argmin(axis=1) == data.y_test))


def test_standin_has_cifar10s_shape_and_range_and_is_learnable(tmp_path):
    def made(out, seed=0):
        return prepare(
            "cifar10-standin", tmp_path / out, variant="custom", rows=500, test_rows=200, seed=seed
        )

    data = made("a")
    assert data.stand_in and data.meta["description"].startswith("STAND-IN, NOT CIFAR-10")
    assert data.meta["task"] == "multiclass" and data.meta["notes"][0].startswith("Synthetic")
    assert data.X_train.shape == (500, 3072) and data.X_test.shape == (200, 3072)
    pixels = data.X_train * 255
    assert np.array_equal(pixels, np.round(pixels)) and pixels.min() == 0 and pixels.max() == 255
    assert data.meta["labels"]["train"] == {str(c): 50 for c in range(10)}
    assert data.meta["labels"]["test"] == {str(c): 20 for c in range(10)}
    # a nearest-class-mean rule does far better than chance (0.1): there is structure to learn
    assert _nearest_mean_accuracy(data) > 0.3
    made("b")
    assert (tmp_path / "a" / "data.npz").read_bytes() == (tmp_path / "b" / "data.npz").read_bytes()
    assert not np.array_equal(made("c", seed=1).X_train, data.X_train)


def test_standin_variants_and_options_match_cifar10():
    from gradcode.data.cifar10 import train_rows_wanted
    from gradcode.data.registry import DATASETS

    real, stand_in = DATASETS["cifar10"], DATASETS["cifar10-standin"]
    assert list(real.variants) == list(stand_in.variants) and real.options == stand_in.options
    assert stand_ins.STAND_INS["cifar10"] == "cifar10-standin"
    assert train_rows_wanted("paper001", {}) == 49920
    assert train_rows_wanted("full", {}) is None and train_rows_wanted("custom", {"rows": 7}) == 7


def test_cli_lists_and_prepares_the_stand_in(tmp_path, capsys):
    status, out, _ = run_data_cli(["data", "list"], capsys)
    assert status == 0 and "\ncifar10 " in out and "STAND-IN, NOT CIFAR-10" in out
    command = ["data", "prepare", "cifar10-standin", "--variant", "custom", "--rows", "20"]
    status, out, _ = run_data_cli(
        [*command, "--test-rows", "10", "--out", str(tmp_path / "s")], capsys
    )
    assert status == 0 and out.splitlines()[1].startswith("STAND-IN")
    assert "labels       train 2 (0) / 2 (1)" in out and "task         multiclass" in out


def test_a_batch_pickled_by_python3_loads_too(tmp_path, cifar10_fixture):
    folder = tmp_path / "raw"
    shutil.copytree(cifar10_fixture, folder)
    content = batch(folder, "data_batch_1")
    fresh = cifar10_batch(content[b"data"], content[b"labels"], "training batch 1 of 5")
    (folder / "data_batch_1").write_bytes(pickle.dumps(fresh, protocol=5))
    data = prepare("cifar10", tmp_path / "out", raw=[folder])
    assert np.array_equal(data.X_train[:10], content[b"data"] / 255.0)

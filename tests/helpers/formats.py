"""Small synthetic files in the real data sets' formats, generated for the tests.

They imitate the formats only; their values are random (seeded, so every run writes the same
bytes). They are generated at test time rather than committed, so that nothing named like the
real data (``train.csv``) ever enters the repository.
"""

import gzip
import pickle
import struct
from pathlib import Path
from typing import ClassVar

import numpy as np

AMAZON_COLUMNS = (
    "RESOURCE",
    "MGR_ID",
    "ROLE_ROLLUP_1",
    "ROLE_ROLLUP_2",
    "ROLE_DEPTNAME",
    "ROLE_TITLE",
    "ROLE_FAMILY_DESC",
    "ROLE_FAMILY",
    "ROLE_CODE",
)


def amazon(rng: np.random.Generator, root: Path) -> None:
    folder = root / "amazon"
    folder.mkdir(parents=True, exist_ok=True)
    # few distinct values per column, so that categories and pairs repeat across rows
    levels = [
        rng.choice(np.arange(100, 200_000), size=k, replace=False)
        for k in (7, 5, 2, 3, 4, 5, 4, 3, 5)
    ]

    def rows(count: int) -> np.ndarray:
        return np.column_stack([rng.choice(level, size=count) for level in levels])

    train = rows(40)
    action = (rng.random(40) < 0.8).astype(int)
    lines = ["ACTION," + ",".join(AMAZON_COLUMNS)]
    lines += [",".join(map(str, [a, *r])) for a, r in zip(action, train, strict=True)]
    (folder / "train.csv").write_text("\n".join(lines) + "\n")
    test = rows(12)
    test[:3, 0] = [999_001, 999_002, 999_003]  # categories seen only in the Kaggle test file
    lines = ["id," + ",".join(AMAZON_COLUMNS)]
    lines += [",".join(map(str, [i + 1, *r])) for i, r in enumerate(test)]
    (folder / "test.csv").write_text("\n".join(lines) + "\n")


def gisette(rng: np.random.Generator, root: Path) -> None:
    folder = root / "gisette"
    folder.mkdir(parents=True, exist_ok=True)
    sums = {}
    counts = {}
    for split, rows in (("train", 6), ("valid", 4)):
        values = np.where(rng.random((rows, 5000)) < 0.13, rng.integers(1, 1000, (rows, 5000)), 0)
        # UCI lines: values separated by one blank, and a blank before the line end
        text = "".join(" ".join(map(str, row)) + " \n" for row in values)
        with gzip.GzipFile(folder / f"gisette_{split}.data.gz", "wb", mtime=0) as stream:
            stream.write(text.encode("ascii"))
        labels = np.array([1, -1] * (rows // 2))
        rng.shuffle(labels)
        (folder / f"gisette_{split}.labels").write_text("".join(f"{v}\n" for v in labels))
        sums[split] = int(values.sum())
        counts[split] = rows
    param = (
        "Data type: non-sparse\n"
        "Number of features: 5000\n"
        "Number of examples and check-sums:\n"
        "     \tPos_ex\tNeg_ex\tTot_ex\tCheck_sum\n"
        f"Train\t 3\t 3\t 6\t{sums['train']}.00\n"
        f"Valid\t 2\t 2\t 4\t{sums['valid']}.00\n"
        "Test\t 0\t 0\t 0\t0.00\n"
        f"All  \t 5\t 5\t10\t{sums['train'] + sums['valid']}.00\n"
    )
    (folder / "gisette.param").write_text(param)
    for name, rows in (("gisette_scale", 6), ("gisette_scale.t", 4)):
        lines = []
        for i in range(rows):
            columns = np.sort(rng.choice(np.arange(1, 5001), size=5, replace=False))
            values = np.round(rng.uniform(-1, 1, size=5), 6)
            pairs = " ".join(f"{c}:{v:g}" for c, v in zip(columns, values, strict=True))
            lines.append(f"{1 if i % 2 == 0 else -1} {pairs}")
        (folder / name).write_text("\n".join(lines) + "\n")


class Python2Pickler(pickle._Pickler):
    """Pickles as CIFAR-10's files were written (Python 2 cPickle, protocol 2): every str and
    bytes as a Python 2 str (``SHORT_BINSTRING``/``BINSTRING``), numpy under its numpy-1 module
    names (``numpy.core.multiarray._reconstruct``)."""

    dispatch: ClassVar[dict] = dict(pickle._Pickler.dispatch)

    def save_python2_str(self, obj: str | bytes) -> None:
        data = obj.encode("latin-1") if isinstance(obj, str) else obj
        if len(data) < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([len(data)]) + data)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", len(data)) + data)
        self.memoize(obj)

    dispatch[str] = save_python2_str
    dispatch[bytes] = save_python2_str

    def save_global(self, obj: object, name: str | None = None) -> None:
        module = obj.__module__.replace("numpy._core", "numpy.core")
        name = name or obj.__qualname__
        self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode("ascii"))
        self.memoize(obj)


def python2_pickle(obj: object, path: Path) -> None:
    with path.open("wb") as stream:
        Python2Pickler(stream, protocol=2).dump(obj)


def cifar10_batch(images: np.ndarray, labels: list[int], label: str) -> dict[bytes, object]:
    """A batch dict as in ``data_batch_1``: data, labels, batch_label, filenames."""
    return {
        b"batch_label": label.encode(),
        b"labels": labels,
        b"data": images,
        b"filenames": [f"image_{i:05d}.png".encode() for i in range(len(labels))],
    }


def cifar10(rng: np.random.Generator, root: Path, per_batch: int = 10) -> None:
    """``cifar-10-batches-py/`` with ``per_batch`` images per batch, every class once in each
    batch (CIFAR-10's balance)."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    names = ["airplane", "automobile", "bird", "cat", "deer"]
    names += ["dog", "frog", "horse", "ship", "truck"]
    meta = {b"num_cases_per_batch": per_batch, b"label_names": names, b"num_vis": 3072}
    python2_pickle(meta, folder / "batches.meta")
    batches = [(f"data_batch_{i}", f"training batch {i} of 5") for i in range(1, 6)]
    for name, label in [*batches, ("test_batch", "testing batch 1 of 1")]:
        images = rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8)
        labels = [int(v) for v in rng.permutation(np.arange(per_batch) % 10)]
        python2_pickle(cifar10_batch(images, labels, label), folder / name)


def generate(root: Path) -> Path:
    """Write every fixture below ``root``; returns ``root``."""
    generator = np.random.default_rng(20240601)
    amazon(generator, root)
    gisette(generator, root)
    cifar10(np.random.default_rng(20261128), root)
    return root

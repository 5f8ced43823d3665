"""Fetching the real inputs where the network allows, accepted only if the checksums match.

- ``amazon``: OpenML data id 4135 (``Amazon_employee_access``, the Kaggle training set)
  through ``sklearn.datasets.fetch_openml``, written back as Kaggle's ``train.csv`` (same
  header, column order and number format) and accepted only if that file's sha256 equals the
  published sha256 of Kaggle's ``train.csv``.
- ``gisette``: the UCI archive files, each accepted only with its published sha256.

Offline (or on a checksum mismatch) a one-line ``DataError`` says which file to place where.
Files appear in the target directory only when every file of the data set has been fetched
and checked.
"""

from __future__ import annotations

# the recipes and urllib load where a download runs: `gradcode.data` imports this module, and
# every MPI rank imports `gradcode.data` to read its prepared set
import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from gradcode.atomic import atomic_file
from gradcode.data.errors import DataError, OptionError
from gradcode.extras import require

OPENML_AMAZON_ID = 4135
UCI_GISETTE = "https://archive.ics.uci.edu/ml/machine-learning-databases/gisette/"
GISETTE_URLS = {
    "gisette_train.data": UCI_GISETTE + "GISETTE/gisette_train.data",
    "gisette_train.labels": UCI_GISETTE + "GISETTE/gisette_train.labels",
    "gisette_valid.data": UCI_GISETTE + "GISETTE/gisette_valid.data",
    "gisette_valid.labels": UCI_GISETTE + "gisette_valid.labels",
    "gisette.param": UCI_GISETTE + "GISETTE/gisette.param",
}
TIMEOUT_SECONDS = 60


def _reason(error: BaseException) -> str:
    reason = getattr(error, "reason", None) or getattr(error, "strerror", None) or error
    return " ".join(str(reason).split()) or type(error).__name__


def _install(files: dict[str, bytes | Path], to: Path, overwrite: bool) -> list[Path]:
    """Put fetched files (content, or a path to copy) into ``to``: each is staged beside its
    target and renamed only after all are staged."""
    targets = {name: to / name for name in files}
    if not overwrite:
        for name, target in targets.items():
            if target.exists():
                raise DataError(f"{name}: already exists in {to}; pass overwrite to replace it")
    # every file is staged before any is renamed: one failure leaves none of them behind
    with contextlib.ExitStack() as staged:
        for name, content in files.items():
            stream = staged.enter_context(atomic_file(targets[name], "wb"))
            if isinstance(content, Path):
                with open(content, "rb") as source:
                    shutil.copyfileobj(source, stream)
            else:
                stream.write(content)
    return list(targets.values())


def amazon_csv(bunch: object) -> bytes:
    """Kaggle-format ``train.csv`` bytes from the ``fetch_openml`` result of data id 4135.

    Nominal features (returned by OpenML as category indices) are mapped back to their values.
    """
    from gradcode.data import amazon

    names = list(bunch.feature_names)
    categories = getattr(bunch, "categories", None) or {}
    missing = [c for c in amazon.COLUMNS if c not in names]
    if missing:
        raise DataError(f"OpenML {OPENML_AMAZON_ID}: no column(s) {', '.join(missing)}")
    data = np.asarray(bunch.data)
    columns = []
    for column in amazon.COLUMNS:
        values = data[:, names.index(column)]
        if column in categories:
            lookup = np.asarray([int(float(v)) for v in categories[column]], dtype=np.int64)
            values = lookup[values.astype(np.int64)]
        columns.append(np.asarray(values, dtype=np.float64))
    target = np.asarray([int(float(v)) for v in np.asarray(bunch.target).astype(str)])
    table = np.column_stack([target, *columns])
    if not np.array_equal(table, np.round(table)):
        raise DataError(f"OpenML {OPENML_AMAZON_ID}: non-integer values")
    lines = [",".join((amazon.LABEL, *amazon.COLUMNS))]
    lines += [",".join(str(int(v)) for v in row) for row in table]
    return ("\n".join(lines) + "\n").encode("ascii")


def download_amazon(to: str | os.PathLike[str], *, overwrite: bool = False) -> list[Path]:
    """Fetch OpenML 4135 and write ``to/train.csv`` if it is byte-identical to Kaggle's."""
    require("data", "downloading the Amazon data set")
    from sklearn import datasets

    from gradcode.data import amazon

    to = Path(to)
    published = amazon.PUBLISHED["train.csv"]
    place = (
        f"place Kaggle's train.csv (plain, .gz or .xz; sha256 of the uncompressed file "
        f"{published.sha256[:16]}...) in {to}"
    )
    try:
        bunch = datasets.fetch_openml(
            data_id=OPENML_AMAZON_ID, as_frame=False, parser="liac-arff", cache=True
        )
    except OSError as error:
        raise DataError(
            f"train.csv: cannot reach OpenML for data id {OPENML_AMAZON_ID} "
            f"({_reason(error)}); {place}"
        ) from None
    content = amazon_csv(bunch)
    digest = hashlib.sha256(content).hexdigest()
    if digest != published.sha256:
        raise DataError(
            f"train.csv: OpenML data id {OPENML_AMAZON_ID} does not reproduce Kaggle's file "
            f"(sha256 {digest[:16]}..., expected {published.sha256[:16]}...); {place}"
        )
    return _install({"train.csv": content}, to, overwrite)


def download_gisette(to: str | os.PathLike[str], *, overwrite: bool = False) -> list[Path]:
    """Fetch the five UCI GISETTE files into ``to``, each checked by its published sha256."""
    import urllib.request

    from gradcode.data import gisette

    to = Path(to)
    with tempfile.TemporaryDirectory(prefix="gradcode-gisette-") as scratch:
        fetched: dict[str, bytes | Path] = {}
        for name, url in GISETTE_URLS.items():
            published = gisette.PUBLISHED[name]
            place = f"place the UCI file {name} (sha256 {published.sha256[:16]}...) in {to}"
            path = Path(scratch) / name
            digest = hashlib.sha256()
            with open(path, "wb") as stream:
                try:
                    with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
                        for block in iter(lambda: response.read(1 << 20), b""):
                            digest.update(block)
                            stream.write(block)
                except OSError as error:
                    raise DataError(
                        f"{name}: cannot download {url} ({_reason(error)}); {place}"
                    ) from None
            if digest.hexdigest() != published.sha256:
                raise DataError(
                    f"{name}: downloaded file has sha256 {digest.hexdigest()[:16]}..., "
                    f"expected {published.sha256[:16]}...; {place}"
                )
            fetched[name] = path
        return _install(fetched, to, overwrite)


DOWNLOADERS = {"amazon": download_amazon, "gisette": download_gisette}


def download(name: str, to: str | os.PathLike[str], *, overwrite: bool = False) -> list[Path]:
    """Fetch the inputs of data set ``name`` into directory ``to``; returns the files written."""
    if name not in DOWNLOADERS:
        raise OptionError(
            f"{name} cannot be downloaded (downloadable: {', '.join(sorted(DOWNLOADERS))})"
        )
    return DOWNLOADERS[name](to, overwrite=overwrite)

"""Download paths, exercised without a network: failures, mismatches, and the success path."""

import hashlib
import io
import urllib.error
import urllib.request
from types import SimpleNamespace

import numpy as np
import pytest
import sklearn.datasets

from gradcode.data import DataError, OptionError, download, prepare
from gradcode.data import amazon as amazon_module
from gradcode.data import gisette as gisette_module
from gradcode.data.download import amazon_csv
from gradcode.data.io import read_raw


def openml_bunch(train_csv: bytes, nominal: bool) -> SimpleNamespace:
    """What fetch_openml(data_id=4135, as_frame=False) returns, built from a Kaggle CSV."""
    lines = train_csv.decode().splitlines()
    header = lines[0].split(",")
    table = np.array([[int(v) for v in line.split(",")] for line in lines[1:]])
    # OpenML lists the target last and may order features differently
    names = list(reversed(header[1:]))
    data = np.column_stack([table[:, header.index(n)] for n in names]).astype(float)
    categories = {}
    if nominal:  # nominal features come back as indices into the declared categories
        for j, name in enumerate(names):
            values = sorted(set(data[:, j].astype(int)), key=str)
            categories[name] = [str(v) for v in values]
            data[:, j] = [values.index(v) for v in data[:, j].astype(int)]
    target = np.array([str(v) for v in table[:, 0]])
    return SimpleNamespace(data=data, target=target, feature_names=names, categories=categories)


@pytest.mark.parametrize("nominal", [False, True])
def test_openml_rows_are_written_back_as_kaggle_csv(nominal, amazon_fixture):
    content = (amazon_fixture / "train.csv").read_bytes()
    assert amazon_csv(openml_bunch(content, nominal)) == content


def test_amazon_offline(tmp_path, monkeypatch):
    def offline(**kwargs):
        raise urllib.error.URLError("Network is unreachable")

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", offline)
    with pytest.raises(DataError) as caught:
        download("amazon", tmp_path / "raw")
    assert str(caught.value) == (
        "train.csv: cannot reach OpenML for data id 4135 (Network is unreachable); place "
        "Kaggle's train.csv (plain, .gz or .xz; sha256 of the uncompressed file "
        f"c50b119438fb8c8e...) in {tmp_path / 'raw'}"
    )
    assert not (tmp_path / "raw").exists()


def test_amazon_download_checks_the_checksum(tmp_path, monkeypatch, amazon_fixture):
    content = (amazon_fixture / "train.csv").read_bytes()
    monkeypatch.setattr(sklearn.datasets, "fetch_openml", lambda **kw: openml_bunch(content, True))
    with pytest.raises(DataError, match="does not reproduce Kaggle's file"):
        download("amazon", tmp_path / "raw")
    assert not (tmp_path / "raw").exists()
    # with the fixture's own checksum published, the download goes through
    fixture_sum = read_raw(amazon_fixture / "train.csv").sha256
    monkeypatch.setitem(amazon_module.PUBLISHED, "train.csv", amazon_module.Published(fixture_sum))
    assert download("amazon", tmp_path / "raw") == [tmp_path / "raw" / "train.csv"]
    assert (tmp_path / "raw" / "train.csv").read_bytes() == content
    with pytest.raises(DataError, match="already exists"):
        download("amazon", tmp_path / "raw")
    data = prepare("amazon", tmp_path / "out", raw=[tmp_path / "raw"])
    assert data.meta["inputs"][0]["verified"] is True


def serve(files: dict[str, bytes]):
    def urlopen(url, timeout):
        name = url.rsplit("/", 1)[1]
        if name not in files:
            raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)
        return io.BytesIO(files[name])

    return urlopen


def gisette_fixture_files(folder) -> dict[str, bytes]:
    return {name: read_raw(path).content for name, path in _fixture_paths(folder).items()}


def _fixture_paths(folder):
    return {
        name: next(p for p in folder.iterdir() if p.name in (name, name + ".gz"))
        for name in gisette_module.UCI_FILES
    }


def test_gisette_download_path(tmp_path, monkeypatch, gisette_fixture):
    files = gisette_fixture_files(gisette_fixture)
    monkeypatch.setattr(urllib.request, "urlopen", serve(files))
    with pytest.raises(DataError) as caught:
        download("gisette", tmp_path / "raw")
    assert str(caught.value).startswith("gisette_train.data: downloaded file has sha256 ")
    assert not (tmp_path / "raw").exists()

    for name, content in files.items():
        monkeypatch.setitem(
            gisette_module.PUBLISHED,
            name,
            gisette_module.Published(hashlib.sha256(content).hexdigest()),
        )
    written = download("gisette", tmp_path / "raw")
    assert sorted(p.name for p in written) == sorted(gisette_module.UCI_FILES)
    assert sorted(p.name for p in (tmp_path / "raw").iterdir()) == sorted(gisette_module.UCI_FILES)
    data = prepare("gisette", tmp_path / "out", raw=[tmp_path / "raw"])
    assert data.X_train.shape == (6, 5001)
    assert all(record["verified"] for record in data.meta["inputs"])


def test_gisette_partial_failure_writes_nothing(tmp_path, monkeypatch, gisette_fixture):
    files = gisette_fixture_files(gisette_fixture)
    for name, content in files.items():
        monkeypatch.setitem(
            gisette_module.PUBLISHED,
            name,
            gisette_module.Published(hashlib.sha256(content).hexdigest()),
        )
    del files["gisette.param"]  # the last file fails
    monkeypatch.setattr(urllib.request, "urlopen", serve(files))
    (tmp_path / "raw").mkdir()
    with pytest.raises(DataError, match=r"^gisette\.param: cannot download .*\(Not Found\)"):
        download("gisette", tmp_path / "raw")
    assert list((tmp_path / "raw").iterdir()) == []


def test_only_real_sets_download(tmp_path):
    with pytest.raises(OptionError, match="synthetic-linear cannot be downloaded"):
        download("synthetic-linear", tmp_path)

"""Workers on rank 0's node take their rows from a shared-memory window (``gradcode.train.shares``);
each run's model is the one the workers reach when every one loads the prepared data itself
(``runtime.data: load``, an independent path to the same partitions), on dense and CSR rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from gradcode.data import provenance
from gradcode.data.prepared import write_prepared
from tests.helpers.mpi import base_run, run_config

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def csr_data(tmp_path_factory) -> Path:
    """480 training rows of 300 features, 3 % of them nonzero, stored sparse."""
    rng = np.random.default_rng(5)
    X = sparse.random(580, 300, density=0.03, format="csr", random_state=rng)
    y = (rng.random(580) < 0.5).astype(np.float64)
    out = tmp_path_factory.mktemp("data") / "csr"
    rows = np.arange(580)
    meta = {
        "format": provenance.FORMAT,
        "dataset": "csr-test",
        "variant": "test",
        "stand_in": False,
        "task": "classification",
        "storage": "sparse",
        "shapes": {"X_train": [480, 300], "X_test": [100, 300]},
    }
    arrays = {
        "X_train": X[:480],
        "X_test": X[480:],
        "y_train": y[:480],
        "y_test": y[480:],
        "train_rows": rows[:480],
        "test_rows": rows[480:],
    }
    write_prepared(out, arrays, meta)
    return out


@pytest.mark.parametrize("storage", ["dense", "csr"])
@pytest.mark.parametrize(
    "scheme",
    [{"name": "uncoded", "params": {"n": 4}}, {"name": "crc", "params": {"n": 4, "s": 2}}],
    ids=["uncoded", "crc"],
)
def test_rows_from_the_window_train_the_model_the_loaded_rows_train(
    tmp_path, logistic_data, csr_data, storage, scheme
):
    data = logistic_data if storage == "dense" else csr_data
    jobs = {}
    for way in ("send", "load"):
        run = base_run(data, scheme=scheme, runtime={"data": way})
        jobs[way] = run_config(tmp_path, run, ranks=5, name=way).check()
    assert jobs["send"].summary()["data_delivery"] == {"window": 4, "message": 0}
    assert jobs["load"].summary()["data_delivery"] == {"load": 4}
    sent, loaded = jobs["send"].model(), jobs["load"].model()
    if scheme["name"] == "uncoded":
        # every worker's partition summed in one order: the same bits
        assert np.array_equal(sent, loaded)
    else:
        # CRC decodes from whichever workers answer first: the same gradient, rounded apart
        np.testing.assert_allclose(sent, loaded, rtol=1e-9, atol=1e-12)

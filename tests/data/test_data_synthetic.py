"""Synthetic linear (paper 001, eq. 10) and logistic sets; parameter validation."""

import numpy as np
import pytest

from gradcode.data import OptionError, load_prepared, prepare
from gradcode.data.synthetic import LINEAR_VARIANTS, sizes
from gradcode.errors import UnknownNameError
from tests.helpers.data import assert_nothing_written


def test_linear_model_and_theta_star(tmp_path):
    data = prepare(
        "synthetic-linear", tmp_path / "out", variant="custom", rows=4000, features=8, test_rows=50
    )
    assert data.meta["storage"] == "dense" and data.meta["task"] == "regression"
    assert data.X_train.shape == (4000, 8) and data.X_test.shape == (50, 8)
    assert data.theta_star.shape == (8,) and "labels" not in data.meta
    residual = data.y_train - data.X_train @ data.theta_star
    assert abs(residual.std() - 1.0) < 0.05 and abs(residual.mean()) < 0.05  # z ~ N(0, 1)
    assert abs(data.X_train.std() - 1.0) < 0.02 and abs(data.X_train.mean()) < 0.02
    loaded = load_prepared(tmp_path / "out")
    assert np.array_equal(loaded.theta_star, data.theta_star)
    assert np.array_equal(loaded.X_train, data.X_train) and np.array_equal(
        loaded.y_test, data.y_test
    )


def test_noise_level_is_a_parameter(tmp_path):
    exact = prepare(
        "synthetic-linear", tmp_path / "a", variant="custom", rows=30, features=4, noise_std=0.0
    )
    assert np.allclose(exact.y_train, exact.X_train @ exact.theta_star, rtol=0, atol=1e-12)
    assert exact.meta["options"] == {"rows": 30, "features": 4, "noise_std": 0.0}
    assert exact.meta["recipe"]["noise_std"] == 0.0


def test_presets_are_the_papers_sizes():
    assert LINEAR_VARIANTS["d7644-p6500"] == (7644, 6500, 0)
    assert LINEAR_VARIANTS["d32760-p5000"] == (32760, 5000, 0)
    assert LINEAR_VARIANTS["d1911-p1625"] == (1911, 1625, 0)  # a quarter each way
    assert LINEAR_VARIANTS["d8190-p1250"] == (8190, 1250, 0)
    assert sizes(LINEAR_VARIANTS, "d7644-p6500", {"test_rows": 10}) == (7644, 6500, 10)
    assert sizes(LINEAR_VARIANTS, "custom", {"rows": 3, "features": 2}) == (3, 2, 0)


def test_same_seed_same_bytes_other_seed_other_data(tmp_path):
    def run(path, seed):
        return prepare(
            "synthetic-linear", tmp_path / path, variant="custom", rows=20, features=3, seed=seed
        )

    a, b, c = run("a", 4), run("b", 4), run("c", 5)
    for name in ("data.npz", "meta.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert not np.array_equal(a.theta_star, c.theta_star)
    assert a.meta["seed"] == 4 and c.meta["seed"] == 5
    assert b.meta == a.meta


def test_logistic_smoke_set(tmp_path):
    data = prepare("synthetic-logistic", tmp_path / "out")
    assert data.X_train.shape == (2000, 50) and data.X_test.shape == (500, 50)
    assert set(np.unique(data.y_train)) == {-1.0, 1.0}
    margin = data.X_train @ data.theta_star
    # labels follow the model: mostly +1 where x . theta* is large, -1 where it is small
    assert (data.y_train[margin > 2] == 1).mean() > 0.8
    assert (data.y_train[margin < -2] == -1).mean() > 0.8
    assert data.meta["labels"]["train"]["1"] + data.meta["labels"]["train"]["-1"] == 2000


@pytest.mark.parametrize(
    "name, kwargs, message",
    [
        ("synthetic-linear", {"rows": 5}, "option 'rows' needs variant 'custom'"),
        ("synthetic-linear", {"variant": "custom", "rows": 5}, "needs option(s) features"),
        ("synthetic-linear", {"variant": "custom", "rows": 0, "features": 2}, "rows must be >= 1"),
        ("synthetic-linear", {"noise_std": -1.0}, "noise_std must be >= 0"),
        ("synthetic-linear", {"noise_std": float("nan")}, "noise_std must be finite"),
        ("synthetic-linear", {"variant": "custom", "rows": 2.5, "features": 2}, "integer"),
        ("synthetic-linear", {"colour": 1}, "has no option 'colour'"),
        ("synthetic-linear", {"variant": "big"}, "has no variant 'big'"),
        ("synthetic-linear", {"seed": -1}, "seed must be an integer"),
        ("synthetic-linear", {"seed": "1"}, "seed must be an integer"),
        ("synthetic-logistic", {"trim_to_multiple": 0}, "trim_to_multiple must be a positive"),
        ("synthetic-logistic", {"partitions": 2001}, "cannot split 2000 rows into 2001"),
        ("synthetic-logistic", {"trim_to_multiple": 3000}, "leaves no rows"),
        ("synthetic-logistic", {"raw": ["x.csv"]}, "reads no input files"),
        ("amazon", {"rows": 3}, "amazon has no option 'rows' (options: none)"),
        ("gisette-standin", {"variant": "libsvm"}, "has no variant 'libsvm'"),
        ("nope", {}, "unknown data set 'nope'"),
    ],
)
def test_invalid_parameters_write_nothing(tmp_path, name, kwargs, message):
    out = tmp_path / "out"
    # an unknown name is an UnknownNameError, as in every registry; both are user errors
    with pytest.raises(OptionError if name != "nope" else UnknownNameError) as caught:
        prepare(name, out, **kwargs)
    assert message in str(caught.value)
    assert_nothing_written(out)


def test_existing_output_is_kept_unless_overwrite(tmp_path):
    out = tmp_path / "out"
    first = prepare("synthetic-logistic", out, variant="custom", rows=10, features=2, seed=1)
    with pytest.raises(ValueError, match="already exists"):
        prepare("synthetic-logistic", out, variant="custom", rows=10, features=2, seed=2)
    assert load_prepared(out).meta == first.meta
    second = prepare(
        "synthetic-logistic", out, variant="custom", rows=10, features=2, seed=2, overwrite=True
    )
    assert load_prepared(out).meta == second.meta != first.meta


def test_load_refuses_changed_data(tmp_path):
    out = tmp_path / "out"
    prepare("synthetic-logistic", out, variant="custom", rows=10, features=2)
    content = bytearray((out / "data.npz").read_bytes())
    content[len(content) // 2] ^= 0x01
    (out / "data.npz").write_bytes(bytes(content))
    with pytest.raises(ValueError, match=r"^data\.npz: sha256 .* differs from meta\.json's"):
        load_prepared(out)
    # unchecked, the damage still surfaces as a one-line error (the zip CRC), never as data
    with pytest.raises(ValueError, match=r"^data\.npz: cannot read \(Bad CRC-32"):
        load_prepared(out, verify=False)

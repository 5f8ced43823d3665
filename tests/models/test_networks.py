"""The networks of ``gradcode.models.nn``: gradients against finite differences, the
partition-sum property every exact code relies on, parameter counts, initialisation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcode.errors import ParameterError
from gradcode.models import build, task
from gradcode.models.nn.backend import Compiled
from gradcode.models.nn.cnn import CodedReduceCNN
from gradcode.models.nn.mlp import MLP


def _data(rows: int, features: int, classes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.random((rows, features)), rng.integers(0, classes, rows).astype(np.float64)


def _total_loss(model, X, y, theta) -> float:
    return float(np.sum(model.losses(X, y, theta)))


def test_the_table_ii_network_has_the_papers_parameter_count():
    cnn = build("coded-reduce-cnn")
    # Table II: 3*16*9+16, 16*64*16+64, 64*384+384, 384*192+192, 192*10+10
    assert cnn.parameter_count(3 * 32 * 32) == 448 + 16448 + 24960 + 73920 + 1930 == 117706
    shapes = dict(cnn.layout(3072).entries)
    assert shapes["conv1.weight"] == (3, 16, 3, 3) and shapes["conv2.weight"] == (16, 64, 4, 4)
    assert [shapes[f"dense{i}.weight"] for i in range(3)] == [(64, 384), (384, 192), (192, 10)]
    assert build("mlp", {"hidden": [32]}).parameter_count(64) == 64 * 32 + 32 + 32 * 10 + 10
    assert build("mlp", {"hidden": []}).parameter_count(64) == 650
    assert task("mlp") == task("coded-reduce-cnn") == "multiclass"
    with pytest.raises(ValueError, match="rows of 64 features are not 3 x 32 x 32 images"):
        cnn.parameter_count(64)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"hidden": [0]}, "model mlp: hidden must be an integer >= 1"),
        ({"hidden": "32"}, "model mlp: hidden must be a list of widths"),
        ({"dtype": "float16"}, "model mlp: dtype must be one of float64, float32"),
    ],
)
def test_bad_network_parameters_are_one_line(params, message):
    with pytest.raises(ParameterError, match=message):
        build("mlp", params)
    with pytest.raises(ParameterError, match="multiples of 4"):
        build("coded-reduce-cnn", {"image": [3, 30, 30]})


def test_initialisation_is_a_function_of_the_seed_with_the_papers_bounds():
    cnn = build("coded-reduce-cnn")
    first, again = cnn.initial_parameters(3072, 7), cnn.initial_parameters(3072, 7)
    assert first.dtype == np.float64 and np.array_equal(first, again)
    assert not np.array_equal(first, cnn.initial_parameters(3072, 8))
    arrays = cnn.layout(3072).unflatten(first)
    bounds = {
        "conv1.weight": math.sqrt(6 / (3 * 9 + 16 * 9)),  # Glorot uniform, kernel in the fans
        "conv1.bias": 1 / math.sqrt(3 * 9),  # PyTorch's default: 1/sqrt(fan_in)
        "conv2.weight": math.sqrt(6 / (16 * 16 + 64 * 16)),
        "dense0.weight": 1 / 8,
        "dense1.bias": 1 / math.sqrt(384),
        "dense2.weight": 1 / math.sqrt(192),
    }
    for name, bound in bounds.items():
        spread = np.abs(arrays[name]).max()
        assert bound * 0.8 < spread <= bound, name


def _finite_difference(model, X, y, theta, direction, h=1e-5) -> float:
    up = _total_loss(model, X, y, theta + h * direction)
    down = _total_loss(model, X, y, theta - h * direction)
    return (up - down) / (2 * h)


def test_the_mlp_gradient_matches_finite_differences_in_every_coordinate():
    model = build("mlp", {"hidden": [4, 3], "classes": 3})
    X, y = _data(7, 5, 3)
    theta = model.initial_parameters(5, 1)
    gradient = model.partial_gradient(X, y, theta)
    numeric = np.array([_finite_difference(model, X, y, theta, e) for e in np.eye(theta.size)])
    assert np.allclose(gradient, numeric, rtol=1e-6, atol=1e-8)


def test_the_cnn_gradient_matches_finite_differences_along_random_directions():
    model = build("coded-reduce-cnn", {"image": [2, 8, 8], "classes": 4})
    X, y = _data(5, 128, 4, seed=2)
    theta = model.initial_parameters(128, 3)
    gradient = model.partial_gradient(X, y, theta)
    rng = np.random.default_rng(4)
    for _ in range(3):
        direction = rng.standard_normal(theta.size)
        direction /= np.linalg.norm(direction)  # a small step crosses no ReLU's kink
        numeric = _finite_difference(model, X, y, theta, direction, h=1e-6)
        assert gradient @ direction == pytest.approx(numeric, rel=1e-6)


@pytest.mark.parametrize(
    "model",
    [MLP(hidden=[16, 8]), CodedReduceCNN(image=[1, 8, 8])],
    ids=["mlp", "cnn"],
)
def test_partition_gradient_sums_add_up_to_the_whole(model):
    X, y = _data(24, 64, 10, seed=5)
    theta = model.initial_parameters(64, 0)
    whole = model.partial_gradient(X, y, theta)
    parts = [model.partial_gradient(X[rows], y[rows], theta) for rows in np.split(np.arange(24), 4)]
    assert np.allclose(np.sum(parts, axis=0), whole, rtol=1e-12, atol=1e-14 * np.abs(whole).max())
    assert np.array_equal(model.partial_gradient(X, y, theta), whole)  # deterministic
    whole += 1.0  # the runtime adds into the sums it gets: they are its own, writable
    assert np.array_equal(model.partial_gradient(X[:0], y[:0], theta), np.zeros(theta.size))
    losses = model.losses(X, y, theta)
    assert losses.shape == (24,) and np.all(losses > 0)


def test_float32_networks_agree_with_float64_to_single_precision():
    wide, narrow = MLP(hidden=[16]), MLP(hidden=[16], dtype="float32")
    X, y = _data(30, 64, 10, seed=6)
    theta = wide.initial_parameters(64, 0)
    exact = wide.partial_gradient(X, y, theta)
    single = narrow.partial_gradient(X, y, theta)
    assert single.dtype == np.float64
    assert np.abs(single - exact).max() <= 1e-5 * np.abs(exact).max()
    assert not np.array_equal(single, exact)


def test_metrics_and_labels():
    model = MLP(hidden=[8])
    X, y = _data(40, 64, 10, seed=7)
    theta = model.initial_parameters(64, 0)
    metrics = model.metrics(theta, theta * 2, X, y, None)
    assert set(metrics) == {"accuracy", "test_loss", "relative_error"}
    assert metrics["accuracy"] == np.mean(model.predict(X, theta) == y)
    assert metrics["test_loss"] == pytest.approx(np.mean(model.losses(X, y, theta)))
    assert metrics["relative_error"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match=r"labels must be the integers 0 \.\. 9"):
        model.partial_gradient(X, np.full(40, 10.0), theta)
    with pytest.raises(ValueError, match="labels must be"):
        model.partial_gradient(X, np.full(40, 0.5), theta)


def test_a_call_takes_a_bounded_run_of_rows_and_a_sum_adds_the_runs():
    # the Table II network on CIFAR-sized rows: about 1.2 MB of float64 activations per row
    assert CodedReduceCNN().rows_per_call(3072) == 224
    model = MLP(hidden=[8])
    X, y = _data(11, 64, 10, seed=8)
    theta = model.initial_parameters(64, 0)
    small = Compiled(model.layout(64), model.logits, "float64", rows_per_call=4)  # 4 + 4 + 3
    labels = model.labels(y)
    whole = model.partial_gradient(X, y, theta)
    summed = small.gradient_sum(theta, X, labels)
    np.testing.assert_allclose(summed, whole, rtol=1e-12, atol=1e-14 * np.abs(whole).max())
    np.testing.assert_allclose(small.losses(theta, X, labels), model.losses(X, y, theta))
    assert np.array_equal(small.predict(theta, X), model.predict(X, theta))


def test_warming_up_compiles_once_per_partition_shape_and_changes_nothing(monkeypatch):
    """A worker warms its model up on its partitions before the first iteration
    (``gradcode.train.run``): a network computes one gradient sum per shape, at zero."""
    model = MLP(hidden=[8])
    parts = [_data(12, 64, 10, seed=s) for s in range(3)] + [_data(7, 64, 10, seed=3)]
    theta = model.initial_parameters(64, 0)
    before = [model.partial_gradient(X, y, theta) for X, y in parts]
    fresh = MLP(hidden=[8])
    calls: list[tuple[tuple[int, int], bool]] = []
    original = fresh.partial_gradient

    def spy(X, y, point):
        calls.append((X.shape, not point.any()))
        return original(X, y, point)

    monkeypatch.setattr(fresh, "partial_gradient", spy)
    fresh.warm_up(parts)
    assert calls == [((12, 64), True), ((7, 64), True)]
    monkeypatch.undo()
    after = [fresh.partial_gradient(X, y, theta) for X, y in parts]
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    build("logistic").warm_up(parts)  # the numpy models: nothing to do

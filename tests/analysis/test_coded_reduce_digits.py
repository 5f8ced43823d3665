"""Fig. 13's method on the digits stand-in: gradients, SGD's data, timing, shared iterates."""

import itertools

import numpy as np
import pytest

from gradcode.analysis import coded_reduce_digits as digits
from gradcode.codes import build
from gradcode.sim import load_spec, preset, simulate


@pytest.fixture(scope="module")
def run():
    return digits.compute(trials=60, seed=3, progress=lambda line: None)


def _reference_gradient(params, x, y):
    """The perceptron's gradient written out by hand (the analysis's NumPy code before JAX
    computed it): an independent check of the compiled gradient."""
    w1, b1 = params[:2048].reshape(64, 32), params[2048:2080]
    w2, b2 = params[2080:2400].reshape(32, 10), params[2400:]
    hidden = np.maximum(x @ w1 + b1, 0.0)
    logits = hidden @ w2 + b2
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    probs[np.arange(len(y)), y] -= 1.0
    back = (probs @ w2.T) * (hidden > 0)
    parts = [x.T @ back, back.sum(axis=0), hidden.T @ probs, probs.sum(axis=0)]
    return np.concatenate([part.ravel() for part in parts])


def test_the_compiled_gradient_is_the_perceptrons():
    rng = np.random.default_rng(0)
    params = digits.initial_params(rng)
    params = params + 0.1 * rng.standard_normal(params.shape)
    x, y = rng.random((7, 64)), rng.integers(0, 10, 7)
    model = digits.network()
    assert model.parameter_count(64) == params.size == 2410
    np.testing.assert_allclose(
        digits.gradient(model, params, x, y),
        _reference_gradient(params, x, y),
        rtol=1e-12,
        atol=1e-14,
    )


def test_sgd_step_is_the_rescaled_ignore_stragglers_decoding():
    """The mean gradient over the responders' rows is ignore-stragglers(rescale=True) / d."""
    rng = np.random.default_rng(1)
    data = digits.load(rng)
    params = digits.initial_params(rng)
    model = digits.network()
    code = build("ignore-stragglers", n=156, s=65, rescale=True)
    per_worker = digits.TRAIN_SIZE // code.n
    responders = np.sort(rng.choice(code.n, code.n - code.s, replace=False))
    partials = np.array(
        [
            digits.gradient(
                model,
                params,
                data.train_x[digits.worker_rows(np.array([w]), per_worker)],
                data.train_y[digits.worker_rows(np.array([w]), per_worker)],
            )
            for w in range(code.n)
        ]
    )
    decoded = code.decode({int(w): partials[w] for w in responders}, partials.shape[1])
    rows = digits.worker_rows(responders, per_worker)
    assert len(set(rows.tolist())) == len(rows) == 91 * 9
    gradient = digits.gradient(model, params, data.train_x[rows], data.train_y[rows])
    np.testing.assert_allclose(
        gradient / len(rows), decoded / digits.TRAIN_SIZE, rtol=1e-10, atol=1e-13
    )


def test_iteration_times_agree_with_the_simulator():
    paper, scaled = digits.specs(digits.TRAIN_SIZE)
    small, large, responders = digits.iteration_times(paper, scaled, 600, np.random.default_rng(5))
    reference = {
        row.label: row for row in simulate(paper, trials=4096, seed=11) if row.label in large
    }
    for label, times in large.items():
        spread = reference[label].std_time * (1 / 600 + 1 / 4096) ** 0.5
        assert times.mean() == pytest.approx(reference[label].mean_time, abs=5 * spread + 1e-9)
    # the stand-in's iteration is the paper's with 1404 instead of 49920 data points
    raw = preset("coded-reduce-cnn")
    raw["parameters"]["data"] = digits.TRAIN_SIZE
    assert scaled.model.params() == load_spec(raw, origin="x").model.params()
    assert all(small[label].mean() < large[label].mean() for label in small)
    # SGD hears N - S distinct workers per iteration
    assert responders.shape == (600, 91)
    assert all(len(set(row)) == 91 for row in responders.tolist())


def test_exact_schemes_share_iterates_and_differ_in_time(run):
    points = digits.evaluation_points(60)
    by = {}
    for row in run.rows:
        by.setdefault(row["scheme"], []).append(row)
    assert set(by) == set(digits.SCHEMES)
    for rows in by.values():
        assert [row["iteration"] for row in rows] == points
        times = [row["time"] for row in rows]
        assert times[0] == 0 and all(b > a for a, b in itertools.pairwise(times))
    for label in ("UMW", "GC", "RAR"):
        for mine, cr in zip(by[label], by["CR"], strict=True):
            assert (mine["test_accuracy"], mine["loss"]) == (cr["test_accuracy"], cr["loss"])
    # CR beats every master-worker scheme at both scales, RAR beats CR (see test_presets)
    for column in ("time", "time_paper_scale"):
        end = {label: rows[-1][column] for label, rows in by.items()}
        assert end["RAR"] < end["CR"] < min(end["SGD"], end["GC"]) <= end["UMW"]
    # UMW waits for all 156 transfers of tc = 0.05 s every iteration
    assert by["UMW"][-1]["time"] == pytest.approx(60 * 156 * 0.05, rel=0.01)
    # the training works and SGD takes its own path
    assert by["CR"][-1]["test_accuracy"] > 0.85 > by["CR"][0]["test_accuracy"]
    assert [r["loss"] for r in by["SGD"]] != [r["loss"] for r in by["CR"]]
    assert by["SGD"][0]["loss"] == by["CR"][0]["loss"]


def test_codes_decode_the_gradient_the_iterates_use(run):
    for label in ("GC", "CR"):
        assert run.meta["exactness"][label]["initial"] < 1e-8
        assert run.meta["exactness"][label]["final"] < 1e-8


def test_deterministic_and_schedule():
    one = digits.compute(trials=8, seed=4, progress=lambda line: None)
    two = digits.compute(trials=8, seed=4, progress=lambda line: None)
    assert one.rows == two.rows
    assert digits.iterations_for(10**6) == 2500 and digits.iterations_for(1) == 2
    steps = [digits.step_size(t, 2500) for t in (0, 1299, 1300, 2099, 2100, 2499)]
    assert steps == pytest.approx([0.5, 0.5, 0.35, 0.35, 0.245, 0.245])

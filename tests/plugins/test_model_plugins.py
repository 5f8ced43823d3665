"""Models from an installed distribution's entry points (group ``gradcode.models``)."""

import warnings

import numpy as np
import pytest

from gradcode.errors import ParameterError, UnknownNameError
from gradcode.models import LinearRegression, available, build, model_class, register, task
from gradcode.models.registry import MODELS, source, unregister
from gradcode.plugins import PluginError


def _discover() -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        available()
    return [str(w.message) for w in caught]


def test_a_plugin_model_works_like_a_built_in(fakeplug):
    warned = _discover()
    assert "toy-doubled" in available() and source("toy-doubled") == "plug-in fakeplug 0.1"
    model = build("toy-doubled")
    assert task("toy-doubled") == "regression"
    X, y = np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0, 2.0])
    theta = model.initial_parameters(2, seed=0)
    assert theta.tolist() == [1.0, 1.0]
    linear = LinearRegression().partial_gradient(X, y, theta)
    assert np.array_equal(model.partial_gradient(X, y, theta), 2.0 * linear)
    refused = {line.split("'")[1]: line for line in warned}
    assert set(refused) == {"toy-no-task", "logistic"}
    assert "declares task 'ranking'" in refused["toy-no-task"]
    assert "the name is a built-in's" in refused["logistic"]
    assert model_class("logistic").__module__ == "gradcode.models.logistic"
    with pytest.raises(PluginError, match="plug-in 'toy-no-task'"):
        build("toy-no-task")


def test_models_registered_at_run_time_and_unfit_ones():
    class Tripled(LinearRegression):
        kind = "toy-tripled"

    register("toy-tripled", Tripled)
    try:
        assert "toy-tripled" in available() and source("toy-tripled") == "registered"
        assert isinstance(build("toy-tripled"), Tripled)
    finally:
        unregister("toy-tripled")
    assert "toy-tripled" not in available()
    with pytest.raises(ValueError, match="is of kind 'toy-tripled', not 'other'"):
        register("other", Tripled)
    with pytest.raises(ValueError, match=r"is not a gradcode\.models\.Model subclass"):
        register("other", dict)
    with pytest.raises(ValueError, match="one of that name exists"):
        register("linear", type("Linear2", (LinearRegression,), {"kind": "linear"}))


def test_unknown_models_and_bad_parameters_are_one_line():
    with pytest.raises(UnknownNameError, match="unknown model 'nope'") as caught:
        build("nope")
    assert set(MODELS) <= set(caught.value.known)
    with pytest.raises(
        ParameterError, match=r"^model linear: LinearRegression\(\) takes no arguments"
    ):
        build("linear", {"hidden": [3]})

"""Fixtures of the figure-helper tests: a fresh matplotlib axis, closed afterwards."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest


@pytest.fixture
def axis():
    figure, axis = plt.subplots()
    yield axis
    plt.close(figure)

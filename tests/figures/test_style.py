"""Figures come out the same, byte for byte, whenever they are drawn from the same data."""

import matplotlib.pyplot as plt
import pytest
from PIL import Image

from gradcode.figures import style


def draw():
    figure, axis = plt.subplots(figsize=(3, 2))
    axis.plot([1, 2, 3], [3, 1, 2], marker="o", label="a line")
    axis.set_title("title")
    axis.legend()
    return figure


def test_setup_fixes_the_style():
    with plt.rc_context():
        plt.rcParams["savefig.dpi"] = 300
        style.setup()
        assert plt.rcParams["figure.dpi"] == 100
        assert plt.rcParams["savefig.dpi"] == 120
        assert plt.rcParams["font.size"] == 10
        assert plt.rcParams["axes.grid"] is True
        assert plt.rcParams["svg.hashsalt"] == "gradcode"


def test_save_is_reproducible_and_unstamped(tmp_path):
    with plt.rc_context():
        style.setup()
        first, second = tmp_path / "a" / "figure.png", tmp_path / "b" / "c" / "figure.png"
        figure = draw()
        style.save(figure, first)  # parent folders are created
        plt.close(figure)
        figure = draw()
        style.save(figure, str(second))
        plt.close(figure)
    assert first.read_bytes() == second.read_bytes()
    with Image.open(first) as image:
        assert image.format == "PNG"
        assert "Software" not in image.info
        assert image.info["dpi"] == pytest.approx((120, 120), abs=0.1)  # savefig.dpi

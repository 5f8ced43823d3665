"""One error family: bad input is a ``UserError`` (one line, exit 2); a bug keeps its traceback."""

from __future__ import annotations

import pytest

from gradcode import cli
from gradcode.analysis.registry import run_analysis
from gradcode.codes import build
from gradcode.data.errors import DataError, OptionError
from gradcode.data.registry import get as dataset
from gradcode.errors import CLIError, ParameterError, UnknownNameError, UserError
from gradcode.models import build as build_model
from gradcode.optim import Constant
from gradcode.optim import build as build_optimizer
from gradcode.runfile.config import ConfigError
from gradcode.sim.presets import preset
from gradcode.sim.spec import SpecError
from gradcode.timing import model_from_spec

LOOKUPS = {
    "scheme": lambda: build("nope"),
    "timing model": lambda: model_from_spec("nope", {}),
    "ML model": lambda: build_model("nope"),
    "optimizer": lambda: build_optimizer("nope", Constant(1.0)),
    "data set": lambda: dataset("nope"),
    "preset": lambda: preset("nope"),
    "analysis": lambda: run_analysis("nope", trials=1, seed=0),
}


@pytest.mark.parametrize("lookup", LOOKUPS.values(), ids=LOOKUPS.keys())
def test_unknown_names_raise_the_same_error_everywhere(lookup):
    with pytest.raises(UnknownNameError, match=r"unknown .* 'nope' \(available: .+\)") as caught:
        lookup()
    assert caught.value.name == "nope" and caught.value.known


def test_every_kind_of_bad_input_is_a_user_error_and_a_value_error():
    for kind in (ConfigError, SpecError, DataError, OptionError, CLIError, ParameterError):
        assert issubclass(kind, UserError) and issubclass(kind, ValueError)
    with pytest.raises(ParameterError, match=r"ye-abbe needs d >= s \+ m"):
        build("ye-abbe", n=4, d=3, s=2, m=2)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["codes", "verify", "ye-abbe", "--n", "4", "--d", "3", "--s", "2", "--m", "2"], "d >= s"),
        (["codes", "show", "nope"], "unknown scheme 'nope'"),
        (["simulate", "nope"], "nope"),
        (["analyze", "nope", "--out", "x.csv"], "unknown analysis 'nope'"),
    ],
)
def test_main_turns_user_errors_into_one_line_and_exit_2(capsys, argv, message):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradcode: error: ") and message in err and err.count("\n") == 1


def test_main_lets_a_bug_show_its_traceback(monkeypatch):
    def broken(*_):
        raise RuntimeError("a bug, not bad input")

    monkeypatch.setattr(cli, "cmd_codes_list", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["codes", "list"])

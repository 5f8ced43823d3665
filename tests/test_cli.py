import json

import pytest

from gradcode.cli import main, parse_scheme_params


def test_parse_scheme_params_reads_yaml_values():
    params = parse_scheme_params(["--n", "8", "--points=chebyshev", "--placement", "[[0, 1], [1]]"])
    assert params == {"n": 8, "points": "chebyshev", "placement": [[0, 1], [1]]}


@pytest.mark.parametrize(
    "tokens, message",
    [
        (["8"], "expected a scheme parameter"),
        (["--n"], "needs a value"),
        (["--n", "1", "--n", "2"], "twice"),
    ],
)
def test_parse_scheme_params_errors(tokens, message):
    from gradcode.cli import CLIError

    with pytest.raises(CLIError, match=message):
        parse_scheme_params(tokens)


def test_verify_json(capsys):
    assert main(["codes", "verify", "uncoded", "--n", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["patterns_checked"] == 1
    assert report["loads"] == [1] * 5 and report["message_fraction"] == 1.0


def test_verify_human_readable(capsys):
    assert main(["codes", "verify", "ignore-stragglers", "--n", "5", "--s", "1"]) == 0
    out = capsys.readouterr().out
    assert "patterns checked     5 of 5 (exhaustive)" in out and "PASS" in out


def test_bad_parameters_one_line_error(capsys):
    assert main(["codes", "verify", "uncoded", "--n", "0"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "gradcode: error: uncoded needs n >= 1 (got n=0)"


def test_unknown_scheme(capsys):
    assert main(["codes", "show", "nope", "--n", "3"]) == 2
    assert "unknown scheme 'nope'" in capsys.readouterr().err


def test_show_prints_assignment(capsys):
    assert main(["codes", "show", "uncoded", "--n", "3"]) == 0
    out = capsys.readouterr().out
    assert "W0   #.." in out and "encoding" in out


def test_list(capsys):
    assert main(["codes", "list"]) == 0
    assert "uncoded" in capsys.readouterr().out

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


def test_a_command_after_the_double_dash_is_never_parsed_as_arguments(monkeypatch):
    # cluster lose's NODE is optional (--rank R names it instead): the command's first word
    # after -- must not fill it
    from gradcode.cluster import cli as cluster_cli

    seen = []
    monkeypatch.setattr(cluster_cli, "cmd_lose", lambda args, rest: seen.append((args, rest)))
    main(["cluster", "lose", "--rank", "3", "--kill", "--after", "1", "--", "sleep", "--help"])
    [(args, rest)] = seen
    assert args.node is None and args.rank == 3 and rest == ["--", "sleep", "--help"]


def test_inject_refuses_a_node_loss(tmp_path, capsys):
    run = tmp_path / "run.yaml"
    run.write_text(
        "iterations: 3\n"
        "data: {dataset: synthetic-logistic, variant: small}\n"
        "model: {kind: logistic}\n"
        "optimizer: {kind: gd, step: 1.0}\n"
        "scheme: {name: frc, params: {n: 4, s: 1}}\n"
        "faults: {lose_node: {worker: 1, iteration: 2, how: kill}}\n"
    )
    assert main(["train", "inject", str(run), "--out", str(tmp_path), "--", "true"]) == 2
    assert "faults.lose_node loses a node of the emulated cluster" in capsys.readouterr().err

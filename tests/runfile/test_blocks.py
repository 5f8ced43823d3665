"""The run file read by block (``gradcode.runfile.blocks``): the parser's old import path still
gives every name, fingerprints are those the one-module parser wrote (checkpoints resume), the
cluster takes its word set without the parser, and no module of ``runfile`` is over 600
lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gradcode.runfile import config
from gradcode.runfile.blocks import adversaries, faults, network
from gradcode.runfile.config import ConfigError, parse_config

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "gradcode"
MAX_MODULE_LINES = 600
MINIMAL = {
    "iterations": 3,
    "data": {"dataset": "synthetic-logistic"},
    "model": {"kind": "logistic"},
    "scheme": {"name": "uncoded", "params": {"n": 4}},
    "optimizer": {"step": 1.0},
}

# computed on main at 68da34f, before the split (config.py whole)
FINGERPRINTS = {
    "minimal": ({}, "8e4ad52c10b6e1dc221c8cf26b54b17b0efe49daed60dba80d6fff21ddf9a369"),
    "old-form liars": (
        {"adversaries": {"workers": [1], "scale": 2.0}},
        "37ce9f4c75d051a3916bcd3d615d64676c8119ab1773c664ab8d1a7242444c59",
    ),
    "attack, aggregator": (
        {
            "adversaries": {
                "workers": [1],
                "attack": "reversed",
                "params": {"scale": 3.0},
                "caught": "drop",
            },
            "aggregator": {"name": "median", "below_tolerance": "continue"},
        },
        "ed9c92067d8d30073196d29d88c501aec457bdd28bd69da74d646090d297c533",
    ),
    "l2 per row, faults, runtime": (
        {
            "model": {"kind": "linear", "l2": "1/N"},
            "data": {"dataset": "synthetic-linear", "options": {"rows": 64}},
            "faults": {"kill": [{"worker": 2, "iteration": 1}]},
            "runtime": {"dilation": 2},
            "seed": 7,
        },
        "44c0a5408f9f799521c6851a9f64423ae1990cfb86a91da9c23878226de8dc35",
    ),
}


@pytest.mark.parametrize("case", sorted(FINGERPRINTS))
def test_fingerprints_are_those_written_before_the_split(case):
    extra, expected = FINGERPRINTS[case]
    assert parse_config({**MINIMAL, **extra}).fingerprint() == expected


def test_the_old_import_path_gives_the_blocks_own_objects():
    assert config.AdversaryConfig is adversaries.AdversaryConfig
    assert config.LinksConfig is network.LinksConfig
    assert (config.FaultEvent, config.NodeLoss) == (faults.FaultEvent, faults.NodeLoss)
    missing = [name for name in config.__all__ if not hasattr(config, name)]
    assert not missing


def test_an_error_inside_a_block_names_the_blocks_field():
    bad = {**MINIMAL, "faults": {"lose_node": {"worker": 1, "iteration": 2, "how": "melt"}}}
    with pytest.raises(ConfigError, match=r"^faults\.lose_node\.how: must be one of kill, link"):
        parse_config(bad)
    assert parse_config(
        {**MINIMAL, "faults": {"lose_node": {"worker": 1, "iteration": 2, "how": "link"}}}
    ).faults.lose_node == faults.NodeLoss(1, 2, "link")


def _runfile_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            # ``from gradcode.runfile import config`` takes the submodule
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found |= {name for name in names if name.startswith("gradcode.runfile")}
    return found


def test_the_cluster_does_not_import_the_parser_for_a_word():
    """The cluster's machinery needs word sets (``gradcode.runfile.words``), not the parser
    and the registries it imports."""
    parser = ("gradcode.runfile.config", "gradcode.runfile.blocks", "gradcode.runfile.section")
    taken = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in sorted((PACKAGE / "cluster").rglob("*.py"))
        for name in _runfile_imports(path)
        if name.startswith(parser)
    }
    assert not taken
    assert "gradcode.runfile.words" in _runfile_imports(PACKAGE / "cluster/faults/lose.py")


def test_no_runfile_module_is_over_the_limit():
    lengths = {
        path.relative_to(PACKAGE).as_posix(): len(path.read_text().splitlines())
        for path in sorted((PACKAGE / "runfile").rglob("*.py"))
    }
    assert not {name: n for name, n in lengths.items() if n > MAX_MODULE_LINES}
    assert "runfile/blocks/faults.py" in lengths

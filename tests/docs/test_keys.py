"""Every key documented: the workflow config's (config/README.md, generated from the schema)
and the run file's (docs/guide/run-file.md, checked against the parser)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradcode.runfile.config import ConfigError, parse_config

ROOT = Path(__file__).resolve().parents[2]
RUN_FILE_PAGE = ROOT / "docs" / "guide" / "run-file.md"
PROBE = "__probe__"
MINIMAL = {
    "iterations": 1,
    "data": {"dataset": "synthetic-logistic"},
    "model": {"kind": "logistic"},
    "scheme": {"name": "uncoded", "params": {"n": 2}},
    "optimizer": {"step": 1.0},
}


def test_config_readme_is_generated_from_the_schema():
    """Fails for a schema key without a description, or a README not regenerated."""
    script = ROOT / "workflow" / "scripts" / "config_readme.py"
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def _with(path: tuple[str, ...], value: object) -> dict:
    """MINIMAL with ``value`` at ``path`` (a key of a list's items written ``name[]``)."""
    raw = {key: dict(item) if isinstance(item, dict) else item for key, item in MINIMAL.items()}
    node = raw
    for key in path[:-1]:
        if key.endswith("[]"):
            node[key[:-2]] = [{}]
            node = node[key[:-2]][0]
        else:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
    node[path[-1]] = value
    return raw


def _allowed(path: tuple[str, ...]) -> list[str] | None:
    """The keys the parser allows in the mapping at ``path`` (None: not a mapping)."""
    for shape, label in (({PROBE: 1}, ""), ([{PROBE: 1}], "[0]")):
        try:
            parse_config(_with(path, shape) if path else {**MINIMAL, PROBE: 1})
        except ConfigError as error:
            text = str(error)
            where = ".".join(path) + label
            prefix = f"{where}.{PROBE}" if path else PROBE
            match = re.match(rf"{re.escape(prefix)}: unknown key \(allowed: (.*)\)$", text)
            if match:
                return match.group(1).split(", "), label
        if not path:
            break
    return None


def run_file_keys() -> set[str]:
    """Every key path the run-file parser accepts, found by asking it about unknown keys."""
    found: set[str] = set()
    pending: list[tuple[str, ...]] = [()]
    while pending:
        path = pending.pop()
        answer = _allowed(path)
        if answer is None:
            continue
        keys, label = answer
        for key in keys:
            child = (*path[:-1], path[-1] + "[]", key) if label else (*path, key)
            found.add(".".join(child))
            pending.append(child)
    return found


def test_the_run_file_reference_lists_every_key_the_parser_accepts():
    keys = run_file_keys()
    assert {"iterations", "faults.kill[].worker", "network.links.rate"} <= keys
    documented = set(re.findall(r"^\| `([a-z0-9_.\[\]]+)` \|", RUN_FILE_PAGE.read_text(), re.M))
    assert not keys - documented, f"undocumented run-file keys: {sorted(keys - documented)}"
    assert not documented - keys, f"documented but refused: {sorted(documented - keys)}"


@pytest.mark.parametrize("page", ["config/README.md", "docs/guide/run-file.md"])
def test_rates_use_the_one_grammar(page):
    """No `mbps`-style rate: bits as tc's `mbit`, bytes with an explicit `B/s` unit."""
    assert not re.search(r"\b\d+(\.\d+)?[kmg]bps\b", (ROOT / page).read_text())

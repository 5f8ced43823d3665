"""The code examples of the README and the guide run: every ```python block is executed, and
every `gradcode ...` line of a ```bash block is parsed by the real command line (every
subcommand and option must exist), and the README's cheap tour commands run for real.

A python block preceded by ``<!-- docs-test: skip (reason) -->`` is not run; the reason says
why. Such skips are few: ``test_skips_are_few`` counts them.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from gradcode.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(
    r"(<!-- docs-test: skip \((?P<why>[^)]*)\) -->\s*)?^ *```(?P<lang>\w+)\n(?P<body>.*?)^ *```",
    re.M | re.S,
)


def blocks(lang: str) -> list[tuple[str, str, str | None]]:
    found = []
    for page in PAGES:
        for match in FENCE.finditer(page.read_text()):
            if match.group("lang") == lang:
                body = "\n".join(
                    line[_indent(match.group("body")) :]
                    for line in match.group("body").splitlines()
                )
                found.append((page.relative_to(ROOT).as_posix(), body, match.group("why")))
    return found


def _indent(body: str) -> int:
    lines = [line for line in body.splitlines() if line.strip()]
    return min(len(line) - len(line.lstrip()) for line in lines) if lines else 0


PYTHON = blocks("python")


@pytest.mark.parametrize(("page", "code", "skip"), PYTHON, ids=[p for p, _, _ in PYTHON])
def test_python_examples_run(page, code, skip):
    if skip:
        pytest.skip(skip)
    exec(compile(code, page, "exec"), {"__name__": "__docs__"})


def gradcode_lines() -> list[tuple[str, str]]:
    found = []
    for page, body, _ in blocks("bash"):
        for line in body.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "gradcode":
                found.append((page, words))
    return found


def test_every_gradcode_command_in_the_docs_parses():
    parser = build_parser()
    lines = gradcode_lines()
    assert len(lines) > 30
    for page, words in lines:
        args = words[1 : words.index("--")] if "--" in words else words[1:]
        try:  # as gradcode.cli.main parses: what is left must be `--name value` parameters
            _, rest = parser.parse_known_args(args)
        except SystemExit as stop:
            raise AssertionError(f"{page}: {shlex.join(words)} does not parse") from stop
        names = rest[0::2]
        assert all(n.startswith("--") for n in names), f"{page}: {shlex.join(words)}: {rest}"


@pytest.mark.parametrize(
    "command",
    [
        "codes list",
        "codes verify ye-abbe --n 10 --d 5 --s 2 --m 3 --exhaustive",
        "codes show crc --n 6 --s 2",
        "simulate --list",
        "train check config/runs/smoke-frc.yaml",
    ],
)
def test_the_readme_tour_runs(command):
    assert f"gradcode {command}" in (ROOT / "README.md").read_text()
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, "-m", "gradcode", *shlex.split(command)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


def test_skips_are_few():
    assert sum(1 for _, _, skip in PYTHON if skip) <= 3

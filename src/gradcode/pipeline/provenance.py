"""Which config and commit drew a figure: the record the workflow writes beside it.

Rule ``figure`` runs, after its notebook has drawn the PNG::

    python -m gradcode.pipeline.provenance OUT.json --figure F --notebook NOTEBOOK.py \\
        [--config FILE ...] [--overrides JSON]

which writes ``paths.FIGURE_PROVENANCE``: the figure, its notebook, the config files in the
order they applied (the last one wins), the ``--config`` values given on the command line, the
commit of the checkout the notebook is in and whether its tracked files differed from it, the
time and gradcode's version. The config files are the rule's parameter (a figure asked for by
another config is drawn again, so its record names the config that drew it); the commit is
read here, in the job: Snakemake reruns a job whose parameters changed, so a commit parameter
would redraw every figure after every commit. The documentation site reads the records back
(``read_provenance``) to name the config and commit under each figure of the papers' pages
(``gradcode.pipeline.pages``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gradcode.atomic import write_json

PROGRAM = "python -m gradcode.pipeline.provenance"
#: how many hex digits of a commit a caption shows (the record keeps all 40)
SHORT_COMMIT = 12


@dataclass(frozen=True)
class Provenance:
    """What drew one figure; ``commit`` is None outside a git checkout (or without git)."""

    figure: str
    notebook: str
    config: tuple[str, ...]
    commit: str | None
    modified: bool
    drawn: str
    gradcode: str
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def config_text(self, name: Callable[[str], str] = str) -> str:
        """The config files as a reader wants them, the one that won first and the ones under
        it after (``config/smoke.yaml over config/config.yaml``), each file and the
        ``--config`` values written by ``name`` (a page sets them as code)."""
        if not self.config:
            return "no config file"
        *under, last = self.config
        text = name(last)
        if under:
            text += " over " + ", ".join(name(path) for path in reversed(under))
        if self.overrides:
            settings = " ".join(f"{key}={value}" for key, value in self.overrides.items())
            text += " with " + name(f"--config {settings}")
        return text

    def commit_text(self, name: Callable[[str], str] = str) -> str:
        """The commit's first digits (written by ``name``), and whether the tracked files
        differed from it."""
        if self.commit is None:
            return "an unknown commit (not drawn from a git checkout)"
        short = name(self.commit[:SHORT_COMMIT])
        return f"{short} with uncommitted changes" if self.modified else short


def current_commit(folder: str | Path) -> tuple[str | None, bool]:
    """The HEAD of the checkout ``folder`` is in and whether a tracked file differs from it;
    ``(None, False)`` outside a git checkout or without git. Untracked files do not count: results,
    scratch scripts and data sit in checkouts without changing what the code draws."""
    try:
        head = _git(folder, "rev-parse", "--verify", "HEAD")
        status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return None, False
    return head.strip(), bool(status.strip())


def _git(folder: str | Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def applied_config_files(
    loaded: Iterable[str | Path],
    given: Iterable[str | Path],
    replaced: bool,
    repository: str | Path,
) -> list[str]:
    """The config files of a Snakemake invocation in the order they applied: the Snakefile's
    ``configfile:`` when Snakemake read it (``loaded`` holds it then, after the ``given``
    ``--configfile`` ones) and unless ``--replace-workflow-config`` (``replaced``) dropped it,
    then the given ones, which override it. Each relative to ``repository`` when inside it."""
    root = Path(repository).resolve()
    given_paths = [Path(path).resolve() for path in given]
    default = [Path(path).resolve() for path in loaded]
    default = [] if replaced else [path for path in default if path not in given_paths]
    shown = []
    for path in [*default, *given_paths]:
        shown.append(path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path))
    return shown


def provenance_arguments(config_files: Sequence[str], overrides: Mapping[str, Any]) -> str:
    """The options after ``OUT --figure F --notebook N`` for this module, shell-quoted (rule
    ``figure``'s parameter, from ``workflow/rules/common.smk``)."""
    words = []
    for path in config_files:
        words += ["--config", path]
    if overrides:
        words += ["--overrides", json.dumps(dict(overrides), sort_keys=True, default=str)]
    return shlex.join(words)


def record(
    figure: str,
    notebook: str,
    config: Sequence[str],
    folder: str | Path,
    overrides: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> Provenance:
    """The provenance of ``figure`` drawn now by ``notebook`` from the code of the checkout
    ``folder`` is in."""
    from gradcode import __version__

    commit, modified = current_commit(folder)
    drawn = (now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")
    return Provenance(
        figure=figure,
        notebook=notebook,
        config=tuple(config),
        commit=commit,
        modified=modified,
        drawn=drawn,
        gradcode=__version__,
        overrides=dict(overrides or {}),
    )


def write_provenance(path: str | Path, provenance: Provenance) -> None:
    data = asdict(provenance)
    data["config"] = list(provenance.config)
    data["overrides"] = dict(provenance.overrides)
    write_json(path, data)


def read_provenance(path: str | Path) -> Provenance | None:
    """The record at ``path``; None when it is missing or not a record of this module (a
    figure drawn before the workflow wrote them, or a file damaged by hand)."""
    try:
        data = json.loads(Path(path).read_text())
        if not isinstance(data["config"], list):
            return None
        return Provenance(
            figure=str(data["figure"]),
            notebook=str(data["notebook"]),
            config=tuple(str(path) for path in data["config"]),
            commit=None if data["commit"] is None else str(data["commit"]),
            modified=bool(data["modified"]),
            drawn=str(data["drawn"]),
            gradcode=str(data["gradcode"]),
            overrides=dict(data.get("overrides") or {}),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROGRAM, description="Record which config and commit drew a figure."
    )
    parser.add_argument("out", help="the record to write (JSON)")
    parser.add_argument("--figure", required=True)
    parser.add_argument(
        "--notebook", required=True, help="the notebook's file (its checkout's commit is recorded)"
    )
    parser.add_argument("--config", action="append", default=[], help="a config file, in order")
    parser.add_argument("--overrides", default="{}", help="--config values, as a JSON object")
    args = parser.parse_args(argv)
    try:
        overrides = json.loads(args.overrides)
    except ValueError as error:
        parser.error(f"--overrides is not JSON: {error}")
    if not isinstance(overrides, dict):
        parser.error("--overrides is not a JSON object")
    notebook = Path(args.notebook).resolve()
    provenance = record(args.figure, notebook.stem, args.config, notebook.parent, overrides)
    write_provenance(args.out, provenance)
    print(f"{args.out}: config {provenance.config_text()}, commit {provenance.commit_text()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

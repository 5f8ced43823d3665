"""The main job as a new user runs it: a fresh clone of each commit given, the README's
main-job command exactly as printed there (venv, install, Snakemake), one commit after the
other; prints each one's wall and CPU seconds (the command's children, install included) and
Snakemake's table of where the time went.

``python benchmarks/main_job_as_new_user.py COMMIT [COMMIT ...] [--keep]``, from the checkout
whose history holds them. The environment is this process's, except that
``PYTHONDONTWRITEBYTECODE`` is 1 unless ``--cache-bytecode`` (this sandbox's environment sets
it, as a new user here has it) and ``GRADCODE_DATA_DIR`` is unset (the stand-in data sets,
as offline). Each clone is removed afterwards unless ``--keep``. Compare commits by ratios
measured in one invocation: machines differ two-fold between sessions.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gradcode.data.location import DATA_DIR_ENV
from gradcode.pipeline import bytecode

ROOT = Path(__file__).resolve().parents[1]
#: the fenced command right after the README's "Run the main job" line
COMMAND = re.compile(r"^Run the main job.*?\n```bash\n(.+?)\n```", re.MULTILINE | re.DOTALL)


def readme_command(readme: Path) -> str:
    """The README's main-job command; ``SystemExit`` naming the file when it has none."""
    found = COMMAND.search(readme.read_text())
    if found is None:
        raise SystemExit(f"{readme}: no fenced command after 'Run the main job'")
    return found.group(1).strip()


def run_one(commit: str, cache_bytecode: bool, keep: bool) -> dict[str, object]:
    """Clone ``commit``, run its README's command there; its seconds and status."""
    scratch = Path(tempfile.mkdtemp(prefix="gradcode-new-user-"))
    clone = scratch / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", commit], check=True)
    command = readme_command(clone / "README.md")
    env = {k: v for k, v in os.environ.items() if k not in (DATA_DIR_ENV, bytecode.VARIABLE)}
    if not cache_bytecode:
        env[bytecode.VARIABLE] = "1"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    with open(scratch / "main-job.log", "w") as log:
        status = subprocess.run(
            ["bash", "-c", command], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT
        ).returncode
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    table = clone / "results" / "logs" / "rule-times.md"
    result = {
        "commit": commit,
        "status": status,
        "wall": round(wall, 1),
        "cpu": round(cpu, 1),
        "rule_times": table.read_text()
        if table.is_file()
        else f"(no {table.relative_to(clone)}: "
        + ("the job failed)\n" if status else "this commit's workflow writes none)\n"),
        "folder": str(scratch),
    }
    if not keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commits", nargs="+")
    parser.add_argument("--cache-bytecode", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep each clone and its results")
    args = parser.parse_args(argv)
    results = [run_one(commit, args.cache_bytecode, args.keep) for commit in args.commits]
    for result in results:
        where = f", in {result['folder']}" if args.keep else ""
        print(f"== {result['commit']}: status {result['status']}, {result['wall']} s wall,")
        print(f"   {result['cpu']} CPU-seconds{where}")
        print(result["rule_times"], end="")
    first = results[0]["wall"]
    for result in results[1:]:
        print(f"{result['commit']} / {results[0]['commit']}: {result['wall'] / first:.3f}")
    return max(int(result["status"]) for result in results)


if __name__ == "__main__":
    sys.exit(main())

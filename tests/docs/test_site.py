"""The documentation site builds with warnings as errors, and every internal link resolves.

mkdocs.yml sets ``strict`` and ``validation`` (links, anchors, nav): a broken link, a missing
anchor or a page outside the nav fails the build. The README is not part of the site, so its
relative links are checked here. Needs the ``docs`` extra; in CI (``CI=true``) its absence is
a failure, elsewhere a skip.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.smokes import leave_to_the_smokes

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _require_docs_extra() -> None:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocs_gen_files"):
        try:
            __import__(module)
        except ImportError:
            if os.environ.get("CI") == "true":
                raise
            pytest.skip(f"{module} not installed: pip install -e '.[docs]'")


def test_the_site_builds_strictly(tmp_path):
    """Built as a clean clone is (no run's results), whatever this checkout's results/ holds.
    CI builds it once, from its smoke run's results, with the same checks
    (.ci/workflow-smoke); a site without results is test_paper_figures.py's."""
    leave_to_the_smokes("the workflow smoke builds the site strictly and opens every page")
    _require_docs_extra()
    env = os.environ | {
        "NO_MKDOCS_2_WARNING": "1",
        "DISABLE_MKDOCS_2_WARNING": "true",
        "GRADCODE_RESULTS_DIR": str(tmp_path / "no-results"),
    }
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # not -q: mkdocs counts strict mode's warnings only when it logs them
    assert "WARNING" not in result.stderr, result.stderr
    pages = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("*")}
    assert "reference/codes/base/index.html" in pages  # the API reference was generated
    assert "papers/000-ye-abbe/index.html" in pages
    for page in sorted((tmp_path / "site" / "papers").glob("0*/index.html")):
        assert page.read_text().count("No figures yet") == 1, page  # one line, no broken image
    _looked_at_in_a_browser(tmp_path / "site")


def _looked_at_in_a_browser(site: Path) -> None:
    """Debian's headless Chromium opens every page but the API reference's module pages (all
    alike; their folders' index pages stay): every image loads, no console error, nothing
    fetched from elsewhere. 16 s for the 77 pages left; all 235 took 51 s (2026-11-27, two
    cores)."""
    if shutil.which("chromium") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no chromium on PATH (.ci/run installs it)")
        pytest.skip("no chromium on PATH (apt-get install -y chromium)")
    from tests.browser.check_page import main

    assert main([str(site), "--skip", "reference/*/*/index.html"]) == 0


def test_the_readme_is_short_and_its_links_resolve():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README.md links to a missing {target}"

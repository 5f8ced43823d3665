"""The paper pages show a run's figures, captioned with the config and commit that drew them.

A small site is built strictly in a temporary folder: stand-in paper pages (one per page of
the figure registry's ``pages``) and the real ``docs/scripts/gen_paper_results.py`` under the
real ``mkdocs.yml``'s theme, Markdown extensions and link validation, against a results folder
named by ``GRADCODE_RESULTS_DIR`` (a few seconds, where the whole site takes a minute:
``test_site.py`` builds that one). Needs the ``docs`` extra; in CI its absence is a failure.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import yaml

from gradcode.pipeline.figures import load_registry
from gradcode.pipeline.pages import markdown_text, provenance_sentence
from gradcode.pipeline.provenance import Provenance, write_provenance

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = load_registry(
    ROOT / "workflow" / "figures.yaml", ROOT / "workflow" / "schemas" / "figures.schema.yaml"
)
PAGES = sorted(set(REGISTRY["pages"].values()))
COMMIT = "0123456789abcdef0123456789abcdef01234567"
NO_FIGURES = "No figures yet"


def _require_docs_extra() -> None:
    for module in ("mkdocs", "material", "mkdocs_gen_files"):
        try:
            __import__(module)
        except ImportError:
            if os.environ.get("CI") == "true":
                raise
            pytest.skip(f"{module} not installed: pip install -e '.[docs]'")


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid PNG of one colour (the standard library's zlib is all it takes)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _build(tmp_path: Path, results: Path) -> dict[str, str]:
    """The small site built strictly against ``results``: page -> its HTML."""
    _require_docs_extra()
    docs = tmp_path / "docs"
    for page in PAGES:
        (docs / "papers").mkdir(parents=True, exist_ok=True)
        (docs / "papers" / f"{page}.md").write_text(f"# Page {page}\n")
    (docs / "guide").mkdir()
    (docs / "guide" / "workflow.md").write_text("# Workflow\n\n## Figures on the paper pages\n")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    for key in ("nav", "exclude_docs", "repo_name"):
        config.pop(key, None)
    config |= {
        "docs_dir": str(docs),
        "plugins": [{"gen-files": {"scripts": [str(ROOT / "docs/scripts/gen_paper_results.py")]}}],
    }
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    site = tmp_path / "site"
    env = os.environ | {
        "GRADCODE_RESULTS_DIR": str(results),
        "NO_MKDOCS_2_WARNING": "1",
        "DISABLE_MKDOCS_2_WARNING": "true",
    }
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml", "-d", "site"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    folder = site / "papers"
    return {
        page: (folder / ("index.html" if page == "index" else f"{page}/index.html")).read_text()
        for page in PAGES
    }


def test_the_pages_show_the_runs_figures_with_the_config_and_commit(tmp_path):
    figures = tmp_path / "run" / "results" / "figures"
    figures.mkdir(parents=True)
    table3 = _png(40, 30, (200, 40, 40))
    (figures / "ye_abbe_table3.png").write_bytes(table3)
    config = ("config/config.yaml", "config/smoke.yaml")
    drawn = "2026-11-27T10:00:00+00:00"
    record = Provenance("ye_abbe_table3", "ye_abbe_table3", config, COMMIT, False, drawn, "0.1.0")
    write_provenance(figures / "ye_abbe_table3.json", record)
    # drawn before the workflow recorded provenance: shown, and said so
    (figures / "stability.png").write_bytes(_png(40, 30, (40, 40, 200)))
    html = _build(tmp_path, figures.parent)

    ye_abbe = html["000-ye-abbe"]
    assert (
        '<a href="../figures/ye_abbe_table3.png"><img alt="Figure ye_abbe_table3" src="../fi'
        in (ye_abbe)
    )
    assert (tmp_path / "site" / "papers" / "figures" / "ye_abbe_table3.png").read_bytes() == table3
    caption = ye_abbe[ye_abbe.index("<figcaption>") : ye_abbe.index("</figcaption>")]
    assert (
        "Drawn by config <code>config/smoke.yaml</code> over <code>config/config.yaml</code>"
        in (caption)
    )
    assert f"at commit <code>{COMMIT[:12]}</code> on 2026-11-27 10:00:00 UTC" in caption
    assert "Expected total time per iteration" in caption  # what it shows, from captions.yaml
    # beside its rows; the notebooks of the page whose figures the run did not draw say so
    assert ye_abbe.index("</figcaption>") < ye_abbe.index("<table>", ye_abbe.index("<figure"))
    assert "Not drawn by this run: <code>ye_abbe_fig3</code>" in ye_abbe
    assert NO_FIGURES not in ye_abbe

    binary = html["003-binary"]
    assert 'src="../figures/stability.png"' in binary
    assert "Config and commit not recorded" in binary
    for page in ("001-coded-reduce", "002-gc-mmc", "004-heterogeneous", "index"):
        assert html[page].count(NO_FIGURES) == 1 and "<img" not in html[page], page


def test_without_results_every_page_says_so_in_one_line_and_the_strict_build_passes(tmp_path):
    html = _build(tmp_path, tmp_path / "nothing-here")
    for page, text in html.items():
        assert text.count(NO_FIGURES) == 1, page
        assert "<img" not in text and "<figure" not in text, page
        assert "<table>" in text, page  # the comparison rows are there all the same
    assert not (tmp_path / "site" / "papers" / "figures").exists()


def test_caption_prose_is_literal_markdown():
    assert markdown_text("E[T_tot] at *d* <= 4 | `m`") == (r"E\[T\_tot\] at \*d\* &lt;= 4 \| \`m\`")
    assert "not recorded" in provenance_sentence(None)

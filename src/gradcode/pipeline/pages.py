"""The figures a run drew, found for the documentation's paper pages and captioned.

The site's build (``docs/scripts/gen_paper_results.py``) shows on each paper's page the figures
of its notebooks, beside their comparison rows: the figure registry (``workflow/figures.yaml``)
says which notebook draws which figure and on which page a notebook's figures go (``pages``);
the figures are looked for in a results folder, ``results/`` of the checkout unless
``GRADCODE_RESULTS_DIR`` names another (a run made elsewhere: CI's smoke run, a cluster's),
and each is captioned with the config and commit its provenance record names
(``gradcode.pipeline.provenance``). A page none of whose figures exist says so in one line
instead of showing a broken image.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.pipeline import paths
from gradcode.pipeline.figures import registered_figures
from gradcode.pipeline.provenance import Provenance, read_provenance

#: environment variable naming the results folder whose figures the site shows
RESULTS_DIR_ENV = "GRADCODE_RESULTS_DIR"


def results_dir(checkout: str | Path) -> Path:
    """The folder ``GRADCODE_RESULTS_DIR`` names, else the checkout's ``results/``."""
    named = os.environ.get(RESULTS_DIR_ENV)
    return Path(named) if named else Path(checkout) / paths.RESULTS


def _under(results: Path, template: str, figure: str) -> Path:
    """``template``'s path for ``figure`` inside ``results`` instead of ``results/``."""
    return results / Path(paths.fill(template, figure)).relative_to(paths.RESULTS)


@dataclass(frozen=True)
class DrawnFigure:
    """A figure found in a results folder; ``provenance`` None when no record is beside it
    (drawn before the workflow wrote them)."""

    figure: str
    notebook: str
    png: Path
    provenance: Provenance | None


def drawn_figures(registry: Mapping[str, Any], results: Path) -> dict[str, list[DrawnFigure]]:
    """Notebook -> the figures of it that ``results`` holds, in the registry's order."""
    found: dict[str, list[DrawnFigure]] = {}
    for figure, notebook in registered_figures(registry).items():
        png = _under(results, paths.FIGURE, figure)
        if png.is_file() and png.stat().st_size > 0:
            record = read_provenance(_under(results, paths.FIGURE_PROVENANCE, figure))
            found.setdefault(notebook, []).append(DrawnFigure(figure, notebook, png, record))
    return found


def notebook_figures(registry: Mapping[str, Any]) -> dict[str, list[str]]:
    """Notebook -> every figure the registry has it draw, in order."""
    figures: dict[str, list[str]] = {}
    for figure, notebook in registered_figures(registry).items():
        figures.setdefault(notebook, []).append(figure)
    return figures


#: characters Python-Markdown reads as markup in running text, escaped in free text
_MARKUP = re.compile(r"([\\`*_{}\[\]()#+!|])")


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown inside HTML (a caption's free prose)."""
    return _MARKUP.sub(r"\\\1", html.escape(" ".join(text.split()), quote=False))


def provenance_sentence(record: Provenance | None) -> str:
    """The caption's Markdown sentence naming the config and commit that drew a figure."""
    if record is None:
        return (
            "Config and commit not recorded: drawn before the workflow wrote them beside"
            " each figure (run the workflow again to record them)."
        )
    drawn = record.drawn.replace("T", " ").replace("+00:00", " UTC")
    return (
        f"Drawn by config {record.config_text(_code)} at commit {record.commit_text(_code)}"
        f" on {drawn} (gradcode {record.gradcode})."
    )


def _code(text: str) -> str:
    return f"`{text}`"


def figure_markdown(drawn: DrawnFigure, image: str, shows: str | None) -> str:
    """A figure on a page (``md_in_html``): the image at the page-relative link ``image``,
    linked to itself (the column shrinks it; a click shows it whole), under it its name, what
    it shows (the report's caption, ``shows``) and its provenance."""
    what = f" {markdown_text(shows)}" if shows else ""
    return "\n".join(
        [
            # not indented: an indented image line in a span gets a <br> after it
            '<figure markdown="span">',
            f"[![Figure {drawn.figure}]({image})]({image})",
            f'<figcaption markdown="span">**`{drawn.figure}`**:{what}'
            f" {provenance_sentence(drawn.provenance)}</figcaption>",
            "</figure>",
            "",
        ]
    )


def where(results: Path, checkout: str | Path) -> str:
    """``results`` as a page names it: relative to the checkout when inside it."""
    folder, root = results.resolve(), Path(checkout).resolve()
    return folder.relative_to(root).as_posix() if folder.is_relative_to(root) else str(folder)


def no_figures_line(results: Path, checkout: str | Path, how: str) -> str:
    """The one visible line of a page none of whose figures a results folder holds; ``how``
    links to where the figures' source is explained."""
    return (
        f"**No figures yet**: `{where(results, checkout)}` holds none of this page's figures."
        " Run the workflow (`snakemake`), or set `GRADCODE_RESULTS_DIR` to a run's results"
        f" folder, and build the site again ([how]({how})).\n"
    )


def missing_line(figures: list[str]) -> str:
    """The line of a notebook whose figures the run did not draw."""
    names = ", ".join(f"`{figure}`" for figure in figures)
    return f"*Not drawn by this run: {names}.*\n"

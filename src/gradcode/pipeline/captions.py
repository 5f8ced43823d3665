"""The report's figure captions: what each figure shows, the paper item, how it was obtained.

Captions are data (``workflow/report/captions.yaml``, checked against its JSON schema), one per
figure name, so that one notebook drawing several figures still gives each its own. The
workflow passes ``Caption.text`` to the report (rule ``figure``'s ``caption`` parameter,
rendered by ``workflow/report/figure.rst``); for figures drawn from training runs it adds which
data set every run trained on, since only the workflow knows whether a stand-in replaced it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import jsonschema

from gradcode.pipeline import paths
from gradcode.pipeline.stand_ins import STAND_INS
from gradcode.yamlfile import read_yaml

#: characters with a meaning in reStructuredText inline markup, escaped in free text
_RST_MARKUP = "\\*`_|[]<>"


class CaptionError(ValueError):
    """The captions file does not match its schema or the figures."""


def rst_text(text: str) -> str:
    """``text`` as literal reStructuredText (no emphasis, references or substitutions)."""
    return "".join(f"\\{char}" if char in _RST_MARKUP else char for char in text)


@dataclass(frozen=True)
class Caption:
    shows: str
    paper: str
    obtained: tuple[str, ...]
    data: str

    def text(self, figure: str, notebook: str, trained_on: Mapping[str, tuple[str, str]]) -> str:
        """The caption of ``figure`` drawn by ``notebook`` as reStructuredText;
        ``trained_on``: run id -> (data set its run file asks for, data set it trained on)."""
        data = self.data.rstrip(".") + "."
        if trained_on:
            data += " " + trained_on_sentence(trained_on)
        paragraphs = [
            f"**{rst_text(figure)}**: {rst_text(self.shows)}",
            f"**Reproduces**: {rst_text(self.paper)}.",
            f"**Obtained by**: {rst_text(', '.join(self.obtained))}.",
            f"**Data**: {rst_text(data)}",
            f"Drawn by ``workflow/notebooks/{notebook}.py`` (executed copy in"
            f" ``{paths.fill(paths.FIGURE_NOTEBOOK, figure)}``); its numbers beside the paper's"
            " are in the comparison table.",
        ]
        return "\n\n".join(paragraphs)


def trained_on_sentence(trained_on: Mapping[str, tuple[str, str]]) -> str:
    """One sentence per data set the runs trained on, a stand-in said loudly."""
    groups = Counter(trained_on.values())
    sentences = []
    for (asked, actual), count in sorted(groups.items()):
        runs = f"{count} run{'s' if count > 1 else ''}"
        if actual != asked:
            sentences.append(
                f"STAND-IN DATA: {runs} trained on {actual}, the labelled stand-in for {asked},"
                f" whose raw files were absent."
            )
        elif actual in STAND_INS.values():
            sentences.append(f"STAND-IN DATA: {runs} trained on {actual}, as the run file asks.")
        elif actual in STAND_INS:
            sentences.append(f"{runs.capitalize()} trained on the real {actual} files.")
        else:
            sentences.append(f"{runs.capitalize()} trained on {actual}.")
    return " ".join(sentences)


def load_captions(path: str | Path, schema: str | Path) -> dict[str, Caption]:
    """The captions at ``path``, validated by ``schema``; ``CaptionError`` naming the key."""
    document = read_yaml(path, CaptionError)
    try:
        jsonschema.validate(document, read_yaml(schema, CaptionError))
    except jsonschema.ValidationError as error:
        where = ".".join(str(part) for part in error.absolute_path) or "(top)"
        raise CaptionError(f"{Path(path).name}: {where}: {error.message}") from None
    captions = {
        figure: Caption(
            shows=entry["shows"].strip(),
            paper=entry["paper"].strip(),
            obtained=tuple(entry["obtained"]),
            data=entry["data"].strip(),
        )
        for figure, entry in document.items()
    }
    _check_distinct(captions, Path(path).name)
    return captions


def _check_distinct(captions: Mapping[str, Caption], name: str) -> None:
    seen: dict[str, str] = {}
    for figure, caption in captions.items():
        if caption.shows in seen:
            raise CaptionError(
                f"{name}: {figure}.shows is the same as {seen[caption.shows]}.shows:"
                " every figure needs a caption of its own"
            )
        seen[caption.shows] = figure


def check_captions(captions: Mapping[str, Caption], figures: Iterable[str]) -> None:
    """``CaptionError`` naming every figure of ``figures`` without a caption."""
    missing = sorted(set(figures) - set(captions))
    if missing:
        raise CaptionError(
            f"workflow/report/captions.yaml: no caption for figures {missing}"
            " (what each shows, the paper item, how obtained, its data)"
        )

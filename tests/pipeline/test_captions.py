"""Every figure and table of the report has a caption of its own that renders cleanly."""

from __future__ import annotations

import re
from pathlib import Path

import docutils.core
import pytest
import yaml

from gradcode.pipeline import paths
from gradcode.pipeline.captions import (
    Caption,
    CaptionError,
    check_captions,
    load_captions,
    trained_on_sentence,
)
from gradcode.pipeline.figures import load_registry

ROOT = Path(__file__).resolve().parents[2]
CAPTIONS = ROOT / "workflow" / "report" / "captions.yaml"
SCHEMA = ROOT / "workflow" / "schemas" / "captions.schema.yaml"
REGISTRY = load_registry(
    ROOT / "workflow" / "figures.yaml", ROOT / "workflow" / "schemas" / "figures.schema.yaml"
)
RULES = sorted((ROOT / "workflow" / "rules").glob("*.smk"))


def registered_figures() -> dict[str, str]:
    """Every figure the registry can draw -> its notebook."""
    figures = {name: name for name in REGISTRY["figures"]}
    figures |= {name: name for name in REGISTRY.get("cluster", {})}
    figures |= {REGISTRY["training"]: REGISTRY["training"]}
    figures |= {REGISTRY["simulations"]: REGISTRY["simulations"]}
    for entries in REGISTRY["experiments"].values():
        figures |= {entry["figure"]: entry["notebook"] for entry in entries}
    return figures


def report_captions() -> dict[str, str]:
    """Each ``report(...)`` output of the rules -> its caption file's text."""
    found = {}
    for rule_file in RULES:
        text = rule_file.read_text()
        pattern = r"report\(\s*(\"[^\"]+\"|paths\.[A-Z_]+),\s*caption=\"([^\"]+)\""
        for match in re.finditer(pattern, text):
            output = match.group(1)
            # an output named in gradcode.pipeline.paths, or (the rules of old) spelled out
            path = getattr(paths, output[6:]) if output.startswith("paths.") else output[1:-1]
            found[path] = (rule_file.parent / match.group(2)).resolve().read_text()
    return found


def rendered(rst: str) -> str:
    """``rst`` as HTML, failing on any docutils warning (as Snakemake's report renders it)."""
    return docutils.core.publish_parts(
        rst, writer="html", settings_overrides={"halt_level": 2, "report_level": 2}
    )["body"]


def test_every_registered_figure_has_a_caption_and_every_caption_a_figure():
    captions = load_captions(CAPTIONS, SCHEMA)
    check_captions(captions, registered_figures())
    assert set(captions) == set(registered_figures())


def test_a_figure_without_a_caption_is_named():
    captions = load_captions(CAPTIONS, SCHEMA)
    with pytest.raises(CaptionError, match=r"no caption for figures \['new_figure'\]"):
        check_captions(captions, [*registered_figures(), "new_figure"])


def test_no_two_captions_are_alike_figures_and_tables():
    captions = load_captions(CAPTIONS, SCHEMA)
    texts = [
        captions[figure].text(figure, notebook, {})
        for figure, notebook in registered_figures().items()
    ]
    texts += list(report_captions().values())
    assert len(texts) == len(set(texts))
    shows = [caption.shows for caption in captions.values()]
    assert len(shows) == len(set(shows)), "two figures show the same thing"


def test_every_table_in_the_report_has_its_own_caption():
    tables = {path: text for path, text in report_captions().items() if not path.endswith(".png")}
    assert tables, "the report has a table (results/tables/comparison.csv)"
    for path, text in tables.items():
        assert "snakemake.wildcards" not in text, f"{path}: a caption shared by a wildcard"
        rendered(text)


def test_the_figure_rule_takes_its_caption_from_the_captions_file():
    (figure_caption,) = [t for p, t in report_captions().items() if p.endswith("{figure}.png")]
    assert "snakemake.params.caption" in figure_caption


@pytest.mark.parametrize("figure", sorted(registered_figures()))
def test_each_caption_says_what_paper_item_how_obtained_and_renders(figure):
    caption = load_captions(CAPTIONS, SCHEMA)[figure]
    html = rendered(caption.text(figure, registered_figures()[figure], {}))
    assert "Reproduces" in html and "Obtained by" in html and "Data" in html
    assert figure in html


def test_stand_in_data_is_said_in_the_caption():
    sentence = trained_on_sentence(
        {"a": ("amazon", "amazon-standin"), "b": ("amazon", "amazon-standin")}
    )
    assert sentence == (
        "STAND-IN DATA: 2 runs trained on amazon-standin, the labelled stand-in for amazon,"
        " whose raw files were absent."
    )
    assert trained_on_sentence({"a": ("amazon", "amazon")}) == (
        "1 run trained on the real amazon files."
    )
    assert "STAND-IN" in trained_on_sentence({"a": ("gisette-standin", "gisette-standin")})
    assert trained_on_sentence({"a": ("synthetic-logistic", "synthetic-logistic")}) == (
        "1 run trained on synthetic-logistic."
    )
    caption = Caption("shows a_ *thing*", "paper 000, Table 3", ("simulation",), "x")
    html = rendered(caption.text("f", "f", {"a": ("amazon", "amazon-standin")}))
    assert "STAND-IN DATA" in html and "a_ *thing*" in html


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"obtained": ["guessed"]}, r"stability\.obtained\.0"),
        ({"extra": "x"}, r"stability: Additional properties"),
        ({"paper": None}, r"stability\.paper"),
    ],
)
def test_the_schema_names_the_bad_key(tmp_path, change, message):
    document = yaml.safe_load(CAPTIONS.read_text())
    document["stability"] = {**document["stability"], **change}
    path = tmp_path / "captions.yaml"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(CaptionError, match=message):
        load_captions(path, SCHEMA)


def test_two_figures_showing_the_same_are_refused(tmp_path):
    document = yaml.safe_load(CAPTIONS.read_text())
    document["berrut_error"] = dict(document["stability"])
    path = tmp_path / "captions.yaml"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(CaptionError, match=r"(berrut_error|stability)\.shows is the same as"):
        load_captions(path, SCHEMA)

"""Append to each paper's page the figures a run drew and the comparison rows of its notebooks.

Each page (``docs/papers/<page>.md``) gets one section per notebook the figure registry places
on it (``workflow/figures.yaml``, ``pages``): the notebook's figures as a run drew them, each
captioned with what it shows and the config and commit that drew it
(``gradcode.pipeline.pages``), then its comparison rows. The figures come from the checkout's
``results/`` or the folder ``GRADCODE_RESULTS_DIR`` names, and are copied into the site; a
page none of whose figures exist says so in one line.

Every figure notebook (``workflow/notebooks/*.py``) writes its rows of
``results/tables/comparison.csv`` with ``Comparison(paper, item, quantity, paper_value,
reproduced, kind, note)`` calls. This script reads those calls with ``ast`` (nothing is run):
the paper's side (item, quantity, paper value) is committed in the notebook, the reproduced
side is computed by the run, so the page shows the expression that computes it. A notebook
without a page fails the build (``check_notebooks``), so a new notebook cannot go
undocumented.
"""

import ast
from pathlib import Path

import mkdocs_gen_files

from gradcode.pipeline import pages as figure_pages
from gradcode.pipeline.captions import load_captions
from gradcode.pipeline.figures import check_notebooks, load_registry

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "workflow"
NOTEBOOKS = WORKFLOW / "notebooks"
FIELDS = ("paper", "item", "quantity", "paper_value", "reproduced", "kind", "note")
#: where the figures go in the site, beside the pages (a page links them as figures/NAME.png)
FIGURES = "papers/figures"
#: the guide's section on the figures' source, from a paper's page
HOW = "../guide/workflow.md#figures-on-the-paper-pages"


def constants(tree: ast.Module) -> dict[str, object]:
    """Module-level names bound to literals (``kind = "simulation"``, ``a, b = "x", "y"``)."""
    found: dict[str, object] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        pairs = [(target, value)]
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            pairs = list(zip(target.elts, value.elts, strict=False))
        for name, expr in pairs:
            if isinstance(name, ast.Name) and isinstance(expr, ast.Constant):
                found[name.id] = expr.value
    return found


def show(expr: ast.expr | None, names: dict[str, object]) -> str:
    """A cell: the literal where the notebook commits one, else the expression, as code."""
    if expr is None:
        return ""
    if isinstance(expr, ast.Constant):
        return str(expr.value)
    if isinstance(expr, ast.Name) and expr.id in names:
        return str(names[expr.id])
    text = ast.unparse(expr)
    text = text if len(text) <= 60 else text[:57] + "..."
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def rows(path: Path) -> list[dict[str, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = constants(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Comparison":
            args: dict[str, ast.expr] = dict(zip(FIELDS, node.args, strict=False))
            args.update({k.arg: k.value for k in node.keywords if k.arg})
            found.append({field: show(args.get(field), names) for field in FIELDS})
    return found


def cell(text: str) -> str:
    return text.replace("\n", " ").replace("|", "\\|") if not text.startswith("`") else text


def rows_table(notebook: str) -> list[str]:
    found = rows(NOTEBOOKS / f"{notebook}.py")
    lines = [
        "| item | quantity | paper | kind | reproduced (computed by the run) |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {cell(r['item'])} | {cell(r['quantity'])} | {cell(r['paper_value'])} "
        f"| {cell(r['kind'])} | {r['reproduced']} |"
        for r in found
    ]
    return lines


def figures_of(
    notebook: str,
    drawn: dict[str, list[figure_pages.DrawnFigure]],
    registered: dict[str, list[str]],
    shows: dict[str, str],
) -> list[str]:
    """The notebook's figures as the run drew them (each copied into the site), and a line
    naming those of its figures the run did not draw."""
    lines = []
    for figure in drawn.get(notebook, []):
        with mkdocs_gen_files.open(f"{FIGURES}/{figure.figure}.png", "wb") as handle:
            handle.write(figure.png.read_bytes())
        image = f"figures/{figure.figure}.png"
        lines.append(figure_pages.figure_markdown(figure, image, shows.get(figure.figure)))
    present = {figure.figure for figure in drawn.get(notebook, [])}
    missing = [figure for figure in registered.get(notebook, []) if figure not in present]
    if missing:
        lines.append(figure_pages.missing_line(missing))
    return lines


def page_section(
    notebooks: list[str],
    results: Path,
    drawn: dict[str, list[figure_pages.DrawnFigure]],
    registered: dict[str, list[str]],
    shows: dict[str, str],
) -> str:
    """A page's section: per notebook its figures, then its rows; a page without a single
    figure in ``results`` says so once instead of once per notebook."""
    any_drawn = any(drawn.get(notebook) for notebook in notebooks)
    where = figure_pages.where(results, ROOT)
    text = [
        "",
        "## Figures and comparison rows",
        "",
        (
            f"The figures come from the run in `{where}`, each captioned with the config and"
            " commit that drew it (another run's results folder: `GRADCODE_RESULTS_DIR`, see"
            f" [the workflow]({HOW})). "
            if any_drawn
            else ""
        )
        + "The rows are generated at build time from the notebooks' `Comparison(...)` calls:"
        " the paper's side as committed, the reproduced side as the expression the run"
        " evaluates (its value is in the run's `tables/comparison.csv` and the report).",
        "",
    ]
    if not any_drawn:
        text.append(figure_pages.no_figures_line(results, ROOT, HOW))
    for notebook in notebooks:
        text += [f"### Notebook `{notebook}`", ""]
        if any_drawn:
            text += figures_of(notebook, drawn, registered, shows)
        text += [*rows_table(notebook), ""]
    return "\n".join(text)


registry = load_registry(WORKFLOW / "figures.yaml", WORKFLOW / "schemas" / "figures.schema.yaml")
try:
    check_notebooks(registry, [path.stem for path in NOTEBOOKS.glob("*.py")])
except ValueError as error:
    raise SystemExit(f"docs/scripts/gen_paper_results.py: {error}") from None
captions = load_captions(
    WORKFLOW / "report" / "captions.yaml", WORKFLOW / "schemas" / "captions.schema.yaml"
)
results = figure_pages.results_dir(ROOT)
drawn = figure_pages.drawn_figures(registry, results)
registered = figure_pages.notebook_figures(registry)
shows = {figure: caption.shows for figure, caption in captions.items()}
by_page: dict[str, list[str]] = {}
for notebook, page in registry["pages"].items():
    by_page.setdefault(page, []).append(notebook)
for page, notebooks in by_page.items():
    section = page_section(notebooks, results, drawn, registered, shows)
    with mkdocs_gen_files.open(f"papers/{page}.md", "a") as handle:
        handle.write(section)

"""Append to each paper's page the comparison rows its notebooks write, read from their source.

Every figure notebook (``workflow/notebooks/*.py``) writes its rows of
``results/tables/comparison.csv`` with ``Comparison(paper, item, quantity, paper_value,
reproduced, kind, note)`` calls. This script reads those calls with ``ast`` (nothing is run):
the paper's side (item, quantity, paper value) is committed in the notebook, the reproduced
side is computed by the run, so the page shows the expression that computes it. A notebook
missing from ``NOTEBOOK_PAGE`` fails the build, so a new notebook cannot go undocumented.
"""

import ast
from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "workflow" / "notebooks"
FIELDS = ("paper", "item", "quantity", "paper_value", "reproduced", "kind", "note")

# notebook -> the page its rows belong to (papers/index.md: studies across papers)
NOTEBOOK_PAGE = {
    "ye_abbe_table3": "000-ye-abbe",
    "ye_abbe_fig3": "000-ye-abbe",
    "ye_abbe_fig4": "000-ye-abbe",
    "timing_fit": "000-ye-abbe",
    "training": "000-ye-abbe",
    "cluster_ye_abbe": "000-ye-abbe",
    "coded_reduce_fig2": "001-coded-reduce",
    "coded_reduce_theorems": "001-coded-reduce",
    "coded_reduce_convergence": "001-coded-reduce",
    "coded_reduce_fig13": "001-coded-reduce",
    "cluster_coded_reduce": "001-coded-reduce",
    "gc_mmc_fig1": "002-gc-mmc",
    "binary_loads": "003-binary",
    "binary_decoding": "003-binary",
    "binary_heterogeneous": "003-binary",
    "stability": "003-binary",
    "heterogeneous_comm_cost": "004-heterogeneous",
    "heterogeneous_adversaries": "004-heterogeneous",
    "heterogeneous_poly": "004-heterogeneous",
    "berrut_error": "004-heterogeneous",
    "failed_workers": "index",
    "simulations": "index",
    "cluster_links": "index",
    "cluster_link_rates": "index",
    "cluster_link_cut": "index",
    "cluster_latency": "index",
}


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


missing = sorted(p.stem for p in NOTEBOOKS.glob("*.py") if p.stem not in NOTEBOOK_PAGE)
if missing:
    raise SystemExit(f"docs/scripts/gen_comparison_rows.py: no page for notebooks {missing}")
pages: dict[str, list[str]] = {}
for notebook, page in NOTEBOOK_PAGE.items():
    found = rows(NOTEBOOKS / f"{notebook}.py")
    lines = [
        f"\n### Notebook `{notebook}`\n",
        "",
        "| item | quantity | paper | kind | reproduced (computed by the run) |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {cell(r['item'])} | {cell(r['quantity'])} | {cell(r['paper_value'])} "
        f"| {cell(r['kind'])} | {r['reproduced']} |"
        for r in found
    ]
    pages.setdefault(page, []).extend(lines)
for page, lines in pages.items():
    with mkdocs_gen_files.open(f"papers/{page}.md", "a") as handle:
        handle.write(
            "\n## Comparison rows\n\nGenerated at build time from the notebooks' "
            "`Comparison(...)` calls: the paper's side as committed, the reproduced side as "
            "the expression the run evaluates (its value is in `results/tables/comparison.csv`"
            " and the report).\n" + "\n".join(lines) + "\n"
        )

"""The arrows between gradcode's sub-packages point one way (issue 50, point 5).

The package graph has one node per sub-package of ``gradcode`` (``train``, ``cluster``, ...)
and per top-level one-file module (``rate``, ``slurmjob``, ...; the package's own
``__init__`` is the node ``gradcode``), and an edge A -> B when any module of A imports any
module of B. An import counts wherever it is written (module level, inside a function, under
``if TYPE_CHECKING:``), as ``import x`` or ``from x import y``, relative ones resolved;
``from gradcode import cluster`` imports the sub-package ``cluster``. Modules imported by name
at run time (the registries' ``importlib.import_module``) are not import statements and do
not count.

- The graph has no cycle, not only no file cycle (``tests/test_house.py``).
- The runtime imports nothing of the emulated cluster: it reads the cluster that is up through
  ``gradcode.livecluster``, which the cluster's machinery writes.
- The runtime's rooms and the cluster come in one order, each importing none after it: the
  cluster starts jobs through the launcher, the launcher starts the rank program, the rank
  program writes the files that ``runlogs`` reads back.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from tests.helpers.imports import Import, find_cycles, import_statements

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gradcode"

#: sub-packages that may not import ``gradcode.cluster`` at all
NO_CLUSTER = ("train", "launch", "runfile", "runlogs")

#: each imports none of those after it (the others may sit anywhere)
IN_ORDER = ["livecluster", "runfile", "runlogs", "train", "launch", "cluster"]

#: package cycles let through on purpose, each (its nodes, sorted) with the reason it is not
#: broken yet. None today; an entry whose cycle is gone fails the test, so the list only
#: shrinks.
ALLOWED_CYCLES: dict[tuple[str, ...], str] = {}


def test_the_package_graph_has_no_cycle():
    graph = _package_graph(PACKAGE)
    cycles = {tuple(cycle): cycle for cycle in find_cycles(graph)}
    unexpected = sorted(set(cycles) - set(ALLOWED_CYCLES))
    assert not unexpected, "package cycles:\n" + "\n".join(
        f"{' <-> '.join(cycle)}: {_describe(cycle, graph)}" for cycle in unexpected
    )
    gone = sorted(set(ALLOWED_CYCLES) - set(cycles))
    assert not gone, f"no longer a cycle, drop from ALLOWED_CYCLES: {gone}"


def test_the_runtime_imports_nothing_of_the_cluster():
    offenders = [
        f"{path.relative_to(PACKAGE)}:{line} imports {module}"
        for path, line, module in import_statements(PACKAGE)
        if _node(path, PACKAGE) in NO_CLUSTER and _target(module) == "cluster"
    ]
    assert not offenders, "read the cluster that is up through gradcode.livecluster:\n" + "\n".join(
        offenders
    )


def test_the_runtime_and_the_cluster_import_in_one_direction():
    graph = _package_graph(PACKAGE)
    backwards = [
        f"{room} imports {later}: {_where(graph[room][later])}"
        for index, room in enumerate(IN_ORDER)
        for later in IN_ORDER[index + 1 :]
        if later in graph[room]
    ]
    assert not backwards, "a room imports one after it:\n" + "\n".join(backwards)


def test_the_finder_sees_every_kind_of_import(tmp_path):
    """Function-level, ``TYPE_CHECKING``, relative, ``from gradcode import sub-package`` and
    ``import a.b as c`` imports all make edges, and a cycle through three packages is found
    and named with the imports that make it."""
    package = tmp_path / "gradcode"
    sources = {
        "__init__.py": "",
        "one.py": "import gradcode.train.run as run\n",
        "train/__init__.py": "",
        "train/run.py": "def f():\n    from ..launch import jobs\n",
        "launch/__init__.py": "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from gradcode import cluster\n",
        "launch/jobs.py": "import os\nfrom . import jobs\n",
        "cluster/__init__.py": "from gradcode.train import run\n",
        "runlogs/__init__.py": "from gradcode.cluster.links import record\n",
    }
    for name, text in sources.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    graph = _package_graph(package)
    assert {node: set(edges) for node, edges in graph.items() if edges} == {
        "one": {"train"},
        "train": {"launch"},
        "launch": {"cluster"},
        "cluster": {"train"},
        "runlogs": {"cluster"},
    }
    assert find_cycles(graph) == [["cluster", "launch", "train"]]
    named = _describe(("cluster", "launch", "train"), graph)
    assert "train/run.py:2 imports gradcode.launch.jobs" in named
    assert "launch/__init__.py:3 imports gradcode.cluster" in named
    offenders = [
        _node(path, package)
        for path, _, module in import_statements(package)
        if _node(path, package) in NO_CLUSTER and _target(module) == "cluster"
    ]
    assert sorted(offenders) == ["launch", "runlogs"]


def _node(path: Path, package: Path) -> str:
    """The package-graph node a file belongs to: its sub-package, or the one-file module."""
    parts = path.relative_to(package).with_suffix("").parts
    return package.name if parts == ("__init__",) else parts[0]


def _target(module: str) -> str | None:
    """The node an imported module belongs to (``None``: not gradcode)."""
    parts = module.split(".")
    if parts[0] != "gradcode":
        return None
    return parts[1] if len(parts) > 1 else "gradcode"


def _package_graph(package: Path) -> dict[str, dict[str, list[Import]]]:
    """node -> node it imports -> the imports that make the edge."""
    graph: dict[str, dict[str, list[Import]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(package.rglob("*.py")):
        graph[_node(path, package)]  # every node, also one that imports nothing
    for path, line, module in import_statements(package):
        source, target = _node(path, package), _target(module)
        if target is not None and target != source:
            graph[source][target].append((path.relative_to(package), line, module))
    return graph


def _describe(cycle: tuple[str, ...], graph: dict[str, dict[str, list[Import]]]) -> str:
    return "; ".join(
        f"{source} -> {target} ({_where(graph[source][target])})"
        for source in cycle
        for target in cycle
        if target in graph[source]
    )


def _where(imports: list[Import]) -> str:
    return ", ".join(f"{path}:{line} imports {module}" for path, line, module in imports)

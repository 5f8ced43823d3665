"""House rules that a linter does not check: no function in ``src/gradcode`` longer than
``MAX_FUNCTION_LINES`` (from its ``def`` to its last line), no import circle among the
package's modules, and the emulated cluster's rooms (``CLUSTER_ROOMS``) each importing only
those before it, with nothing outside the cluster importing it (a run reads the cluster that is
up through ``gradcode.livecluster``; ``test_package_arrows.py`` says who may import whom).

An import counts wherever it is written: at module level, inside a function, or under
``if TYPE_CHECKING:``. ``import gradcode.x.y`` and ``from gradcode.x.y import name`` import
``gradcode.x.y``; ``from gradcode.x import y`` imports the submodule ``gradcode.x.y`` when
there is one, else ``gradcode.x`` (a package's ``__init__`` is a module like the others).
Modules imported by name at run time (the registries' ``importlib.import_module``) are not
import statements and do not count.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.helpers.imports import find_cycles, import_statements, module_files

# Functions or circles let through on purpose, each with its reason (none today). An entry
# that no longer occurs fails the tests below too.
KNOWN_EXCEPTIONS: set[str] = set()

MAX_FUNCTION_LINES = 80

#: ``gradcode.cluster``'s modules and sub-packages in order: each imports only itself and those
#: before it (``spec`` and ``state`` first, ``cli`` last); a new one must be placed here.
CLUSTER_ROOMS = [
    "spec",
    "state",
    "during",
    "network",
    "latency",
    "slurm",
    "mpi",
    "faults",
    "control",
    "cli",
]
#: what the rest of the package may import of the cluster: nothing (a run reads its links
#: through gradcode.livecluster, which the cluster writes)
CLUSTER_FACE: set[str] = set()
PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gradcode"


def test_no_function_is_longer_than_the_limit():
    lengths = _function_lengths()
    too_long = {name for name, lines in lengths.items() if lines > MAX_FUNCTION_LINES}
    offenders = sorted(too_long - KNOWN_EXCEPTIONS)
    assert not offenders, f"functions over {MAX_FUNCTION_LINES} lines: " + ", ".join(
        f"{name} ({lengths[name]})" for name in offenders
    )
    fixed = sorted(name for name in KNOWN_EXCEPTIONS if ":" in name and name not in too_long)
    assert not fixed, (
        f"no longer over {MAX_FUNCTION_LINES} lines, drop from KNOWN_EXCEPTIONS: {fixed}"
    )


def test_no_import_circle():
    imports = _imports()
    circles = {_describe(circle): circle for circle in find_cycles(imports)}
    offenders = sorted(set(circles) - KNOWN_EXCEPTIONS)
    assert not offenders, "import circles:\n" + "\n".join(
        f"{name}: {_edges(circles[name], imports)}" for name in offenders
    )
    fixed = sorted(name for name in KNOWN_EXCEPTIONS if " <-> " in name and name not in circles)
    assert not fixed, f"no longer a circle, drop from KNOWN_EXCEPTIONS: {fixed}"


def test_the_clusters_rooms_import_only_those_before_them():
    imports = _imports()
    cluster = "gradcode.cluster"
    rooms = {m.split(".")[2] for m in imports if m.startswith(f"{cluster}.")}
    assert rooms == set(CLUSTER_ROOMS), (
        f"place every module and sub-package of {cluster} in CLUSTER_ROOMS: "
        f"{sorted(rooms ^ set(CLUSTER_ROOMS))}"
    )
    backwards, outside = [], []
    for module, edges in imports.items():
        for target, line in edges.items():
            if not (target == cluster or target.startswith(f"{cluster}.")):
                continue
            if not module.startswith(f"{cluster}."):
                if module != cluster and target not in CLUSTER_FACE:
                    outside.append(f"{module} imports {target} (line {line})")
                continue
            if target == cluster:  # the package's docstring: no room
                continue
            room, wanted = module.split(".")[2], target.split(".")[2]
            if CLUSTER_ROOMS.index(wanted) > CLUSTER_ROOMS.index(room):
                backwards.append(f"{module} imports {target} (line {line})")
    assert not backwards, "a room imports one after it:\n" + "\n".join(backwards)
    assert not outside, f"outside the cluster import only {CLUSTER_FACE}:\n" + "\n".join(outside)


def test_the_circle_finder_sees_every_kind_of_import(tmp_path):
    """Function-level, ``TYPE_CHECKING``, ``from package import submodule``, relative and
    ``__init__`` imports all make edges; a name imported from a package is the package's."""
    package = tmp_path / "gradcode"
    sources = {
        "__init__.py": "from gradcode.a import thing\n",
        "a.py": "def f():\n    from gradcode import b\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n",
        "c.py": "import gradcode.sub.d as d\n",
        "sub/__init__.py": "",
        "sub/d.py": "from ..a import thing\nfrom gradcode.sub import VALUE\n",
        "e.py": "from gradcode import thing\n",
    }
    for name, text in sources.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    imports = _imports(package)
    assert {module: set(edges) for module, edges in imports.items()} == {
        "gradcode": {"gradcode.a"},
        "gradcode.a": {"gradcode.b"},
        "gradcode.b": {"gradcode.c"},
        "gradcode.c": {"gradcode.sub.d"},
        "gradcode.sub": set(),
        "gradcode.sub.d": {"gradcode.a", "gradcode.sub"},
        "gradcode.e": {"gradcode"},
    }
    circles = [_describe(circle, package) for circle in find_cycles(imports)]
    assert circles == ["a.py <-> b.py <-> c.py <-> sub/d.py"]


def _function_lengths(package: Path = PACKAGE) -> dict[str, int]:
    """``path:qualified.name`` -> lines from ``def`` to the function's last line."""
    lengths = {}
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        for name, lines in _functions(ast.parse(path.read_text(), str(path))):
            lengths[f"{relative}:{name}"] = lines
    return lengths


def _functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """Every function below ``node`` (methods and nested functions too), by qualified name,
    with its length in lines."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{child.name}"
            if not isinstance(child, ast.ClassDef):
                yield name, child.end_lineno - child.lineno + 1
            yield from _functions(child, f"{name}.")
        else:
            yield from _functions(child, prefix)


def _imports(package: Path = PACKAGE) -> dict[str, dict[str, int]]:
    """Per module, the package's modules it imports, each with the line of its first import."""
    modules = module_files(package)
    names = {path: module for module, path in modules.items()}
    graph: dict[str, dict[str, int]] = {module: {} for module in modules}
    for path, line, target in import_statements(package):
        if target in modules and target != names[path]:
            graph[names[path]].setdefault(target, line)
    return graph


def _describe(circle: list[str], package: Path = PACKAGE) -> str:
    """``a.py <-> b/c.py``: the circle's files, relative to the package."""
    modules = module_files(package)
    return " <-> ".join(sorted(modules[m].relative_to(package).as_posix() for m in circle))


def _edges(circle: list[str], graph: dict[str, dict[str, int]]) -> str:
    return "; ".join(
        f"{module} imports {target} (line {line})"
        for module in circle
        for target, line in sorted(graph[module].items())
        if target in circle
    )

"""The package's import statements read from its source, and the cycles of a graph: what
``tests/test_house.py`` (modules) and ``tests/test_package_arrows.py`` (sub-packages) build
their graphs from.

An import counts wherever it is written: at module level, inside a function, or under
``if TYPE_CHECKING:``; relative ones are resolved. ``import x.y`` imports ``x.y``;
``from x import y`` imports ``x.y`` when that is a module or package of the tree, else ``x``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

#: ``(importing file, line, imported module)``
Import = tuple[Path, int, str]


def module_files(package: Path) -> dict[str, Path]:
    """Dotted module name -> file (a package is its ``__init__.py``), in path order."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def import_statements(package: Path) -> list[Import]:
    """Every import statement's module (module docstring), in file and ``ast.walk`` order; a
    ``from x import a, b`` that names no module counts once."""
    modules = module_files(package)
    found = []
    for module, path in modules.items():
        # what a relative import counts from: the package itself for its __init__
        here = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found += [(path, node.lineno, alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join([*parent, *([node.module] if node.module else [])])
                for alias in node.names:
                    name = f"{base}.{alias.name}"
                    found.append((path, node.lineno, name if name in modules else base))
    return list(dict.fromkeys(found))


def find_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in list(graph):
        if node not in index:
            connect(node)
    return sorted(found)

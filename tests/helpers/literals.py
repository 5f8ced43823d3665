"""What the identity rules (no scheme, no topology known by name) look for in source."""

from __future__ import annotations

import ast


def literal_names(node: ast.AST) -> set[str]:
    """The string literals ``node`` is or holds (a tuple, list or set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {v for element in node.elts for v in literal_names(element)}
    return set()

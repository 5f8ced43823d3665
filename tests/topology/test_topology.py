"""Topologies are objects: one per shape, asked by every layer, never named outside their home.

- No module outside ``gradcode.codes`` and ``gradcode.topology`` (the package, the workflow's
  rules, scripts and notebooks, the benchmarks) compares anything with a topology's name or
  casts to a code class: it asks ``topology_of(code)``.
- Every built-in code and both toy codes keep their topology's contract (the conformance kit,
  ``gradcode.topology.conformance``).
- A code's declared topology and its class cannot disagree: the registry refuses both ways.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gradcode
from gradcode.codes import GradientCode, TreeCode, available, build, register, scheme_class
from gradcode.codes.base import TOPOLOGIES as DECLARED
from gradcode.codes.base import Capabilities
from gradcode.codes.registry import unregister
from gradcode.topology import TOPOLOGIES, topology_named, topology_of
from gradcode.topology.conformance import assert_topology, check_topology
from tests.helpers.literals import literal_names

PACKAGE = Path(gradcode.__file__).parent
REPO = PACKAGE.parents[1]
NAMES = set(DECLARED)
HOMES = ("codes", "topology")
#: classes a cast could pretend a code is
CODE_CLASSES = {"GradientCode", "LinearCode", "TreeCode", "RingCode"} | {
    scheme_class(name).__name__ for name in available()
}


def _sources() -> list[Path]:
    files = [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] not in HOMES]
    for folder in ("workflow", "benchmarks"):
        files += sorted((REPO / folder).rglob("*.py"))
    return [*files, *sorted((REPO / "workflow").rglob("*.smk")), REPO / "Snakefile"]


def _violations(path: Path) -> list[str]:
    text = path.read_text()
    where = path.relative_to(REPO)
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError:  # Snakemake syntax: the text rule
        return [
            f"{where}: compares with topology name {name!r}"
            for name in sorted(NAMES)
            for quote in ('"', "'")
            if f"== {quote}{name}{quote}" in text or f"!= {quote}{name}{quote}" in text
        ]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names = set().union(*(literal_names(side) for side in (node.left, *node.comparators)))
            if names & NAMES:
                found.append(f"{where}:{node.lineno}: compares with {sorted(names & NAMES)}")
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            target = node.args[0]
            cast_to = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
            cast_to |= {n.value for n in ast.walk(target) if isinstance(n, ast.Constant)}
            if called == "cast" and cast_to & CODE_CLASSES:
                found.append(f"{where}:{node.lineno}: casts to {sorted(cast_to & CODE_CLASSES)}")
    return found


def test_the_rule_sees_what_it_looks_for(tmp_path):
    sample = PACKAGE / "train" / "_topology_probe_for_test.py"
    sample.write_text(
        "from typing import cast\n"
        "def f(code, plan):\n"
        "    if code.capabilities.topology == 'tree' or plan.topology in ('flat', 'ring'):\n"
        "        return cast(TreeCode, code)\n"
    )
    try:
        found = _violations(sample)
    finally:
        sample.unlink()
    assert [line.split(": ", 1)[1].split()[0] for line in found] == [
        "compares",
        "compares",
        "casts",
    ]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_nothing_outside_its_home_knows_a_topology_by_name(path):
    assert _violations(path) == []


def test_every_declared_name_has_one_object():
    assert set(TOPOLOGIES) == NAMES
    for name, topology in TOPOLOGIES.items():
        assert topology.name == name and topology_named(name) is topology
    with pytest.raises(ValueError, match="unknown topology 'star' \\(known: flat, tree, ring\\)"):
        topology_named("star")


SAMPLES = [
    ("uncoded", {"n": 4}),
    ("frc", {"n": 6, "s": 2}),
    ("binary", {"n": 5, "s": 1}),
    ("coded-reduce", {"n": 2, "L": 2, "s": 1}),
    ("ring-allreduce", {"n": 4}),
    ("ring-allreduce", {"n": 3, "implementation": "mpi"}),
]


@pytest.mark.parametrize(("name", "params"), SAMPLES, ids=lambda x: str(x))
def test_built_in_codes_keep_their_topologys_contract(name, params):
    try:
        code = build(name, **params)
    except ValueError as error:
        pytest.fail(f"sample {name} {params} no longer builds: {error}")
    assert_topology(code)


def test_every_built_in_scheme_keeps_the_contract_at_its_smallest_parameters():
    for name in available():
        cls = scheme_class(name)
        params = next(iter(cls.parameter_grid(6)), None)
        if params is None:
            continue
        assert check_topology(cls(**params)) == [], name


def test_the_toy_codes_keep_their_topologys_contract():
    from tests.capabilities.toy_codes import ReplicaTree, StackedRepetition

    assert_topology(ReplicaTree(b=2, h=2))
    assert_topology(StackedRepetition(n=4, s=1))
    assert topology_of(ReplicaTree(b=2, h=2)).tree(ReplicaTree(b=2, h=2)) is not None


def test_the_ring_records_how_it_reduces_and_the_tree_counts_nodes():
    ring = build("ring-allreduce", n=3, implementation="mpi")
    assert topology_of(ring).scheme_params(ring) == {"n": 3, "implementation": "mpi"}
    assert topology_of(ring).ring(ring) is ring and topology_of(ring).tree(ring) is None
    tree = build("coded-reduce", n=2, L=2, s=1)
    assert topology_of(tree).nodes == "tree nodes" and topology_of(tree).combines(tree, 0)
    assert not topology_of(tree).combines(tree, tree.n - 1)


def _flat_class(base: type[GradientCode], declared: str) -> type[GradientCode]:
    uncoded = scheme_class("uncoded")
    return type(
        "Disagreeing",
        (uncoded,),
        {"name": "disagreeing", "capabilities": Capabilities(topology=declared)},
    )


def test_a_code_whose_class_and_topology_disagree_is_refused_where_registered():
    for declared in ("tree", "ring"):
        with pytest.raises(ValueError, match=f"declares topology '{declared}'"):
            register("disagreeing", _flat_class(GradientCode, declared))
        unregister("disagreeing")
    replica = __import__("tests.capabilities.toy_codes", fromlist=["ReplicaTree"]).ReplicaTree
    flat_tree = type("FlatTree", (replica,), {"name": "flat-tree", "capabilities": Capabilities()})
    with pytest.raises(ValueError, match="is a TreeCode but declares topology 'flat'"):
        register("flat-tree", flat_tree)
    assert issubclass(flat_tree, TreeCode)

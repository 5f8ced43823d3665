"""No module outside ``gradcode.codes`` branches on which scheme a code is.

The runtime, the simulator, the timing models, the CLI and the workflow learn what a code can
do from its declared ``capabilities`` and the ``GradientCode``/``TreeCode`` interfaces. This test
reads every module of the package (and the workflow's Python) and fails on:

- a comparison (``==``, ``!=``, ``in``, ``not in``) with a scheme's name as a string literal;
- ``isinstance``/``issubclass`` against a concrete scheme class;
- ``hasattr``/``getattr`` probing for an attribute that only some schemes have;
- importing a concrete scheme module in the floors that must serve any code (``train``,
  ``sim``, ``timing``, ``cli``, ``data``, ``models``, ``optim``, ``figures``, ``pipeline``).

Attacks (``gradcode.attacks``) are held to the same rule: outside ``gradcode/attacks/`` no
module compares with an attack's name or checks ``isinstance`` against an attack class; the
runtime, the simulator and ``verify`` ask an attack what it declares (``omniscient``,
``honest_needed``).

Robust aggregators (``gradcode.aggregators``) likewise: outside ``gradcode/aggregators/`` no
module compares with an aggregator's name or checks ``isinstance`` against an aggregator
class; the runtime and the plan ask what it declares (``tolerates``, ``refusal``).

Models (``gradcode.models``) too: outside ``gradcode/models/`` no module compares with a
model's kind or checks ``isinstance`` against a model class; the runtime, the data and the
figures ask a model its ``task``, ``parameter_count`` and ``initial_parameters``.

Allowed: naming a scheme to *build* it (a preset's list of schemes to compare, an analysis of
one paper's construction), which is data, not dispatch; and the figure notebooks, which select
rows of result tables by their ``scheme`` column to draw one paper's figure.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import gradcode
from gradcode import aggregators, attacks, models
from gradcode.codes import GradientCode, LinearCode, TreeCode, available, scheme_class
from tests.helpers.literals import literal_names

PACKAGE = Path(gradcode.__file__).parent
REPO = PACKAGE.parents[1]
SCHEMES = set(available())
SCHEME_CLASSES = {scheme_class(name).__name__ for name in SCHEMES}
#: modules implementing schemes, as imported: gradcode.codes.<module>
SCHEME_MODULES = {scheme_class(name).__module__ for name in SCHEMES}
#: what every code has: probing for these is not probing for a scheme
INTERFACE = set(dir(GradientCode)) | set(dir(LinearCode)) | set(dir(TreeCode))
SCHEME_ONLY = {
    attribute
    for name in SCHEMES
    for attribute, _ in inspect.getmembers(scheme_class(name))
    if not attribute.startswith("_")
} - INTERFACE
ATTACKS = set(attacks.available())
ATTACK_CLASSES = {attacks.attack_class(name).__name__ for name in ATTACKS}
AGGREGATORS = set(aggregators.available())
AGGREGATOR_CLASSES = {aggregators.aggregator_class(name).__name__ for name in AGGREGATORS}
MODELS = set(models.available())
MODEL_CLASSES = {models.model_class(name).__name__ for name in MODELS}
GENERIC_FLOORS = (
    "train",
    "sim",
    "timing",
    "data",
    "models",
    "optim",
    "figures",
    "pipeline",
    "fit",
    "recommend",
)


def _sources() -> list[Path]:
    files = [p for p in PACKAGE.rglob("*.py") if "codes" not in p.relative_to(PACKAGE).parts]
    files += [*sorted((REPO / "workflow").rglob("*.smk")), REPO / "Snakefile"]
    return files


def _tree(path: Path) -> ast.AST | None:
    try:
        return ast.parse(path.read_text(), filename=str(path))
    except SyntaxError:
        return None  # Snakemake syntax: checked by the text rules below


def _attack_sources(room: str = "attacks") -> list[Path]:
    """Every module but those of ``room`` (``gradcode/<room>/``), the workflow's Python and
    Snakemake files."""
    files = [p for p in PACKAGE.rglob("*.py") if room not in p.relative_to(PACKAGE).parts]
    files += [
        *sorted((REPO / "workflow").rglob("*.py")),
        *sorted((REPO / "workflow").rglob("*.smk")),
    ]
    return [*files, REPO / "Snakefile"]


def _attack_violations(
    path: Path,
    names_of: set[str] = ATTACKS,
    classes_of: set[str] = ATTACK_CLASSES,
    kind: str = "attack",
) -> list[str]:
    """Comparisons with a name of ``names_of`` and ``isinstance`` against ``classes_of``
    (attacks by default; aggregators with their sets)."""
    tree = _tree(path)
    where = path.relative_to(REPO)
    if tree is None:
        text = path.read_text()
        return [
            f"{where}: compares with {kind} name {name!r}"
            for name in sorted(names_of)
            for quote in ('"', "'")
            if f"== {quote}{name}{quote}" in text or f"!= {quote}{name}{quote}" in text
        ]
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names: set[str] = set()
            for side in (node.left, *node.comparators):
                names |= literal_names(side)
            if names & names_of:
                found.append(
                    f"{where}:{node.lineno}: compares with {kind} {sorted(names & names_of)}"
                )
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
                classes = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                classes |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
                if classes & classes_of:
                    found.append(f"{where}:{node.lineno}: isinstance of {classes & classes_of}")
    return found


def _aggregator_violations(path: Path) -> list[str]:
    return _attack_violations(path, AGGREGATORS, AGGREGATOR_CLASSES, "aggregator")


def _violations(path: Path) -> list[str]:
    tree = _tree(path)
    where = path.relative_to(REPO)
    found: list[str] = []
    if tree is None:
        text = path.read_text()
        for name in sorted(SCHEMES):
            for quote in ('"', "'"):
                if f"== {quote}{name}{quote}" in text or f"!= {quote}{name}{quote}" in text:
                    found.append(f"{where}: compares with scheme name {name!r}")
        return found
    floor = path.relative_to(PACKAGE).parts[0] if path.is_relative_to(PACKAGE) else ""
    generic = floor in GENERIC_FLOORS or floor == "cli.py" or floor.endswith("cli.py")
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names: set[str] = set()
            for side in (node.left, *node.comparators):
                names |= literal_names(side)
            if names & SCHEMES:
                found.append(f"{where}:{node.lineno}: compares with {sorted(names & SCHEMES)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
                classes = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                classes |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
                if classes & SCHEME_CLASSES:
                    found.append(f"{where}:{node.lineno}: isinstance of {classes & SCHEME_CLASSES}")
            if node.func.id in ("hasattr", "getattr") and len(node.args) >= 2:
                probed = literal_names(node.args[1])
                if probed & SCHEME_ONLY:
                    found.append(f"{where}:{node.lineno}: probes for {sorted(probed)}")
        elif isinstance(node, ast.ImportFrom) and generic and node.module:
            modules = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            if modules & SCHEME_MODULES:
                found.append(f"{where}:{node.lineno}: imports {sorted(modules & SCHEME_MODULES)}")
    return found


def test_the_rules_see_what_they_look_for():
    """The checker itself: each kind of branching on identity is caught."""
    assert {"coded-reduce", "lcc", "heterogeneous", "ring-allreduce"} <= SCHEMES
    assert {"CodedReduce", "LagrangeCode"} <= SCHEME_CLASSES
    assert {"encode_data", "decode_with_report", "inner_code"} - {"encode_data"} <= (
        SCHEME_ONLY | {"decode_with_report"}
    )
    assert "inner_code" in SCHEME_ONLY and "encoding_matrix" not in SCHEME_ONLY
    sample = PACKAGE / "train" / "_probe_for_test.py"
    sample.write_text(
        "from gradcode.codes.coded_reduce import CodedReduce\n"
        "def f(code):\n"
        "    if code.name == 'lcc' or isinstance(code, CodedReduce):\n"
        "        return hasattr(code, 'inner_code')\n"
    )
    try:
        kinds = {line.split(": ", 1)[1].split()[0] for line in _violations(sample)}
    finally:
        sample.unlink()
    assert kinds == {"compares", "isinstance", "probes", "imports"}


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_outside_codes_branches_on_a_scheme(path):
    assert _violations(path) == []


def test_the_attack_rules_see_what_they_look_for():
    """The checker on attacks: a comparison with an attack's name and an isinstance are caught."""
    assert {"noise", "reversed", "constant", "alie", "ipm"} <= ATTACKS
    sample = PACKAGE / "train" / "_attack_probe_for_test.py"
    sample.write_text(
        "from gradcode.attacks.alie import ALIEAttack\n"
        "def f(plan, attack):\n"
        "    return plan.attack_name == 'alie' or isinstance(attack, ALIEAttack)\n"
    )
    try:
        kinds = {line.split(": ", 1)[1].split()[0] for line in _attack_violations(sample)}
    finally:
        sample.unlink()
    assert kinds == {"compares", "isinstance"}


@pytest.mark.parametrize("path", _attack_sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_outside_attacks_branches_on_an_attack(path):
    assert _attack_violations(path) == []


def test_the_aggregator_rules_see_what_they_look_for():
    """The checker on aggregators: a comparison with an aggregator's name and an isinstance
    are caught."""
    assert {"median", "trimmed-mean", "multi-krum", "geometric-median", "bulyan"} <= AGGREGATORS
    sample = PACKAGE / "train" / "_aggregator_probe_for_test.py"
    sample.write_text(
        "from gradcode.aggregators.krum import MultiKrum\n"
        "def f(config, aggregator):\n"
        "    return config.name == 'bulyan' or isinstance(aggregator, MultiKrum)\n"
    )
    try:
        kinds = {line.split(": ", 1)[1].split()[0] for line in _aggregator_violations(sample)}
    finally:
        sample.unlink()
    assert kinds == {"compares", "isinstance"}


@pytest.mark.parametrize(
    "path", _attack_sources("aggregators"), ids=lambda p: str(p.relative_to(REPO))
)
def test_no_module_outside_aggregators_branches_on_an_aggregator(path):
    assert _aggregator_violations(path) == []


def test_the_model_rules_see_what_they_look_for():
    """The checker on models: a comparison with a model's kind and an isinstance are caught."""
    assert {"logistic", "linear"} <= MODELS
    sample = PACKAGE / "train" / "_model_probe_for_test.py"
    sample.write_text(
        "from gradcode.models.logistic import LogisticRegression\n"
        "def f(config, model):\n"
        "    return config.kind == 'linear' or isinstance(model, LogisticRegression)\n"
    )
    try:
        found = _attack_violations(sample, MODELS, MODEL_CLASSES, "model")
        kinds = {line.split(": ", 1)[1].split()[0] for line in found}
    finally:
        sample.unlink()
    assert kinds == {"compares", "isinstance"}


@pytest.mark.parametrize("path", _attack_sources("models"), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_outside_models_branches_on_a_model(path):
    assert _attack_violations(path, MODELS, MODEL_CLASSES, "model") == []

"""Does a topology keep the contract every layer relies on, for a code that declares it?

``check_topology(code)`` returns the problems found (empty: none); ``assert_topology(code)``
raises ``AssertionError`` listing them. The tests run it on every built-in and toy code; a new
topology runs it on a code of its shape. Checks:

- the object is the one registered under the name the code declares, and it accepts the code
  (``check``) while every other topology refuses it;
- ``accept`` calls exactly one visitor method, with the code itself, and a visitor that does
  not handle the shape refuses in one line (``ValueError``), naming the code;
- the typed views agree with the code's class: ``tree(code)`` is the code where it is a
  ``TreeCode`` (else ``None``), ``ring(code)`` where it offers ``RingCode``'s schedule;
- a collector's rule (``collector_rule``) names only the keys it receives
  (``collector_keys``), and every one of them together satisfies its test of sufficiency;
- what a pull would spare (``pull_gain``) and a refusal are one-line strings; a topology that
  does not collect results refuses pulls; copies of the model take at least one copy's time
  through the master's port; messages received per rank are counts; the recorded parameters
  rebuild nothing less than ``code.params()``.
"""

from __future__ import annotations

from typing import Any

from gradcode.codes.base import GradientCode
from gradcode.codes.ring import RingCode
from gradcode.codes.tree import MASTER, TreeCode
from gradcode.topology import TOPOLOGIES, Topology, TopologyVisitor, topology_of


class _Recorder(TopologyVisitor[tuple[str, Any]]):
    def flat(self, code: GradientCode) -> tuple[str, Any]:
        return "flat", code

    def tree(self, code: TreeCode) -> tuple[str, Any]:
        return "tree", code

    def ring(self, code: RingCode) -> tuple[str, Any]:
        return "ring", code


class _Refuser(TopologyVisitor[None]):
    pass


def check_topology(code: GradientCode) -> list[str]:
    """Problems of ``code``'s topology with ``code`` (see the module docstring)."""
    problems: list[str] = []
    try:
        topology = topology_of(code)
    except ValueError as error:
        return [str(error)]
    problems += _identity(topology, code)
    problems += _views(topology, code)
    problems += _collection(topology, code)
    problems += _distribution(topology, code)
    return problems


def assert_topology(code: GradientCode) -> None:
    """``AssertionError`` listing ``check_topology``'s problems, if any."""
    problems = check_topology(code)
    assert not problems, f"{code.name}: " + "; ".join(problems)


def _identity(topology: Topology, code: GradientCode) -> list[str]:
    problems = []
    if TOPOLOGIES.get(topology.name) is not topology:
        problems.append(f"topology {topology.name!r} is not the registered object")
    try:
        topology.check(code)
    except ValueError as error:
        problems.append(f"{topology.name} refuses a code that declares it: {error}")
    for other in TOPOLOGIES.values():
        if other is not topology:
            try:
                other.check(code)
                problems.append(f"{other.name} accepts a code that declares {topology.name}")
            except ValueError:
                pass
    try:
        _, passed = topology.accept(_Recorder(), code)
        if passed is not code:
            problems.append("accept passes the visitor another object than the code")
    except ValueError as error:
        problems.append(f"accept refused a recording visitor: {error}")
    try:
        topology.accept(_Refuser(), code)
        problems.append("a visitor that handles nothing did not refuse")
    except ValueError as error:
        if code.name not in str(error) or "\n" in str(error):
            problems.append(f"a refusal does not name the code in one line: {error!r}")
    return problems


def _views(topology: Topology, code: GradientCode) -> list[str]:
    problems = []
    tree = topology.tree(code)
    if (tree is code) != isinstance(code, TreeCode) or (tree is not None and tree is not code):
        problems.append("tree(code) disagrees with whether the code is a TreeCode")
    ring = topology.ring(code)
    if ring is not None and (ring is not code or not isinstance(code, RingCode)):
        problems.append("ring(code) is not the code, or the code is not a RingCode")
    params = topology.scheme_params(code)
    if any(params.get(key) != value for key, value in code.params().items()):
        problems.append("scheme_params drops or changes the code's own parameters")
    for name in ("accepts_spares", "needs_every_worker", "direct", "collects_results"):
        if not isinstance(getattr(topology, name), bool):
            problems.append(f"{name} is not a bool")
    return problems


def _collection(topology: Topology, code: GradientCode) -> list[str]:
    problems = []
    refusal = topology.pull_refusal(code, tolerant=False)
    if not topology.collects_results and refusal is None:
        problems.append("a topology that collects no results does not refuse pulls")
    gains, why = topology.pull_gain(code)
    if not isinstance(gains, bool) or not why or "\n" in why:
        problems.append("pull_gain is not (bool, a one-line reason)")
    if topology.collects_results:
        keys = topology.collector_keys(code, MASTER)
        rule, decodable = topology.collector_rule(code, MASTER)
        if rule is not None and not {k for g in rule.groups for k in g} <= set(keys):
            problems.append("the master's rule names keys it does not receive")
        if not decodable(list(keys)):
            problems.append("the master cannot decode from every key it receives")
    if topology.ranks(code) < code.n + 1:
        problems.append(f"ranks {topology.ranks(code)} leave a worker or the master without one")
    incoming = [topology.incoming(code, rank) for rank in range(topology.ranks(code))]
    if any(not isinstance(count, int) or count < 0 for count in incoming):
        problems.append(f"incoming messages are not counts: {incoming}")
    return problems


def _distribution(topology: Topology, code: GradientCode) -> list[str]:
    size, master, worker = 1e6, 1e8, 5e7
    if topology.scatter_refusal(tolerant=False) is None:
        copies = topology.copies_seconds(code, size, master, worker)
        if not copies >= size / master:
            return [f"copies_seconds {copies} is below one copy through the master's port"]
    return []

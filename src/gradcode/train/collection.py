"""How results reach the master, and in a tree code every parent (``runtime.collection``).

- ``push``: a worker sends every message as soon as it is ready (after any injected link
  delay). Every result crosses the master's port, the ones the decoder will not need too: with
  fractional repetition (FRC) ``s`` of every group's ``s + 1`` results, with Ye-Abbe's
  ``(n, n - 1, 1)`` ``n - 1`` of ``n``. On real links they share the master's port with the
  ones it waits for (measured on the emulated cluster, issue 20, n = 8-20, the model
  scattered: FRC 1.22-1.34 and ``(n, n - 1, 1)`` 1.51-1.80 times the link-limited floor,
  which counts only the used ones; pulled, 1.05-1.10 and 1.08-1.25).
- ``pull``: when a message is ready the worker sends only a *notice* (the result's header,
  no payload) and holds the message; the master asks for it (``protocol.PULL``) while the
  code still needs a message of its group (``Puller``, from the code's ``CompletionRule``:
  in every group, the first ``needed`` notices to arrive are pulled), so only results the
  decoder uses cross its port. It costs one round trip of two header-sized messages per
  pulled result. A newer model drops what a worker holds, as it drops stale queued sends.
  Should the decoder refuse a set the rule accepted, the master pulls every result of that
  iteration from then on (``Puller.widen``), as if they had been pushed.
- ``auto`` (the default): ``pull`` where ``choose`` finds it saves the port something, else
  ``push``.

In a tree code every parent (the master too) collects its children's results the same way: a
child's notice, then the parent's ``PULL`` (``tree_puller``): by the parent's rule where the
code declares it as a ``CompletionRule`` (``children_rule``: the first ``needed`` of every
group), else while the children pulled so far are not decodable (``TreePuller``). A
CodedReduce parent needs one child of every group of ``s + 1`` (or any ``n - s``), so ``s``
of every group's results never cross its port.

Pull needs the code's rule to be exact about which messages suffice, and every pulled worker
to answer: it is refused (an explicit ``pull``: ``ValueError``, a ``ConfigError`` in the plan)
for flat codes without a ``CompletionRule``, ring codes, runs that tolerate failures (a pulled
worker that dies would leave its group short) and runs with adversaries (the decoder may
refuse a corrupted set and want more).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from gradcode.codes.base import GradientCode
from gradcode.codes.completion import CompletionRule
from gradcode.codes.tree import TreeCode

if TYPE_CHECKING:
    from gradcode.train.plan import Plan


@dataclass(frozen=True)
class Choice:
    """The way chosen and why (``summary.json``'s ``collection``)."""

    way: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"way": self.way, "reason": self.reason}


def choose(
    requested: str,
    code: GradientCode,
    *,
    links_stated: bool,
    tolerant: bool,
    adversaries: bool,
) -> Choice:
    """``requested`` (``runtime.collection``) resolved for ``code``.

    ``auto`` pulls where the run's messages travel over stated real links
    (``network.links``: locally every result costs a memory copy, and a round trip would only
    add to it), the code leaves some results unused (a flat code's ``CompletionRule`` needs
    fewer than it has messages; some tree parent decodes without one of its children) and
    pull is possible at all (see the module docstring). An explicit ``pull`` that is not
    possible is a ``ValueError`` naming why.
    """
    if requested == "push":
        return Choice("push", "runtime.collection: push")
    why_not = _cannot_pull(code, tolerant=tolerant, adversaries=adversaries)
    if requested == "pull":
        if why_not is not None:
            raise ValueError(f"runtime.collection: pull is not possible here: {why_not}")
        return Choice("pull", "runtime.collection: pull")
    if why_not is not None:
        return Choice("push", f"auto: {why_not}")
    if not links_stated:
        return Choice("push", "auto: no real links (network.links) whose port a pull would spare")
    if code.capabilities.topology == "tree":
        spared = spared_children(cast(TreeCode, code))
        if not spared:
            return Choice("push", "auto: every parent of the tree uses all its children")
        return Choice("pull", f"auto: {spared} children's results go unused at some parent")
    rule = code.completion_rule()
    assert rule is not None
    needed, messages = sum(rule.needed), len(code.all_message_keys())
    if needed >= messages:
        return Choice("push", f"auto: the decoder uses all {messages} results")
    return Choice("pull", f"auto: the decoder uses {needed} of {messages} results")


def spared_children(tree: TreeCode) -> int:
    """How many children's results the parents of ``tree`` can do without, added up: for
    every parent its children less those its declared rule needs (``children_rule``), or
    without one less the fewest of them, first in order, it decodes from."""
    spared = 0
    for parent in tree.parents():
        kids = list(tree.children(parent))
        rule = tree.children_rule(parent)
        if rule is not None:
            spared += len(kids) - sum(rule.needed)
            continue
        needed = next(
            (k for k in range(1, len(kids)) if tree.children_decodable(parent, kids[:k])),
            len(kids),
        )
        spared += len(kids) - needed
    return spared


def _cannot_pull(code: GradientCode, *, tolerant: bool, adversaries: bool) -> str | None:
    topology = code.capabilities.topology
    if topology not in ("flat", "tree"):
        return f"{code.name} is a {topology} code (its results are not collected by a master)"
    if tolerant:
        return "faults.tolerate: a pulled worker that dies would leave its group short"
    if adversaries:
        return "adversaries: the decoder may refuse a corrupted set and want more results"
    if topology == "tree":
        return None
    if code.completion_rule() is None:
        return f"{code.name} declares no completion rule (GradientCode.completion_rule)"
    return None


def collection_choice(plan: Plan) -> Choice:
    """``choose`` for the run of ``plan`` (every rank derives the same; ``build_plan`` has
    refused an explicit ``pull`` that is not possible)."""
    config = plan.config
    assert plan.code is not None
    return choose(
        config.runtime.collection,
        plan.code,
        links_stated=config.network is not None and config.network.links is not None,
        tolerant=config.faults is not None and config.faults.tolerate,
        adversaries=bool(config.adversaries.workers),
    )


class Pulling:
    """Which notices a collector (the master, a tree parent) answers with a ``PULL``.

    ``start()`` every iteration; ``wants(key)`` says whether to ask for the announced message
    (and counts it when it does). ``widen()`` (the rule held but the decoder refused the set,
    e.g. a numerical failure): every notice is wanted for the rest of the iteration, as if
    pushed. Subclasses say what the rule still needs (``_needs``, ``_reset``).
    """

    wide = False

    def start(self) -> None:
        self.wide = False
        self._reset()

    def widen(self) -> None:
        self.wide = True

    def wants(self, key: Any) -> bool:
        return self.wide or self._needs(key)

    def _reset(self) -> None:
        raise NotImplementedError

    def _needs(self, key: Any) -> bool:
        raise NotImplementedError


class Puller(Pulling):
    """By a ``CompletionRule``: the first ``needed`` notices of every group of ``rule``, no
    others and none of keys in no group."""

    def __init__(self, rule: CompletionRule) -> None:
        self.rule = rule
        self.group_of: dict[Any, int] = {
            key: g for g, group in enumerate(rule.groups) for key in group
        }
        self._reset()

    def _reset(self) -> None:
        self.pulled = [0] * len(self.rule.groups)

    def _needs(self, key: Any) -> bool:
        group = self.group_of.get(key)
        if group is None or self.pulled[group] >= self.rule.needed[group]:
            return False
        self.pulled[group] += 1
        return True


def tree_puller(tree: TreeCode, node: int) -> Pulling:
    """The puller of tree parent ``node`` (the master: ``MASTER``), asked by child: its
    declared rule's (``children_rule``), else a ``TreePuller``."""
    rule = tree.children_rule(node)
    return Puller(rule) if rule is not None else TreePuller(tree, node)


class TreePuller(Pulling):
    """A tree parent's rule not declared as groups, by child: ``wants(child)`` while the
    children pulled so far are not decodable by ``node``'s rule (``children_decodable``)."""

    def __init__(self, tree: TreeCode, node: int) -> None:
        self.tree, self.node = tree, node
        self._reset()

    def _reset(self) -> None:
        self.pulled: list[int] = []

    def _needs(self, child: int) -> bool:
        if child in self.pulled or (
            self.pulled and self.tree.children_decodable(self.node, self.pulled)
        ):
            return False
        self.pulled.append(child)
        return True

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
  code still needs it (``collector_puller``): by the code's ``CompletionRule`` where it declares
  one (``Puller``: in every group, the first ``needed`` notices to arrive are pulled), else
  while the messages pulled so far are not decodable (``DecodablePuller``, the code's
  ``is_decodable``), so only results the decoder uses cross its port (without a rule, one
  may cross that it ends up not using: binary (4, 1) pulls 0, 1 and 2 when they announce in
  that order, since 0 and 1 do not decode, and decodes from 0 and 2 if 1 comes last). It
  costs one round trip of two header-sized messages per pulled result. A newer model drops
  what a worker holds, as it drops stale queued sends. Should the decoder refuse a set the
  rule accepted, the master pulls every result of that iteration from then on
  (``Pulling.widen``), as if they had been pushed.
- ``auto`` (the default): ``pull`` where ``choose`` finds it saves the port something, else
  ``push``.

In a tree code every parent (the master too) collects its children's results the same way: a
child's notice, then the parent's ``PULL`` (``collector_puller``): by the parent's rule where the
code declares it as a ``CompletionRule`` (``children_rule``: the first ``needed`` of every
group), else while the children pulled so far are not decodable (``DecodablePuller``). A
CodedReduce parent needs one child of every group of ``s + 1`` (or any ``n - s``), so ``s``
of every group's results never cross its port.

With ``faults.tolerate`` a pulled worker may die before its result comes: once the master
learns of a failure during an iteration it pulls every result of that iteration from then on
(``Pulling.widen``), as push would have had them, and the next iteration pulls by the rule
again among the workers alive (a dead one announces nothing).

Pull is refused (an explicit ``pull``: ``ValueError``, a ``ConfigError`` in the plan) for ring
codes, for tree codes that tolerate failures (a parent that pulled a child that then dies
learns of it only from a receive that fails, and would wait for it) and for runs with
adversaries (the decoder may refuse a corrupted set and want more).
"""

from __future__ import annotations

from gradcode.codes.base import GradientCode
from gradcode.runfile.choice import Choice
from gradcode.topology import topology_of


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
    gains, why = topology_of(code).pull_gain(code)
    return Choice("pull" if gains else "push", f"auto: {why}")


def _cannot_pull(code: GradientCode, *, tolerant: bool, adversaries: bool) -> str | None:
    why_not = topology_of(code).pull_refusal(code, tolerant=tolerant)
    if why_not is not None:
        return why_not
    if adversaries:
        return "adversaries: the decoder may refuse a corrupted set and want more results"
    return None

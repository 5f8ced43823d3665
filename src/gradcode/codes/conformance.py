"""Conformance kit: does a ``GradientCode`` keep the contract the runtime and simulator rely on?

Researchers run it on their own codes (``gradcode codes verify NAME --exhaustive``, or
``assert_conforms(code)`` in their pytest suite); the tests run it on every built-in. Checks:

``decoding``
    ``verify``: every claimed pattern (exhaustively where feasible) decodes to a sum of the
    partials computed independently of the code (through ``code.reference`` for a code that
    decodes a function of the sum); adversarial codes with corrupted messages.
``support``
    each worker's messages depend on exactly the partitions ``partitions(worker)`` declares.
``assignment``
    ``partitions`` name partitions ``0..k-1`` without repeats, and every partition is held.
``message lengths``
    every message of every worker has shape ``(message_length(l),)`` for several ``l``
    (including ones that are not multiples of ``m``; squares for matrix messages), and
    ``encode_all`` sends exactly ``message_keys(worker)``.
``NotDecodableError contract``
    on responder sets beyond the claimed patterns (random subsets of every size, or all
    subsets when few): where ``is_decodable`` says yes, ``decode_result`` returns an
    ``(l,)`` gradient (equal to the sum, for exact codes); where it says no, it raises
    ``NotDecodableError`` (with ``needed`` ``None`` or >= 1), never another error or a result
    (approximate codes may return their estimate from any set: Berrut decodes from any).
``completion_times``
    the code's ``completion_times`` (often vectorised) equals the generic rule built on
    ``is_decodable`` on random arrivals with ties and workers that never answer.
``completion rule``
    a code that declares a ``completion_rule()`` (groups of message keys and counts, used for
    closed-form expected times by ``gradcode codes recommend``) names only its own message
    keys, and the rule gives the code's own ``completion_times`` on the same random arrivals:
    a declared rule cannot claim a faster (or slower) completion than the code delivers.
``children rules``
    a tree code's per-parent rules, where it declares them (``children_rule``), name only the
    parent's children and give its own ``children_completion_times`` on random arrivals.
``parameters``
    ``build(code.name, **code.params())`` rebuilds the same assignment (run files, specs and
    the workflow rebuild codes from their parameters); only for codes the registry knows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcode.attacks.base import AttackError
from gradcode.codes.base import GradientCode, MessageKey, NotDecodableError, Pattern
from gradcode.codes.completion import CompletionRule
from gradcode.codes.tree import TreeCode
from gradcode.codes.verify import VerificationReport, gradient_length, verify

#: relative error within which an exact code's decode counts as the sum
TOLERANCE = 1e-9
#: gradient lengths tried for message shapes: 1, a prime, and one of each residue mod small m
LENGTHS = (1, 2, 37, 64)
#: responder subsets tried for the NotDecodableError contract: all of them up to this many
ALL_SUBSETS_UP_TO = 512


@dataclass(frozen=True)
class Check:
    """One conformance check: its name, whether it passed, and what failed (a few lines)."""

    name: str
    passed: bool
    details: tuple[str, ...] = ()
    #: what was checked, e.g. "64 responder sets"
    scope: str = ""


@dataclass
class ConformanceReport:
    """Every check's outcome for one code, and the ``verify`` report behind ``decoding``."""

    code: str
    params: dict[str, Any]
    checks: list[Check] = field(default_factory=list)
    verification: VerificationReport | None = None

    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    def failures(self) -> list[str]:
        return [f"{c.name}: {d}" for c in self.checks if not c.passed for d in c.details]

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "params": self.params,
            "passed": self.passed(),
            "checks": [
                {"name": c.name, "passed": c.passed, "scope": c.scope, "details": list(c.details)}
                for c in self.checks
            ],
        }


def check_conformance(
    code: GradientCode,
    *,
    exhaustive: bool | None = None,
    limit: int = 500,
    length: int = 37,
    subsets: int = 200,
    trials: int = 200,
    seed: int = 0,
    tolerance: float = TOLERANCE,
    attack: Any = None,
) -> ConformanceReport:
    """Run every check on ``code`` (see the module docstring); nothing is raised for a failure.

    ``exhaustive``, ``limit`` and ``length`` (the gradient length) go to ``verify``
    (exhaustive by default when the patterns are few); ``subsets`` random responder sets test
    the ``NotDecodableError`` contract when there are more than ``ALL_SUBSETS_UP_TO``;
    ``trials`` random arrival rows test ``completion_times``; ``attack`` (a
    ``gradcode.attacks.Attack``) is what the liars of ``decoding``'s patterns send.
    """
    rng = np.random.default_rng(seed)
    report = ConformanceReport(code.name, dict(code.params()))
    try:
        verification = verify(
            code,
            exhaustive=exhaustive,
            limit=limit,
            length=length,
            seed=seed,
            tolerance=tolerance,
            attack=attack,
        )
    except AttackError:  # a refused attack is the user's input, not the code's failure
        raise
    except Exception as error:  # a plug-in's bug ends the harness: the check fails with it
        report.checks.append(Check("decoding", False, (f"raised {type(error).__name__}: {error}",)))
    else:
        report.verification = verification
        report.checks += _verification_checks(code, verification, tolerance)
    report.checks += [
        _guarded("assignment", _assignment, code),
        _guarded("message lengths", _message_lengths, code, rng),
        _guarded("NotDecodableError contract", _decodable_contract, code, rng, subsets, tolerance),
        _guarded("completion_times", _completion_times, code, rng, trials),
        _guarded("completion rule", _completion_rule, code, rng, trials),
        _guarded("children rules", _children_rules, code, rng, trials),
        _guarded("parameters", _parameters, code),
    ]
    return report


def _verification_checks(
    code: GradientCode, verification: VerificationReport, tolerance: float
) -> list[Check]:
    """``decoding`` and ``support``, from the ``verify`` report."""
    decoding = [f for f in verification.failures if not f.startswith("worker ")]
    support = [f for f in verification.failures if f.startswith("worker ")]
    if code.exact and not verification.max_relative_error <= tolerance and not decoding:
        decoding = [f"max relative error {verification.max_relative_error:.3g}"]
    scope = (
        f"{verification.patterns_checked} of {verification.patterns_total} patterns"
        f" ({'exhaustive' if verification.exhaustive else 'random'}),"
        f" max relative error {verification.max_relative_error:.2e}"
    )
    return [
        Check("decoding", not decoding, tuple(decoding[:5]), scope),
        Check("support", verification.support_ok, tuple(support[:5]), f"{code.n} workers"),
    ]


def assert_conforms(code: GradientCode, **options: Any) -> ConformanceReport:
    """``check_conformance`` for pytest: ``AssertionError`` listing every failed check.

    Example, in a plug-in's own test suite::

        from gradcode.codes import build
        from gradcode.codes.conformance import assert_conforms

        def test_my_code_conforms():
            assert_conforms(build("my-code", n=6, s=2), exhaustive=True)
    """
    report = check_conformance(code, **options)
    if not report.passed():
        lines = "\n  ".join(report.failures())
        raise AssertionError(f"{code!r} does not conform:\n  {lines}")
    return report


def _guarded(name: str, check: Callable[..., Check], code: GradientCode, *args: Any) -> Check:
    """A check that crashes fails with the exception, instead of ending the whole report."""
    try:
        return check(code, *args)
    except Exception as error:  # a plug-in's bug, reported as the check's failure
        return Check(name, False, (f"raised {type(error).__name__}: {error}",))


def _assignment(code: GradientCode) -> Check:
    problems = []
    held: set[int] = set()
    for worker in range(code.n):
        parts = list(code.partitions(worker))
        if len(set(parts)) != len(parts):
            problems.append(f"worker {worker}: partitions {parts} repeat")
        outside = [p for p in parts if not (isinstance(p, int | np.integer) and 0 <= p < code.k)]
        if outside:
            problems.append(f"worker {worker}: partitions {outside} are not in 0..{code.k - 1}")
        held.update(int(p) for p in parts if isinstance(p, int | np.integer))
    if not code.capabilities.codes_data:
        unheld = sorted(set(range(code.k)) - held)
        if unheld:
            problems.append(f"partitions {unheld[:10]} are held by no worker")
    return Check("assignment", not problems, tuple(problems[:5]), f"{code.n} workers, k={code.k}")


def _worker_partials(code: GradientCode, worker: int, rng: np.random.Generator, length: int):
    return rng.standard_normal((code.load(worker), length))


def _message_lengths(code: GradientCode, rng: np.random.Generator) -> Check:
    problems = []
    lengths = sorted({gradient_length(code, n) for n in (*LENGTHS, code.m, 3 * code.m + 1)})
    for length in lengths:
        expected = (code.message_length(length),)
        for worker in range(code.n):
            messages = code.encode_all(worker, _worker_partials(code, worker, rng, length))
            keys = tuple(messages)
            if keys != tuple(code.message_keys(worker)):
                problems.append(
                    f"worker {worker}: encode_all sent {keys}, message_keys says "
                    f"{tuple(code.message_keys(worker))}"
                )
            for key, message in messages.items():
                shape = np.shape(message)
                if shape != expected:
                    problems.append(
                        f"l={length}: message {key!r} has shape {shape}, "
                        f"message_length says {expected}"
                    )
            if len(problems) >= 5:
                break
    return Check(
        "message lengths",
        not problems,
        tuple(problems[:5]),
        f"l in {lengths}",
    )


def _subsets(
    keys: tuple[MessageKey, ...], rng: np.random.Generator, count: int
) -> Iterator[tuple[MessageKey, ...]]:
    if 2 ** len(keys) <= ALL_SUBSETS_UP_TO:
        for size in range(len(keys) + 1):
            yield from itertools.combinations(keys, size)
        return
    yield ()
    yield keys
    for _ in range(count):
        size = int(rng.integers(0, len(keys) + 1))
        chosen = sorted(rng.choice(len(keys), size=size, replace=False).tolist())
        yield tuple(keys[i] for i in chosen)


def _decodable_contract(
    code: GradientCode, rng: np.random.Generator, count: int, tolerance: float
) -> Check:
    length = gradient_length(code, 37)
    instance, partials = code.random_instance(rng, length)
    reference = code.reference(partials.sum(axis=0))
    scale = float(np.linalg.norm(reference)) or 1.0
    keys = code.all_message_keys()
    problems: list[str] = []
    checked = decodable = 0
    for subset in _subsets(keys, rng, count):
        checked += 1
        claims = code.is_decodable(subset)
        messages = code.pattern_messages(instance, Pattern(frozenset(subset)), rng)
        try:
            result = code.decode_result(messages, length)
        except NotDecodableError as error:
            if claims:
                problems.append(f"responders {list(subset)}: is_decodable says yes, decode raised")
            elif error.needed is not None and not error.needed >= 1:
                problems.append(f"responders {list(subset)}: NotDecodableError.needed is 0")
            continue
        except Exception as error:
            problems.append(
                f"responders {list(subset)}: decode raised {type(error).__name__} "
                f"({error}), not NotDecodableError"
            )
            continue
        if not claims and code.exact:
            problems.append(f"responders {list(subset)}: is_decodable says no, decode returned")
            continue
        decodable += claims
        gradient = np.asarray(result.gradient)
        if gradient.shape != (length,):
            problems.append(f"responders {list(subset)}: gradient has shape {gradient.shape}")
        elif code.exact and claims:
            error = float(np.linalg.norm(gradient - reference)) / scale
            if not error <= tolerance:
                problems.append(f"responders {list(subset)}: relative error {error:.3g}")
        if len(problems) >= 5:
            break
    scope = f"{checked} responder sets, {decodable} decodable"
    return Check("NotDecodableError contract", not problems, tuple(problems[:5]), scope)


def _completion_times(code: GradientCode, rng: np.random.Generator, trials: int) -> Check:
    if type(code).completion_times is GradientCode.completion_times:
        return Check("completion_times", True, (), "the generic rule (not overridden)")
    width = len(code.all_message_keys())
    arrivals = rng.exponential(size=(trials, width))
    arrivals[rng.random(arrivals.shape) < 0.15] = np.inf  # workers that never answer
    arrivals[: max(1, trials // 10)] = np.round(arrivals[: max(1, trials // 10)], 1)  # ties
    own = np.asarray(code.completion_times(arrivals))
    generic = GradientCode.completion_times(code, arrivals)
    problems = []
    if own.shape != generic.shape:
        problems.append(f"returned shape {own.shape}, expected {generic.shape}")
    else:
        for trial in np.flatnonzero(~((own == generic) | (np.isnan(own) & np.isnan(generic)))):
            problems.append(
                f"trial {trial}: {own[trial]:.6g}, but is_decodable first holds at "
                f"{generic[trial]:.6g}"
            )
            if len(problems) >= 5:
                break
    return Check("completion_times", not problems, tuple(problems), f"{trials} random trials")


def _completion_rule(code: GradientCode, rng: np.random.Generator, trials: int) -> Check:
    rule = code.completion_rule()
    if rule is None:
        return Check("completion rule", True, (), "none declared")
    if not isinstance(rule, CompletionRule):
        return Check("completion rule", False, (f"returned {rule!r}, not a CompletionRule",))
    keys = code.all_message_keys()
    unknown = [key for group in rule.groups for key in group if key not in set(keys)]
    if unknown:
        return Check("completion rule", False, (f"names unknown message keys {unknown[:5]}",))
    arrivals = rng.exponential(size=(trials, len(keys)))
    arrivals[rng.random(arrivals.shape) < 0.15] = np.inf  # workers that never answer
    arrivals[: max(1, trials // 10)] = np.round(arrivals[: max(1, trials // 10)], 1)  # ties
    declared = rule.completion_times(keys, arrivals)
    own = np.asarray(code.completion_times(arrivals))
    problems = [
        f"trial {trial}: the rule gives {declared[trial]:.6g}, completion_times {own[trial]:.6g}"
        for trial in np.flatnonzero(declared != own)[:5]
    ]
    groups = f"{len(rule.groups)} group{'s' * (len(rule.groups) != 1)}"
    return Check("completion rule", not problems, tuple(problems), f"{groups}, {trials} trials")


def _children_rules(code: GradientCode, rng: np.random.Generator, trials: int) -> Check:
    """A tree code's declared per-parent rules (``children_rule``) against its own
    ``children_completion_times`` on random arrivals."""
    if not isinstance(code, TreeCode):
        return Check("children rules", True, (), "not a tree code")
    problems: list[str] = []
    declared = 0
    for parent in code.parents():
        rule = code.children_rule(parent)
        if rule is None:
            continue
        declared += 1
        kids = list(code.children(parent))
        if not isinstance(rule, CompletionRule):
            problems.append(f"parent {parent}: returned {rule!r}, not a CompletionRule")
            continue
        strangers = [key for group in rule.groups for key in group if key not in set(kids)]
        if strangers:
            problems.append(f"parent {parent}: names nodes not its children {strangers[:5]}")
            continue
        arrivals = rng.exponential(size=(trials, len(kids)))
        arrivals[rng.random(arrivals.shape) < 0.15] = np.inf
        ruled = rule.completion_times(kids, arrivals)
        own = np.asarray(code.children_completion_times(parent, arrivals))
        problems += [
            f"parent {parent}, trial {trial}: the rule gives {ruled[trial]:.6g}, "
            f"children_completion_times {own[trial]:.6g}"
            for trial in np.flatnonzero(ruled != own)[:2]
        ]
    scope = f"{declared} of {len(code.parents())} parents declare one, {trials} trials each"
    return Check("children rules", not problems, tuple(problems[:5]), scope)


def _parameters(code: GradientCode) -> Check:
    from gradcode.codes.registry import available, build

    if code.name not in available():
        return Check("parameters", True, (), "not registered: skipped")
    rebuilt = build(code.name, **code.params())
    same = np.array_equal(rebuilt.assignment_matrix(), code.assignment_matrix()) and (
        rebuilt.all_message_keys() == code.all_message_keys()
    )
    details = () if same else (f"build({code.name!r}, **{code.params()}) assigns differently",)
    return Check("parameters", same, details, f"build(**{code.params()})")


def describe(check: Check) -> str:
    """One line for the command line: ``PASS  decoding  (scope)``."""
    verdict = "PASS" if check.passed else "FAIL"
    scope = f"  ({check.scope})" if check.scope else ""
    return f"{verdict:4s}  {check.name}{scope}"


__all__ = [
    "TOLERANCE",
    "Check",
    "ConformanceReport",
    "assert_conforms",
    "check_conformance",
    "describe",
]

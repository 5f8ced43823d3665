"""Simulation specs: a timing model, its parameters and a list of scheme configurations.

A spec is a mapping (a YAML file, or a preset's dict of the same shape)::

    name: my-study                 # optional (a file's stem by default)
    description: what and why      # optional, copied to the output's sidecar
    source: paper 000, Table 3     # optional
    model: master-worker           # a name in gradcode.timing.timing_models()
    parameters: {lambda1: 0.8, t1: 1.6, lambda2: 0.1, t2: 6}
    length: 343474                 # optional gradient length: adds the floats column
    confidence: 0.95               # optional level of the confidence intervals
    fit: {...}                     # optional: how a fitted spec was measured (ignored here)
    schemes:
      - scheme: ye-abbe            # a registry name (gradcode codes list)
        params: {n: 8, d: 4, s: 1, m: 3}
        label: GC m=3              # optional (default: the scheme name)
        reference: 21.3697         # optional published value (reference_time column)
      - scheme: crc
        params: {n: 8}
        grid: {s: [1, 2, 3]}       # optional: one configuration per combination

A fitted spec written despite a misfit (``gradcode timing fit --accept-misfit``: ``fit.misfit``,
the components a KS test rejects; ``fit.latency_misfit``, why the links' latency is no
measurement) is valid, but what it predicts rests on that: ``misfit_warning`` gives the one
line ``simulate``, ``predict`` and ``recommend`` print.

Validation is strict and happens here, once: unknown keys are rejected, every scheme is built
(so its own parameter checks run) and the model checks it can simulate it (e.g. a per-worker
parameter list has one value per worker of that scheme). Errors are ``SpecError`` with one
line naming the place, e.g. ``table3.yaml: schemes[2].params: ye-abbe needs d >= s + m ...``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.codes import GradientCode, build
from gradcode.errors import UserError
from gradcode.timing import TimingModel, model_class, model_from_spec
from gradcode.yamlfile import read_yaml

TOP_KEYS = (
    "name",
    "description",
    "source",
    "model",
    "parameters",
    "length",
    "confidence",
    "fit",
)
SCHEME_KEYS = ("scheme", "params", "label", "grid", "reference")
DEFAULT_CONFIDENCE = 0.95


class SpecError(UserError):
    """An invalid simulation spec; the message is one line naming the offending key."""


@dataclass(frozen=True)
class SchemeEntry:
    """One row of the result table: a built scheme and how the spec named it."""

    label: str
    name: str
    scheme: GradientCode
    reference: float | None


@dataclass(frozen=True)
class Spec:
    """A validated spec; ``raw`` is the mapping it came from (for ``--show`` and sidecars)."""

    name: str
    description: str
    source: str
    model_name: str
    model: TimingModel
    length: int | None
    confidence: float
    schemes: tuple[SchemeEntry, ...]
    raw: dict[str, Any]


def misfit_warning(data: Mapping[str, Any], origin: str) -> str | None:
    """One line saying that the spec ``data`` (named ``origin``) was fitted and written
    despite a misfit, or ``None`` (module docstring)."""
    fit = data.get("fit")
    if not isinstance(fit, Mapping):
        return None
    found = []
    if fit.get("misfit"):
        found.append(f"KS rejects {', '.join(map(str, fit['misfit']))}")
    if fit.get("latency_misfit"):
        # the latency prices a ring's 2 (N - 1) steps against a flat code's one message
        written = (data.get("parameters") or {}).get("latency", 0.0)
        found.append(
            f"{fit['latency_misfit']}, {written:.4g} s written, which a ring pays 2 (N - 1) times"
        )
    if not found:
        return None
    return (
        f"warning: {origin}: written despite a misfit: {'; '.join(found)}; what it predicts "
        "rests on that"
    )


def build_scheme(name: str, params: Mapping[str, Any]) -> GradientCode:
    """The registry code ``name`` (Ring-AllReduce included); ``ValueError`` on bad parameters."""
    return build(name, **params)


def load_spec(data: Any, *, origin: str, default_name: str = "spec") -> Spec:
    """Validate ``data`` (a spec mapping) and build its model and schemes."""

    def fail(where: str, message: str) -> SpecError:
        return SpecError(f"{origin}: {where}: {message}" if where else f"{origin}: {message}")

    if not isinstance(data, Mapping):
        raise fail("", f"a spec must be a mapping (got {type(data).__name__})")
    allowed = (*TOP_KEYS, "schemes")
    for key in data:
        if key not in allowed:
            raise fail(str(key), f"unknown key (allowed: {', '.join(allowed)})")
    for key in ("model", "parameters", "schemes"):
        if key not in data:
            raise fail(key, "missing")
    texts = {}
    for key, default in (("name", default_name), ("description", ""), ("source", "")):
        value = data.get(key, default)
        if not isinstance(value, str):
            raise fail(key, f"must be a string (got {value!r})")
        texts[key] = value
    if not isinstance(data["model"], str):
        raise fail("model", f"must be a model name (got {data['model']!r})")
    try:
        model_class(data["model"])
    except UserError as error:  # an unknown name, or a plug-in that was left out, and why
        raise fail("model", str(error)) from None
    try:
        model = model_from_spec(data["model"], data["parameters"])
    except ValueError as error:  # the message names parameters.<key>
        raise fail("", str(error)) from None
    length = data.get("length")
    if length is not None and (
        isinstance(length, bool) or not isinstance(length, int) or length < 1
    ):
        raise fail("length", f"must be an integer >= 1 (got {length!r})")
    if not isinstance(data.get("fit", {}), Mapping):
        raise fail("fit", "must be a mapping (what gradcode timing fit measured)")
    confidence = data.get("confidence", DEFAULT_CONFIDENCE)
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 < confidence < 1
        or math.isnan(confidence)
    ):
        raise fail("confidence", f"must be a number in (0, 1) (got {confidence!r})")
    entries = data["schemes"]
    if not isinstance(entries, Sequence) or isinstance(entries, str) or not entries:
        raise fail("schemes", "must be a non-empty list")
    schemes = []
    for index, entry in enumerate(entries):
        where = f"schemes[{index}]"
        try:
            schemes += _scheme_entries(entry, model, where)
        except SpecError as error:
            raise fail(*str(error).split(": ", 1)) from None
    return Spec(
        name=texts["name"],
        description=texts["description"],
        source=texts["source"],
        model_name=data["model"],
        model=model,
        length=length,
        confidence=float(confidence),
        schemes=tuple(schemes),
        raw=dict(data),
    )


def _scheme_entries(entry: Any, model: TimingModel, where: str) -> list[SchemeEntry]:
    if not isinstance(entry, Mapping):
        raise SpecError(f"{where}: must be a mapping with a scheme key (got {entry!r})")
    for key in entry:
        if key not in SCHEME_KEYS:
            raise SpecError(f"{where}.{key}: unknown key (allowed: {', '.join(SCHEME_KEYS)})")
    name = entry.get("scheme")
    if not isinstance(name, str):
        raise SpecError(f"{where}.scheme: must be a scheme name (got {name!r})")
    params = entry.get("params", {})
    if not isinstance(params, Mapping):
        raise SpecError(f"{where}.params: must be a mapping (got {params!r})")
    label = entry.get("label", name)
    if not isinstance(label, str):
        raise SpecError(f"{where}.label: must be a string (got {label!r})")
    reference = entry.get("reference")
    if reference is not None and (
        isinstance(reference, bool) or not isinstance(reference, int | float)
    ):
        raise SpecError(f"{where}.reference: must be a number (got {reference!r})")
    grid = entry.get("grid", {})
    if not isinstance(grid, Mapping):
        raise SpecError(f"{where}.grid: must be a mapping of parameter lists (got {grid!r})")
    for key, values in grid.items():
        if key in params:
            raise SpecError(f"{where}.grid.{key}: also given in params")
        if not isinstance(values, Sequence) or isinstance(values, str) or not values:
            raise SpecError(f"{where}.grid.{key}: must be a non-empty list (got {values!r})")
    combos = [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]
    configs = []
    for combo in combos:
        merged = {**params, **combo}
        try:
            scheme = build_scheme(name, merged)
        except ValueError as error:
            raise SpecError(f"{where}.params: {error}") from None
        try:
            model.check(scheme)
        except ValueError as error:
            raise SpecError(f"{where}: {error}") from None
        configs.append(
            SchemeEntry(label, name, scheme, None if reference is None else float(reference))
        )
    return configs


def read_spec(path: str | Path) -> Spec:
    """Load and validate a YAML spec file."""
    path = Path(path)
    data = read_yaml(path, SpecError)
    return load_spec(data, origin=path.name, default_name=path.stem)

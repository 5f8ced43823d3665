"""Plug-ins: classes that installed packages register under an entry-point group.

A package extends gradcode without forking it by declaring, in its ``pyproject.toml``::

    [project.entry-points."gradcode.codes"]
    my-code = "my_package.codes:MyCode"

    [project.entry-points."gradcode.timing_models"]
    my-model = "my_package.timing:MyModel"

    [project.entry-points."gradcode.attacks"]
    my-attack = "my_package.attacks:MyAttack"

    [project.entry-points."gradcode.aggregators"]
    my-aggregator = "my_package.aggregators:MyAggregator"

    [project.entry-points."gradcode.models"]
    my-model = "my_package.models:MyModel"

Once the package is installed, the names work everywhere a built-in name does. Discovery is
lazy (on the first look-up in a process) and never hides a built-in: a plug-in that fails to
import, is not the kind of class its group takes, or takes a name a built-in (or another
plug-in) already has, is left out with one warning line (``PluginWarning``) naming the plug-in
and its distribution; asking for a broken plug-in's name by name raises ``PluginError`` with the
same line.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
import warnings
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradcode.errors import ParameterError, UnknownNameError, UserError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

#: entry-point group of gradient codes (``GradientCode`` subclasses)
CODES_GROUP = "gradcode.codes"
#: entry-point group of timing models (``TimingModel`` subclasses)
TIMING_MODELS_GROUP = "gradcode.timing_models"
#: entry-point group of attacks (``gradcode.attacks.Attack`` subclasses)
ATTACKS_GROUP = "gradcode.attacks"
#: entry-point group of robust aggregators (``gradcode.aggregators.Aggregator`` subclasses)
AGGREGATORS_GROUP = "gradcode.aggregators"
#: entry-point group of models (``gradcode.models.Model`` subclasses)
MODELS_GROUP = "gradcode.models"


class PluginError(UserError):
    """A plug-in was asked for by name but could not be used (the line says why)."""


class PluginWarning(UserWarning):
    """A plug-in was left out; built-ins and the other plug-ins are unaffected."""


@dataclass(frozen=True)
class Plugin:
    """One entry point of a group, loaded (``obj``) or refused (``problem``)."""

    group: str
    name: str
    value: str
    distribution: str
    obj: object = None
    problem: str | None = None

    def describe(self) -> str:
        """``plug-in 'name' (module:Class) from distribution 'dist 1.0'``."""
        return f"plug-in {self.name!r} ({self.value}) from distribution {self.distribution!r}"

    def line(self) -> str:
        """The one line a user sees for a refused plug-in."""
        return f"{self.describe()} left out: {self.problem}"


#: a check returns ``None`` when ``obj`` is fit for ``name``, else the reason it is not
Check = Callable[[str, object], str | None]


@dataclass
class PluginSet:
    """The plug-ins of one group: the usable ones by name and the refused ones."""

    usable: dict[str, Plugin] = field(default_factory=dict)
    refused: list[Plugin] = field(default_factory=list)

    def refused_named(self, name: str) -> Plugin | None:
        return next((plugin for plugin in self.refused if plugin.name == name), None)


def _distribution(entry_point: EntryPoint) -> str:
    dist = entry_point.dist
    if dist is None:
        return "unknown"
    return f"{dist.metadata['Name']} {dist.version}"


def discover(group: str, builtins: Collection[str], check: Check) -> PluginSet:
    """Load every entry point of ``group``; refuse the unfit ones and warn about each.

    ``builtins`` are names that plug-ins may not take; ``check(name, obj)`` says what is wrong
    with a loaded object, if anything. Two plug-ins with one name are both refused: which one
    is meant cannot be guessed.
    """
    # here, not at the top: importlib.metadata (and the email package it pulls) costs every
    # MPI rank ~15 ms at start-up, and a look-up of a built-in name never discovers
    from importlib.metadata import entry_points

    found: list[Plugin] = []
    for entry_point in entry_points(group=group):
        plugin = Plugin(group, entry_point.name, entry_point.value, _distribution(entry_point))
        if entry_point.name in builtins:
            found.append(_refuse(plugin, "the name is a built-in's"))
            continue
        try:
            obj = entry_point.load()
        except Exception as error:  # any failure inside a third-party import is its own
            found.append(_refuse(plugin, f"import failed: {type(error).__name__}: {error}"))
            continue
        problem = check(entry_point.name, obj)
        found.append(_refuse(plugin, problem) if problem else _accept(plugin, obj))
    result = PluginSet()
    names = [plugin.name for plugin in found if plugin.problem is None]
    for plugin in found:
        if plugin.problem is None and names.count(plugin.name) > 1:
            others = [p.distribution for p in found if p.name == plugin.name and p is not plugin]
            plugin = _refuse(plugin, f"the name is also registered by {', '.join(others)}")
        if plugin.problem is None:
            result.usable[plugin.name] = plugin
        else:
            result.refused.append(plugin)
            warnings.warn(plugin.line(), PluginWarning, stacklevel=3)
    return result


def _refuse(plugin: Plugin, problem: str) -> Plugin:
    return Plugin(plugin.group, plugin.name, plugin.value, plugin.distribution, None, problem)


def _accept(plugin: Plugin, obj: object) -> Plugin:
    return Plugin(plugin.group, plugin.name, plugin.value, plugin.distribution, obj, None)


class LazyPlugins:
    """The plug-ins of one group, discovered on first use and kept for the process.

    ``reset()`` forgets them (tests install and remove distributions on ``sys.path``).
    """

    def __init__(self, group: str, builtins: Callable[[], Collection[str]], check: Check):
        self.group = group
        self._builtins = builtins
        self._check = check
        self._found: PluginSet | None = None
        self._lock = threading.Lock()

    def get(self) -> PluginSet:
        with self._lock:
            if self._found is None:
                self._found = discover(self.group, self._builtins(), self._check)
            return self._found

    def reset(self) -> None:
        with self._lock:
            self._found = None

    def require_usable(self, name: str) -> None:
        """Raise ``PluginError`` when ``name`` is a refused plug-in of this group."""
        refused = self.get().refused_named(name)
        if refused is not None:
            raise PluginError(refused.line())


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, PluginWarning):
        print(f"gradcode: warning: {message}", file=file or sys.stderr)
    else:
        _PYTHON_SHOWWARNING(message, category, filename, lineno, file, line)


_PYTHON_SHOWWARNING = warnings.showwarning


def one_line_plugin_warnings() -> None:
    """Show each ``PluginWarning`` as one line, ``gradcode: warning: ...``, on stderr.

    For programs (the command line, the MPI entry point, the workflow); other warnings keep
    Python's format.
    """
    warnings.showwarning = _show_warning


def constructor_problem(cls: type) -> str | None:
    """What keeps ``cls(**params)`` from taking every parameter by keyword (``None``:
    nothing): a run file or a spec gives parameters by name only."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError) as error:
        return f"{cls.__name__}'s constructor has no readable signature ({error})"
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.VAR_POSITIONAL):
            return (
                f"bad signature {cls.__name__}{signature}: parameter {parameter.name!r} cannot "
                "be given by keyword"
            )
    return None


class NamedClasses:
    """Name -> class for one kind of plug-in object (codes, attacks, aggregators, models): the
    built-ins (``"module:Class"`` below ``package``, imported on first use), the group's
    installed plug-ins and classes registered at run time, in that order of precedence; a name
    is taken once. ``check(name, cls)`` says what keeps a class from serving (``None``:
    nothing); ``taken`` is what a refused ``register`` says of a name in use."""

    def __init__(
        self,
        kind: str,
        package: str,
        builtins: dict[str, str],
        group: str,
        check: Check,
        *,
        taken: str = "one of that name exists",
    ) -> None:
        self.kind, self.package, self.builtins, self.check = kind, package, builtins, check
        self.taken = taken
        self.plugins = LazyPlugins(group, lambda: self.builtins, check)
        self._registered: dict[str, type] = {}

    def _plugin_classes(self) -> dict[str, type]:
        return {name: plugin.obj for name, plugin in self.plugins.get().usable.items()}  # type: ignore[misc]

    def register(self, name: str, cls: type) -> None:
        """Make ``cls`` available as ``name`` in this process (``ValueError`` for an unfit
        class or a name taken)."""
        problem = self.check(name, cls)
        if problem:
            raise ValueError(f"cannot register {self.kind} {name!r}: {problem}")
        taken = name in self.builtins or name in self._plugin_classes()
        if taken or self._registered.get(name, cls) is not cls:
            raise ValueError(f"cannot register {self.kind} {name!r}: {self.taken}")
        self._registered[name] = cls

    def unregister(self, name: str) -> None:
        """Forget a class ``register`` added; unknown names are ignored."""
        self._registered.pop(name, None)

    def available(self) -> list[str]:
        """Every name ``cls`` accepts, sorted."""
        return sorted({*self.builtins, *self._plugin_classes(), *self._registered})

    def offers(self, name: str) -> bool:
        """``name in available()``, without discovering the plug-ins for a built-in or a
        registered name (discovery reads every installed distribution's metadata)."""
        return name in self.builtins or name in self._registered or name in self._plugin_classes()

    def source(self, name: str) -> str:
        """``built-in``, ``registered`` or the plug-in's distribution."""
        if name in self.builtins:
            return "built-in"
        if name in self._registered:
            return "registered"
        plugins = self.plugins.get().usable
        if name in plugins:
            return f"plug-in {plugins[name].distribution}"
        raise UnknownNameError(self.kind, name, self.available())

    def cls(self, name: str) -> type:
        """The class serving as ``name``."""
        if name in self.builtins:
            module_name, class_name = self.builtins[name].split(":")
            module = importlib.import_module(f"{self.package}.{module_name}")
            return getattr(module, class_name)
        if name in self._registered:
            return self._registered[name]
        plugins = self._plugin_classes()
        if name in plugins:
            return plugins[name]
        self.plugins.require_usable(name)
        raise UnknownNameError(self.kind, name, self.available())

    def build(self, name: str, params: Mapping[str, Any] | None = None) -> Any:
        """An instance of ``name`` with ``params``; a bad parameter is a one-line
        ``ParameterError``."""
        cls = self.cls(name)
        try:
            return cls(**dict(params or {}))
        except TypeError as error:
            raise ParameterError(f"{self.kind} {name}: {error}") from None

"""Name -> attack class: the built-ins (imported lazily), the attacks of installed packages
(entry-point group ``gradcode.attacks``, see ``gradcode.plugins``) and attacks registered at
run time (``register``)."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from gradcode.attacks.base import Attack
from gradcode.errors import ParameterError, UnknownNameError
from gradcode.plugins import ATTACKS_GROUP, LazyPlugins

#: attack name -> "module:Class" below ``gradcode.attacks``
ATTACKS: dict[str, str] = {
    "noise": "noise:NoiseAttack",
    "reversed": "reversed:ReversedAttack",
    "constant": "constant:ConstantAttack",
    "alie": "alie:ALIEAttack",
    "ipm": "ipm:InnerProductAttack",
}

#: the attack a run file's old ``adversaries: {workers, scale}`` form means
DEFAULT_ATTACK = "noise"

_REGISTERED: dict[str, type[Attack]] = {}


def class_problem(name: str, cls: object) -> str | None:
    """What keeps ``cls`` from serving as attack ``name`` (``None``: nothing)."""
    if not (isinstance(cls, type) and issubclass(cls, Attack)):
        return f"{cls!r} is not a gradcode.attacks.Attack subclass"
    if cls.name != name:
        return f"the class {cls.__name__} is named {cls.name!r}, not {name!r}"
    if inspect.isabstract(cls):
        return f"{cls.__name__} does not implement {', '.join(sorted(cls.__abstractmethods__))}"
    if not isinstance(cls.omniscient, bool) or not isinstance(cls.min_honest, int):
        return f"{cls.__name__} declares omniscient (bool) and min_honest (int) wrongly"
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


#: attacks of installed packages (entry-point group ``gradcode.attacks``)
PLUGINS = LazyPlugins(ATTACKS_GROUP, lambda: ATTACKS, class_problem)


def _plugin_classes() -> dict[str, type[Attack]]:
    return {name: plugin.obj for name, plugin in PLUGINS.get().usable.items()}  # type: ignore[misc]


def register(name: str, cls: type[Attack]) -> None:
    """Make ``cls`` available as attack ``name`` in this process (``ValueError`` for an unfit
    class or a name taken)."""
    problem = class_problem(name, cls)
    if problem:
        raise ValueError(f"cannot register attack {name!r}: {problem}")
    if name in ATTACKS or name in _plugin_classes() or _REGISTERED.get(name, cls) is not cls:
        raise ValueError(f"cannot register attack {name!r}: an attack of that name exists")
    _REGISTERED[name] = cls


def unregister(name: str) -> None:
    """Forget an attack ``register`` added; unknown names are ignored."""
    _REGISTERED.pop(name, None)


def available() -> list[str]:
    """Names accepted by ``build`` (built-ins, plug-ins, registered attacks), sorted."""
    return sorted({*ATTACKS, *_plugin_classes(), *_REGISTERED})


def source(name: str) -> str:
    """``built-in``, ``registered`` or the plug-in's distribution."""
    if name in ATTACKS:
        return "built-in"
    if name in _REGISTERED:
        return "registered"
    plugins = PLUGINS.get().usable
    if name in plugins:
        return f"plug-in {plugins[name].distribution}"
    raise UnknownNameError("attack", name, available())


def attack_class(name: str) -> type[Attack]:
    """The class implementing attack ``name``."""
    if name in ATTACKS:
        module_name, class_name = ATTACKS[name].split(":")
        return getattr(importlib.import_module(f"gradcode.attacks.{module_name}"), class_name)
    if name in _REGISTERED:
        return _REGISTERED[name]
    plugins = _plugin_classes()
    if name in plugins:
        return plugins[name]
    PLUGINS.require_usable(name)
    raise UnknownNameError("attack", name, available())


def build(name: str, params: Mapping[str, Any] | None = None) -> Attack:
    """Attack ``name`` with ``params``; a bad parameter is a one-line ``ParameterError``."""
    cls = attack_class(name)
    try:
        return cls(**dict(params or {}))
    except TypeError as error:
        raise ParameterError(f"attack {name}: {error}") from None

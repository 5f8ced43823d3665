"""Name -> attack class: the built-ins (imported lazily), the attacks of installed packages
(entry-point group ``gradcode.attacks``, see ``gradcode.plugins``) and attacks registered at
run time (``register``)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from gradcode.attacks.base import Attack
from gradcode.plugins import ATTACKS_GROUP, NamedClasses, constructor_problem

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
    return constructor_problem(cls)


#: the built-ins, the attacks of installed packages (entry-point group ``gradcode.attacks``)
#: and those registered at run time
CLASSES = NamedClasses("attack", "gradcode.attacks", ATTACKS, ATTACKS_GROUP, class_problem)
PLUGINS = CLASSES.plugins
register = CLASSES.register
unregister = CLASSES.unregister
available = CLASSES.available
source = CLASSES.source


def attack_class(name: str) -> type[Attack]:
    """The class implementing attack ``name``."""
    return CLASSES.cls(name)


def build(name: str, params: Mapping[str, Any] | None = None) -> Attack:
    """Attack ``name`` with ``params``; a bad parameter is a one-line ``ParameterError``."""
    return CLASSES.build(name, params)

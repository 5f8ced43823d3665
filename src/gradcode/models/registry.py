"""Name -> model class: the built-ins (imported on first use, so that naming a network costs
nothing until one is built), the models of installed packages (entry-point group
``gradcode.models``, see ``gradcode.plugins``) and models registered at run time."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from gradcode.models.base import TASKS, Model
from gradcode.plugins import MODELS_GROUP, NamedClasses, constructor_problem

#: model kind -> "module:Class" below ``gradcode.models`` (the networks need the ``nn`` extra)
MODELS: dict[str, str] = {
    "logistic": "logistic:LogisticRegression",
    "linear": "linear:LinearRegression",
    "mlp": "nn.mlp:MLP",
    "coded-reduce-cnn": "nn.cnn:CodedReduceCNN",
}


def class_problem(name: str, cls: object) -> str | None:
    """What keeps ``cls`` from serving as model ``name`` (``None``: nothing)."""
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        return f"{cls!r} is not a gradcode.models.Model subclass"
    if getattr(cls, "kind", None) != name:
        return f"the class {cls.__name__} is of kind {getattr(cls, 'kind', None)!r}, not {name!r}"
    if getattr(cls, "task", None) not in TASKS:
        return f"{cls.__name__} declares task {getattr(cls, 'task', None)!r}, not one of {TASKS}"
    if inspect.isabstract(cls):
        return f"{cls.__name__} does not implement {', '.join(sorted(cls.__abstractmethods__))}"
    return constructor_problem(cls)


#: the built-ins, the models of installed packages (entry-point group ``gradcode.models``) and
#: those registered at run time
CLASSES = NamedClasses("model", "gradcode.models", MODELS, MODELS_GROUP, class_problem)
PLUGINS = CLASSES.plugins
register = CLASSES.register
unregister = CLASSES.unregister
available = CLASSES.available
source = CLASSES.source


def model_class(kind: str) -> type[Model]:
    """The class implementing model ``kind``; a network without the ``nn`` extra installed is
    ``gradcode.extras.MissingExtra`` (one line naming the extra)."""
    return CLASSES.cls(kind)


def build(kind: str, params: Mapping[str, Any] | None = None) -> Model:
    """Model ``kind`` with ``params``; a bad parameter is a one-line ``ParameterError``."""
    return CLASSES.build(kind, params)


def task(kind: str) -> str:
    """The ``meta["task"]`` of the data model ``kind`` trains on."""
    return model_class(kind).task

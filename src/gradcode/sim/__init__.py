"""Monte Carlo simulation of completion times and communication load.

- ``spec``: simulation specs (model, parameters, scheme configurations), strictly validated;
- ``presets``: the specs that reproduce the papers' results;
- ``montecarlo.simulate``: the seeded, chunked driver with common random numbers;
- ``stats``: running moments and confidence intervals;
- ``table``: result rows, CSV and JSON sidecar;
- ``cli``: ``gradcode simulate``.

The names below load their module on first use: the workflow's rule files import
``gradcode.sim.table`` for a file name, and every Snakemake process (each SLURM job's, each
dry run) paid for ``scipy.stats`` through ``montecarlo`` when this file imported it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gradcode.sim.montecarlo import simulate
    from gradcode.sim.presets import available_presets, preset
    from gradcode.sim.spec import Spec, SpecError, load_spec, read_spec
    from gradcode.sim.table import ResultRow, write_table

#: each public name and the module that defines it
_HOMES = {
    "simulate": "montecarlo",
    "available_presets": "presets",
    "preset": "presets",
    "Spec": "spec",
    "SpecError": "spec",
    "load_spec": "spec",
    "read_spec": "spec",
    "ResultRow": "table",
    "write_table": "table",
}

__all__ = [
    "ResultRow",
    "Spec",
    "SpecError",
    "available_presets",
    "load_spec",
    "preset",
    "read_spec",
    "simulate",
    "write_table",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'gradcode.sim' has no attribute {name!r}")
    value = getattr(import_module(f"gradcode.sim.{home}"), name)
    globals()[name] = value
    return value

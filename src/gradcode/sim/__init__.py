"""Monte Carlo simulation of completion times and communication load.

- ``spec``: simulation specs (model, parameters, scheme configurations), strictly validated;
- ``presets``: the specs that reproduce the papers' results;
- ``montecarlo.simulate``: the seeded, chunked driver with common random numbers;
- ``stats``: running moments and confidence intervals;
- ``table``: result rows, CSV and JSON sidecar;
- ``cli``: ``gradcode simulate``.
"""

from gradcode.sim.montecarlo import simulate
from gradcode.sim.presets import available_presets, preset
from gradcode.sim.spec import Spec, SpecError, load_spec, read_spec
from gradcode.sim.table import ResultRow, write_table

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

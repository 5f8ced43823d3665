"""The ``scheme`` section of a run file (``gradcode.runfile.config``) for a code, to paste::

    scheme:
      name: ye-abbe
      params: {n: 8, d: 4, s: 1, m: 3, points: paper}

``params`` are the code's own ``params()`` (every parameter, defaults spelt out), so
``build(name, **params)`` rebuilds the very code that was simulated.
"""

from __future__ import annotations

import math

import yaml

from gradcode.codes import GradientCode
from gradcode.jsonable import to_jsonable


def run_file_lines(code: GradientCode) -> str:
    """The ``scheme:`` section for ``code`` (three lines, flow-style ``params``, no final
    newline)."""
    params = to_jsonable(code.params())
    flow = yaml.safe_dump(params, default_flow_style=True, sort_keys=False, width=math.inf)
    return f"scheme:\n  name: {code.name}\n  params: {flow.strip()}"

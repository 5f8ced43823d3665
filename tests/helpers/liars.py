"""Workers that really send what the master must refuse, for MPI runs.

Two ways, both test-only (nothing here is in the package):

- ``nonfinite_attacks(root)``: a plug-in distribution (``liarplug``) with the attack
  ``non-finite`` (``value``: ``nan``, ``inf`` or ``-inf``): not omniscient, so the worker itself
  forges its message (``gradcode.train.worker``) and the NaN or infinity crosses the network;
  put the folder returned on the job's ``PYTHONPATH`` (``liar_environment``); and
  ``non-finite-omniscient``, the same forged at the master (``gradcode.train.master``);
- ``RANK_PROGRAM``: the rank program (``python liar_rank.py --rank R --send KIND RUN.yaml ...``)
  that runs ``gradcode.train`` unchanged on every rank but ``R``, and on ``R`` replaces each
  result the worker's outbox sends with the raw bytes ``KIND`` names (``MALFORMATIONS``):
  another length, dtype, tag or header, through MPI like any message.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gradcode.launch.jobs import mpiexec

ATTACKS = '''"""A liar that sends NaN or infinity."""

import numpy as np

from gradcode.attacks import Attack, AttackError


class NonFinite(Attack):
    """Every value of the message becomes ``value`` but the first (finite, a sum stays
    NaN or infinite all the same)."""

    name = "non-finite"

    def __init__(self, value="nan"):
        if value not in ("nan", "inf", "-inf"):
            raise AttackError(f"attack non-finite: value must be nan, inf or -inf (got {value!r})")
        self.value = value

    def params(self):
        return {"value": self.value}

    def forge(self, own, honest, rng):
        forged = np.full_like(own, float(self.value))
        forged[0] = 1.0
        return forged


class NonFiniteOmniscient(NonFinite):
    """The same, emulated at the master (an omniscient attack's path)."""

    name = "non-finite-omniscient"
    omniscient = True
    min_honest = 1
'''

ENTRY_POINTS = """\
[gradcode.attacks]
non-finite = liarplug.attacks:NonFinite
non-finite-omniscient = liarplug.attacks:NonFiniteOmniscient
"""


def nonfinite_attacks(root: Path) -> Path:
    """Write the ``liarplug`` distribution below ``root``; the folder to put on the path."""
    package = root / "liarplug"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "attacks.py").write_text(ATTACKS)
    info = root / "liarplug-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: liarplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return root


def liar_environment(site: Path) -> dict[str, str]:
    """The job's environment with ``site`` on ``PYTHONPATH`` (ahead of what is there)."""
    path = os.environ.get("PYTHONPATH", "")
    return {"PYTHONPATH": f"{site}{os.pathsep}{path}" if path else str(site)}


#: what ``RANK_PROGRAM`` sends in place of a result, and why the master must refuse it
MALFORMATIONS = {
    "short": "one float short",
    "long": "100 floats too long (MPI truncates it)",
    "huge": "a million floats (oversized, rendezvous)",
    "int32": "the message as int32 (half the bytes)",
    "bytes": "7 raw bytes",
    "header-worker": "a header naming another worker",
    "tag": "a header of iteration t under the tag of iteration t + 1",
    "iteration": "a header of iteration t + 3 under its own tag",
    "nan-header": "NaN in the header's timing",
    "nan": "NaN as the message's last value",
    "done": "honest results, then a DONE report of NaN",
}

RANK_PROGRAM = Path(__file__).with_name("liar_rank.py")


def liar_command(ranks: int, rank: int, kind: str, run_file: Path, *args: str) -> list[str]:
    """``mpiexec -n RANKS python liar_rank.py --rank RANK --send KIND RUN_FILE ARGS...``."""
    program = [sys.executable, str(RANK_PROGRAM), "--rank", str(rank), "--send", kind]
    return [mpiexec(), "-n", str(ranks), *program, str(run_file), *args]

"""``mpiexec -n N python tests/capabilities/toy_train.py RUN.yaml ...``: the unmodified MPI entry
point (``python -m gradcode.train``) in a process that has registered the toy codes first, as a
user's own launcher (or, later, a plug-in) would."""

import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.capabilities.toy_codes import register_toy_codes

register_toy_codes()
runpy.run_module("gradcode.train", run_name="__main__", alter_sys=True)

"""``mpiexec -n N python -m gradcode.train RUN.yaml [--out DIR] [--fresh]`` (validate a run file
without MPI: ``gradcode train check RUN.yaml``)."""

import sys

from gradcode.plugins import one_line_plugin_warnings
from gradcode.train.run import main

one_line_plugin_warnings()
sys.exit(main())

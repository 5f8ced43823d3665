"""``mpiexec -n N python -m gradcode.train RUN.yaml [--out DIR] [--fresh]`` (validate a run file
without MPI: ``gradcode train check RUN.yaml``)."""

import sys

from gradcode.train.mpilib import select_for_launcher

# before mpi4py loads a library: Open MPI's when its launcher started this rank
select_for_launcher()

from gradcode.plugins import one_line_plugin_warnings  # noqa: E402
from gradcode.train.run import main  # noqa: E402

one_line_plugin_warnings()
sys.exit(main())

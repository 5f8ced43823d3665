"""``mpiexec -n N python -m gradcode.train RUN.yaml [--out DIR] [--fresh]`` (validate a run file
without MPI: ``gradcode train check RUN.yaml``)."""

import sys

from gradcode.train.run import main

sys.exit(main())

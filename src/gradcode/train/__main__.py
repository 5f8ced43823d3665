"""``mpiexec -n N python -m gradcode.train RUN.yaml [--out DIR] [--fresh] [--check]``."""

import sys

from gradcode.train.run import main

sys.exit(main())

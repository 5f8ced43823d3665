import sys

from gradcode.cli import main

sys.exit(main())

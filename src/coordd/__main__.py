"""`python -m coordd`."""

import sys

from coordd.cli import main

sys.exit(main())

"""`python -m coordd_apps.cli`, the same as `coord`."""

import sys

from coordd_apps.cli import main

sys.exit(main())

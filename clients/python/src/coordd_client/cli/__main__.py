"""`python -m coordd_client.cli`, the same as `coord`."""

import sys

from coordd_client.cli import main

sys.exit(main())

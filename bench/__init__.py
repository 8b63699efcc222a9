"""`make bench`: coordd's benchmark suite (not tests; nothing here asserts a timing).

The bench reuses the suite's helpers rather than keeping copies: the host
tier's fake model APIs and world (tests/hosts) and the throwaway PostgreSQL
cluster (tests/servers.py). So `tests/` is importable from every bench module,
as pytest's `pythonpath` makes it for the suite.
"""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent.parent / "tests")
if _TESTS not in sys.path:
    sys.path.append(_TESTS)

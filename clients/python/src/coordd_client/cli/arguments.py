"""Arguments several commands take, declared once."""

from __future__ import annotations

import argparse

from coordd_client.cli.registry import arg
from coordd_client.protocol.wire import STATES


def positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


TASK_ID = arg("id", type=int)
FENCE = arg("--fence", type=int, help="the fence your claim returned (refused if stale)")
LEASE = arg("--lease", type=positive_float, help="seconds (default 600)")
KIND = arg("-k", "--kind")
#: `--state` takes exactly the states the wire types name.
STATE_CHOICES = list(STATES)

"""Arguments several commands take, declared once."""

from __future__ import annotations

import argparse

from coordd_apps.cli.registry import arg
from coordd_wire.wire import STATES


def positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def task_id(text: str) -> int:
    """A task id as agents write it: `42` or `#42`."""
    try:
        value = int(text.removeprefix("#"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a task id (42 or #42)") from None
    if value < 1:
        raise argparse.ArgumentTypeError("task ids start at 1")
    return value


_SCALE = {"": 1, "k": 1000, "m": 1_000_000, "g": 1_000_000_000}


def tokens(text: str) -> int:
    """A token count as people write one: `2000000`, `2M`, `500k`, `1.5M` (issue 48)."""
    number, unit = text.strip().lower(), ""
    if number and number[-1] in "kmg":
        number, unit = number[:-1], number[-1]
    try:
        value = round(float(number) * _SCALE[unit])
    except (ValueError, OverflowError):  # "", "nan", "inf" are no count either
        raise argparse.ArgumentTypeError(f"{text!r} is not a token count (2M, 500k)") from None
    if value < 1:
        raise argparse.ArgumentTypeError("a budget is at least 1 token")
    return value


TASK_ID = arg("id", type=task_id, help="the task's id (42 or #42)")
FENCE = arg("--fence", type=int, help="the fence your claim returned (refused if stale)")
LEASE = arg("--lease", type=positive_float, help="seconds (default 600)")
#: A claim's key (docs/PROTOCOL-1.2.md section 5a): every claim gets a fresh one and is
#: asked again with it when its answer is lost; given by hand only to learn what a claim
#: won whose answer never came (its error names the key).
REQUEST_KEY = arg(
    "--request-key",
    metavar="KEY",
    help="learn what the claim whose error named KEY won (its answer was lost)",
)
KIND = arg("-k", "--kind")
#: `--state` takes exactly the states the wire types name.
STATE_CHOICES = list(STATES)

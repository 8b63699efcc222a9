"""`coordd service install | uninstall | status` (filled in by the service-manager work)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_service_parser(commands: Any) -> None:
    service = commands.add_parser("service", help="install coordd as a user service")
    service.add_argument("action", choices=["install", "uninstall", "status"])
    service.add_argument("--dry-run", action="store_true")
    service.add_argument("--platform", choices=["systemd", "launchd"])


def run_service_command(args: argparse.Namespace) -> int:
    print("coordd service: not implemented yet", file=sys.stderr)
    return 1

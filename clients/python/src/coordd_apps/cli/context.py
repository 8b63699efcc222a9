"""What every `coord` command shares: exit codes, who and where, the daemon, output."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from coordd_client import boards
from coordd_client.autostart import connect
from coordd_client.client import Client
from coordd_client.discovery import SocketRoute
from coordd_client.identity import Resolved, resolve_agent, resolve_project
from coordd_client.text import clean

#: Agents branch on these (README, "exit codes").
EXIT_OK, EXIT_ERROR, EXIT_TIMEOUT, EXIT_LOST, EXIT_EMPTY = 0, 1, 2, 3, 4


@dataclass
class Context:
    """One invocation: its parsed arguments and what they resolve to."""

    args: argparse.Namespace
    json: bool
    #: PROTOCOL.md section 1's socket, and whether it was asked for.
    route: SocketRoute
    autostart: bool
    _agent: Resolved | None = None
    _project: Resolved | None = None
    _socket: Path | None = None

    @property
    def socket(self) -> Path:
        """The socket this invocation uses: section 1's, or, when that one was derived and
        nothing accepts on it, the user's daemon found elsewhere (`discovery`); looked up
        once, on first use, so commands that never reach the daemon never look."""
        if self._socket is None:
            self._socket = self.route.locate(may_start=self.autostart)
        return self._socket

    @property
    def who(self) -> Resolved:
        """The agent and where the name came from (`identity.resolve_agent`)."""
        if self._agent is None:
            self._agent = resolve_agent(getattr(self.args, "agent", None))
        return self._agent

    @property
    def where(self) -> Resolved:
        """The project and where it came from (`identity.resolve_project`)."""
        if self._project is None:
            self._project = resolve_project(getattr(self.args, "project", None))
        return self._project

    @property
    def agent(self) -> str:
        return self.who.value

    @property
    def project(self) -> str:
        return self.where.value

    def client(self) -> Client:
        """A connected client, starting a daemon first unless told not to; on the board
        this shell's tab works on, if it runs in a host's tab (`boards.check`)."""
        client = connect(self.socket, autostart=self.autostart, derived=not self.route.explicit)
        try:
            boards.check(client)
        except BaseException:
            client.close()
            raise
        return client

    def emit(self, result: Any, human: str) -> None:
        """One result: the JSON document with --json, else the human line(s)."""
        if self.json:
            sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
        else:
            sys.stdout.write(human + "\n")
        sys.stdout.flush()


def emit_error(json_mode: bool, code: int, message: str, data: dict[str, Any]) -> None:
    """An error: a JSON document on stdout with --json, else one escaped line on stderr."""
    if json_mode:
        document = {"error": {"code": code, "message": message, "data": data}}
        sys.stdout.write(msgspec.json.encode(document).decode() + "\n")
    else:
        sys.stderr.write(f"coord: {clean(message)}\n")

"""A quick worker's check that its caller is this user, where the platform has no
`SO_PEERCRED` (macOS): asked the platform's own way, never an AttributeError that ends
the worker on every call."""

from __future__ import annotations

import socket

import pytest

from coordd_apps.quick import worker


def test_the_caller_check_needs_no_so_peercred(monkeypatch: pytest.MonkeyPatch) -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        assert worker._same_user(ours)  # Linux: SO_PEERCRED, this user
        monkeypatch.delattr(socket, "SO_PEERCRED")
        monkeypatch.setattr("sys.platform", "sunos5")  # nothing else to ask either
        assert worker._same_user(ours)  # the private directory guards it, as the relay

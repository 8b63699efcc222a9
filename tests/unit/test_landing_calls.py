"""`coordd_apps.landing.calls.retrying`: what is retried, what is not, and for how long."""

from __future__ import annotations

import time

import pytest

from coordd_apps.landing.calls import DaemonGone, retrying
from coordd_wire.errors import DaemonUnavailable, LeaseLost, ShuttingDown


def test_the_daemon_away_for_a_while_is_retried_until_it_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(time, "sleep", pauses.append)
    answers: list[Exception | str] = [
        DaemonUnavailable("connection lost: [Errno 32] Broken pipe"),
        ShuttingDown("shutting down"),
        DaemonUnavailable("no coordd answers"),
        "landed",
    ]

    def call() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert retrying("land.finish", call, within_s=60) == "landed"
    assert pauses == [0.1, 0.2, 0.4]  # doubling from FIRST_PAUSE_S


def test_the_daemons_own_answer_is_never_retried() -> None:
    tries = 0

    def call() -> str:
        nonlocal tries
        tries += 1
        raise LeaseLost("landing #1 is failed")

    with pytest.raises(LeaseLost):
        retrying("land.start", call, within_s=60)
    assert tries == 1


def test_a_daemon_away_for_the_whole_window_is_said_plainly() -> None:
    def call() -> str:
        raise DaemonUnavailable("no coordd answers on /tmp/s.sock")

    with pytest.raises(DaemonGone) as gone:
        retrying("land.finish", call, within_s=0.3)
    assert "land.finish: the daemon did not answer for 0.3 s" in gone.value.message
    assert "no coordd answers on /tmp/s.sock" in gone.value.message
    assert isinstance(gone.value, DaemonUnavailable)  # reported as the daemon being away

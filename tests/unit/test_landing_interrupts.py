"""The lander's signal guard: a signal raises `Interrupted` once, is only noted once
deferred, and the handlers before it come back afterwards."""

from __future__ import annotations

import os
import signal

import pytest

from coordd_apps.landing.interrupts import Interrupted, catching


def test_a_signal_interrupts_the_lander_once() -> None:
    before = signal.getsignal(signal.SIGHUP)
    with catching() as guard, pytest.raises(Interrupted) as stopped:
        os.kill(os.getpid(), signal.SIGHUP)
        signal.pause()  # not reached: the handler raised first (or on the pause)
    assert stopped.value.name == "SIGHUP" and guard.caught == signal.SIGHUP
    assert signal.getsignal(signal.SIGHUP) is before


def test_a_deferred_signal_is_only_noted() -> None:
    with catching() as guard:
        guard.defer()  # the target's ref may move from here on
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
        assert guard.caught == signal.SIGTERM and guard.name == "SIGTERM"


def test_a_signal_deferred_before_the_swap_began_still_stops_it_there() -> None:
    """The lander defers from just before the journal lock, which can take a while; a
    signal noted meanwhile is raised when the swap would begin (`raise_caught`)."""
    with catching() as guard:
        guard.defer()
        guard.raise_caught()  # none caught: the swap goes on
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(Interrupted) as stopped:
            guard.raise_caught()
    assert stopped.value.name == "SIGINT"

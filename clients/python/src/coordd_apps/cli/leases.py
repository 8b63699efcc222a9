"""Keeping claims alive: hold (a lease kept alive around a command) and heartbeat."""

from __future__ import annotations

import subprocess
import sys
import threading

from coordd_apps.cli import held
from coordd_apps.cli.arguments import LEASE, TASK_ID, positive_float
from coordd_apps.cli.context import EXIT_LOST, EXIT_OK, Context
from coordd_apps.cli.registry import UsageError, arg, command
from coordd_apps.wording.advice import plural
from coordd_client.client import Client
from coordd_client.text import clean
from coordd_wire.errors import CoordError, LeaseLost
from coordd_wire.wire import Task

#: `hold` renews this often, as a fraction of the lease: two renewals may fail
#: (a busy machine, a daemon restart) before the lease can lapse.
RENEW_FRACTION = 1 / 3
DEFAULT_HOLD_LEASE_S = 600.0


@command(
    "hold",
    "run a command while keeping your lease on a task alive; exit with its status",
    "coord hold 42 -- make test",
    TASK_ID,
    arg("--lease", type=positive_float, default=DEFAULT_HOLD_LEASE_S, help="seconds (600)"),
    arg("cmd", nargs="+", metavar="-- CMD", help="the command to run, after --"),
)
def hold(ctx: Context) -> int:
    args = ctx.args
    lease_s: float = args.lease
    with ctx.client() as client:
        task = client.renew(args.id, ctx.agent, lease_s=lease_s).task  # refused unless ours
    held.remember(ctx.agent, task.id, task.fence)
    keeper = _LeaseKeeper(ctx, task, lease_s)
    keeper.start()
    try:
        status = subprocess.call(args.cmd)
    except FileNotFoundError:
        keeper.stop()
        raise UsageError(f"no such command: {args.cmd[0]}") from None
    except KeyboardInterrupt:
        status = 130
    keeper.stop()
    if keeper.lost is not None:
        return EXIT_LOST
    return status


class _LeaseKeeper:
    """A thread renewing one lease every `lease_s * RENEW_FRACTION` until stopped or lost."""

    def __init__(self, ctx: Context, task: Task, lease_s: float) -> None:
        self._ctx = ctx
        self._task = task
        self._lease_s = lease_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="coord-hold", daemon=True)
        self.lost: LeaseLost | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        ctx, task = self._ctx, self._task
        interval = self._lease_s * RENEW_FRACTION
        while not self._stop.wait(interval):
            try:
                with Client(ctx.socket, timeout_s=interval) as client:
                    client.renew(task.id, ctx.agent, fence=task.fence, lease_s=self._lease_s)
            except LeaseLost as exc:
                self.lost = exc
                held.forget(ctx.agent, task.id)
                sys.stderr.write(
                    f"coord hold: lost the lease on #{task.id}: {clean(exc.message)}"
                    " (the command goes on; coord exits 3 when it ends)\n"
                )
                sys.stderr.flush()
                return
            except CoordError as exc:  # a daemon restart, a busy machine: try again
                sys.stderr.write(f"coord hold: could not renew #{task.id}: {exc.message}\n")


@command(
    "heartbeat",
    "renew every lease you hold; exit 3 if any of your claims was lost",
    "coord heartbeat --lease 900",
    LEASE,
)
def heartbeat(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.heartbeat(ctx.agent, lease_s=ctx.args.lease)
        lost = _lost_claims(client, ctx.agent)
    lines = [f"{ctx.agent}: renewed {plural(result.renewed, 'lease')}"]
    for task_id, now in lost:
        lines.append(f"lost #{task_id}: {now}")
    ctx.emit(
        {"renewed": result.renewed, "lost": [{"id": i, "now": now} for i, now in lost]},
        "\n".join(lines),
    )
    return EXIT_LOST if lost else EXIT_OK


def _lost_claims(client: Client, agent: str) -> list[tuple[int, str]]:
    """Recorded claims (`held`) this agent no longer holds, each with what became of it."""
    lost = []
    for task_id, fence in sorted(held.recorded(agent).items()):
        try:
            task = client.get(task_id).task
        except CoordError:
            held.forget(agent, task_id)
            lost.append((task_id, "it no longer exists"))
            continue
        ours = task.claimed_by == agent and task.fence == fence
        if ours and task.state == "claimed":
            continue
        held.forget(agent, task_id)
        if ours and task.state == "done":
            continue  # finished by this agent through another client: not lost
        if task.state == "claimed":
            now = f"held by {clean(task.claimed_by or '-')} (fence {task.fence})"
        else:
            now = f"it is {task.state}"
        lost.append((task_id, now))
    return lost

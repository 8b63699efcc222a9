"""The writer thread: the only connection that writes (docs/ARCHITECTURE.md).

The sqlx-sqlite ConnectionWorker pattern in trio: one thread owns the write
connection; commands arrive on a queue whose admission is gated on the trio
side; each carries its own reply path. Group commit: every command already
queued runs inside one write transaction (each in a SAVEPOINT of its own
only when one failed and the group runs again), and one COMMIT covers them
all. Nothing is answered, and no event published, before
COMMIT returns. The transaction control that differs between SQLite and
PostgreSQL is the `WriteStore`'s; everything here is the same for both.

Two reply paths. `submit` parks the calling trio task, which one
`TrioToken.run_sync_soon` per batch reschedules. `enqueue_answered` (a
connection's single write requests) carries an `answer` callback that this
thread runs right after COMMIT, writing the client's answer itself; the
per-batch callback then only does the trio-side bookkeeping. Measured on the
bench machine, that took an event-loop wake-up and a task resume off every
claim's critical path (docs/PERFORMANCE.md).

After a disk fault (`WriteStore.is_disk_fault`: the OS failed a write or a
sync) the writer commits nothing more: the group in flight is answered a
retryable -32004 `disk_error`, every command queued after it -32005 unrun,
the daemon is told to stop, and the connection is left unclosed, since
closing would checkpoint from a page cache that may no longer match the disk
(docs/ARCHITECTURE.md, "After a disk error").
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any, TypeVar

import trio
from outcome import Error, Value

from coordd.lifecycle import Lifecycle
from coordd.limits import Limits
from coordd.store import group, transaction
from coordd.store.commands import (
    Answer,
    Command,
    OnCommit,
    Outcome,
    WriteFn,
    WriterStatistics,
    refuse_abort,
)
from coordd.store.write_store import WriteStore
from coordd_wire.errors import CoordError, InternalError, Overloaded, ShuttingDown

R = TypeVar("R")

log = logging.getLogger(__name__)


class Writer:
    """Owns the write connection and the thread that uses it."""

    def __init__(
        self,
        store: WriteStore,
        *,
        on_commit: OnCommit,
        lifecycle: Lifecycle,
        on_instant: Callable[[datetime], None] | None = None,
        on_disk_fault: Callable[[str], None] | None = None,
        on_freed: Callable[[set[str]], None] | None = None,
        may_close: Callable[[], bool] = lambda: True,
    ) -> None:
        self._store = store
        #: Whether the connection may be closed at the end, which checkpoints the WAL
        #: into the file: not before the file passed its check (`store_check`).
        self._may_close = may_close
        #: What every write is answered once the file was found damaged (`refuse`).
        self._refusal: CoordError | None = None
        self._on_commit = on_commit
        #: Told, on the trio thread after COMMIT, the projects whose reservations a
        #: batch ended with no task event to say so (`Txn.freed_projects`): waiting
        #: acquires there may go. Every wake-up comes from what the writer committed.
        self._on_freed = on_freed
        #: Told each group's instant (team mode: the database's clock).
        self._on_instant = on_instant
        #: Told, on the trio thread, that the disk failed a write: the daemon must stop.
        self._on_disk_fault = on_disk_fault
        #: The disk fault that ended this writer's writing, if one did.
        self._fault: Exception | None = None
        # None is the stop sentinel.
        self._queue: queue.SimpleQueue[Command | None] = queue.SimpleQueue()
        self._admission = trio.Semaphore(Limits.write_queue_capacity)
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._agents_seen: dict[str, datetime] = {}
        self._lifecycle = lifecycle
        self._opened = False
        self._transactions = 0
        self._commands = 0
        self._largest_group = 0
        self._committed_seq = 0

    # --- life cycle (trio side) -------------------------------------------

    def open(self) -> None:
        """Open the write connection: recovery and migrations happen here, first."""
        self._committed_seq = self._store.open()
        if self._on_instant is not None:
            # Team mode: the store's clock is known before anything is served, so no
            # answer judges a lease or a reservation by this machine's clock alone.
            self._on_instant(self._store.now())
        self._opened = True

    def start(self) -> None:
        assert self._opened, "open() first"
        self._token = trio.lowlevel.current_trio_token()
        self._thread = threading.Thread(target=self._run, name="coordd-writer", daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        """Finish queued commands, checkpoint (TRUNCATE), close; then return."""
        self._lifecycle.begin_drain()  # whatever stops us, nothing new is admitted
        if self._thread is None:
            if self._opened and self._may_close():
                self._store.close()
            return
        self._queue.put(None)
        await trio.to_thread.run_sync(self._thread.join)

    def refuse(self, refusal: CoordError) -> None:
        """Answer every write from now on with `refusal`, commit nothing more, and leave
        the connection unclosed at the end: the file was found damaged (`store_check`).
        Any thread may call it; a group already running finishes, into the WAL."""
        self._refusal = refusal

    def statistics(self) -> WriterStatistics:
        return WriterStatistics(
            transactions=self._transactions,
            commands=self._commands,
            largest_group=self._largest_group,
            queued=Limits.write_queue_capacity - self._admission.value,
        )

    @property
    def agents_seen(self) -> Mapping[str, datetime]:
        """When each agent's last-seen was written, as far as committed groups say."""
        return MappingProxyType(self._agents_seen)

    @property
    def last_committed_seq(self) -> int:
        """The newest seq whose events have been published on the trio thread."""
        return self._committed_seq

    # --- submitting (trio side) ---------------------------------------------

    async def submit(self, fn: Callable[..., R], *args: Any) -> R:
        """Run `fn(txn, *args)` in the next write transaction; return after COMMIT."""
        result: R = await self._submit(Command(fn, args, transactional=True))
        return result

    async def submit_outside_transaction(self, fn: WriteFn, *args: Any) -> Any:
        """Run `fn(connection, *args)` on the writer thread between transactions."""
        return await self._submit(Command(fn, args, transactional=False))

    def enqueue_answered(
        self, fn: WriteFn, params: Any, answer: Answer, answered: Callable[[], None]
    ) -> bool:
        """Queue `fn(txn, params)` for the writer thread to answer itself; False if refused.

        Not the non-blocking twin of `submit`: the reply takes another path.

        `answer(value, error)` runs on the writer thread right after COMMIT
        (it must not block: the connection's outbox never does);
        `answered()` runs on the trio thread after that, with the batch's
        events published. False when it cannot be admitted at once: the
        caller then falls back to `submit`, which waits for admission.
        """
        if self._lifecycle.draining:
            return False
        try:
            self._admission.acquire_nowait()
        except trio.WouldBlock:
            return False
        self._queue.put(Command(fn, (params,), True, answer, answered))
        return True

    async def _submit(self, command: Command) -> Any:
        if self._lifecycle.draining:
            raise ShuttingDown("the daemon is shutting down")
        try:
            self._admission.acquire_nowait()
        except trio.WouldBlock:
            with trio.move_on_after(Limits.admission_wait_s) as scope:
                await self._admission.acquire()
            if scope.cancelled_caught:
                raise Overloaded(
                    "the write queue is full; retry later", reason="queue_full"
                ) from None
        try:
            self._queue.put(command)
            # Once queued, the SQL runs whatever happens to the caller: wait for
            # the outcome rather than leave it unknown (docs/ARCHITECTURE.md).
            # A bare park that refuses cancellation: cheaper than an Event in a
            # shielded scope, and the same guarantee.
            return await trio.lowlevel.wait_task_rescheduled(refuse_abort)
        finally:
            self._admission.release()

    def _deliver(
        self, outcomes: list[Outcome], events: list[transaction.CommittedEvent], freed: set[str]
    ) -> None:
        """Runs on the trio thread after COMMIT: publish events in order, then wake callers.

        Commands answered by the writer thread were answered already; for
        them this releases admission and tells the connection.
        """
        if events:
            self._committed_seq = events[-1].seq
            try:
                self._on_commit(events)
            except Exception:
                log.exception("publishing committed events failed")
        if freed and self._on_freed is not None:
            try:
                self._on_freed(freed)
            except Exception:
                log.exception("waking the acquires waiting on freed reservations failed")
        for command, value, error in outcomes:
            if command.waiter is not None:
                result = Value(value) if error is None else Error(error)
                trio.lowlevel.reschedule(command.waiter, result)
            else:
                self._admission.release()
                assert command.answered is not None
                command.answered()

    # --- the thread -----------------------------------------------------------

    def _run(self) -> None:
        assert self._opened and self._token is not None
        try:
            stopping = False
            while not stopping:
                first = self._queue.get()
                if first is None:
                    break
                batch = [first]
                while len(batch) < Limits.max_group:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is None:
                        stopping = True
                        break
                    batch.append(item)
                self._run_batch(batch)
        finally:
            if self._fault is None and self._refusal is None and self._may_close():
                self._store.close()
            # After a disk fault, or with the file damaged or not yet checked, the
            # connection stays open until the process exits: closing the last
            # connection checkpoints the WAL into the database file.

    def _run_batch(self, batch: list[Command]) -> None:
        outcomes: list[Outcome] = []
        events: list[transaction.CommittedEvent] = []
        freed: set[str] = set()
        if self._fault is not None:
            refusal = ShuttingDown("the daemon is restarting after a disk error; retry")
            outcomes.extend((command, None, refusal) for command in batch)
            self._answer(outcomes, events, freed)
            return
        if self._refusal is not None:
            outcomes.extend((command, None, self._refusal) for command in batch)
            self._answer(outcomes, events, freed)
            return
        grouped = [command for command in batch if command.transactional]
        if grouped:
            self._run_transaction(grouped, outcomes, events, freed)
        for command in batch:
            if not command.transactional:
                outcomes.append(self._run_raw(command))
        self._answer(outcomes, events, freed)

    def _answer(
        self, outcomes: list[Outcome], events: list[transaction.CommittedEvent], freed: set[str]
    ) -> None:
        for command, value, error in outcomes:
            if command.answer is not None:
                try:
                    command.answer(value, error)
                except Exception:
                    log.exception("answering a write failed")
        assert self._token is not None
        self._token.run_sync_soon(self._deliver, outcomes, events, freed)

    def _run_raw(self, command: Command) -> Outcome:
        try:
            return command, command.fn(self._store.db, *command.args), None
        except Exception as exc:
            return command, None, self._command_error(exc)

    def _run_transaction(
        self,
        commands: list[Command],
        outcomes: list[Outcome],
        events: list[transaction.CommittedEvent],
        freed: set[str],
    ) -> None:
        """One group commit (`store/group.py`, which the tests and the bench run too).

        What the group did reaches the writer only after COMMIT: its answers, its
        events and the agents' last-seen writes alike."""
        try:
            done = group.run_transaction(
                self._store,
                commands,
                self._agents_seen,
                command_error=self._command_error,
                on_instant=self._on_instant,
            )
        except group.Abandoned as stop:
            self._abandon(commands, outcomes, stop.cause)
            return
        except group.Lost as lost:
            outcomes.extend((command, None, lost.error) for command in commands)
            return
        self._transactions += 1
        self._commands += len(commands)
        self._largest_group = max(self._largest_group, len(commands))
        outcomes.extend(
            (command, value, error)
            for command, (value, error) in zip(commands, done.results, strict=True)
        )
        events.extend(done.events)
        freed.update(done.freed)
        if done.seen:
            self._remember(done.seen)

    def _remember(self, seen: dict[str, datetime]) -> None:
        """A committed group's last-seen writes; the cache starts over when it would
        pass `agent_seen_cache` (forgetting costs one write per agent, nothing more)."""
        if len(self._agents_seen) + len(seen) > Limits.agent_seen_cache:
            self._agents_seen.clear()
        self._agents_seen.update(seen)

    def _abandon(self, commands: list[Command], outcomes: list[Outcome], exc: Exception) -> None:
        """The group did not commit: roll back what is left; each command gets the error."""
        try:
            self._store.rollback()
        except Exception as rollback_exc:
            log.warning("rollback after a failed group failed too: %r", rollback_exc)
        error = self._command_error(exc)
        outcomes.extend((command, None, error) for command in commands)

    def _command_error(self, exc: Exception) -> CoordError:
        if isinstance(exc, CoordError):
            return exc
        if self._store.is_disk_fault(exc):
            self._disk_fault(exc)
            return Overloaded(
                "the disk failed this write, which was not acknowledged; the daemon"
                " restarts to recover from its log: retry",
                reason="disk_error",
            )
        mapped = self._store.map_error(exc)
        if mapped is not None:
            return mapped
        log.error("write command failed: %r", exc, exc_info=exc)
        return InternalError(f"internal error: {exc!r}")

    def _disk_fault(self, exc: Exception) -> None:
        """Stop writing for good: the kernel may have dropped the pages it could not
        write and cleared the error, so a later sync could succeed over lost data
        (PostgreSQL's fsyncgate). The answer is PostgreSQL's: stop, and let the next
        start recover from the log, the path `kill -9` takes."""
        if self._fault is not None:
            return
        self._fault = exc
        self._lifecycle.begin_drain()  # from now on no write is admitted
        log.critical(
            "the disk failed a write of the store (%s): nothing more is committed; the"
            " daemon stops so that its next start recovers from the WAL",
            exc,
        )
        if self._on_disk_fault is not None:
            assert self._token is not None
            self._token.run_sync_soon(self._on_disk_fault, str(exc))

"""Messages to names never seen (1.2 section 12, issue 44): a cap when sent, an end after.

A name the daemon has never seen (no `agents` row: nothing ever called under
it) is most often a typo, and a message kept for it is kept for nobody: 3,000
messages of 8 KiB to one misspelt name were 48 MiB that nothing would ever
delete. It may also be a tab that starts later, so such a message is still
taken, up to a backlog: `Limits.unseen_inbox_cap` for one name,
`Limits.unseen_sender_cap` for what one sender keeps waiting for all such
names (without it, one message each to 3,000 typos grows as surely), and
`Limits.unseen_messages_cap` for all of them together, whoever sent them.
The second is per sender so that one looping agent exhausts its own
allowance, not the board's: the others can still message a tab that has
not started yet. The person (`human-<user>`, the clients' one name for
them) is never "never seen": a message to them is always kept. Past a cap, a message
addressed to the name (`to`, or a reply that resolves to it) is refused with
`RecipientNeverSeen`: a loud refusal the sender can act on beats a loss nobody
hears about. A thread's member that was never seen (an assignee not started)
is left out of that one message instead: the others still get it, and the
result's `recipients` says who did.

What a never-seen name was sent is marked (`message_recipients.unseen_since`)
and deleted by the event-retention duty once older than
`Limits.unseen_message_max_age_s`, unless the name has been seen by then: the
first call under it makes those messages its own, kept like any other.
Nothing here runs on the claim path.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from coordd.clock import format_time
from coordd.limits import Limits
from coordd.store.sql import Db
from coordd.store.transaction import Txn
from coordd_wire.errors import RecipientNeverSeen

#: Names per `IN (...)` list: well below either store's limit on parameters.
_CHUNK = 500
#: How the refusal tells the sender to check the name (the CLI's, then the method).
_CHECK = "check the name with `coord agents --all` (agent.list)"


#: The clients name the person `human-<user>` on every surface (coordd_client.human):
#: a person is there whether or not a surface of theirs has called yet.
PERSON_PREFIX = "human-"


def never_seen(conn: Db, names: Sequence[str]) -> set[str]:
    """Those of `names` that have no `agents` row and are not the person's."""
    unique = [name for name in dict.fromkeys(names) if not name.startswith(PERSON_PREFIX)]
    seen: set[str] = set()
    for start in range(0, len(unique), _CHUNK):
        chunk = unique[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        rows = conn.execute(f"SELECT agent FROM agents WHERE agent IN ({marks})", chunk)
        seen.update(agent for (agent,) in rows.fetchall())
    return set(unique) - seen


def _waiting_for(conn: Db, name: str) -> int:
    """Messages held for `name`: all unread, since acknowledging would have made it seen."""
    (count,) = conn.execute(
        "SELECT count(*) FROM message_recipients WHERE agent = ?", (name,)
    ).fetchone()
    return int(count)


#: What waits for names never seen (the partial index's rows, less those of names
#: seen since the last retention run); `_BY_SENDER` narrows it to one sender's.
_WAITING_FOR_UNSEEN = (
    "SELECT count(*) FROM message_recipients AS mr WHERE mr.unseen_since IS NOT NULL"
    " AND NOT EXISTS (SELECT 1 FROM agents AS a WHERE a.agent = mr.agent)"
)
_BY_SENDER = " AND EXISTS (SELECT 1 FROM messages AS m WHERE m.id = mr.message_id AND m.sender = ?)"


def _waiting_for_all(conn: Db) -> int:
    (count,) = conn.execute(_WAITING_FOR_UNSEEN).fetchone()
    return int(count)


def _waiting_from(conn: Db, sender: str) -> int:
    (count,) = conn.execute(_WAITING_FOR_UNSEEN + _BY_SENDER, (sender,)).fetchone()
    return int(count)


def admit(
    tx: Txn, sender: str, recipients: list[str], field: str | None
) -> tuple[list[str], frozenset[str]]:
    """The recipients one message of `sender`'s may go to, and which were never seen.

    `field` names the param that addressed the one recipient (`to`, `reply_to`):
    past a cap that recipient is refused. With None (a thread), a never-seen
    member past a cap is left out and the rest still get the message.
    """
    unseen = never_seen(tx.conn, recipients)
    if not unseen:
        return recipients, frozenset()
    total = _waiting_for_all(tx.conn)
    mine = _waiting_from(tx.conn, sender)
    admitted: set[str] = set()
    for name in sorted(unseen):
        waiting = _waiting_for(tx.conn, name)
        if (
            waiting < Limits.unseen_inbox_cap
            and mine < Limits.unseen_sender_cap
            and total < Limits.unseen_messages_cap
        ):
            admitted.add(name)
            total += 1
            mine += 1
        elif field is not None:
            raise _refusal(name, field, waiting, mine, total)
    return [r for r in recipients if r not in unseen or r in admitted], frozenset(admitted)


def _refusal(name: str, field: str, waiting: int, mine: int, total: int) -> RecipientNeverSeen:
    ending = (
        "they go when a tab starts under the name, or after"
        f" {Limits.unseen_message_max_age_s / 86400:g} days"
    )
    if waiting >= Limits.unseen_inbox_cap:
        held, limit = waiting, Limits.unseen_inbox_cap
        why = (
            f"{waiting} unread messages wait for it already"
            f" (a name never seen holds at most {limit})"
        )
    elif mine >= Limits.unseen_sender_cap:
        held, limit = mine, Limits.unseen_sender_cap
        why = (
            f"you have {mine} unread messages waiting for names never seen already (at most"
            f" {limit} from one sender; {ending})"
        )
    else:
        held, limit = total, Limits.unseen_messages_cap
        why = (
            f"names never seen hold {total} unread messages already (at most {limit} in all;"
            f" {ending})"
        )
    return RecipientNeverSeen(
        f"{name!r} has never been seen by this daemon (no call was ever made under that"
        f" name), and {why}: {_CHECK}"
        f" - at `$.{field}`",
        field=field,
        agent=name,
        unread=held,
        limit=limit,
    )


def purge(tx: Txn) -> int:
    """The retention duty's part (once a minute): release the marks of names seen
    since, then delete what names still never seen were sent before the cutoff.

    A message to one agent goes with its only recipient row; a thread's message
    stays for its other members."""
    tx.conn.execute(
        "UPDATE message_recipients SET unseen_since = NULL WHERE unseen_since IS NOT NULL"
        " AND agent IN (SELECT agent FROM agents)"
    )
    cutoff = format_time(tx.now - timedelta(seconds=Limits.unseen_message_max_age_s))
    gone = tx.conn.execute(
        "DELETE FROM message_recipients WHERE unseen_since IS NOT NULL AND unseen_since <= ?"
        " RETURNING message_id",
        (cutoff,),
    ).fetchall()
    if gone:
        tx.conn.executemany(
            "DELETE FROM messages WHERE id = ? AND audience = 'agent'",
            [(message_id,) for (message_id,) in gone],
        )
    return len(gone)

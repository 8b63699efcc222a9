"""Several independent calls in one round trip on a blocking `Client` (issue 46).

A hook's board summary asks the daemon seven questions that do not depend on each
other; one after another they cost seven round trips, about a third of a
session-start hook. Sent together on one connection, the daemon answers each as it
comes (JSON-RPC 2.0 answers carry their request's id), and the caller gets them back
in the order asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coordd_client import methods
from coordd_client.client import Client
from coordd_client.rpc import unwrap
from coordd_wire.errors import CoordError


def gather(client: Client, calls: Sequence[methods.Call[Any]]) -> list[Any]:
    """Each call's typed result, or the `CoordError` it ended in (returned, not raised:
    the caller decides which refusal matters), in the order of `calls`.

    The client's default agent and project are filled in as `Client.request` does. No
    call may be one that waits, or a keyed claim (those are retried one by one); a lost
    connection or the client's timeout is raised, a frame-level error is each call's.
    """
    built = [methods.with_defaults(call, client.agent, client.project) for call in calls]
    assert not any(c.waits_s or c.method in methods.KEYED_METHODS for c in built), built
    ids = [client.send_request(c.method, c.params) for c in built]
    answers = client.answers(ids, client.timeout_s)
    results: list[Any] = []
    for request_id, call in zip(ids, built, strict=True):
        try:
            results.append(unwrap(answers[request_id], call.result_type))
        except CoordError as exc:
            results.append(exc)
    return results


def value(result: Any) -> Any:
    """A `gather` result, raising the error it is."""
    if isinstance(result, CoordError):
        raise result
    return result

"""The quick path: a `coord` call served by a warm process of this user's.

A hook or an everyday command paid its interpreter's start and then, several times
over, its imports (msgspec, the client, the CLI's parser): 7-9x a bare `python -c
pass` (issue 46). Here the `coord` process a host starts imports almost nothing
(`relay.py`: `os`, `_socket`); it hands its argv, environment, working directory,
umask, its parent and session, and its own stdin, stdout and stderr (passed as
descriptors) to a server that has the whole client loaded (`server.py`), whose
warm workers serve calls in turn (`worker.py`). The worker takes the caller's
descriptors, directory and environment and runs `coordd_apps.cli.main` as the
caller would have, then puts its own back: the
same code, so the same bytes out and the same exit status (a parity test runs every
quick command both ways and compares them). Where the caller's identity depends on
its process (the tab registry walks its ancestors; a terminal's name is its
session's), the worker asks about the caller's, not its own (`tabs.act_for`).

Anything not on the quick list, or any failure to reach a server, runs in the
calling process as before; a server is then started in the background for the
next call. `$COORD_QUICK=0` turns the quick path off.
"""

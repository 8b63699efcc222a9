"""The fast path of `coord hook EVENT`: the host runs it before every edit of every tab.

A hook's cost is its process's start, and most of that was imports: argparse and
the CLI's registry, context and renderers, `importlib.metadata` (for `--version`),
the autostart machinery. This module reads the few spellings hosts and git are
given (`coord setup` writes them: `coord hook EVENT --host HOST`, with global options
such as `--socket S` before or after) by hand and runs the hook without any of
that. Anything else (`--help`, an abbreviated option, a bad choice, a missing
value) returns None, and `coord` parses it with argparse as before, so every
answer and every error message stays argparse's own.

`bench/hooks.py` times what a hook costs.
"""

from __future__ import annotations

from collections.abc import Sequence

from coordd_apps.hooks.payload import HOSTS, Host

#: Options that take a value, with or without `=`.
_VALUED = frozenset({"--socket", "--agent", "--project", "--host", "--max-wait"})
#: Flags (no value).
_FLAGS = frozenset({"--json", "--no-start"})


def parse(arguments: Sequence[str]) -> dict[str, str] | None:
    """`{"event": ..., option: value}` for a plain `hook` call, or None for argparse.

    A repeated option keeps its last value, as argparse does; a flag is "1".
    """
    found: dict[str, str] = {}
    words = list(arguments)
    at = 0
    positional: list[str] = []
    while at < len(words):
        word = words[at]
        name, equals, value = word.partition("=")
        if name in _VALUED:
            if not equals:
                at += 1
                if at == len(words) or words[at].startswith("-"):
                    return None  # argparse says what is missing
                value = words[at]
            found[name] = value
        elif word in _FLAGS:
            found[word] = "1"
        elif word.startswith("-"):
            return None  # --help, -h, an abbreviation, a negative number, a typo
        else:
            positional.append(word)
        at += 1
    if len(positional) != 2 or positional[0] != "hook":
        return None
    found["event"] = positional[1]
    return found


def main(arguments: Sequence[str]) -> int | None:
    """Run the hook `arguments` name, or None when argparse must read them."""
    from coordd_apps.hooks.run import DEFAULT_WAKE_S, EVENTS

    found = parse(arguments)
    if found is None or found["event"] not in EVENTS:
        return None
    host = found.get("--host")
    if host is not None and host not in HOSTS:
        return None
    try:
        max_wait = float(found.get("--max-wait", DEFAULT_WAKE_S))
    except ValueError:
        return None
    from coordd_apps.hooks.run import Invocation, run
    from coordd_client.discovery import SocketRoute

    chosen: Host | None = next((h for h in HOSTS if h == host), None)
    return run(
        Invocation(
            event=found["event"],
            host=chosen,
            max_wait_s=max_wait,
            agent=found.get("--agent"),
            project=found.get("--project"),
            route=SocketRoute.resolve(found.get("--socket")),
            no_start="--no-start" in found,
        )
    )

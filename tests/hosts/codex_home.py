"""The Codex home a host-tier test runs Codex in: its config.toml and model catalogue.

Why a module of its own: the config is what keeps the real ``codex`` binary on
the local fake (fake_openai.py) and off the network, and the doctor's tests
write the same home without any fake running.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Final

#: The provider id the config registers; the fake is reached only through it.
PROVIDER_ID: Final = "fake"

#: The model name the fake serves, described to Codex by :func:`model_catalog`. Why not a real
#: name: ``gpt-5.5`` puts MCP tools behind ``tool_search`` (a direct call answers
#: "unsupported call"), and a name with no metadata gets no ``apply_patch`` tool at all.
DEFAULT_MODEL: Final = "fake-model"


def model_catalog(model: str = DEFAULT_MODEL) -> str:
    """Return a ``model_catalog_json`` file's text that describes ``model`` to Codex.

    Why: Codex takes a model's tool set from its catalogue entry. This entry asks for the
    freeform ``apply_patch`` tool and the ``shell_command`` tool (as ``gpt-5.5`` has) but
    turns ``supports_search_tool`` off, so MCP tools are offered directly (as the namespace
    ``mcp__<server>``) instead of behind ``tool_search``. The fields are the ones Codex
    0.171.0 refuses to load without; the short ``base_instructions`` keep requests small.
    """
    entry = {
        "slug": model,
        "display_name": "Scripted fake model",
        "base_instructions": "You are a scripted test model.",
        "apply_patch_tool_type": "freeform",
        "shell_type": "shell_command",
        "supports_search_tool": False,
        "prefer_websockets": False,
        "supported_reasoning_levels": [],
        "visibility": "list",
        "supported_in_api": True,
        "priority": 0,
        "support_verbosity": False,
        "truncation_policy": {"mode": "tokens", "limit": 10000},
        "experimental_supported_tools": [],
        "context_window": 272000,
    }
    return json.dumps({"models": [entry]}, indent=2)


def codex_config(
    base_url: str,
    *,
    model: str = DEFAULT_MODEL,
    catalog_path: str | os.PathLike[str] | None = None,
    extra: str = "",
) -> str:
    """Return config.toml text that points Codex at the fake and keeps it off the network.

    Why each part: ``model_provider`` routes every model request to ``base_url``, and
    ``catalog_path`` (a file holding :func:`model_catalog`) gives the model its tools. The
    rest turns off what would otherwise phone home from a test: the update check
    (``check_for_update_on_startup``), analytics, feedback upload, OpenTelemetry export,
    the remote model catalogue (``remote_models``), ChatGPT apps and plugins, web search;
    or would make a run depend on a real service: request compression the fake cannot
    decode, WebSocket transport, retries that hide a broken stream, memories. ``hooks``
    turns lifecycle hooks on. ``extra`` is appended verbatim (MCP servers, project trust,
    hook trust state); it may hold tables only, since it comes after them.
    """
    catalog = f'model_catalog_json = "{os.fspath(catalog_path)}"\n' if catalog_path else ""
    return f"""\
model = "{model}"
model_provider = "{PROVIDER_ID}"
{catalog}approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
web_search = "disabled"

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"
log_user_prompt = false

[history]
persistence = "none"

[features]
hooks = true
remote_models = false
apps = false
plugins = false
remote_plugin = false
tool_suggest = false
enable_request_compression = false
responses_websockets = false
responses_websockets_v2 = false
image_generation = false
memories = false
shell_snapshot = false

[model_providers.{PROVIDER_ID}]
name = "Fake Responses API"
base_url = "{base_url}"
wire_api = "responses"
requires_openai_auth = false
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
{extra}"""


def write_codex_home(codex_home: Path, base_url: str, *, extra: str = "") -> Path:
    """Write ``config.toml`` and the model catalogue into ``codex_home``; return the config.

    Why a helper: the catalogue must be a file and the config must name it by absolute path,
    so every test would otherwise repeat the same two writes.
    """
    codex_home.mkdir(parents=True, exist_ok=True)
    catalog = codex_home / "fake-model-catalog.json"
    catalog.write_text(model_catalog(), encoding="utf-8")
    config = codex_home / "config.toml"
    config.write_text(
        codex_config(base_url, catalog_path=catalog.resolve(), extra=extra), encoding="utf-8"
    )
    return config

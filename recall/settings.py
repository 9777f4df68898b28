"""Settings a person keeps in ``config.toml`` in recall's home (``~/.recall``; ``RECALL_HOME`` moves it).

Only what a flag may need to say every time lives here; a flag given on the command line wins::

    [import]
    embed_budget = 0   # seconds `recall import` may spend embedding; 0 leaves it to `recall embed`

The file is read when a setting is asked for, not at start-up, so commands that need none pay
nothing. A value of the wrong type is an error that names the file and the fix, not a silent default.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from recall.config import recall_home
from recall.errors import InvalidInput

CONFIG_FILE = "config.toml"
DEFAULT_EMBED_BUDGET = 5.0  # seconds: an import answers quickly and embeds what fits (adr/0029)


def config_path() -> Path:
    return recall_home() / CONFIG_FILE


def import_embed_budget() -> float:
    """Seconds `recall import` spends embedding new rows: ``[import] embed_budget``, else 5."""
    value = _section("import").get("embed_budget", DEFAULT_EMBED_BUDGET)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise InvalidInput(
            f"{config_path()}: [import] embed_budget must be a number of seconds, 0 or more "
            f"(got {value!r}); fix it or remove the line"
        )
    return float(value)


def _section(name: str) -> dict[str, Any]:
    path = config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}; fix or remove it") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path} is not valid TOML ({exc}); fix or remove it") from None
    section = data.get(name, {})
    if not isinstance(section, dict):
        raise InvalidInput(f"{path}: [{name}] must be a table of settings; fix or remove it")
    return section

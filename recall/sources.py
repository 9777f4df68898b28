"""Where a stored session can come from: the hosts recall reads, and those that can only dump.

Kept free of anything heavy: the CLI builds its ``--host`` and ``--source`` choices from it before
any command runs.
"""

from __future__ import annotations

from adapters import HOSTS

READ_HOSTS: tuple[str, ...] = tuple(HOSTS)  # recall reads these hosts' own transcripts
EXPLICIT_HOSTS = ("grok", "jcode", "omp")  # no reader: a dump from them brings its messages
DUMP_SOURCES = (*READ_HOSTS, *EXPLICIT_HOSTS, "mcp")  # "mcp": messages an agent dumps for itself

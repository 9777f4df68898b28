"""Starting a recall HTTP server as a real process: `recall mcp --http` and `recall serve` both bind
port 0 and announce their URL on stderr, which is the only way a test learns the port."""

from __future__ import annotations

import re
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio
import pytest

_ANNOUNCED = re.compile(rb"(http://\S+)/mcp")


@asynccontextmanager
async def announced_server(argv: Sequence[str], env: dict[str, str], path: str = "") -> AsyncIterator[str]:
    """Start ``argv`` and yield the base URL it announces once bound, plus ``path``; stop it on the way out."""
    process = await anyio.open_process(
        list(argv), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        assert process.stderr is not None
        said = b""
        while not (found := _ANNOUNCED.search(said)):
            try:
                said += await process.stderr.receive()
            except anyio.EndOfStream:
                pytest.fail(f"{' '.join(argv[2:4])} exited before listening: {said.decode(errors='replace')}")
        yield found.group(1).decode() + path
    finally:
        process.terminate()
        with anyio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            process.kill()

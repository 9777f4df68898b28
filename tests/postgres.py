"""A throwaway PostgreSQL server for tests, from the installed binaries (no network, no service).

``initdb`` into a temporary folder, ``pg_ctl start`` on a free port listening only on a unix
socket in that folder. PostgreSQL refuses to run as root, so as root the server runs as the
``postgres`` user (``runuser``). Without the binaries the tests that need a server skip, saying so.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


def pg_bin() -> Path | None:
    """The folder holding initdb and pg_ctl, or None when PostgreSQL is not installed."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PgServer:
    """A running server; ``url(db)`` names one of its databases."""

    root: Path
    port: int
    bin: Path
    runner: tuple[str, ...]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://recall@/{database}?host={self.root}&port={self.port}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"'.encode())
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.url(name)

    def ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [*self.runner, str(self.bin / "pg_ctl"), "-D", str(self.root / "data"), *args]
        return subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses='' -c fsync=off -c full_page_writes=off"
        done = self.ctl("-w", "-o", options, "-l", str(self.root / "server.log"), "start")
        if done.returncode != 0:
            log = (self.root / "server.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"pg_ctl start failed: {done.stderr}\n{log}")

    def stop(self) -> None:
        self.ctl("-m", "immediate", "stop")


def start_server() -> PgServer:
    """initdb and start a server in a fresh temporary folder."""
    binary = pg_bin()
    if binary is None:
        pytest.skip("PostgreSQL is not installed (no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin)")
    root = Path(tempfile.mkdtemp(prefix="recall-pg-"))
    runner: tuple[str, ...] = ()
    if os.geteuid() == 0:  # PostgreSQL will not run as root
        shutil.chown(root, "postgres", "postgres")
        runner = ("runuser", "-u", "postgres", "--")
    initdb = [
        *runner,
        str(binary / "initdb"),
        "-D",
        str(root / "data"),
        "-U",
        "recall",
        "-A",
        "trust",
        "--no-sync",
    ]
    done = subprocess.run(initdb, check=False, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        pytest.skip(f"initdb failed, so no PostgreSQL tests: {done.stderr.strip()[:300]}")
    server = PgServer(root, _free_port(), binary, runner)
    server.start()
    return server


def serve() -> Iterator[PgServer]:
    server = start_server()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)

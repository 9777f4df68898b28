"""Bundled demo sessions (Claude Code format) for machines without transcripts of their own."""

from pathlib import Path


def demo_dir() -> Path:
    return Path(__file__).parent

"""`recall scrub`: run the write-path scrubber on stdin, to check what would be stored."""

from __future__ import annotations

import sys

import click

from recall.cli.context import emit_json, json_option


@click.command()
@json_option
def scrub(as_json: bool) -> None:
    """Read text on stdin, write it scrubbed to stdout (secrets → [REDACTED:kind])."""
    from recall.memory import Memory

    data = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    result = Memory.scrub(data)
    if as_json:
        emit_json({"text": result.text, "kinds": list(result.kinds)})
    else:
        click.echo(result.text, nl=False)
        if result.kinds:
            click.echo(
                f"recall: redacted {len(result.kinds)} secret(s): {', '.join(sorted(set(result.kinds)))}",
                err=True,
            )


COMMANDS = [scrub]

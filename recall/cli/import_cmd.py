"""`recall import` and `recall dump`: getting transcripts in."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app
from recall.sources import DUMP_SOURCES, READ_HOSTS


@click.command(name="import")
@click.option(
    "--host",
    type=click.Choice([*READ_HOSTS, "all"]),
    default="all",
    show_default=True,
    help="Which agent's transcripts.",
)
@click.option(
    "--path",
    "paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A transcript file or folder instead of the default locations (repeatable).",
)
@click.option("--since", help="Only sessions active since this date (2026-11-01, or a span like 7d).")
@click.option("--project", help="File every imported session under this project.")
@click.option("--dry-run", is_flag=True, help="Count what would be imported; write nothing.")
@click.option("--force", is_flag=True, help="Re-read files even when their size and time are unchanged.")
@click.option("--tool-text-cap", type=click.IntRange(100, 1_000_000), default=2000, show_default=True)
@click.option("--thinking", is_flag=True, help="Keep the model's thinking text too.")
@click.option("--demo", is_flag=True, help="Import the bundled demo sessions (project demo-shop).")
@click.option("--demo-if-empty", is_flag=True, help="Import the demo sessions when no transcripts are found.")
@click.option("--watch", is_flag=True, help="Keep running and import new transcript lines as they appear.")
@click.option(
    "--interval",
    type=click.FloatRange(0.1, 3600),
    default=2.0,
    show_default=True,
    help="--watch: seconds between checks while files change (it backs off to 30 s when idle).",
)
@click.option(
    "--embed-budget",
    type=click.FloatRange(0, None),
    default=None,
    metavar="SECONDS",
    help="Seconds to spend embedding after the import; 0 embeds nothing now (`recall embed` or the "
    "next meaning search does). Default: [import] embed_budget in ~/.recall/config.toml, else 5.",
)
@json_option
@pass_app
def import_(
    app: AppContext,
    host: str,
    paths: tuple[Path, ...],
    since: str | None,
    project: str | None,
    dry_run: bool,
    force: bool,
    tool_text_cap: int,
    thinking: bool,
    demo: bool,
    demo_if_empty: bool,
    watch: bool,
    interval: float,
    embed_budget: float | None,
    as_json: bool,
) -> None:
    """Import Claude Code, Cursor, Codex, OpenCode, Pi and Gemini CLI sessions; only what is new.

    With --watch it keeps going: the fallback for agents whose hooks cannot hand recall a transcript.
    """
    if watch and (dry_run or demo or demo_if_empty):
        raise click.UsageError(
            "--watch imports as files change; it does not combine with --dry-run or --demo"
        )
    hosts = None if host == "all" else [host]
    show_bar = not as_json and sys.stderr.isatty()
    bar: Any = None

    def progress(done: int, total: int, path: str) -> None:
        nonlocal bar
        if not show_bar or total == 0:
            return
        if bar is None:
            bar = click.progressbar(length=total, label="importing", file=sys.stderr, show_pos=True)
            bar.__enter__()
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)

    def run(chosen: list[str] | None, chosen_paths: list[Path] | None) -> Any:
        return app.memory.import_transcripts(
            chosen,
            paths=chosen_paths,
            since=since,
            project=project,
            dry_run=dry_run,
            force=force,
            tool_text_cap=tool_text_cap,
            include_thinking=thinking,
            progress=progress,
            embed_budget_seconds=embed_budget,
        )

    from recall.demo import demo_dir

    demo_args = (["claude"], [demo_dir()])
    summary = run(*demo_args) if demo else run(hosts, list(paths) or None)
    if not demo and demo_if_empty and summary.files_seen == 0:
        if not as_json:
            click.echo("no transcripts found on this machine; importing the bundled demo sessions", err=True)
        summary = run(*demo_args)
    if as_json:
        emit_json(summary.to_dict())
    else:
        print_import_summary(summary.to_dict())
    if watch:
        watch_imports(
            app,
            hosts,
            list(paths) or None,
            project,
            tool_text_cap=tool_text_cap,
            thinking=thinking,
            interval=interval,
            as_json=as_json,
        )


def watch_imports(
    app: AppContext,
    hosts: list[str] | None,
    paths: list[Path] | None,
    project: str | None,
    *,
    tool_text_cap: int,
    thinking: bool,
    interval: float,
    as_json: bool,
) -> None:
    """Run the watcher until Ctrl-C, one line (or JSON object) per import."""
    from datetime import datetime

    def report(files: list[Path], summary: Any) -> None:
        data = summary.to_dict()
        if as_json:
            click.echo(json.dumps({"files": [str(f) for f in files], **data}, ensure_ascii=False))
            return
        added = data["messages"]["added"]
        click.echo(f"{datetime.now():%H:%M:%S} {added:,} new messages from {len(files)} changed files")
        for error in data["errors"][:3]:
            click.echo(f"  ! {error}", err=True)

    if not as_json:
        click.echo("watching for new transcript lines (Ctrl-C to stop)", err=True)
    try:
        app.memory.watch(
            hosts,
            paths=paths,
            project=project,
            tool_text_cap=tool_text_cap,
            include_thinking=thinking,
            interval=interval,
            on_import=report,
        )
    except KeyboardInterrupt:
        if not as_json:
            click.echo("stopped", err=True)


def print_import_summary(data: dict[str, Any]) -> None:
    files, sessions, messages = data["files"], data["sessions"], data["messages"]
    prefix = "dry run: would import" if data["dry_run"] else "imported"
    click.echo(
        f"{prefix} {sessions['new']} new and {sessions['updated']} updated sessions, "
        f"{messages['added']:,} messages ({messages['updated']} updated)"
    )
    click.echo(
        f"files: {files['seen']} found, {files['read']} read, {files['unchanged']} unchanged, {files['failed']} failed"
    )
    if data["skipped"]:
        click.echo("skipped: " + ", ".join(f"{reason} {count}" for reason, count in data["skipped"].items()))
    if data.get("non_utf8_names"):
        click.echo(
            f"names that are not UTF-8: {data['non_utf8_names']} (imported; stored with \\xNN escapes)"
        )
    if data["redactions"]:
        click.echo(
            "secrets redacted: " + ", ".join(f"{kind} {count}" for kind, count in data["redactions"].items())
        )
    if data.get("summaries"):
        click.echo(f"session summaries written: {data['summaries']}")
    if data.get("extraction"):
        from recall.cli.extract_cmd import describe_extraction

        click.echo(describe_extraction(data["extraction"]))
    embedding = data.get("embedding") or {}
    if embedding.get("error"):
        click.echo(f"embedding skipped: {embedding['error']}", err=True)
    elif embedding:
        left = embedding.get("pending", 0)
        tail = f"; {left:,} left for `recall embed`" if left else ""
        click.echo(f"embedded {embedding.get('embedded', 0):,} rows in {embedding.get('seconds', 0)} s{tail}")
    for error in data["errors"][:5]:
        click.echo(f"  ! {error}", err=True)
    if files["seen"] == 0:
        click.echo("no transcripts found; recall looked in:", err=True)
        for line in data.get("searched") or ["the --path given"]:
            click.echo(f"  {line}", err=True)
        click.echo("try --path FILE_OR_FOLDER, or `recall doctor` for the whole picture", err=True)


@click.command()
@click.argument("payload", required=False)
@click.option(
    "--from-hook",
    is_flag=True,
    help="Run as an agent's hook: read its JSON (stdin, or PAYLOAD for Codex notify), import the "
    "transcript it names, log problems instead of failing. Always exits 0.",
)
@click.option("--title", help="What the session was about (default: its first request).")
@click.option("--project", help="Project name (default: from the current git repository).")
@click.option("--session-id", help="The host's session id (or an id for explicit messages).")
@click.option(
    "--source",
    type=click.Choice(DUMP_SOURCES),
    default="mcp",
    show_default=True,
    help="A host whose transcript recall reads, or mcp (or grok, jcode, omp) with explicit messages.",
)
@click.option(
    "--detach",
    is_flag=True,
    help="With --from-hook: hand the capture to a background process and return at once "
    "(for hooks the agent does not wait for, such as Gemini CLI's SessionEnd).",
)
@click.option(
    "--path",
    type=click.Path(path_type=Path),
    help="The host transcript to read (e.g. a hook's transcript_path).",
)
@click.option(
    "--messages-file",
    type=click.File("r", encoding="utf-8", errors="replace"),
    help='JSON list of {"role", "content", "timestamp"?}; "-" or no file reads stdin (with --source mcp).',
)
@json_option
@pass_app
def dump(
    app: AppContext,
    payload: str | None,
    from_hook: bool,
    title: str | None,
    project: str | None,
    session_id: str | None,
    source: str,
    path: Path | None,
    detach: bool,
    messages_file: Any,
    as_json: bool,
) -> None:
    """Store the session that just ended, and write its summary."""
    if from_hook:
        from recall.hooks import detach_dump_hook, hook_input, run_dump_hook

        run = detach_dump_hook if detach else run_dump_hook
        run(app.db_path, hook_input(payload, sys.stdin), None if source == "mcp" else source)
        return
    if payload is not None or detach:
        raise click.UsageError("the PAYLOAD argument and --detach are read only with --from-hook")
    from recall.errors import InvalidInput

    messages = None
    if source not in READ_HOSTS:
        stream = messages_file or sys.stdin
        try:
            messages = json.loads(stream.read() or "null")
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"the messages are not valid JSON ({exc.msg} at line {exc.lineno})") from None
        if isinstance(messages, dict):
            messages = messages.get("messages")
        if not isinstance(messages, list):
            raise InvalidInput('give a JSON list of messages: [{"role": "user", "content": "..."}]')
    result = app.memory.dump(
        title=title,
        source=source,
        project=project,
        session_id=session_id,
        path=path,
        messages=messages,
    )
    if as_json:
        emit_json(result.to_dict())
        return
    click.echo(
        f"dumped session#{result.session_id} ({result.external_id}, project {result.project}): "
        f"{result.messages_added} new messages, session_summary#{result.summary_id}"
    )
    if result.redactions:
        click.echo("secrets redacted: " + ", ".join(f"{k} {v}" for k, v in result.redactions.items()))


COMMANDS = [import_, dump]

"""`recall eval`: a retrieval check on your own data, no labels and no language model (recall.evaluation)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from recall.cli.context import AppContext, emit_json, json_option, pass_app

if TYPE_CHECKING:  # `recall --help` must not load search
    from recall.evaluation import EvalReport


@click.command(name="eval")
@click.option("--project", help="Only this project (default: every project, each searched on its own).")
@click.option("--probes", "per_kind", type=click.IntRange(1, 10_000), default=60, show_default=True,
              help="At most this many probes of each kind per project.")  # fmt: skip
@click.option("--total", type=click.IntRange(1, 100_000), default=300, show_default=True,
              help="At most this many probes in all.")  # fmt: skip
@json_option
@pass_app
def eval_(app: AppContext, project: str | None, per_kind: int, total: int, as_json: bool) -> None:
    """Does search find what is stored? Each session's first request (minus the words only that session
    uses) must find its session, each decision's or learning's detail its record; recall@5/10 and MRR
    per mode and project. Run it again with RECALL_MODEL_DIR set to see whether your model helps."""
    bar: Any = None

    def progress(done: int, steps: int) -> None:
        nonlocal bar
        if as_json or not sys.stderr.isatty():
            return
        if bar is None:
            bar = click.progressbar(length=steps, label="probing", file=sys.stderr, show_pos=True)
            bar.__enter__()
        bar.update(done - bar.pos)

    try:
        report = app.memory.evaluate(project, per_kind=per_kind, total=total, progress=progress)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    if as_json:
        emit_json(report.to_dict())
        return
    for line in lines(report):
        click.echo(line)


def lines(report: EvalReport) -> list[str]:
    probes = ", ".join(f"{kind} {n:,}" for kind, n in report.probes.items()) or "none"
    out = [f"probes: {probes} ({sum(report.probes.values()):,} in all), {report.seconds:.1f} s"]
    if report.model:
        out.append(f"model: {report.model}")
    out += [f"skipped: {reason} {n:,}" for reason, n in report.skipped.items()]
    out += report.notes
    if not report.scores:
        return out
    out.append(f"{'mode':<9} {'project':<24} {'probes':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}")
    for mode, per in report.scores.items():
        for name in ["all", *sorted(p for p in per if p != "all")]:
            s = per[name].to_dict()
            out.append(f"{mode:<9} {name[:24]:<24} {s['probes']:>6} {s['recall@5']:>6.1f} "
                       f"{s['recall@10']:>6.1f} {s['mrr']:>6.1f}")  # fmt: skip
    return out


COMMANDS = [eval_]

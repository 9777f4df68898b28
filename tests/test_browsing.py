"""What a person browses, through ``recall.Memory``: overview, a session page by page, the decision
log, and the count of redacted secrets; on real Claude Code transcripts in a real database file."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from recall import InvalidInput, Memory, NotFound
from recall.decision_log import decision_log
from recall.models import KIND_CODES, Provenance, RecordKind

SPOTTER = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter"
SMALL = SPOTTER.parents[1] / "schema-fixtures" / "agent-sessions" / "stage0-claude-small.jsonl"
MAIN_SESSION = "4d5611e5-241a-462a-8d15-5122611a9569"


@pytest.fixture
def spotter(memory: Memory) -> Memory:
    """The real spotter sessions (a main session of 402 turns, thinking included, with two subagents,
    and three shorter sessions)."""
    memory.import_transcripts(["claude"], paths=[SPOTTER], include_thinking=True, embed_budget_seconds=0)
    return memory


def _session_id(memory: Memory, external_id: str) -> int:
    with memory.store.reading() as conn:
        return int(
            conn.execute("SELECT id FROM sessions WHERE external_id = ?", (external_id,)).fetchone()[0]
        )


def test_the_overview_counts_the_project_and_draws_its_last_thirty_days(spotter: Memory) -> None:
    overview = spotter.overview("spotter")
    with spotter.store.reading() as conn:
        messages = conn.execute("SELECT count(*) FROM messages WHERE project = 'spotter'").fetchone()[0]
        last = conn.execute("SELECT max(substr(started_at, 1, 10)) FROM sessions").fetchone()[0]
        first = (date.fromisoformat(last) - timedelta(days=29)).isoformat()
        started = conn.execute(
            "SELECT substr(s.started_at, 1, 10) AS day, count(DISTINCT s.id), count(*) FROM sessions s "
            "JOIN messages m ON m.session_id = s.id WHERE s.project = 'spotter' GROUP BY day"
        ).fetchall()
    assert overview.counts["message"] == messages > 500
    assert overview.counts["session"] == len(overview.sessions) == 6
    assert overview.activity[0].day == first and overview.activity[-1].day == last
    assert len(overview.activity) == 30
    # each session, with all its messages, on the day it started
    drawn = {(day.day, day.sessions, day.messages) for day in overview.activity if day.sessions}
    assert drawn == {tuple(row) for row in started}
    assert "spotter" in overview.projects
    starts = [item.started_at for item in overview.sessions]
    assert starts == sorted(starts, reverse=True)
    main = next(item for item in overview.sessions if item.messages == 402)
    assert main.title and main.parent_id is None


def test_decisions_in_force_and_open_breadcrumbs_are_what_the_brief_shows(memory: Memory) -> None:
    old = memory.add("decision", "Use SQLite", project="p")
    new = memory.add("decision", "Use Postgres", project="p")
    memory.add("decision", "Elsewhere", project="other")
    memory.supersede(old.ref, by=new.ref)
    memory.add("breadcrumb", "halfway through the refactor", project="p")
    memory.add("breadcrumb", "long over", project="p", valid_until="2020-01-01")
    overview = memory.overview("p")
    assert [item.content for item in overview.decisions] == ["Use Postgres"]
    assert [item.content for item in overview.breadcrumbs] == ["halfway through the refactor"]
    assert overview.counts["decision"] == 2 and overview.counts["breadcrumb"] == 2
    assert memory.overview("*").counts["decision"] == 3 and memory.overview("*").project is None
    assert overview.activity == () and overview.sessions == ()


def test_a_session_without_times_does_not_drag_the_chart_to_the_day_it_was_imported(spotter: Memory) -> None:
    before = spotter.overview("*").activity
    spotter.import_transcripts(
        ["claude"], paths=[SMALL], embed_budget_seconds=0
    )  # one of its sessions has no time
    with spotter.store.reading() as conn:
        assert conn.execute("SELECT count(*) FROM sessions WHERE started_at IS NULL").fetchone()[0] == 1
    after = spotter.overview("*")
    assert after.activity[-1].day == before[-1].day == "2026-02-12"  # spotter's last day, not today's import
    assert after.sessions[-1].started_at is None  # listed after every session with a time


def test_a_long_session_comes_a_page_at_a_time_in_order(spotter: Memory) -> None:
    session = _session_id(spotter, MAIN_SESSION)
    first = spotter.session_view(f"session#{session}", per_page=150)
    assert (first.total, first.pages, first.page) == (402, 3, 1)
    pages = [first, *(spotter.session_view(session, page=n, per_page=150) for n in (2, 3))]
    ordinals = [m.ordinal for view in pages for m in view.messages]
    assert len(ordinals) == 402 and ordinals == sorted(ordinals)
    assert len(pages[2].messages) == 102
    assert spotter.session_view(session, page=99, per_page=150).page == 3  # past the end: the last page
    kinds = {m.kind for view in pages for m in view.messages}
    assert kinds == {"text", "tool_call", "tool_result", "thinking"}
    assert first.summary is not None and first.summary["kind"] == "session_summary"
    assert [child.parent_id for child in first.subagents] == [session, session]
    assert first.parent is None
    child = spotter.session_view(first.subagents[0].id)
    assert child.parent is not None and child.parent.id == session


def test_a_session_names_what_it_touched_most_often_first(spotter: Memory) -> None:
    touched = spotter.session_view(_session_id(spotter, MAIN_SESSION)).entities
    assert ("file", "lib/spotter_web/live/session_live.ex", "edited") in {
        (entity["type"], entity["name"], entity["relation"]) for entity in touched
    }
    times = [entity["times"] for entity in touched]
    assert times == sorted(times, reverse=True) and len(touched) <= 30


def test_a_message_is_found_on_its_page(spotter: Memory) -> None:
    session = _session_id(spotter, MAIN_SESSION)
    last = spotter.session_view(session, page=3, per_page=150).messages[-1]
    found = spotter.locate_message(last.ref, per_page=150)
    assert (found.session_id, found.page, found.message_id) == (session, 3, last.id)
    assert spotter.locate_message(f"message#{last.id}").page == 3  # 200 to a page by default
    first = spotter.session_view(session, per_page=150).messages[0]
    assert spotter.locate_message(first.ref, per_page=150).page == 1
    with pytest.raises(NotFound, match="no message with id 999999"):
        spotter.locate_message("message#999999")


def test_records_extracted_from_a_session_come_with_the_lines_they_came_from(spotter: Memory) -> None:
    session = _session_id(spotter, MAIN_SESSION)
    pending = {item.ref: item for item in spotter.review(project="spotter") if item.session_id == session}
    assert len(pending) >= 3  # the real session states findings and answers a question
    linked = {str(record.ref): record for record in spotter.session_view(session).records}
    for ref, item in pending.items():
        record = linked[ref]
        assert record.sources == tuple(line.message_id for line in item.sources) != ()
        assert (record.review, record.rule, record.provenance) == ("pending", item.rule, "extracted")
        assert {spotter.locate_message(m).session_id for m in record.sources} == {session}
    accepted = next(iter(pending))
    spotter.accept([accepted])
    assert {str(r.ref): r.review for r in spotter.session_view(session).records}[accepted] == "accepted"
    with spotter.store.transaction() as writer:  # a record from elsewhere that one of its lines backs
        other = writer.insert(
            "learnings", {"project": "spotter", "content": "Phoenix needs mix"}, Provenance.EXTRACTED
        )
        writer.add_sources(
            KIND_CODES[RecordKind.LEARNING], other, [spotter.session_view(session).messages[5].id]
        )
    backed = {str(r.ref): r for r in spotter.session_view(session).records}[f"learning#{other}"]
    assert backed.sources == (spotter.session_view(session).messages[5].id,) and backed.review is None


def test_session_view_names_what_it_cannot_show(spotter: Memory) -> None:
    with pytest.raises(NotFound, match="no session with id 4040"):
        spotter.session_view("session#4040")
    with pytest.raises(InvalidInput, match="unknown kind .decision.; use one of: session"):
        spotter.session_view("decision#1")
    with pytest.raises(InvalidInput, match="page numbers start at 1"):
        spotter.session_view(1, page=0)


def test_the_decision_log_groups_supersession_chains_latest_change_first(memory: Memory) -> None:
    sqlite = memory.add("decision", "Use SQLite", project="p", tags=["db"])
    postgres = memory.add("decision", "Use Postgres", project="p")
    memory.supersede(sqlite.ref, by=postgres.ref)
    lone = memory.add("decision", "Tabs, not spaces", project="p")
    yarn = memory.add("decision", "Use yarn", project="p")
    npm = memory.add("decision", "Use npm", project="p")
    pnpm = memory.add("decision", "Use pnpm", project="p")
    memory.supersede(yarn.ref, by=pnpm.ref)
    memory.supersede(npm.ref, by=pnpm.ref)
    cockroach = memory.add("decision", "Use CockroachDB", project="p")
    memory.supersede(postgres.ref, by=cockroach.ref)
    memory.revert(lone.ref)
    memory.add("decision", "Not this project", project="q")
    log = memory.decision_log("p")
    chains = [[entry.content for entry in chain.entries] for chain in log.chains]
    assert chains == [
        ["Tabs, not spaces"],
        ["Use SQLite", "Use Postgres", "Use CockroachDB"],
        ["Use yarn", "Use npm", "Use pnpm"],
    ]
    assert [entry.status for entry in log.chains[1].entries] == ["superseded", "superseded", "active"]
    assert log.chains[1].entries[0].superseded_by == postgres.id and log.chains[1].entries[0].tags == ("db",)
    assert log.by_status == {"superseded": 4, "active": 2, "reverted": 1}
    assert len(memory.decision_log("*").chains) == 4
    assert memory.decision_log("p", page=9).page == 1
    paged = [decision_log(memory.store, "p", page=n, per_page=3) for n in (1, 2, 3)]
    # whole chains, a new page whenever the next chain would pass three decisions
    assert [[len(chain.entries) for chain in log.chains] for log in paged] == [[1], [3], [3]]
    assert [log.pages for log in paged] == [3, 3, 3] and paged[2].page == 3


def test_redacted_secrets_are_counted_per_kind_of_secret_and_of_row(memory: Memory) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    memory.add("learning", f"CI pushes with {token}", project="p", tags=["ci"])
    memory.add("decision", "Rotate keys", project="p", detail=f"the old one was {token}")
    memory.dump(
        title=f"deploy with {token}",
        project="p",
        messages=[
            {"role": "user", "content": "the key is AKIAZ3MHQW7XPLKR4TQN and the password=hunter2hunter2"},
            {"role": "assistant", "content": "That text was redacted by hand, no marker here."},
        ],
    )
    counted = memory.redactions()
    # the learning, the decision's detail, the session's title, and its summary's title and heading
    assert counted.by_secret["github-token"] == 5
    # the message, and the summary's quote of the first request
    assert counted.by_secret["aws-access-key-id"] == 2 and counted.by_secret["secret-assignment"] == 2
    assert counted.rows_by_kind["message"] == 1
    assert counted.rows_by_kind["session"] == 1 and counted.rows_by_kind["session_summary"] == 1
    assert counted.rows_by_kind["learning"] == 1 and counted.rows_by_kind["decision"] == 1
    assert counted.total == sum(counted.by_secret.values())


def test_nothing_redacted_counts_nothing(memory: Memory) -> None:
    memory.add("learning", "The word redacted alone is not a marker", project="p")
    assert memory.redactions().by_secret == {} and memory.redactions().total == 0

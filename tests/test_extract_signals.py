"""Each extraction signal, on real fixture transcripts where they hold it and host-shaped ones otherwise."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from builders import ClaudeSession, CodexSession, CursorTranscript

from adapters import get_adapter
from recall.ingest import run_import
from recall.store import Store

SPOTTER = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter"
MAIN_SESSION = "4d5611e5-241a-462a-8d15-5122611a9569"


def records(store: Store, table: str, rule: str | None = None) -> list[dict[str, Any]]:
    code = {"decisions": 1, "learnings": 2, "breadcrumbs": 3}[table]
    sql = (
        f"SELECT t.*, l.rule, l.confidence AS score FROM {table} t JOIN extraction_lineage l "
        f"ON l.kind_code = {code} AND l.record_id = t.id"
    )
    rows = store.connection.execute(sql + (" WHERE l.rule = ?" if rule else "") + " ORDER BY t.id",
                                    (rule,) if rule else ()).fetchall()  # fmt: skip
    return [dict(row) for row in rows]


def sources(store: Store, table: str, row_id: int) -> list[dict[str, Any]]:
    code = {"decisions": 1, "learnings": 2, "breadcrumbs": 3}[table]
    rows = store.connection.execute(
        "SELECT m.* FROM record_sources s JOIN messages m ON m.id = s.message_id "
        "WHERE s.kind_code = ? AND s.record_id = ? ORDER BY m.ordinal",
        (code, row_id),
    ).fetchall()
    return [dict(row) for row in rows]


def load(store: Store, *paths: Path, host: str = "claude", project: str | None = None) -> Any:
    return run_import(store, [get_adapter(host)], paths=list(paths), project=project, embed_budget_seconds=0)


# -- real Claude Code sessions (tests/fixtures/transcripts/claude-code/real/spotter) -----------------


def test_answers_to_the_agents_questions_become_decisions(store: Store) -> None:
    load(store, SPOTTER / "subagent.jsonl")

    answers = {row["content"]: row for row in records(store, "decisions", "user_answer")}

    chosen = answers["Which tools should we set up? → Credo + Dialyxir + mix_audit"]
    assert chosen["provenance"] == "extracted" and chosen["score"] >= 0.7
    [source] = sources(store, "decisions", chosen["id"])
    assert source["tool_name"] == "AskUserQuestion" and "Credo + Dialyxir + mix_audit" in source["content"]
    assert "Which rig do these beads belong to? → No rig" in answers


def test_a_plan_the_user_approved_becomes_a_decision_with_the_plan_as_detail(store: Store) -> None:
    load(store, SPOTTER / "subagent.jsonl")

    [plan] = records(store, "decisions", "approved_plan")

    assert plan["content"] == "Approved plan: Epic: Setup Code Quality Tools (Credo, Dialyxir, mix_audit)"
    assert "mix igniter.install" in plan["detail"]
    kinds = [(m["kind"], m["tool_name"]) for m in sources(store, "decisions", plan["id"])]
    assert ("tool_call", "ExitPlanMode") in kinds and ("tool_result", "ExitPlanMode") in kinds


def test_a_command_that_failed_then_passed_after_changes_becomes_a_learning(store: Store) -> None:
    load(store, SPOTTER / f"{MAIN_SESSION}.jsonl")

    [fix] = records(store, "learnings", "fix_after_failure")

    assert fix["content"].startswith(
        "`git commit` failed with Pre-commit validation failed: [FORMAT] Code is not formatted.; fixed by editing"
    )
    assert "waiting_summary.ex" in fix["content"] and "`mix format" in fix["content"]
    found = sources(store, "learnings", fix["id"])
    assert found[0]["content"].startswith("Bash: git add .beads/issues.jsonl && git commit")
    assert "Pre-commit validation failed" in found[1]["content"]
    assert found[-1]["content"].startswith("[spotter-dov 64f1b9a]")  # the commit that passed


def test_causes_and_behaviour_the_agent_stated_become_learnings(store: Store) -> None:
    load(store, SPOTTER / f"{MAIN_SESSION}.jsonl")

    stated = [row["content"] for row in records(store, "learnings", "stated_finding")]

    assert any(text.startswith("AshComputer auto-generates `handle_event(") for text in stated)
    assert any("because of the `with` clause in `load_subagent_data`" in text for text in stated)
    assert not any(text.startswith(("Let me", "Now ")) for text in stated)


def test_a_request_the_session_never_answered_becomes_a_breadcrumb(store: Store) -> None:
    load(store, SPOTTER / "short.jsonl", SPOTTER / "tool_heavy.jsonl", SPOTTER / "subagent.jsonl")

    crumbs = {row["content"]: row for row in records(store, "breadcrumbs", "unanswered_request")}

    assert set(crumbs) == {
        "Unanswered request: mix phx.server doesnt seem to start",
        (
            "Unanswered request: scrolling back in xterm.js still does not work (maybe because outer web "
            "catches it)? websearch xterm.js tmux interactions"
        ),
    }  # "create the beads" in subagent.jsonl was answered
    crumb = crumbs["Unanswered request: mix phx.server doesnt seem to start"]
    ended = store.connection.execute(
        "SELECT ended_at FROM sessions WHERE id = ?", (crumb["session_id"],)
    ).fetchone()[0]
    assert crumb["valid_until"][:10] == (datetime.fromisoformat(ended) + timedelta(days=7)).date().isoformat()


def test_real_sessions_yield_few_records(store: Store) -> None:
    summary = load(store, SPOTTER)
    extracted = sum(summary.extraction.outcome.added.values())
    assert 0 < extracted <= 0.06 * summary.messages_added


# -- the agent's own plan --------------------------------------------------------------------------


def test_unfinished_todowrite_items_become_breadcrumbs_and_finished_ones_do_not(
    store: Store, tmp_path: Path
) -> None:
    session = ClaudeSession(tmp_path).user("Add rate limiting to the public API")
    session.todos(("Add the limiter middleware", "in_progress"), ("Write the 429 tests", "pending"),
                  ("Document the limits", "pending"))  # fmt: skip
    session.todos(("Add the limiter middleware", "completed"), ("Write the 429 tests", "in_progress"),
                  ("Document the limits", "pending"))  # fmt: skip
    session.assistant("The middleware is in; tests next.")
    load(store, session.write())

    crumbs = records(store, "breadcrumbs", "plan")

    assert [row["content"] for row in crumbs] == ["Write the 429 tests", "Document the limits"]
    assert crumbs[0]["detail"].startswith("Left in progress in the agent's plan (TodoWrite)")
    assert all(row["valid_until"] > datetime.now(UTC).isoformat() for row in crumbs)
    [last_call, first_call] = sources(store, "breadcrumbs", crumbs[0]["id"])[::-1]
    assert first_call["tool_name"] == last_call["tool_name"] == "TodoWrite"


def test_a_later_session_that_completes_an_item_expires_its_breadcrumb(store: Store, tmp_path: Path) -> None:
    start = datetime.now(UTC) - timedelta(hours=5)
    first = ClaudeSession(tmp_path, start=start).user("Add rate limiting")
    first.todos(("Write the 429 tests", "pending"), ("Document the limits", "pending"))
    second = ClaudeSession(tmp_path, start=start + timedelta(hours=2)).user("Finish the rate limiting docs")
    second.todos(("Document the limits", "completed"))
    second.assistant("The limits are documented.")

    load(store, first.write())
    load(store, second.write())

    now = datetime.now(UTC).isoformat()
    live = [row["content"] for row in records(store, "breadcrumbs", "plan") if row["valid_until"] > now]
    assert live == ["Write the 429 tests"]


def test_a_closed_item_stays_closed_whatever_order_sessions_arrive_in(store: Store, tmp_path: Path) -> None:
    start = datetime.now(UTC) - timedelta(hours=5)
    first = ClaudeSession(tmp_path, start=start).user("Add rate limiting")
    first.todos(("Document the limits", "pending"))
    later = ClaudeSession(tmp_path, start=start + timedelta(hours=2)).user("Document the rate limits")
    later.todos(("Document the limits", "completed"))
    later_path, first_path = later.write(), first.write()

    load(store, later_path)  # the later session is imported first
    load(store, first_path)

    assert records(store, "breadcrumbs", "plan") == []


def test_claude_task_tools_are_folded_into_one_plan(store: Store, tmp_path: Path) -> None:
    session = ClaudeSession(tmp_path).user("Split the billing module")
    session.tool("TaskCreate", {"subject": "Move invoices into billing/invoices.py", "description": "..."},
                 "Task #1 created successfully: Move invoices into billing/invoices.py")  # fmt: skip
    session.tool("TaskCreate", {"subject": "Update the imports in the API layer", "description": "..."},
                 "Task #2 created successfully: Update the imports in the API layer")  # fmt: skip
    session.tool("TaskUpdate", {"taskId": "1", "status": "completed"}, "Updated task #1 status")
    load(store, session.write())

    assert [row["content"] for row in records(store, "breadcrumbs", "plan")] == [
        "Update the imports in the API layer"
    ]


def test_codex_update_plan_steps_left_open_become_breadcrumbs(store: Store, tmp_path: Path) -> None:
    session = CodexSession(tmp_path).user("Migrate the settings loader to pydantic")
    session.plan(("Read the current loader", "completed"), ("Port the schema to pydantic", "in_progress"),
                 ("Delete the old loader", "pending"))  # fmt: skip
    load(store, session.write(), host="codex")

    crumbs = records(store, "breadcrumbs", "plan")

    assert [row["content"] for row in crumbs] == ["Port the schema to pydantic", "Delete the old loader"]
    assert crumbs[0]["detail"] == "Left in progress in the agent's plan (update_plan) when the session ended."


def test_cursor_todos_merge_by_id(store: Store, tmp_path: Path) -> None:
    todos = [{"id": "1", "content": "Add the retry helper", "status": "in_progress"},
             {"id": "2", "content": "Cover retries with tests", "status": "pending"}]  # fmt: skip
    transcript = CursorTranscript(tmp_path).user("Retry failed webhooks")
    transcript.assistant("Planning the work.", ("TodoWrite", {"merge": False, "todos": todos}))
    transcript.assistant("Helper done.", ("TodoWrite", {"merge": True, "todos": [{"id": "1", "status": "completed",
                                                                                  "content": "Add the retry helper"}]}))  # fmt: skip
    load(store, transcript.write(), host="cursor", project="shop")

    assert [row["content"] for row in records(store, "breadcrumbs", "plan")] == ["Cover retries with tests"]


# -- what the user settled -------------------------------------------------------------------------


def test_rules_and_choices_the_user_states_become_decisions(store: Store, tmp_path: Path) -> None:
    session = ClaudeSession(tmp_path)
    session.user("Never use mocks for the database in tests. Let's go with SQLite for the local store.")
    session.assistant("Understood.")
    session.user("Should we always run the linter first? If we never cache the wheels, CI gets slow.")
    session.assistant("Yes, we could.")
    session.user("Use pnpm, not npm. Don't run the migrations yet, just read them.")
    session.assistant("Reading them.")
    load(store, session.write())

    rules = [row["content"] for row in records(store, "decisions", "user_rule")]

    assert rules == [
        "Never use mocks for the database in tests.",
        "Let's go with SQLite for the local store.",
        "Use pnpm, not npm.",
    ]


def test_a_proposal_the_user_accepts_becomes_a_decision(store: Store, tmp_path: Path) -> None:
    session = ClaudeSession(tmp_path).user("The cache keeps serving stale prices")
    session.assistant(
        "I'd recommend switching the price cache to write-through invalidation. Should I do that?"
    )
    session.user("yes, do it")
    session.assistant("Done: prices now invalidate on write.")
    load(store, session.write())

    [accepted] = records(store, "decisions", "accepted_proposal")

    assert accepted["content"] == (
        "Accepted: I'd recommend switching the price cache to write-through invalidation."
    )
    assert accepted["detail"] == "The user replied: yes, do it"


def test_the_option_the_user_picks_from_the_agents_list_becomes_a_decision(
    store: Store, tmp_path: Path
) -> None:
    session = ClaudeSession(tmp_path).user("The sync client keeps timing out")
    session.assistant(
        "Two ways out:\n\n**Option 1:** Keep the REST client and add retries.\n"
        "**Option 2:** Switch to the gRPC client, which streams results.\n\nWhich do you prefer?"
    )
    session.user("option 2")
    session.assistant("Switching to gRPC.")
    load(store, session.write())

    assert [row["content"] for row in records(store, "decisions", "accepted_proposal")] == [
        "Accepted: Switch to the gRPC client, which streams results."
    ]


def test_the_user_correcting_the_agent_becomes_a_learning(store: Store, tmp_path: Path) -> None:
    session = ClaudeSession(tmp_path).user("Run the tests")
    session.assistant("All tests pass with pytest.")
    session.user("No, the integration tests live in tests/slow and need --runslow to run at all.")
    session.assistant("Running them with --runslow.")
    load(store, session.write())

    [correction] = records(store, "learnings", "user_correction")

    assert correction["content"] == (
        "The user corrected the agent: No, the integration tests live in tests/slow and need --runslow to run at all."
    )


# -- the host's own memory -------------------------------------------------------------------------


def test_lines_the_agent_adds_to_memory_files_and_user_memory_notes_are_extracted(
    store: Store, tmp_path: Path
) -> None:
    session = ClaudeSession(tmp_path).user("Remember how we run things here")
    session.tool("Edit", {"file_path": "/home/dev/shop/CLAUDE.md", "old_string": "## Testing\n",
                          "new_string": "## Testing\n- Always run `make check` before committing.\n"
                                        "- The fixtures folder is generated by scripts/fixtures.py.\n"},
                 "The file /home/dev/shop/CLAUDE.md has been updated successfully.")  # fmt: skip
    session.tool("Edit", {"file_path": "/home/dev/shop/app.py", "old_string": "a", "new_string": "b = 1\n"},
                 "The file /home/dev/shop/app.py has been updated successfully.")  # fmt: skip
    session.user("<user-memory-input>never push straight to main</user-memory-input>")
    session.assistant("Noted.")
    load(store, session.write())

    decisions = [row["content"] for row in records(store, "decisions")]
    learnings = [row["content"] for row in records(store, "learnings")]

    assert sorted(decisions) == ["Always run `make check` before committing.", "never push straight to main"]
    assert learnings == ["The fixtures folder is generated by scripts/fixtures.py."]


def test_a_codex_patch_to_agents_md_is_extracted(store: Store, tmp_path: Path) -> None:
    patch = ("*** Begin Patch\n*** Update File: AGENTS.md\n@@\n ## Conventions\n"
             "+- Use uv for every Python command in this repository.\n*** End Patch\n")  # fmt: skip
    session = CodexSession(tmp_path).user("Note that we use uv")
    session.call("apply_patch", {"input": patch}, "Success. Updated the following files:\nM AGENTS.md")
    session.assistant("Added to AGENTS.md.")
    load(store, session.write(), host="codex")

    assert [row["content"] for row in records(store, "decisions", "memory_file")] == [
        "Use uv for every Python command in this repository."
    ]


# -- where a session ended -------------------------------------------------------------------------


def test_a_next_steps_list_in_the_closing_message_becomes_breadcrumbs(store: Store, tmp_path: Path) -> None:
    session = ClaudeSession(tmp_path).user("Start the export feature")
    session.assistant(
        "The CSV writer works.\n\n**Next steps:**\n- Add the XLSX writer\n- Stream large exports\n"
    )
    session.user("thanks")
    session.assistant("You're welcome.")
    load(store, session.write())

    assert [row["content"] for row in records(store, "breadcrumbs", "next_steps")] == [
        "Add the XLSX writer",
        "Stream large exports",
    ]


@pytest.mark.parametrize("answered", [True, False])
def test_an_unanswered_request_expires_when_the_grown_session_answers_it(
    store: Store, tmp_path: Path, answered: bool
) -> None:
    session = ClaudeSession(tmp_path).user("Why does the nightly export time out?")
    session.bash("python export.py --nightly", "running...")
    load(store, session.write())
    assert [row["content"] for row in records(store, "breadcrumbs")] == [
        "Unanswered request: Why does the nightly export time out?"
    ]

    if answered:
        session.assistant("It times out because the query scans the whole events table.")
    else:
        session.bash("python export.py --nightly --verbose", "still running...")
    load(store, session.write())

    now = datetime.now(UTC).isoformat()
    live = [row for row in records(store, "breadcrumbs") if row["valid_until"] > now]
    assert len(live) == (0 if answered else 1)


def test_codex_commentary_is_not_an_answer(store: Store, tmp_path: Path) -> None:
    session = CodexSession(tmp_path).user("Find out why the webhook retries double-charge customers")
    session.assistant("I'll start by reading the retry worker.", phase="commentary")
    session.call(
        "exec_command", {"cmd": ["bash", "-lc", "rg -n retry worker/"]}, "Process exited with code 0\n"
    )
    session.assistant("The worker re-enqueues on timeout; checking the charge call next.", phase="commentary")
    load(store, session.write(), host="codex")

    [crumb] = records(store, "breadcrumbs", "unanswered_request")
    assert crumb["content"].endswith("why the webhook retries double-charge customers")
    assert crumb["score"] == 0.6  # the agent was still at work, only narrating: below what briefs show


def test_a_test_run_fixed_by_an_edit_is_a_learning_and_a_plain_rerun_or_a_lookup_is_not(
    store: Store, tmp_path: Path
) -> None:
    session = ClaudeSession(tmp_path).user("The parser tests fail")
    session.bash("uv run pytest tests/test_parser.py -q 2>&1 | tail -5",
                 "FAILED tests/test_parser.py::test_dates - ValueError: unconverted data remains: Z\n1 failed",
                 exit_code=1)  # fmt: skip
    session.tool(
        "Edit", {"file_path": "/home/dev/shop/parser.py", "old_string": "a", "new_string": "b"}, "ok"
    )
    session.bash("git add -A && git status", "On branch main")
    session.bash("uv run pytest tests/test_parser.py -q", "3 passed")
    session.bash("grep -rn TODO src/", "", exit_code=1)  # no match: a fact, not a failure
    session.bash("grep -rn FIXME src/", "src/a.py:1: FIXME")
    session.bash("make lint", "E501 line too long", exit_code=2)
    session.bash("make lint", "ok")  # passed with nothing changed in between: not a fix
    session.assistant("Parser fixed.")
    load(store, session.write())

    assert [row["content"] for row in records(store, "learnings", "fix_after_failure")] == [
        (
            "`uv run pytest tests/test_parser.py -q 2>&1` failed with FAILED tests/test_parser.py::test_dates - "
            "ValueError: unconverted data remains: Z; fixed by editing parser.py"
        )
    ]


def test_a_choice_the_agent_states_with_its_reason_is_a_decision_kept_out_of_briefs(
    store: Store, tmp_path: Path
) -> None:
    session = ClaudeSession(tmp_path).user("We keep getting 429s from the shipping-rates provider")
    session.assistant("I decided to check the provider's docs first.")
    session.assistant(
        "Going with a shared token bucket in Redis because the limit is per API key, not per worker."
    )
    load(store, session.write())

    [stated] = records(store, "decisions", "stated_decision")
    assert stated["content"].startswith("Going with a shared token bucket in Redis because")
    assert stated["score"] < 0.7


def test_an_inline_next_step_in_the_closing_message_is_a_breadcrumb(store: Store, tmp_path: Path) -> None:
    session = ClaudeSession(tmp_path).user("Rate-limit the shipping provider")
    session.assistant("The limiter is in. Next step: cache shipping rates for five minutes per cart.")
    load(store, session.write())

    assert [row["content"] for row in records(store, "breadcrumbs", "next_steps")] == [
        "cache shipping rates for five minutes per cart."
    ]


def test_a_plan_laid_out_in_text_and_accepted_is_an_approved_plan(store: Store, tmp_path: Path) -> None:
    session = ClaudeSession(tmp_path).user("Move the invoices out of the billing module")
    session.assistant(
        "## Plan: split invoices out of billing\n\n1. Create billing/invoices.py\n"
        "2. Move the Invoice model and its queries\n3. Update the imports in the API layer\n\nShall I start?"
    )
    session.user("yes")
    session.assistant("Starting with step 1.")
    load(store, session.write())

    [plan] = records(store, "decisions", "approved_plan")
    assert plan["content"] == "Approved plan: Plan: split invoices out of billing"
    assert "2. Move the Invoice model" in plan["detail"]

"""A store for the web view's tests: real transcripts, a decision history, and hostile text planted
where a page shows it (a message, a session title, a decision's tag)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from recall import Memory

SPOTTER = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter"
# Each would run if a page put it in the HTML as markup: an inline script and an image whose load fails.
SCRIPT = "<script>window.__xss = 'script'; alert('xss-script')</script>"
IMAGE = "<img src=x onerror=\"window.__xss = 'img'; alert('xss-img')\">"
PAYLOADS = (SCRIPT, IMAGE)


@dataclass(frozen=True, slots=True)
class WebData:
    sqlite: int  # decision#: "Use SQLite for the local store", active
    postgres: int  # decision#: "Use Postgres in production", active
    tagged: int  # decision# whose tag is hostile
    hostile_session: int  # session# whose title and a message are hostile
    hostile_message: int
    main_session: int  # the real 402-turn session (thinking included)


def build(memory: Memory) -> WebData:
    memory.import_transcripts(["claude"], paths=[SPOTTER], include_thinking=True, embed_budget_seconds=0)
    sqlite = memory.add(
        "decision", "Use SQLite for the local store", project="spotter", detail="tests read while one writes"
    )
    postgres = memory.add("decision", "Use Postgres in production", project="spotter")
    tagged = memory.add(
        "decision", "Escape everything a page shows", project="spotter", tags=[IMAGE, "safety"],
        source=f"ticket {SCRIPT}", metadata={"reviewer": IMAGE, "ticket": "WEB-7"},
    )  # fmt: skip
    memory.add("breadcrumb", "halfway through the phoenix upgrade", project="spotter")
    dumped = memory.dump(
        title=f"hostile {SCRIPT} title",
        project="spotter",
        messages=[
            {"role": "user", "content": f"please render {SCRIPT} and {IMAGE} as text"},
            {"role": "assistant", "content": "They show as text, never as markup."},
        ],
    )
    with memory.store.reading() as conn:
        hostile = conn.execute(
            "SELECT id FROM messages WHERE session_id = ? ORDER BY ordinal LIMIT 1", (dumped.session_id,)
        ).fetchone()[0]
        main = conn.execute(
            "SELECT id FROM sessions WHERE external_id = '4d5611e5-241a-462a-8d15-5122611a9569'"
        ).fetchone()[0]
    return WebData(sqlite.id, postgres.id, tagged.id, dumped.session_id, int(hostile), int(main))

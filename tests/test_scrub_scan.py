"""The scan engine: triggers found through a character inside them, and no scan beyond the set.

Speed itself is measured in bench/scrub_bench.py; what is checked here is what the speed rests
on (how many scans the real triggers need) and that finding a literal through its rarest
character reports the same places the literal's first character would.
"""

from __future__ import annotations

from recall.scrub import _scanner
from recall.scrub.finding import VENDOR, Finding, Handler, Trigger
from recall.scrub.scan import SCANNED, Scanner


def _recorder(calls: list[tuple[str, int]], kind: str = "") -> Handler:
    def handle(text: str, lowered: str, position: int, literal: str, out: list[Finding]) -> None:
        calls.append((literal, position))
        if kind:
            out.append(Finding(position, position + len(literal), kind, VENDOR))

    return handle


def test_the_real_triggers_need_one_scan_per_scanned_character_and_no_more() -> None:
    # A trigger holding none of SCANNED costs a scan of its own; adding one must be a choice.
    assert sorted(_scanner().characters) == sorted(SCANNED)


def test_a_literal_found_through_an_inner_character_reports_where_it_starts() -> None:
    calls: list[tuple[str, int]] = []
    scanner = Scanner([Trigger("xai-", _recorder(calls), "[0-9]")], scanned="a")
    assert scanner.characters == "a"
    scanner.find("a xai-1, yai-2, xai-z, xai-3", "a xai-1, yai-2, xai-z, xai-3")
    assert calls == [("xai-", 2), ("xai-", 23)]


def test_a_literal_inside_another_around_the_same_character_is_tried_too() -> None:
    calls: list[tuple[str, int]] = []
    handler = _recorder(calls)
    triggers = [Trigger("secret", handler, ""), Trigger("cret", handler, "="), Trigger("cre", handler, "t")]
    scanner = Scanner(triggers, scanned="c")
    text = "secret=1 cret=2 secret: 3"
    scanner.find(text, text)
    assert sorted(calls) == sorted(
        [("secret", 0), ("cret", 2), ("cre", 2), ("cret", 9), ("cre", 9), ("secret", 16), ("cre", 18)]
    )


def test_a_literal_holding_no_scanned_character_gets_a_scan_of_its_own() -> None:
    calls: list[tuple[str, int]] = []
    scanner = Scanner([Trigger("zz", _recorder(calls), ""), Trigger("az", _recorder(calls), "")], scanned="a")
    assert sorted(scanner.characters) == ["a", "z"]
    scanner.find("zz az", "zz az")
    assert sorted(calls) == [("az", 3), ("zz", 0)]


def test_a_vendor_token_found_skips_the_hits_inside_it_only_for_its_own_scan() -> None:
    calls: list[tuple[str, int]] = []
    triggers = [Trigger("k-", _recorder(calls, "vendor"), ""), Trigger("-k", _recorder(calls), "")]
    scanner = Scanner(triggers, scanned="k-")
    text = "k-k-k"
    found = scanner.find(text, text)
    assert [f.kind for f in found] == ["vendor", "vendor"]
    assert ("-k", 1) in calls and ("-k", 3) in calls

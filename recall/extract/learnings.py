"""Learnings: a failure and what fixed it, causes and gotchas the agent stated, the user's corrections.

The strongest signal is structural: a shell command failed, files were edited or other commands run,
and the same command then passed. That becomes "<command> failed with <error line>; fixed by <what
changed>". Stated findings are sentences of the agent's own text that both name something specific
(code, a file, a flag) and say why or how it behaves ("because", "turns out", "the root cause was").
"""

from __future__ import annotations

import re
from pathlib import PurePath

from recall.extract.candidate import Candidate
from recall.extract.session import SessionView, Turn
from recall.extract.text import clip, content_words, has_code_token, lines, sentences
from recall.rowkinds import RecordKind

SHELL_TOOLS = frozenset(
    {"bash", "shell", "exec_command", "local_shell", "run_terminal_cmd", "terminal", "shell_command",
     "container.exec", "run_shell_command"}
)  # fmt: skip
EDIT_TOOLS = frozenset(
    {"edit", "write", "multiedit", "apply_patch", "str_replace", "strreplace", "str_replace_editor",
     "create", "notebookedit", "edit_file", "write_file", "search_replace", "replace"}
)  # fmt: skip
LOOK_AHEAD = 80  # turns within which the same command must pass again
_FAILED = re.compile(
    r"^(?:Exit code [1-9]\d*|.*Process exited with code [1-9]\d*|.*\"exit_code\":\s*[1-9]\d*)", re.DOTALL
)
_NOT_A_FAILURE = ("The user doesn't want to proceed", "[Request interrupted", "User rejected")
# Commands whose non-zero exit reports a fact (no match, files differ), not a failure.
_DIAGNOSTIC = frozenset(
    {"grep", "rg", "ls", "cat", "find", "which", "test", "[", "diff", "head", "tail", "wc", "echo", "pgrep",
     "ps", "true", "false", "sleep", "type", "command", "stat", "file", "pwd", "kill", "pkill", "cd"}
)  # fmt: skip
_READ_ONLY = frozenset(
    {"git status", "git log", "git diff", "git show", "git branch", "git remote", "git rev-parse", "npm ls",
     "pip show", "pip list"}
)  # fmt: skip
# Version-control bookkeeping between a failure and its fix records the fix; it is not the fix.
_BOOKKEEPING = frozenset({"git add", "git commit", "git push", "git stash", "git checkout", "git fetch"})
_RUNNERS = {("uv", "run"), ("poetry", "run"), ("pnpm", "exec"), ("bundle", "exec"), ("npx",), ("bunx",)}
_ERROR_HINT = re.compile(
    r"\b(?:error|errors|failed|failure|fatal|exception|cannot|can't|not found|undefined|denied|refused|"
    r"invalid|missing|unable|no such|not formatted|traceback)\b",
    re.IGNORECASE,
)
# Both read lower-cased text: case-insensitive matching of long alternations is several times slower.
_STRONG = re.compile(
    r"\b(?:root cause|the (?:real |actual )?(?:cause|culprit|problem|issue|bug) was|turns out|"
    r"(?:this|that|it) (?:happens|happened|fails|failed|breaks|broke) because|that'?s why|"
    r"the fix (?:is|was)|gotcha|caveat)\b"
)
# Said while still investigating: often right, often revised a message later.
_PRESENT = re.compile(r"\bthe (?:real |actual )?(?:cause|culprit|problem|issue|bug) is\b")
_MEDIUM = re.compile(
    r"\b(?:because(?: of)?|despite|(?:is|are) already|by default|auto-?generat\w*|silently|"
    r"(?:does|do|did)(?:n'?t| not) (?:support|work|handle|allow|exist|accept)|can ?not be|can'?t be|"
    r"can never|never (?:be|succeed|work)|knows|says|reports|expects|requires|"
    r"only works|no longer)\b"
)
# Words at least one of which every _STRONG or _MEDIUM match contains.
_TRIGGERS = (
    "cause", "culprit", "problem", "issue", "bug", "turns out", "why", "fix", "gotcha", "caveat", "despite",
    "already", "default", "generat", "silently", "n't", " not ", "cannot", "never", "knows", "says", "reports",
    "expects", "requires", "only works", "no longer", "finding",
)  # fmt: skip
_NARRATION = re.compile(
    r"^(?:let me|let's|i'll|i will|i'm going|i am going|i need to|we need to|i can|we could|we should|"
    r"if we|now\b|next\b|first\b|then\b|so\b|but\b|wait\b|hmm\b|ok\b|okay\b|good\b|great\b|"
    r"perfect\b|done\b|all \d+|all tests)",
    re.IGNORECASE,
)
_FINDINGS_HEADING = re.compile(r"^(?:#+\s*)?(?:key )?findings?\b.*:?$|^.*\bkey findings?:\s*$", re.IGNORECASE)
_CORRECTION = re.compile(
    r"^(?:no[,.!]\s|nope\b|wrong\b|that'?s (?:wrong|not (?:right|correct|what))|not quite\b|"
    r"actually,?\s|you (?:forgot|missed|broke|should have|shouldn'?t have|didn'?t)\b|i said\b|"
    r"why did you\b|this is wrong|that is wrong|incorrect\b)",
    re.IGNORECASE,
)


def fixes_after_failures(view: SessionView) -> list[Candidate]:
    found: list[Candidate] = []
    shell = [t for t in view.turns if t.kind == "tool_call" and t.tool in SHELL_TOOLS]
    fixed: set[int] = set()
    for position, call in enumerate(shell):
        result = view.result_of(call)
        if call.id in fixed or result is None or not _failed(result):
            continue
        steps = _steps(call)
        if not steps:
            continue
        main = steps[-1][0]  # in "a && b", the step that failed is most often the last
        for later in shell[position + 1 :]:
            if later.ordinal - call.ordinal > LOOK_AHEAD:
                break
            if main not in _command(later) or main not in {head for head, _ in _steps(later)}:
                continue
            outcome = view.result_of(later)
            if outcome is None:
                break
            if _failed(outcome):
                fixed.add(later.id)  # the same failure again: one learning for the chain
                continue
            candidate = _fix(view, call, result, later, outcome)
            if candidate is not None:
                found.append(candidate)
            break
    return found


def _fix(view: SessionView, call: Turn, failure: Turn, passing: Turn, outcome: Turn) -> Candidate | None:
    if not any(view.is_new(t) for t in (call, failure, passing, outcome)):
        return None
    between = [t for t in view.turns if call.ordinal < t.ordinal < passing.ordinal]
    calls = [t for t in between if t.kind == "tool_call"]
    edited = [name for name in dict.fromkeys(_edited_file(t) for t in calls if t.tool in EDIT_TOOLS) if name]
    failing_heads = {head for head, _ in _steps(call)}
    ran = [
        _shown(steps[-1][1])
        for t in calls
        if t.tool in SHELL_TOOLS
        and (steps := [(h, text) for h, text in _steps(t) if h not in _BOOKKEEPING])
        and not failing_heads & {head for head, _ in steps}
    ]
    changes = []
    if edited:
        changes.append("editing " + ", ".join(edited[:4]))
    if ran:
        changes.append("running " + ", ".join(f"`{clip(c, 60)}`" for c in list(dict.fromkeys(ran))[:2]))
    if not changes:
        return None  # nothing changed in between: a flaky rerun, not a fix
    cause = next((s for t in between if t.agent_text for s in _findings(t.content)), None)
    command = _shown(_steps(call)[-1][1])
    content = f"`{command}` failed with {_error_line(failure.content)}; fixed by {' and '.join(changes)}"
    return Candidate(
        kind=RecordKind.LEARNING,
        content=content,
        rule="fix_after_failure",
        confidence=0.8 if cause else 0.75,
        sources=(failure.id, call.id, outcome.id, passing.id),
        said_at=outcome.timestamp,
        detail=cause,
        importance=6,
    )


def _failed(result: Turn) -> bool:
    text = result.content.lstrip()
    if text.startswith(_NOT_A_FAILURE):
        return False
    return result.failed or _FAILED.match(text[:400]) is not None


def _command(call: Turn) -> str:
    """A shell call is stored as ``<Tool>: <command>``; the command, first line."""
    text = call.content.split("\n", 1)[0]
    prefix = f"{call.tool_name}:"
    text = text[len(prefix) :] if call.tool_name and text.startswith(prefix) else text
    return text.strip().rstrip("…").strip()


def _steps(call: Turn) -> list[tuple[str, str]]:
    """(program and first word, step text) per ``&&``/``;``/``|`` step, minus wrappers and look-ups."""
    steps: list[tuple[str, str]] = []
    for step in _split_steps(_command(call)):
        tokens = [t.strip("\"'") for t in step.split()]
        tokens = [t for t in tokens if t and "=" not in t.split("/")[0]]  # VAR=value prefixes
        for runner in _RUNNERS:
            if tuple(tokens[: len(runner)]) == runner:
                tokens = tokens[len(runner) :]
        if tokens and PurePath(tokens[0]).name not in _DIAGNOSTIC:
            words = [PurePath(tokens[0]).name, *[t for t in tokens[1:] if not t.startswith("-")][:1]]
            head = " ".join(words)
            if head not in _READ_ONLY and not (words[0] == "sed" and "-i" not in tokens):
                steps.append((head, step.strip()))
    return steps


def _split_steps(command: str) -> list[str]:
    """``a && b | c; d`` → its steps. Quoted separators (a grep pattern ``"a|b"``) and the ``&`` of
    ``2>&1`` do not split."""
    steps: list[str] = []
    current: list[str] = []
    quote, index = "", 0
    while index < len(command):
        char = command[index]
        pair = command[index : index + 2]
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif pair in ("&&", "||") or char in "|;":
            steps.append("".join(current))
            current = []
            index += 2 if pair in ("&&", "||") else 1
            continue
        current.append(char)
        index += 1
    steps.append("".join(current))
    return [step for step in steps if step.strip()]


def _edited_file(call: Turn) -> str:
    detail = _command(call)
    return PurePath(detail.split(",")[0].strip()).name if detail else ""


def _error_line(output: str) -> str:
    """The line of a failure's output that says what went wrong (with the next, if it only announces)."""
    text = output.replace("\\n", "\n")
    candidates = [
        line.strip()
        for line in text.splitlines()
        if line.strip()
        and not re.match(r"^(?:Exit code \d+|Output:|Wall time|Chunk ID|Process exited)", line.strip())
    ]
    candidates = [line for line in candidates if not line.startswith("[… ")]  # a cut marker
    index = next((i for i, line in enumerate(candidates) if _ERROR_HINT.search(line)), len(candidates) - 1)
    chosen = candidates[index] if candidates else ""
    if chosen.endswith(":") and index + 1 < len(candidates):
        chosen = f"{chosen} {candidates[index + 1]}"
    return clip(chosen.strip("`"), 160) or "an error"


def _shown(step: str) -> str:
    """A command as a learning quotes it: long ones and heredocs shortened to what they run."""
    if "<<" in step or "$(" in step or len(step) > 80:
        head = step.split()[:2]
        return " ".join(head)
    return step


def stated_findings(view: SessionView) -> list[Candidate]:
    """Causes, gotchas and how things behave, as the agent stated them in its own text (one per message)."""
    found: list[Candidate] = []
    for turn in view.new_turns():
        scored = _scored_findings(turn.content) if turn.agent_text else []
        if scored:
            sentence, confidence = scored[0]
            found.append(
                Candidate(
                    kind=RecordKind.LEARNING,
                    content=sentence,
                    rule="stated_finding",
                    confidence=confidence,
                    sources=(turn.id,),
                    said_at=turn.timestamp,
                )
            )
    return found


def _findings(text: str) -> list[str]:
    return [sentence for sentence, _ in _scored_findings(text)]


def _scored_findings(text: str) -> list[tuple[str, float]]:
    """Finding sentences, the strongest first; a short one keeps the sentence after it as its context."""
    low = text.lower()
    if not any(map(low.__contains__, _TRIGGERS)) or not (
        _STRONG.search(low) or _PRESENT.search(low) or _MEDIUM.search(low) or "finding" in low
    ):
        return []  # most messages state nothing of the kind: skip splitting them (substring tests are fastest)
    scored: list[tuple[str, float]] = []
    said = list(sentences(text))
    for index, sentence in enumerate(said):
        if not 40 <= len(sentence) <= 350 or sentence.endswith((":", "?")) or _NARRATION.match(sentence):
            continue  # too short or long, a question, narration, or announcing what follows
        lowered = sentence.lower()
        if _STRONG.search(lowered) and len(content_words(sentence)) >= 4:
            confidence = 0.7
        elif (_PRESENT.search(lowered) or _MEDIUM.search(lowered)) and has_code_token(sentence):
            confidence = 0.6
        else:
            continue
        following = said[index + 1] if index + 1 < len(said) else ""
        if (
            following
            and not _NARRATION.match(following)
            and not following.endswith((":", "?"))
            and len(sentence) + len(following) <= 300
        ):
            sentence = f"{sentence} {following}"
        scored.append((clip(sentence, 350), confidence))
    scored += [(item, 0.6) for item in _findings_list(text)]
    return sorted(scored, key=lambda pair: -pair[1])


def _findings_list(text: str) -> list[str]:
    """Items under a "Key findings" heading: what the agent found out, in its own summary."""
    items: list[str] = []
    collecting = False
    for raw in text.splitlines():
        stripped = raw.strip()
        if _FINDINGS_HEADING.match(stripped):
            collecting = True
            continue
        if collecting and re.match(r"^(?:[-*+•]|\d{1,2}[.)])\s+", stripped):
            item = next(lines(stripped), "")
            if 30 <= len(item) <= 350:
                items.append(item)
        elif collecting and stripped:
            break
    return items[:3]


def user_corrections(view: SessionView) -> list[Candidate]:
    """The user telling the agent it got something wrong (not a plain "no" to a question it asked)."""
    found: list[Candidate] = []
    previous: Turn | None = None
    for turn in view.turns:
        if turn.agent_text:
            previous = turn
            continue
        if not turn.human:
            continue
        asked = previous is not None and previous.content.rstrip().endswith("?")
        if previous is not None and not asked and view.is_new(turn) and _corrects(turn.content):
            found.append(
                Candidate(
                    kind=RecordKind.LEARNING,
                    content="The user corrected the agent: " + clip(turn.content, 300),
                    rule="user_correction",
                    confidence=0.65,
                    sources=(turn.id, previous.id),
                    said_at=turn.timestamp,
                    detail="After the agent said: " + clip(previous.content, 200),
                )
            )
        previous = None
    return found


def _corrects(text: str) -> bool:
    stripped = text.strip()
    if stripped.endswith("?") or _CORRECTION.match(stripped) is None:
        return False  # a question back is not a correction
    return len(content_words(stripped)) >= 4

"""The objects the read-ahead worker sends pickle as calls of their class and come back equal."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from recall.entities.mention import EntityType, Mention, Relation
from recall.pickled import pickled_as_call
from recall.store.writer import CleanRow
from recall.transcript import Cut, MessageKind, Origin, Role, ToolCall, TranscriptMessage


def test_sent_objects_round_trip_equal_and_skip_the_generic_state() -> None:
    call = ToolCall("Bash", {"command": "pytest -x", "nested": [1, {"a": None}]})
    message = TranscriptMessage(
        key="m1",
        role=Role.ASSISTANT,
        origin=Origin.AGENT,
        kind=MessageKind.TOOL_CALL,
        text="Bash: pytest -x",
        timestamp=datetime(2026, 12, 2, tzinfo=UTC),
        tool_name="Bash",
        cuts=(Cut(0, 15, 10),),
        meta={"tool_use_id": "t1"},
        tool_calls=(call,),
    )
    objects = [
        message,
        CleanRow("messages", {"content": "x", "meta": "{}"}, ("aws-access-key-id",)),
        Mention(EntityType.COMMAND, "pytest", Relation.RAN, "pytest -x", (EntityType.FILE, "a.py")),
    ]
    for thing in objects:
        back = pickle.loads(pickle.dumps(thing))
        assert back == thing and type(back) is type(thing)
        assert type(thing).__reduce__(thing)[0] is type(thing)  # a call of the class, not its state
    assert pickle.loads(pickle.dumps(message)).tool_calls == (call,)  # compare=False: checked apart


def test_a_class_with_fields_init_does_not_take_is_refused() -> None:
    with pytest.raises(TypeError, match="__init__ does not take"):

        @pickled_as_call
        @dataclass(frozen=True, slots=True)
        class Derived:
            name: str
            size: int = field(init=False, default=0)

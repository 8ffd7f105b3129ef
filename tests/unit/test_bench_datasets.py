"""The benchmark loaders' parsing: LoCoMo (dates, photo captions, turn order, evidence ids) and BEAM
(chat ids, anchors, files). No service and no model."""
from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta

import pytest

from app.locomo import locomo_conversation, locomo_turn_content, parse_locomo_datetime
from bench.datasets import (
    beam_turns,
    clean_locomo_evidence,
    load_beam,
    load_locomo,
    parse_beam_anchor,
    parse_source_chat_ids,
)


@pytest.mark.parametrize("text,expected", [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
    ("12:30 pm on 1 January, 2022", datetime(2022, 1, 1, 12, 30, tzinfo=UTC)),
    ("10:04 am on 19 December, 2023", datetime(2023, 12, 19, 10, 4, tzinfo=UTC)),
])
def test_parse_locomo_datetime(text, expected):
    assert parse_locomo_datetime(text) == expected


def test_parse_locomo_datetime_rejects_garbage():
    with pytest.raises(ValueError):
        parse_locomo_datetime("yesterday")


def test_photo_caption_goes_into_content_and_metadata():
    content, meta = locomo_turn_content({"speaker": "Melanie", "dia_id": "D1:14", "text": "Look at this!",
                                         "blip_caption": "a photo of a sunset over a lake", "query": "sunset"})
    assert content == "Look at this! [shares a photo of a photo of a sunset over a lake]"
    assert meta["blip_caption"] == "a photo of a sunset over a lake" and meta["dia_id"] == "D1:14"
    plain, meta2 = locomo_turn_content({"speaker": "A", "dia_id": "D1:1", "text": " Hi "})
    assert plain == "Hi" and "blip_caption" not in meta2


def test_locomo_conversation_orders_turns_by_seconds_within_a_session():
    sample = {"sample_id": "conv-x", "conversation": {
        "speaker_a": "A", "speaker_b": "B",
        "session_2_date_time": "9:00 am on 2 June, 2023",
        "session_2": [{"speaker": "A", "dia_id": "D2:1", "text": "later"}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"},
                      {"speaker": "B", "dia_id": "D1:2", "text": "hey", "blip_caption": "a dog"}],
    }}
    conv = locomo_conversation(sample)
    assert [t.event_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1"]
    assert conv.turns[1].occurred_at - conv.turns[0].occurred_at == timedelta(seconds=1)
    assert conv.turns[2].occurred_at == datetime(2023, 6, 2, 9, 0, tzinfo=UTC)
    ev = conv.turns[1].to_event(conv.id)
    assert ev["conversation_id"] == "conv-x" and ev["event_id"] == "D1:2" and ev["speaker"] == "B"
    assert ev["content"] == "hey [shares a photo of a dog]" and ev["metadata"]["blip_caption"] == "a dog"
    assert datetime.fromisoformat(ev["occurred_at"]) == datetime(2023, 5, 8, 13, 56, 1, tzinfo=UTC)


def test_clean_locomo_evidence():
    known = {"D8:6", "D9:17", "D11:26", "D1:3"}
    ids, rejected = clean_locomo_evidence(["D8:6; D9:17", "D:11:26", "D", "D4:36", "D1:3", "D1:3"], known)
    assert ids == ["D8:6", "D9:17", "D11:26", "D1:3"]
    assert rejected == ["D", "D4:36"]


def test_source_chat_ids_list_and_dict_forms():
    assert parse_source_chat_ids("[28, 29]") == [28, 29]
    assert parse_source_chat_ids("{'first_statement': [58], 'second_statement': [24]}") == [58, 24]
    assert parse_source_chat_ids("{'original_info': [86, 90], 'updated_info': [114, 86]}") == [86, 90, 114]
    assert parse_source_chat_ids([6, 62, 118, 118, 120]) == [6, 62, 118, 120]  # already parsed, duplicates
    assert parse_source_chat_ids({"a": [1], "b": [[2, 3]]}) == [1, 2, 3]
    assert parse_source_chat_ids(None) == [] and parse_source_chat_ids("") == [] and parse_source_chat_ids("[]") == []


def test_clip_utf8_keeps_whole_characters():
    from bench.datasets import clip_utf8

    assert clip_utf8("abc", 10) == ("abc", False)
    assert clip_utf8("aé" * 3, 4) == ("aéa", True)
    assert clip_utf8("aé" * 3, 5) == ("aéa", True)  # "é" is 2 bytes: the cut never splits it
    assert clip_utf8("aéb", 2) == ("a", True)


def test_parse_beam_anchor():
    assert parse_beam_anchor("March-15-2024") == datetime(2024, 3, 15, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_beam_anchor("the 15th")


def test_beam_turns_inherit_the_last_anchor_and_keep_order():
    chat = [
        {"batch_number": 1, "time_anchor": None, "turns": [
            [{"role": "user", "id": 0, "time_anchor": "March-15-2024", "content": "a"},
             {"role": "assistant", "id": 1, "content": "b"}],
            [{"role": "user", "id": 2, "content": "c"}, {"role": "assistant", "id": 3, "content": "d"}],
        ]},
        {"batch_number": 2, "time_anchor": None, "turns": [
            [{"role": "user", "id": 4, "time_anchor": "April-05-2024", "content": "e"}],
        ]},
    ]
    turns = beam_turns(chat)
    assert [t.event_id for t in turns] == ["0", "1", "2", "3", "4"]
    assert [t.speaker for t in turns[:2]] == ["user", "assistant"]
    assert turns[3].occurred_at == datetime(2024, 3, 15, 0, 0, 3, tzinfo=UTC)
    assert turns[4].occurred_at == datetime(2024, 4, 5, tzinfo=UTC)
    assert all(a.occurred_at < b.occurred_at for a, b in itertools.pairwise(turns))


def test_load_beam_from_files(tmp_path):
    d = tmp_path / "beam100k" / "1"
    d.mkdir(parents=True)
    (d / "chat.json").write_text(json.dumps([{"batch_number": 1, "time_anchor": None, "turns": [[
        {"role": "user", "id": 0, "time_anchor": "March-15-2024", "content": "My sprint ends March 29."},
        {"role": "assistant", "id": 1, "content": "Noted."}]]}]))
    (d / "probing_questions.json").write_text(json.dumps({
        "abstention": [{"question": "What did my boss say?", "ideal_response": "No information."}],
        "knowledge_update": [{"question": "When does it end?", "answer": "March 29",
                              "source_chat_ids": "{'original_info': [0], 'updated_info': [1]}"}],
    }))
    ds = load_beam(tmp_path)
    assert [c.id for c in ds.conversations] == ["beam-1"]
    # each turn is posted with its role, which the asker factor reads
    assert [t.to_event("beam-1")["role"] for t in ds.conversations[0].turns] == ["user", "assistant"]
    q = {x.category: x for x in ds.questions}
    assert q["knowledge_update"].gold == ("0", "1") and q["knowledge_update"].conversation_id == "beam-1"
    assert q["abstention"].gold == () and q["abstention"].abstention


def test_load_locomo_from_file(tmp_path):
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo_dev7.json").write_text(json.dumps([{
        "sample_id": "conv-1",
        "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023",
                         "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]},
        "qa": [{"question": "Q?", "answer": "x", "evidence": ["D1:1"], "category": 4},
               {"question": "Adv?", "adversarial_answer": "y", "evidence": ["D1:1"], "category": 5}],
    }]))
    ds = load_locomo(tmp_path)
    assert "role" not in ds.conversations[0].turns[0].to_event("conv-1")  # two people, no roles
    assert [(q.category, q.gold) for q in ds.questions] == [("single_hop", ("D1:1",)), ("adversarial", ("D1:1",))]
    assert ds.apart == ("adversarial",)

"""Importers: each file format on a small hand-made file. The CLI's resumable import, on the database:
tests/integration/test_import_cli.py."""
from __future__ import annotations

import json

from app.importers import read_records

LOCOMO = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Look at this!", "blip_caption": "a photo of a dog"},
        ],
    },
    "qa": [],
}]

LME = [{
    "question_id": "q1", "question": "?", "answer": "x",
    "haystack_session_ids": ["s1", "s2"],
    "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 10:00"],
    "haystack_sessions": [
        [{"role": "user", "content": "I bought a red bike."}, {"role": "assistant", "content": "Nice!", "has_answer": True}],
        [{"role": "user", "content": "The bike got a flat."}],
    ],
}]

OPENAI = [{"id": "chat-1", "messages": [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": [{"type": "text", "text": "Remember my locker code is 4412."}]},
    {"role": "assistant", "content": ""},
    {"role": "assistant", "content": "Noted."},
]}]


def write(tmp_path, name, data) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_locomo_reader(tmp_path):
    recs = list(read_records(write(tmp_path, "l.json", LOCOMO), "locomo"))
    assert [r["event_id"] for r in recs] == ["D1:1", "D1:2"]
    assert recs[0]["occurred_at"].startswith("2023-05-08T13:56:00")
    assert recs[1]["occurred_at"].startswith("2023-05-08T13:56:01")  # turns keep their order
    assert "[shares a photo of" in recs[1]["content"] and recs[1]["metadata"]


def test_longmemeval_reader(tmp_path):
    recs = list(read_records(write(tmp_path, "m.json", LME), "longmemeval"))
    assert [(r["conversation_id"], r["event_id"], r["speaker"]) for r in recs] == [
        ("q1", "s1:0", "user"), ("q1", "s1:1", "assistant"), ("q1", "s2:0", "user")]
    assert recs[0]["occurred_at"] == "2023-05-20T02:21:00+00:00"
    assert recs[1]["metadata"]["has_answer"] is True


def test_openai_reader_keeps_text_and_skips_empty(tmp_path):
    recs = list(read_records(write(tmp_path, "o.json", OPENAI), "openai"))
    assert [r["content"] for r in recs] == ["You are helpful.", "Remember my locker code is 4412.", "Noted."]
    assert {r["conversation_id"] for r in recs} == {"chat-1"}

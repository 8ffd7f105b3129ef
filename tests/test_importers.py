"""Importers: each file format on a small hand-made file, resumable checkpoints, and the query CLI."""
from __future__ import annotations

import json

from sqlalchemy import text
from typer.testing import CliRunner

from app.cli import app as cli
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


def _count(engine, tenant: str) -> int:
    with engine.connect() as conn:
        return conn.execute(text(
            "SELECT count(*) FROM events e JOIN tenants t ON t.id = e.tenant_id WHERE t.name = :n"), {"n": tenant}
        ).scalar_one()


def test_import_is_idempotent_and_resumes_from_checkpoint(tmp_path, engine):
    runner = CliRunner()
    path = write(tmp_path, "m.json", LME)
    r = runner.invoke(cli, ["import", str(path), "--format", "longmemeval", "--tenant", "imp-a", "--batch", "1"])
    assert r.exit_code == 0 and "imported 3 events (0 already present)" in r.output, r.output
    r = runner.invoke(cli, ["import", str(path), "--format", "longmemeval", "--tenant", "imp-a"])
    assert "imported 0 events (3 already present)" in r.output
    assert _count(engine, "imp-a") == 3
    # an interrupted run left a checkpoint after 2 records: the next run does only the rest
    (tmp_path / "m.json.longmemeval.checkpoint").write_text("2")
    r = runner.invoke(cli, ["import", str(path), "--format", "longmemeval", "--tenant", "imp-b"])
    assert "imported 1 events" in r.output and _count(engine, "imp-b") == 1
    assert not (tmp_path / "m.json.longmemeval.checkpoint").exists()


def test_import_needs_one_destination(tmp_path):
    r = CliRunner().invoke(cli, ["import", str(write(tmp_path, "o.json", OPENAI)), "--format", "openai"])
    assert r.exit_code != 0

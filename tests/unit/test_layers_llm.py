"""The LLM extractor's reading of a completion, without a server: the answer's shape is checked.
Its calls over HTTP: tests/integration/test_layers_llm.py."""
from __future__ import annotations

import json

import pytest

from app.domain.layers.llm_extract import parse_completion

GOOD = {
    "entities": [
        {"name": "Caroline", "kind": "person"},
        {"name": "Melanie", "kind": "person"},
        {"name": "Acme Robotics", "kind": "organisation"},
    ],
    "facts": [
        {"event_id": "D1", "text": "Caroline went to a support group.", "entities": ["Caroline"],
         "time_expression": "yesterday", "date": "2023-05-07", "topic": "community", "caused_by": []},
        {"event_id": "D2", "text": "Melanie loves building things.", "entities": ["Melanie"],
         "time_expression": None, "date": None, "topic": "hobbies", "caused_by": []},
        {"event_id": "D2", "text": "Melanie signed up at Acme Robotics last week.", "entities": ["Melanie", "Acme Robotics"],
         "time_expression": "last week", "date": None, "topic": "work", "caused_by": [1]},
    ],
}


def test_parse_completion_rejects_bad_dates():
    bad = dict(GOOD, facts=[dict(GOOD["facts"][0], date="May 7th")])
    with pytest.raises(ValueError):
        parse_completion(json.dumps(bad))

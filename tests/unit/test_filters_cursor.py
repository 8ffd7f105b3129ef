"""The metadata filter's in-memory check agrees with PostgreSQL's `jsonb @>` (the cases its manual
lists), and cursors only continue the listing that issued them."""
from __future__ import annotations

import pytest
from fastapi import HTTPException

from app.api import paging
from app.domain.filters import contains, metadata_matches, where_json


@pytest.mark.parametrize("doc, pattern, expected", [
    ({"user": "u1", "n": 1}, {"user": "u1"}, True),
    ({"user": "u1"}, {"user": "u2"}, False),
    ({"user": "u1"}, {"missing": None}, False),
    ({"a": None}, {"a": None}, True),
    ({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}}, True),
    ({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}, False),
    ({"tags": ["x", "y"]}, {"tags": ["y"]}, True),
    ({"tags": ["x", "y"]}, {"tags": ["y", "y", "x"]}, True),
    ({"tags": ["x"]}, {"tags": ["x", "z"]}, False),
    ({"tags": ["x"]}, {"tags": "x"}, False),  # below the top level a scalar never matches an array
    ({"tags": [{"k": 1, "j": 2}]}, {"tags": [{"k": 1}]}, True),
    ({"n": 2}, {"n": 2.0}, True),
    ({"n": 1}, {"n": True}, False),
    ({"n": True}, {"n": 1}, False),
    ({"n": "1"}, {"n": 1}, False),
    ({"a": []}, {"a": []}, True),
    ({"a": {}}, {"a": {}}, True),
    ({"a": 1}, {"a": {}}, False),
])
def test_contains_is_jsonb_containment(doc, pattern, expected):
    assert contains(doc, pattern) is expected


def test_where_json_is_canonical_and_empty_means_no_filter():
    assert where_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    assert where_json({}) is None and where_json(None) is None
    assert metadata_matches(None, None) and not metadata_matches(None, where_json({"a": 1}))
    assert metadata_matches({"a": 1, "b": 2}, where_json({"a": 1}))


def _refused(fn) -> str:  # noqa: ANN001
    with pytest.raises(HTTPException) as exc:
        fn()
    assert exc.value.status_code == 422
    (err,) = exc.value.detail
    assert err["field"] == "cursor"
    return err["message"]


def test_a_cursor_round_trips_only_in_its_own_listing():
    c = paging.encode(7, "episodes", ["conv", None], {"v": "x/1", "i": 3})
    assert paging.decode(c, 7, "episodes", ["conv", None]) == {"v": "x/1", "i": 3}
    assert paging.decode(None, 7, "episodes", ["conv", None]) is None
    _refused(lambda: paging.decode(c, 8, "episodes", ["conv", None]))  # another tenant
    _refused(lambda: paging.decode(c, 7, "timeline", ["conv", None]))  # another endpoint
    assert "altered" in _refused(lambda: paging.decode(c, 7, "episodes", ["other", None]))  # another conversation
    head, tail = c.split(".")
    edited = paging.encode(7, "episodes", ["conv", None], {"v": "x/1", "i": 4}).split(".")[0]
    _refused(lambda: paging.decode(f"{edited}.{tail}", 7, "episodes", ["conv", None]))
    _refused(lambda: paging.decode(f"{head}.{tail}AA", 7, "episodes", ["conv", None]))
    _refused(lambda: paging.decode(f"{head}.", 7, "episodes", ["conv", None]))
    _refused(lambda: paging.decode("%%%.%%%", 7, "episodes", ["conv", None]))

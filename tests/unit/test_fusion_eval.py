"""The validation report keeps the service's answers between runs under a key naming its recipe, so a
changed default is asked again instead of read back stale."""
from bench.fusion_eval import _recipe_key


def test_kept_answers_are_keyed_by_the_recipe_they_were_asked_with(monkeypatch):
    from app.settings import get_settings

    off = _recipe_key({"learned": False})
    assert off == _recipe_key({"learned": False})
    assert off != _recipe_key({"learned": False, "speaker_beta": 0.0})
    monkeypatch.setenv("PALIMPSEST_CONTEXT_SUMMARIES", "true")  # a default changes
    get_settings.cache_clear()
    try:
        assert _recipe_key({"learned": False}) != off
    finally:
        monkeypatch.delenv("PALIMPSEST_CONTEXT_SUMMARIES")
        get_settings.cache_clear()
    assert _recipe_key({"learned": False}) == off

"""The language rules: English keeps everything, other languages the 'simple' search and no English rule layers."""
from __future__ import annotations

import pytest

from app.domain import language as lang


@pytest.mark.parametrize("tag,norm", [("en", "en"), ("EN-gb", "en-GB"), ("pt-br", "pt-BR"), ("de", "de"),
                                      ("zh-hant-tw", "zh-Hant-TW"), (" fr ", "fr")])
def test_tags_are_normalised(tag, norm):
    assert lang.normalize(tag) == norm


@pytest.mark.parametrize("bad", ["", "english!", "d", "de_DE", "1234", "de--x"])
def test_malformed_tags_are_refused(bad):
    with pytest.raises(ValueError, match="language tag"):
        lang.normalize(bad)


def test_english_keeps_every_layer_and_its_stemming():
    for tag in ("en", "en-US", None):
        assert lang.search_config(tag) == "english"
        assert all(lang.skip_reason(tag, layer) is None for layer in ("consolidate", "surprise", "engrams", "graph"))


def test_other_languages_use_simple_search_and_skip_the_english_rules_with_a_reason():
    assert lang.search_config("de") == lang.search_config("pt-BR") == "simple"
    states = lang.layer_states("pt-BR", ["embed", "consolidate", "surprise", "engrams", "graph"])
    assert states["embed"] == states["consolidate"] == {"state": "on"}
    for layer in ("surprise", "engrams", "graph"):
        assert states[layer]["state"] == "skipped" and "'pt-BR'" in states[layer]["reason"]
        assert "English" in states[layer]["reason"]

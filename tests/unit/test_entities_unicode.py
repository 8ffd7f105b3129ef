"""Unicode-aware tokens and entity normalisation, titles, and aliases stated in the text."""
from __future__ import annotations

from datetime import datetime, timedelta

from app.domain.layers.events import LayerEvent
from app.domain.layers.aliases import stated_aliases
from app.domain.layers.graph_extract import RuleExtractor
from app.domain.layers.text import capitalised_spans, fold, norm_name, split_sentences, words


def test_tokens_keep_every_scripts_letters():
    assert words("Zoë met Ðorđe in Kraków, café au lait") == ["Zoë", "met", "Ðorđe", "in", "Kraków", "café", "au", "lait"]
    assert capitalised_spans("We drove from Kraków to Łódź with Zoë Brandão.") == ["Kraków", "Łódź", "Zoë Brandão"]


def test_a_key_folds_case_diacritics_and_edge_punctuation_but_the_name_stays_intact():
    assert norm_name("Kraków!") == norm_name("KRAKOW") == norm_name("«Kraków»") == "krakow"
    assert norm_name("AT&T") == "at&t" and norm_name("C++") == "c++" and norm_name("$20") == "$20"
    assert fold("Ñandú") == "nandu"
    assert capitalised_spans("Off to Kraków!") == ["Kraków"]


def test_a_title_belongs_to_the_name_and_does_not_end_the_sentence():
    assert split_sentences("I saw Dr. Imani today. Then lunch.") == ["I saw Dr. Imani today.", "Then lunch."]
    assert capitalised_spans("Ask Prof. Okonjo about it.") == ["Prof. Okonjo"]
    assert capitalised_spans("Meet Ottilie! She is two days old.")[0] == "Ottilie"


def test_stated_aliases():
    assert stated_aliases("I'm going with my husband Tobias.", "Rosa", None) == [("Rosa's husband", "Tobias")]
    assert ("Rosa's doctor", "Dr. Imani") in stated_aliases("My doctor is Dr. Imani.", "Rosa", None)
    assert ("Rosa's cousin", "Mirela") in stated_aliases("Mirela, my cousin, says hi.", "Rosa", None)
    assert stated_aliases("Is your brother Kofi coming?", "Rosa", "Ama") == [("Ama's brother", "Kofi")]
    assert stated_aliases("My sister is Mirela's age.", "Rosa", None) == []
    assert stated_aliases("my brother and I went out", "Rosa", None) == []


def _entities(*turns):
    evs = [LayerEvent(str(i), sp, t, datetime(2024, 3, 1) + timedelta(hours=i), "c", seq=i) for i, (sp, t) in enumerate(turns)]
    return RuleExtractor().extract(evs).entities


def test_aliases_merge_into_one_entity_with_every_form():
    ents = _entities(("Rosa", "I'm flying to Kraków with my husband Tobias on Friday."),
                     ("Ama", "Say hi to Tobias! Is your husband nervous about flying?"),
                     ("Rosa", "A bit. My doctor is Dr. Imani, she gave him something. Dr. Imani is great."))
    forms = [{e.name, *e.aliases} for e in ents]
    assert any({"Tobias", "Rosa's husband"} <= f for f in forms)
    assert any({"Dr. Imani", "Imani", "Rosa's doctor"} <= f for f in forms)
    assert sum("Tobias" in f for f in forms) == 1
    assert any("Kraków" in f for f in forms)

"""Entity forms the graph joins or finds since stop 36: a name's first words said alone, a name used as a
place only now and then, "an assistant, Kemi", and a name opening a sentence that only a person's name
fits. Sentences invented for these tests."""
from __future__ import annotations

from collections import Counter

from app.domain.layers.aliases import mostly_places, short_forms, stated_aliases
from app.domain.layers.extractors import choose_extractor
from app.domain.layers.text import capitalised_spans
from tests.unit.layers_generalise_support import events


def names_of(*turns: tuple[str, str]) -> dict[str, set[str]]:
    frag = choose_extractor(None, None).extract(events(*turns))
    return {e.name: {e.name, *e.aliases} for e in frag.entities}


def cluster(names: dict[str, set[str]], form: str) -> set[str]:
    return next(forms for forms in names.values() if form in forms)


def test_a_longer_names_first_words_are_a_short_form_of_it():
    assert short_forms(["Corrib View", "Corrib View Hotel"]) == [("Corrib View", "Corrib View Hotel")]
    # two longer names begin with it, or it is a place: it joins neither
    assert short_forms(["Harbour Lane", "Harbour Lane Surgery", "Harbour Lane Dental"]) == []
    assert short_forms(["Fenner Lane", "Fenner Lane Surgery"], places=frozenset({"Fenner Lane"})) == []


def test_a_name_is_a_place_when_most_of_its_mentions_are():
    said = Counter({"Skerrow": 3, "Denver": 3})
    assert mostly_places(Counter({"Skerrow": 1, "Denver": 2}), said) == frozenset({"Denver"})
    assert mostly_places(Counter({"Ellsworth": 1}), Counter({"Ellsworth": 1})) == frozenset({"Ellsworth"})


def test_the_graph_joins_a_supplier_named_short_though_once_said_as_a_place():
    names = names_of(
        ("Bea", "I'll ring Pellow Dairies for a quote tomorrow."),
        ("Sam", "Pellow do a Monday drop, my cousin drives for them."),
        ("Bea", "Right, from this week our milk comes from Pellow."),
        ("Sam", "Good, I'll tell the team we use Pellow now."))
    assert {"Pellow", "Pellow Dairies"} <= cluster(names, "Pellow Dairies")


def test_a_relation_set_off_by_commas_after_a_or_an_is_the_speakers():
    assert stated_aliases("I'm taking on an assistant, Kemi, from next month.", "Zofia", None) == [
        ("Zofia's assistant", "Kemi")]
    assert stated_aliases("We adopted a cat, Miso.", "Ana", None) == [("Ana's cat", "Miso")]
    # a list, not an apposition
    assert stated_aliases("I need a plumber, Ben and a builder.", "Ana", None) == []


def test_a_word_opening_a_sentence_is_a_name_where_only_a_name_fits():
    assert capitalised_spans("Margaux and I got engaged last weekend.") == ["Margaux"]
    assert capitalised_spans("Jasper, who used to work the front desk, runs it now.") == ["Jasper"]
    assert capitalised_spans("Eunice's grandson set it up for me.") == ["Eunice"]
    # a word opening a sentence otherwise stays a word
    assert capitalised_spans("Honestly and truly, it was fine.") == []
    assert capitalised_spans("Update: the van is fixed.") == []

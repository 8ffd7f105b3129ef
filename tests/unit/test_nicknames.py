"""A first name said short ("Bron" ... "Bronwen"), joined as one entity by the graph's full build and by
its incremental merge (`aliases.nicknames`, graph_extract/12). Sentences invented for these tests."""
from __future__ import annotations

from collections import Counter

from app.domain.layers.aliases import nicknames, not_people
from app.domain.layers.extractors import choose_extractor
from app.domain.layers.graph_extract import RuleExtractor
from app.domain.layers.graph_fold import fold_facts
from app.domain.layers.graph_names import NameCounts, NameMerge
from tests.unit.layers_generalise_support import events


def names_of(*turns: tuple[str, str]) -> list[set[str]]:
    frag = choose_extractor(None, None).extract(events(*turns))
    return [{e.name, *e.aliases} for e in frag.entities]


def test_a_short_first_name_opens_exactly_one_longer_one():
    assert nicknames(["Bron", "Bronwen"]) == [("Bron", "Bronwen")]
    assert nicknames(["Bernie", "Bernadette Quigley"]) == [("Bernie", "Bernadette Quigley")]  # "-ie" off
    assert nicknames(["Tobi", "Tobias"]) == [("Tobi", "Tobias")]
    # said alone and with a surname: the surname's form (the two are joined as short forms already)
    assert nicknames(["Gwen", "Gwenllian", "Gwenllian Price"]) == [("Gwen", "Gwenllian Price")]


def test_an_ambiguous_plural_or_too_short_form_joins_nothing():
    assert nicknames(["Sam", "Samira", "Samuel"]) == []  # opens two first names
    assert nicknames(["Gwen", "Gwenllian Price", "Gwenllian Hughes"]) == []  # one first name, two people
    assert nicknames(["Bea", "Bea Santos", "Beatriz"]) == []  # it has a long name of its own
    assert nicknames(["Quispe", "Quispes"]) == []  # a plural, not a pet form
    assert nicknames(["Jo", "Joanna"]) == []  # under three letters
    assert nicknames(["Bene", "Benet"]) == []  # one letter longer: another name, not a short one
    assert nicknames(["Rob", "Robyn", "Robyn Hale"], speakers=["rob", "Robyn Hale"]) == []  # two speakers
    assert nicknames(["Sam", "Samsung"], blocked=frozenset({"Samsung"})) == []  # an organisation


def test_names_mostly_called_places_or_organisations_are_not_people():
    kinds = {"samsung": Counter({"organization": 3, "thing": 1}), "bea": Counter({"person": 2, "concept": 5}),
             "hale": Counter({"place": 1, "person": 1})}
    assert not_people(kinds) == frozenset({"samsung"})


def test_the_graph_joins_a_first_name_said_short():
    clusters = names_of(
        ("Ines", "Bronwen Ellis from the choir is coming to the barbecue on Friday."),
        ("Tariq", "Great, I haven't seen Bronwen Ellis since the spring concert."),
        ("Ines", "I asked Bron to bring her famous lemon cake."),
        ("Tariq", "Good shout, I'll save Bron a seat."),
    )
    assert any({"Bron", "Bronwen Ellis"} <= c for c in clusters)


def test_the_incremental_merge_joins_it_whether_the_long_name_is_closed_or_open():
    """The merge a batch makes (`NameMerge`, names indexed by their first letters) pairs them as the whole
    build does, with the long name among the closed events' facts or in the open tail."""
    evs = events(
        ("Ines", "Bronwen Ellis from the choir is coming to the barbecue on Friday."),
        ("Tariq", "Lovely, is she bringing anyone?"),
        ("Ines", "I asked Bron to bring her famous lemon cake."),
    )
    for lookahead in (1, 40):
        fold, _ = fold_facts(evs, RuleExtractor(), lookahead)
        merge = NameMerge()
        merge.close(f for _, fs in fold.closed_facts() for f in fs)
        tail = NameCounts(offset=merge.closed.facts)
        tail.add(f for _, fs in fold.tail_facts() for f in fs)
        _, entities = merge.merge(fold.speakers, tail, None)
        assert any({"Bron", "Bronwen Ellis"} <= {e.name, *e.aliases} for e in entities), lookahead


def test_the_graph_keeps_two_people_apart_when_the_short_form_fits_both():
    clusters = names_of(
        ("Ines", "Samira and Samuel are both on the rota this weekend."),
        ("Tariq", "Sam said he can swap with me if needed."),
        ("Ines", "Samira is off on Sunday though."),
    )
    assert not any({"Sam", "Samira"} <= c or {"Sam", "Samuel"} <= c for c in clusters)

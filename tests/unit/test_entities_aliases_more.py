"""Entity clusters from forms the graph's rules now read (graph_extract/6): someone of a named person's
("Ottilie's brother Fen", "Fen, Ottilie's brother"), roles and places of one's own by their noun ("my
labmate Sunil", "my university, Corran Tech", "Mrs Quayle is my form tutor"), a house number with its
street ("14 Wren Row" is "Wren Row"), a product line with its model number ("iPhone 14", "Pixel 8").
Sentences made up for these tests."""
from __future__ import annotations

from app.domain.layers.aliases import kin_names, kin_said, stated_aliases
from app.domain.layers.extractors import choose_extractor
from app.domain.layers.text import capitalised_spans
from tests.unit.layers_generalise_support import events


def clusters(*turns: tuple[str, str]) -> list[set[str]]:
    frag = choose_extractor(None, None).extract(events(*turns))
    return [{e.name, *e.aliases} for e in frag.entities]


def joined(cl: list[set[str]], *forms: str) -> bool:
    return any(set(forms) <= c for c in cl)


def test_someone_of_a_named_persons() -> None:
    assert stated_aliases("Ottilie's brother Fen is visiting.", "Bryn", None) == [("Ottilie's brother", "Fen")]
    assert stated_aliases("Fen, Ottilie's brother, is visiting.", "Bryn", None) == [("Ottilie's brother", "Fen")]
    assert stated_aliases("Ottilie's brother is visiting.", "Bryn", None) == []
    assert joined(clusters(("Bryn", "Ottilie's brother Fen moved to Oban.")), "Ottilie's brother", "Fen")


def test_roles_and_places_of_ones_own() -> None:
    cl = clusters(("Sunil", "ok"), ("Bryn", "My labmate Sunil ran the tests. My university, Corran Tech, paid for it."),
                  ("Bryn", "Mrs Quayle is my form tutor."))
    assert joined(cl, "Bryn's labmate", "Sunil")
    assert joined(cl, "Bryn's university", "Corran Tech")
    assert joined(cl, "Bryn's form tutor", "Mrs Quayle")


def test_a_title_does_not_block_an_alias() -> None:
    assert stated_aliases("Dr Amadi is my GP.", "Bryn", None) == [("Bryn's GP", "Dr Amadi")]


def test_a_house_number_is_part_of_its_street() -> None:
    cl = clusters(("Bryn", "We live at 14 Wren Row now."), ("Bryn", "Wren Row is quiet."))
    assert joined(cl, "14 Wren Row", "Wren Row")


def test_a_model_number_belongs_to_its_product_line() -> None:
    assert "iPhone 14" in capitalised_spans("My iPhone 14 keeps freezing.", models=True)
    assert "iPhone 14" not in capitalised_spans("My iPhone 14 keeps freezing.")  # other layers read names as before
    assert "Pixel 8" in capitalised_spans("I moved to a Pixel 8 last week.", models=True)
    assert capitalised_spans("I met Tom 3 times.", models=True) == ["Tom"]  # a count after a name is no model


def test_an_alias_in_brackets() -> None:
    assert stated_aliases("Priya (my manager) signed it off.", "Bryn", None) == [("Bryn's manager", "Priya")]
    assert stated_aliases("My landlord (Mr Achebe) rang.", "Bryn", None) == [("Bryn's landlord", "Mr Achebe")]
    assert joined(clusters(("Bryn", "Oswin (my flatmate) is moving out.")), "Bryn's flatmate", "Oswin")


# graph_extract/11, assertions/9
def test_the_speaker_as_someone_of_a_named_persons() -> None:
    assert stated_aliases("Hello Ms Oyelaran, I'm Matěj's mum.", "Radka", None) == [("Matěj's mum", "Radka")]
    assert stated_aliases("Hi, this is Teo's dad.", "Luc", None) == [("Teo's dad", "Luc")]
    assert stated_aliases("I'm Tom's age.", "Radka", None) == []  # no relation
    assert stated_aliases("I'm Tom's sister's friend.", "Radka", None) == []  # someone else's relation
    assert joined(clusters(("Radka", "Hello, I'm Matěj's mum. He's settled in well."),
                           ("Ms Oyelaran", "Lovely to hear!")), "Radka", "Matěj's mum")


def test_a_name_with_a_particle_and_a_mate() -> None:
    assert stated_aliases("Hi Folasade, it's Anouk de Vries, Teo's mum.", "Anouk", None) == [
        ("Teo's mum", "Anouk de Vries")]
    assert ("Ludo's partner", "Pieter van der Berg") in stated_aliases("My partner Pieter van der Berg is Dutch.", "Ludo", None)
    assert stated_aliases("I'm staying at my mate Jon's in Harlow.", "Paweł", None) == [("Paweł's mate", "Jon")]
    assert stated_aliases("We got mates' rates at the Anchor.", "Paweł", None) == []


def test_a_kinship_word_said_as_a_name_is_the_speakers() -> None:
    assert kin_names("Mum says hi. Ask Dad about Sunday.", "Ana") == [("Ana's mum", "Mum"), ("Ana's dad", "Dad")]
    assert kin_names("Mum's picking him up.", "Ana") == [("Ana's mum", "Mum")]
    assert kin_names("My Mum says hi, and your Dad rang.", "Ana") == []  # possessives: relations read elsewhere
    assert kin_names("Tom's Dad is ill.", "Ana") == []
    assert kin_names("Gran Ellis lives next door.", "Ana") == []  # someone's name
    assert kin_names("The mums and dads are here.", "Ana") == []
    assert kin_names("Mum says hi.", "") == []
    cl = clusters(("Søren", "My mum hates it here."), ("Adaeze", "Oh no."), ("Søren", "Mum wanted us back home."))
    assert joined(cl, "Søren's mum", "Mum")


def test_a_kinship_word_two_speakers_say_is_nobodys() -> None:
    assert kin_said("Mum rang. Ask Dad, and Mum again.") == ["mum", "dad"]
    assert kin_names("Mum rang.", "Ben", {"mum": "Ana"}) == []  # Ana said it first: it is hers
    assert kin_names("Mum rang.", "Ana", {"mum": "Ana"}) == [("Ana's mum", "Mum")]
    # two friends' mothers are two people: only the first to say "Mum" is tied to the word, and the two
    # mothers stay apart
    cl = clusters(("Ana", "My mum is visiting."), ("Ben", "So is my mum!"),
                  ("Ana", "Mum wants to see the harbour."), ("Ben", "Mum just wants to sleep."))
    assert not joined(cl, "Ana's mum", "Ben's mum")
    assert joined(cl, "Ana's mum", "Mum") and not joined(cl, "Ben's mum", "Mum")

"""A name referred back to by its head noun (app/domain/layers/head_refs.py), and what the memory graph
makes of it (one entity)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from app.domain.layers.events import LayerEvent
from app.domain.layers.graph_extract import RuleExtractor
from app.domain.layers.head_refs import HeadIndex, head_references, opening_short_names

KNOWN = {"kettleby council", "eastgate hall", "memorial hall", "harriet", "kingsway surgery"}


def test_the_noun_that_heads_one_known_name_refers_to_it():
    assert head_references("I rang the council about the permit.", KNOWN) == [("council", "kettleby council")]
    assert head_references("The surgery called back.", KNOWN) == [("surgery", "kingsway surgery")]


def test_a_noun_heading_two_names_or_none_or_a_general_noun_refers_to_nothing():
    assert head_references("See you at the hall.", KNOWN) == []  # Eastgate Hall or Memorial Hall
    assert head_references("We took the bus to the station.", KNOWN) == []
    assert head_references("It was the time of my life.", {"the time"} | KNOWN) == []
    assert head_references("The Council rang.", KNOWN) == []  # capitalised: a name of its own, not a reference


def test_the_index_follows_a_growing_set_of_names():
    known, index = {"harriet"}, HeadIndex()
    assert head_references("the council again", known, index) == []
    known.add("kettleby council")
    assert head_references("the council again", known, index) == [("council", "kettleby council")]
    known.add("parish council")
    assert head_references("the council again", known, index) == []


def _events(turns):
    t0 = datetime(2025, 3, 3, 9, tzinfo=timezone.utc)
    return [LayerEvent(id=str(i), conversation_id="c", speaker=s, content=c, occurred_at=t0 + timedelta(minutes=i),
                       seq=i) for i, (s, c) in enumerate(turns)]


def test_the_graph_makes_the_name_and_its_head_one_entity():
    frag = RuleExtractor().extract(_events([
        ("Harriet", "Callum has got an interview with Kettleby Council next week."),
        ("Gurkan", "Good for him. Is it the planning team?"),
        ("Harriet", "Yes, and the council pays better than the depot did."),
    ]))
    council = [e for e in frag.entities if "Kettleby Council" in e.aliases or e.name == "Kettleby Council"]
    assert len(council) == 1
    assert "council" in {a.lower() for a in (council[0].name, *council[0].aliases)}


def test_only_the_heads_of_institution_and_place_names_and_no_heading():
    # a chat assistant's title-case headings are among the conversation's names too
    known = {"engage the interviewer", "senior producer role", "current company", "montserrat film festival"}
    assert head_references("Thank the interviewer for the role.", known) == []  # no institution's head
    assert head_references("I told the company.", known, common={"current"}) == []  # "Current Company": a heading
    assert head_references("We loved the festival.", known, common={"current"}) == [
        ("festival", "montserrat film festival")]


# graph_extract/11: a sentence's first word that opens one known longer name is that name said short
def test_a_sentence_opening_with_the_first_word_of_one_known_name():
    known = {"ostrander hotel", "ana sousa", "harriet"}
    assert opening_short_names("Ostrander never paid. Ana just rang.", known) == ["Ostrander", "Ana"]
    assert opening_short_names("Ostrander's invoice is late.", known) == ["Ostrander"]


def test_no_short_name_where_the_word_is_ordinary_ambiguous_or_starts_a_run():
    known = {"grand hotel", "grand canyon", "park lane", "ana sousa"}
    assert opening_short_names("Grand, thanks.", known) == []  # opens two known names
    assert opening_short_names("Park here if you like.", known, common={"park"}) == []  # written in lower case
    assert opening_short_names("Ana Sousa rang.", known) == []  # a name of its own
    assert opening_short_names("We saw Ana yesterday.", known) == []  # not a sentence's first word
    assert opening_short_names("Ana rang.", known, taken={"ana"}) == []  # already a name of the clause
    assert opening_short_names("The hotel rang.", {"the hotel group"}) == []  # a stop word


def test_the_graph_joins_a_name_with_its_first_word_opening_a_sentence():
    frag = RuleExtractor().extract(_events([
        ("Noor", "Kite & Key sent a brief for the Ostrander Hotel reopening."),
        ("Sam", "Nice. Send me the dates."),
        ("Noor", "Ostrander still owe us for March though."),
    ]))
    forms = [{e.name, *e.aliases} for e in frag.entities]
    assert any({"Ostrander", "Ostrander Hotel"} <= f for f in forms)

"""Entity forms the graph's rules read since graph_extract/7: a speaker's other names (introducing
themself, being greeted), relations stated around a third person or an indefinite pet, names beyond
Latin-1, and "X from Y" naming a firm; and the graph's dates read with the turns before them, kept in
the fold's state between builds. Sentences invented for these tests."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from app.domain.layers.aliases import nickname_calls, speaker_aliases, stated_aliases
from app.domain.layers.events import LayerEvent
from app.domain.layers.extractors import choose_extractor
from app.domain.layers.graph_extract import RuleExtractor
from app.domain.layers.graph_fold import FactFold, fact_to_dict, fold_facts
from app.domain.layers.graph_kinds import name_kind

T0 = datetime(2025, 9, 28, 18, 0, tzinfo=timezone.utc)


def log(*turns: tuple[str, str], gap: timedelta = timedelta(minutes=1)) -> list[LayerEvent]:
    return [LayerEvent(f"e{i}", sp, text, T0 + i * gap, "c1", seq=i) for i, (sp, text) in enumerate(turns)]


def clusters(evs: list[LayerEvent]) -> list[set[str]]:
    frag = choose_extractor(None, None).extract(evs)
    return [{e.name, *e.aliases} for e in frag.entities]


@pytest.mark.parametrize("text, pair", [
    ("Can you fit my daughter Ada's fish tank in the van?", ("Ngozi's daughter", "Ada")),
    ("I'm spending Christmas in Lisbon with Inês and her fiancé, Duarte.", ("Inês's fiancé", "Duarte")),
    ("Good morning, I'm Deniz Şahin, Elif's dad.", ("Elif's dad", "Deniz Şahin")),
    ("Fair warning: I come with a very needy greyhound called Biscotti.", ("Ngozi's greyhound", "Biscotti")),
    ("My business partner, Hamid, hates the green.", ("Ngozi's business partner", "Hamid")),
    ("Łukasz, my flatmate, says hi.", ("Ngozi's flatmate", "Łukasz")),
])
def test_relations_stated_in_more_ways(text, pair):
    assert pair in stated_aliases(text, "Ngozi", None)


def test_a_possessive_after_a_copula_is_no_alias():
    assert stated_aliases("My sister is Mirela's age.", "Rosa", None) == []


@pytest.mark.parametrize("text, speaker, addressee, found", [
    ("Hi, it's Oluwaseun Barker in the claims team. My laptop won't boot.", "Seun", "Mireille",
     [("Seun", "Oluwaseun Barker", "self")]),
    ("Morning Seun, Tadek from the service desk.", "Tadeusz", "Seun", [("Tadeusz", "Tadek", "self"), ]),
    ("Morning Hattie. The skip is booked for Friday.", "Gürkan", "Harriet", [("Harriet", "Hattie", "called")]),
    ("You'd better, Farrant.", "Thandi", "Imogen", [("Imogen", "Farrant", "called")]),
    ("Radek from Sparkline will do the electrics.", "Gürkan", "Harriet", []),  # someone else, no greeting
    ("Where are you now, Seoul?", "Luísa", "Jun-seo", []),  # a question about a place
    ("Busan, actually. I moved here for work.", "Jun-seo", "Luísa", []),  # no greeting: not a name called
    ("I'm British, so tea it is.", "Tom", "Ana", []),
    ("It's Shia Labeouf! Can you believe it?", "Gina", "Jon", []),  # someone in a photo, not the speaker
    ("Hey Nate! Apart from meetings, I'm working on a project.", "Joanna", "Nate", []),
    ("Morning Hattie.", "Gürkan", None, []),  # a group chat: whom "Hattie" is, is not known
    ("Hi Karen, thanks for the update on the budget.", "assistant", "user", []),  # a drafted letter
    ("Hi, it's Crystal Wilson from accounts here.", "user", "assistant", [("user", "Crystal Wilson", "self")]),
])
def test_a_speakers_other_names(text, speaker, addressee, found):
    assert speaker_aliases(text, speaker, addressee) == found


def test_the_graph_joins_a_speaker_with_the_name_they_are_greeted_by():
    evs = log(("Gürkan", "Morning Hattie. The skip is booked for Friday."),
              ("Harriet", "Great, thanks. Everyone calls me Hattie, by the way."),
              ("Gürkan", "Radek from Sparkline will do the first fix next week."))
    assert any({"Harriet", "Hattie"} <= c for c in clusters(evs))
    assert not any({"Radek", "Gürkan"} <= c for c in clusters(evs))


def test_a_firm_named_after_from_joins_its_long_name():
    evs = log(("Oksana", "I'm Oksana from Harbourline Insurance, your claims handler."),
              ("Pim", "Thanks. I've been with them for years."),
              ("Tobiasz", "Good morning, Tobiasz Król from Harbourline. I'm closing your file."))
    assert any({"Harbourline", "Harbourline Insurance"} <= c for c in clusters(evs))
    assert name_kind("Harbourline", "Tobiasz Król from ", set()) == "organization"
    assert name_kind("Reading", "I'm moving from ", set()) == "place"
    assert name_kind("Spain", "back in July from ", set()) == "place"


def test_graph_dates_read_with_the_turns_before_them_also_across_builds():
    evs = log(("Anouk", "Mum turns seventy on the 22nd of November."),
              ("Theo", "Party, obviously. Somewhere small."),
              ("Anouk", "The 22nd is a Saturday, so lunch at the Olive Tree?"))
    _, one = fold_facts(evs, RuleExtractor(), lookahead=1)
    dated = {f.text: [d.range_start for d in f.dates] for f in one if f.dates}
    assert dated["The 22nd is a Saturday, so lunch at the Olive Tree?"] == ["2025-11-22"]  # not 22 October
    fold = FactFold(1, RuleExtractor())
    for e in evs[:2]:
        fold.add(e)
    state = json.loads(json.dumps(fold.to_dict()))
    again = FactFold.from_dict(state, lambda ids: [e for e in evs if e.id in ids], RuleExtractor())
    again.add(evs[2])
    assert [fact_to_dict(f) for f in again.facts()] == [fact_to_dict(f) for f in one]


# graph_extract/11: a speaker called by the start of their first name
@pytest.mark.parametrize("text, speaker, speakers, found", [
    ("Rhi! Your name popped up in my photos.", "Kofi", ["Kofi", "Rhiannon"], [("Rhiannon", "Rhi")]),
    ("Zof, don't be mad.", "Callum", ["Callum", "Zofia"], [("Zofia", "Zof")]),
    ("Oh Mags. So sorry.", "Pat", ["Pat", "Margaret", "Lin"], []),  # not the start of the name
    ("Love you Kat. Call me?", "Ben", ["Ben", "Katarzyna", "Ola"], [("Katarzyna", "Kat")]),
    ("Thanks, Rhi.", "Kofi", ["Kofi", "Rhiannon"], [("Rhiannon", "Rhi")]),
    ("Sam! Over here.", "Jo", ["Jo", "Samira", "Samuel"], []),  # opens two speakers' names
    ("Ana! Good to see you.", "Jo", ["Jo", "Anastasia Ruiz"], [("Anastasia Ruiz", "Ana")]),
    ("Ana! Good to see you.", "Jo", ["Jo", "Ana"], []),  # the whole name, not a nickname
    ("Rhi said she'd come.", "Kofi", ["Kofi", "Rhiannon"], []),  # spoken of, not to
    ("Kof, you there?", "Kofi", ["Kofi", "Rhiannon"], []),  # the speaker's own name
    ("Yes. See you then.", "Kofi", ["Kofi", "Rhiannon"], []),
])
def test_a_speaker_called_by_the_start_of_their_name(text, speaker, speakers, found):
    assert nickname_calls(text, speaker, speakers) == found


def test_the_graph_joins_a_speaker_with_a_nickname_they_are_called_by():
    cl = clusters(log(("Kofi", "Rhi! It's been nearly a year. How's life after Tessellate?"),
                      ("Rhiannon", "Kofi!! Honestly, great. I'm at Larkspur now.")))
    assert any({"Rhiannon", "Rhi"} <= c for c in cl)
    cl = clusters(log(("Kofi", "Rhi said she'd come to Tessellate."), ("Rhiannon", "Did I?")))
    assert not any({"Rhiannon", "Rhi"} <= c for c in cl)

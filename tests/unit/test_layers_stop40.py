"""What the rule layers read since assertions/10, graph_extract/13 and timeparse/14: names in every Latin
alphabet ("Paweł", "Łukasz", "Kraków"), an exclamation opening a turn is nobody ("Lovely. He plays ..."), a name
set off before its pronoun is the pronoun's person ("Paweł, he teaches ..."), a name does not run on into the
next sentence or lose its last letter, someone of the person a pronoun stands for ("his wife Birte"), a speaker
named for a desk gives no name of its own; a stretch whose last day names the month, a second month joined by
"or" / "and", a year after "from" / "till". Sentences invented for these tests; negatives included."""
from __future__ import annotations

from datetime import datetime, timezone

from app.domain.layers.aliases import speaker_aliases, stated_aliases
from app.domain.layers.assertion_text import antecedent, clean_value
from tests.unit.layers_generalise_support import time_spans as spans, timeline


def claims(*turns: tuple[str, str]) -> set[tuple[str, str, str]]:
    return {(a.entity, a.attribute, a.value) for a in timeline(*turns)}


SUN_20_OCT_2024 = datetime(2024, 10, 20, 12, tzinfo=timezone.utc)
MON_10_MAR_2025 = datetime(2025, 3, 10, 12, tzinfo=timezone.utc)


def test_names_in_any_latin_alphabet_are_read_as_names():
    assert ("Łukasz", "lives_in", "Kraków") in claims(("Oskar", "My brother Łukasz lives in Kraków now."))
    assert ("Oskar", "pet_name:dog", "Żubr") in claims(("Oskar", "Our dog, Żubr, is ill."))
    text = "I've been seeing someone. Paweł, he teaches PE at Bursztynowe."
    assert antecedent(text, text.index("he teaches")) == "Paweł"


def test_an_exclamation_opening_a_turn_is_not_whom_he_or_she_stands_for():
    text = "Lovely. He also plays football on Saturdays."
    assert antecedent(text, text.index("He also")) is None
    text = "Mixed! She's sad to leave but she starts at Brackenbury Primary."
    assert antecedent(text, text.index("She's")) is None
    # a vocative is still "you", and a name inside the text is still found
    text = "Great, I told Marta and she's moving to Leeds."
    assert antecedent(text, text.index("she's")) == "Marta"
    got = claims(("Ines", "Lovely. He also plays football on Saturdays."))
    assert not [c for c in got if c[0] == "Lovely"]


def test_the_person_talked_about_two_turns_back_is_still_she():
    got = claims(("Rhys", "Is Ottoline still at the bakery?"), ("Gwen", "No. She's working at the garden centre now."),
                 ("Gwen", "Actually she's just been made supervisor there."))
    assert ("Ottoline", "job_title", "supervisor") in got


def test_a_name_stops_at_its_own_end():
    assert clean_value("Brackwater & Co. My colleague Hanne", "proper") == "Brackwater & Co"
    assert clean_value("St. Brigid's. I start", "proper") == "St. Brigid"
    assert clean_value("Washington D.C", "proper") == "Washington D.C"
    # "still in London till June" is a stay, not a home; and never "Londo"
    got = claims(("Kofi", "Efua is still in London till June."))
    assert not [c for c in got if c[2] == "Londo"]
    assert ("Efua", "lives_in", "London") in claims(("Kofi", "Efua is still in London."))


def test_someone_of_the_person_a_pronoun_stands_for():
    assert stated_aliases("Jannik can't come, his wife Birte is due any day now.", "Teo", "Ana") == [
        ("Jannik's wife", "Birte")]
    assert stated_aliases("Siân's in, and she's bringing her colleague Mateus as a second coach.", "Teo", "Ana") == [
        ("Siân's colleague", "Mateus")]
    # with nobody named before the pronoun, no owner is guessed
    assert stated_aliases("His girlfriend Mei is not impressed.", "Teo", "Ana") == []


def test_a_speaker_named_for_a_desk_has_no_name_of_its_own():
    assert speaker_aliases("Hi, Dalia here, how can I help?", "Reception", "Guest") == []
    assert speaker_aliases("Morning! Rafa speaking.", "Customer Support", "Guest") == []
    # a person speaking keeps the names she gives herself
    assert speaker_aliases("Hi, Dalia here, how can I help?", "Dalia Moreno", "Guest") == [("Dalia Moreno", "Dalia", "self")]
    assert speaker_aliases("Hi, it's Oluwaseun Barker from claims.", "Seun", "Ana") == [
        ("Seun", "Oluwaseun Barker", "self")]


def test_a_stretch_whose_last_day_names_the_month_starts_in_that_month():
    assert spans("How about Friday the 13th to Sunday the 15th of December?", SUN_20_OCT_2024) == [
        ("Friday the 13th to Sunday the 15th of December", "2024-12-13", "2024-12-16")]
    assert spans("Friday to Sunday the 15th of December works.", SUN_20_OCT_2024) == [
        ("Friday to Sunday the 15th of December", "2024-12-13", "2024-12-16")]
    # a first day later in the month than the last stays a stretch across the turn of the month
    assert spans("from the 28th to the 2nd of January", SUN_20_OCT_2024) == [
        ("from the 28th to the 2nd of January", "2024-12-28", "2025-01-03")]


def test_a_month_that_is_also_a_name_joined_to_a_month_before_it():
    assert spans("I can only travel in July or August", MON_10_MAR_2025) == [
        ("in July", "2025-07-01", "2025-08-01"), ("August", "2025-08-01", "2025-09-01")]
    assert spans("in March or April", MON_10_MAR_2025) == [
        ("in March", "2025-03-01", "2025-04-01"), ("April", "2025-04-01", "2025-05-01")]
    assert spans("Tom and May are coming round.", MON_10_MAR_2025) == []  # a name
    assert spans("in July or May I ask first?", MON_10_MAR_2025) == [("in July", "2025-07-01", "2025-08-01")]


def test_a_year_after_from_till_or_around():
    assert spans("found my old exam pieces from 2001 in a box", MON_10_MAR_2025) == [
        ("from 2001", "2001-01-01", "2002-01-01")]
    assert spans("Not till 2027 probably.", MON_10_MAR_2025) == [("till 2027", "2027-01-01", "2028-01-01")]
    assert spans("around 2010", MON_10_MAR_2025) == [("around 2010", "2010-01-01", "2011-01-01")]
    assert spans("I was there from 9 to 5", MON_10_MAR_2025) == []  # no year
    # a stretch of years is not its first year
    assert spans("women in cinema from 1990 to 2020", MON_10_MAR_2025) == []
    assert spans("five projects from 2018-2023, updated", MON_10_MAR_2025) == []

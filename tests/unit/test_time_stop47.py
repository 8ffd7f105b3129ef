"""What the time resolver reads since timeparse/19: three -ed words that tell no past.
- a wish: "Fingers crossed for the 14th" is the coming 14th;
- an acknowledgment: "I've noted the plumber's visit on the 9th" notes a visit still to come;
- a passive with "get": "the old server gets switched off on the 28th" is ahead.
And what is exclaimed over after a letter's greeting line has happened ("Dear all,\n\nWhat a fair on Saturday!"), as
has what one is still recovering from ("still recovering from Saturday").
A sentence with a real past verb beside them stays past ("we crossed the river on Sunday", "the heating got fixed
on the 3rd"). Sentences invented for these tests."""
from __future__ import annotations

from tests.unit.layers_generalise_support import at, span_of


def test_fingers_crossed_is_a_wish_for_what_is_ahead():
    feb_2025 = at(2025, 2, 6)
    assert span_of("the 14th", "Thanks so much Imogen! Fingers crossed for the 14th 🤞", feb_2025) == ("2025-02-14", "2025-02-15")
    apr_2024 = at(2024, 4, 10)  # a Wednesday
    assert span_of("Friday", "Crossed fingers for Friday then.", apr_2024) == ("2024-04-12", "2024-04-13")


def test_what_is_noted_is_still_to_come():
    nov_2025 = at(2025, 11, 24)
    assert span_of("the 9th", "Lovely. I've noted the plumber's visit on the 9th and added your landline.", nov_2025) == \
        ("2025-12-09", "2025-12-10")
    jul_2024 = at(2024, 7, 16)  # a Tuesday
    assert span_of("Saturday", "I've noted dinner at Marlow's on Saturday.", jul_2024) == ("2024-07-20", "2024-07-21")


def test_a_passive_with_get_is_no_past():
    sep_2025 = at(2025, 9, 3)
    assert span_of("the 28th", "The old reporting server gets switched off on the 28th.", sep_2025) == \
        ("2025-09-28", "2025-09-29")
    assert span_of("Friday", "Hopefully the scaffolding will get taken down on Friday.", sep_2025) == \
        ("2025-09-05", "2025-09-06")


def test_a_real_past_beside_them_stays_past():
    sep_2025 = at(2025, 9, 3)  # a Wednesday
    assert span_of("Sunday", "We crossed the river at Hexley on Sunday.", sep_2025) == ("2025-08-31", "2025-09-01")
    assert span_of("the 1st", "The heating got fixed on the 1st, finally.", sep_2025) == ("2025-09-01", "2025-09-02")
    assert span_of("Monday", "She noticed the leak on Monday.", sep_2025) == ("2025-09-01", "2025-09-02")


def test_what_is_exclaimed_over_after_a_greeting_line_has_happened():
    sep_2024 = at(2024, 9, 9)  # a Monday
    text = "Dear all,\n\nWhat a fair on Saturday! Two hundred visitors and the marquee held up."
    assert span_of("Saturday", text, sep_2024) == ("2024-09-07", "2024-09-08")


def test_what_one_is_still_recovering_from_has_happened():
    jul_2023 = at(2023, 7, 3)  # a Monday
    assert span_of("Saturday", "My feet are still recovering from Saturday, so much dancing", jul_2023) == \
        ("2023-07-01", "2023-07-02")
    assert span_of("the 19th", "Hungover from the 19th still, honestly.", at(2022, 8, 22)) == ("2022-08-19", "2022-08-20")
    # not a past: what one will recover from ("an operation on Friday") is said with its own future
    assert span_of("Friday", "I'll need a week to recover from the op on Friday.", jul_2023) == ("2023-07-07", "2023-07-08")

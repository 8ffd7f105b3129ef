"""Claims of stop 49: whoever holds a title in "our" firm works where the speaker does ("Ceinwen, our new optician";
not "our plumber", a service a household buys in), a move said with where it starts ("we're moving from Orrinford to
Tressick": where one is moving, and where one lives until then), a move up or down the country ("I'm moving up
to Dunkeld"), a home named by its owner ("half term at my aunt Rhoswen's in Brynmor": the owner lives there), shifts
worked somewhere ("I'm on nights at Vordale Infirmary": where one works), a "head of" title kept whole, a home bought
or being bought (where one is moving), and a title without the words that say how one holds it ("our other
dispatcher"). Sentences invented for these tests; each asserts what a user would read on the timeline."""
from __future__ import annotations

from app.domain.layers.assertions import extract_all
from tests.unit.layers_generalise_support import events


def claims(*turns: tuple[str, str]) -> set[tuple[str, str, str, bool]]:
    """(entity, attribute, value, negated) of every claim the rules read off the turns."""
    return {(a.entity, a.attribute, a.value, a.negated) for a in extract_all(events(*turns))}


def test_a_title_held_in_our_firm_works_where_the_speaker_works():
    got = claims(("Odalys", "I work at Yarrowby Opticians."),
                 ("Odalys", "Ceinwen, our new optician, starts on Monday."),
                 ("Odalys", "You're booked in with our contact lens specialist, Aneirin Mossop, for Thursday."),
                 ("Odalys", "Mr Pollexfen, our other optometrist, is on leave this week."))
    assert ("Ceinwen", "works_at", "Yarrowby Opticians", False) in got
    assert ("Aneirin Mossop", "works_at", "Yarrowby Opticians", False) in got
    assert ("Mr Pollexfen", "works_at", "Yarrowby Opticians", False) in got


def test_a_service_bought_in_or_an_unknown_firm_says_no_employer():
    got = claims(("Odalys", "I work at Yarrowby Opticians."),
                 ("Odalys", "Our electrician, Iestyn Quistle, finally rewired the kitchen."),
                 ("Odalys", "from the 3rd of June my colleague Branwen will handle your order."))
    assert not any(e == "Iestyn Quistle" and attr == "works_at" for e, attr, _, _ in got)
    assert not any(e == "June" for e, _, _, _ in got)
    assert ("Branwen", "works_at", "Yarrowby Opticians", False) in got
    assert not any(attr == "works_at" and e == "Peredur"
                   for e, attr, _, _ in claims(("Meinir", "Peredur, our CFO, approved the budget.")))


def test_a_move_said_with_where_it_starts():
    got = claims(("Senara", "We're relocating from Orrinford to Tressick after Easter."),
                 ("Jowan", "I'm moving from Great Wenlow down to Brackwick Point in the autumn."))
    assert ("Senara", "moving_to", "Tressick", False) in got and ("Senara", "lives_in", "Orrinford", False) in got
    assert ("Jowan", "moving_to", "Brackwick Point", False) in got and ("Jowan", "lives_in", "Great Wenlow", False) in got


def test_a_move_of_something_else_or_a_move_done_is_no_move_to_come():
    got = claims(("Senara", "The rehearsals are moving from Kelly Hall to Bramber Chapel."),
                 ("Senara", "We moved from Orrinford to Tressick in 2019."))
    assert not any(attr == "moving_to" for _, attr, _, _ in got)
    assert ("Senara", "lives_in", "Orrinford", False) not in got


def test_a_move_up_or_down_the_country():
    got = claims(("Siwan", "Guess what: I'm moving up to Dunkeld in the spring."),
                 ("Ivo", "I move down to Tregony on the 3rd."))
    assert ("Siwan", "moving_to", "Dunkeld", False) in got
    assert ("Ivo", "moving_to", "Tregony", False) in got
    assert not any(attr == "moving_to" for _, attr, _, _ in claims(("Siwan", "I'm moving up to the senior squad.")))


def test_a_home_named_by_its_owner_is_where_the_owner_lives():
    got = claims(("Hywel", "We're spending half term at my aunt Rhoswen's in Brynmor."),
                 ("Arwel", "Boxing Day is at Uncle Cadfael's in Lowenna Vale again."),
                 ("Llinos", "I'm heading back to my grandma's in Cwm Tawel tonight."))
    assert ("Rhoswen", "lives_in", "Brynmor", False) in got
    assert ("Cadfael", "lives_in", "Lowenna Vale", False) in got
    assert ("Llinos's grandma", "lives_in", "Cwm Tawel", False) in got
    assert ("Hywel", "lives_in", "Brynmor", False) not in got and ("Llinos", "lives_in", "Cwm Tawel", False) not in got


def test_a_shop_or_a_restaurant_named_with_an_s_is_no_ones_home():
    got = claims(("Kenver", "We had lunch at Bellini's in Carnbrea on Friday."),
                 ("Kenver", "I'm meeting Morwen at Gino's in Polgooth."))
    assert not any(attr == "lives_in" for _, attr, _, _ in got)


def test_shifts_worked_somewhere_are_where_one_works():
    got = claims(("Tegwen", "I'm doing nights at Vordale Infirmary until March."),
                 ("Rhydian", "Can't do Thursday, I'm on nights at the Royal Kelvane."),
                 ("Bryony", "I'm picking up weekend bar shifts at Copper Lantern Inn."))
    assert ("Tegwen", "works_at", "Vordale Infirmary", False) in got
    assert ("Rhydian", "works_at", "Royal Kelvane", False) in got
    assert ("Bryony", "works_at", "Copper Lantern Inn", False) in got


def test_nights_or_days_spent_away_are_no_job():
    got = claims(("Kenver", "We spent four nights at the Trevarno Hotel."),
                 ("Kenver", "I've got three days at Bodinnick Lodge with the kids."))
    assert not any(attr == "works_at" for _, attr, _, _ in got)


def test_a_head_of_title_is_kept_whole():
    got = claims(("Isolde", "I've accepted a post as head of logistics at Ravensby Freight."),
                 ("Ramon", "Big news, I'm starting as head of admissions in May."),
                 ("Eirwen", "I'm working as head chef now."))
    assert ("Isolde", "job_title", "head of logistics", False) in got
    assert ("Ramon", "job_title", "head of admissions", False) in got
    assert ("Eirwen", "job_title", "chef", False) in got  # "head" before a noun is still a rank, as before


def test_a_home_being_bought_is_where_one_is_moving():
    got = claims(("Senara", "We've bought a house in Orrinford, keys in June!"),
                 ("Jowan", "We've had an offer accepted on a little terrace in Brackwick Point."),
                 ("Siwan", "We're buying a flat in Dunkeld next year."))
    assert ("Senara", "moving_to", "Orrinford", False) in got and ("Senara", "lives_in", "Orrinford", False) not in got
    assert ("Jowan", "moving_to", "Brackwick Point", False) in got
    assert ("Siwan", "moving_to", "Dunkeld", False) in got


def test_a_car_bought_is_no_home():
    got = claims(("Senara", "We've bought a car in Orrinford."),
                 ("Senara", "Funny, we only bought the house in Tressick because of the garden."),
                 ("Ivo", "We bought a cottage in Tregony years ago."))
    assert not any(attr == "moving_to" for _, attr, _, _ in got)


def test_a_title_keeps_no_words_that_say_how_one_holds_it():
    got = claims(("Tegwen", "I'm still a lowly signal technician at Brackwick Rail."),
                 ("Siwan", "Kenver, our other dispatcher, is off sick today."))
    assert ("Tegwen", "job_title", "signal technician", False) in got
    assert ("Kenver", "job_title", "dispatcher", False) in got


def test_a_rank_or_a_lone_word_is_left_as_it_is():
    from app.domain.layers.assertion_values import tidy_title
    assert tidy_title("senior nurse") == "senior nurse" and tidy_title("head of admissions") == "head of admissions"
    assert tidy_title("other") == "other"

"""A bare day number said in a later sitting takes up a day an earlier sitting named with its month
(timeparse/17): "the launch is on the 20th of April" ... weeks later, "can we still do the 20th?" is
20 April, not the nearest 20th. Only where the day is read ahead and the turn names nothing of its own to
count from. Sentences invented for these tests."""
from __future__ import annotations

from datetime import datetime

from app.domain.layers.timeturns import (DateThread, discourse_from_dict, discourse_to_dict, discourses, may_take_up,
                                         remembered_before, resolve_turns, resolved_mentions)


def spans(turns: list[tuple[str, datetime]]) -> list[dict[str, tuple[str | None, str | None]]]:
    return [{m.surface: (m.range_start, m.range_end) for m in found} for _, found in resolve_turns(turns)]


NAMED = ("The book launch is on the 20th of April at the Corn Store.", datetime(2025, 2, 10, 19))


def test_a_day_named_in_an_earlier_sitting_is_taken_up_by_its_bare_number():
    got = spans([NAMED, ("Half the team can't make the 20th now, shall we move it?", datetime(2025, 3, 4, 9))])
    assert got[1]["the 20th"] == ("2025-04-20", "2025-04-21")  # not 20 March, the nearest 20th


def test_the_latest_named_day_wins_and_only_days_still_ahead_count():
    turns = [("Dentist on the 14th of March, then the 14th of May for the follow-up.", datetime(2025, 2, 1, 9)),
             ("Reminder for the 14th please.", datetime(2025, 3, 20, 9))]
    # 14 March is behind the second sitting; 14 May is ahead of it (and named last)
    assert spans(turns)[1]["the 14th"] == ("2025-05-14", "2025-05-15")


def test_a_day_told_as_past_is_still_the_nearest_one_behind():
    got = spans([NAMED, ("We paid the deposit on the 2nd, all sorted.", datetime(2025, 4, 23, 18))])
    assert got[1]["on the 2nd"] == ("2025-04-02", "2025-04-03")
    got = spans([("The trip is on the 2nd of June.", datetime(2025, 3, 1, 9)),
                 ("We paid the deposit on the 2nd, all sorted.", datetime(2025, 4, 23, 18))])
    assert got[1]["on the 2nd"] == ("2025-04-02", "2025-04-03")  # not 2 June: told as done


def test_a_date_the_turn_names_itself_comes_first():
    got = spans([("My leaving do is on the 10th of March.", datetime(2025, 1, 5, 9)),
                 ("They moved my start to the 17th of February, so I fly on the 10th now.", datetime(2025, 1, 26, 8))])
    assert got[1]["on the 10th"] == ("2025-02-10", "2025-02-11")  # the turn's own February, not March's leaving do


def test_a_day_named_too_far_ahead_is_not_taken_up():
    got = spans([("Our wedding is on the 9th of September!", datetime(2025, 1, 3, 20)),
                 ("Can you do the 9th for the fitting?", datetime(2025, 2, 1, 20))])
    assert got[1]["the 9th"] == ("2025-02-09", "2025-02-10")  # 220 days off: the nearest 9th


def test_what_the_thread_remembers_survives_a_rebuild_from_its_saved_form():
    thread = DateThread()
    thread.read(NAMED[0], NAMED[1])
    again = DateThread.from_dict(thread.to_dict())
    assert again.named == thread.named and [d.isoformat() for d in again.named] == ["2025-04-20"]
    said = again.before(datetime(2025, 3, 4, 9))
    assert discourse_from_dict(discourse_to_dict(said)) == said
    assert DateThread.from_dict({"anchor": None, "last": None}).named == ()  # a thread saved before timeparse/17


def test_a_query_context_takes_up_the_days_the_build_kept_for_a_turn():
    """The query holds only a few turns; the layers' build resolved every earlier one. `remembered_before` reads
    the days named with their month from the build's mentions, and `discourses` hands them to the turn."""
    first = resolve_turns([NAMED])[0][1]
    later = datetime(2025, 3, 4, 9)
    history = [(NAMED[1], first), (later, [])]
    got = remembered_before(history, [later, NAMED[1], datetime(2025, 1, 1)])
    assert got[later].count(datetime(2025, 4, 20).date()) == 1
    assert got[NAMED[1]] == () and got[datetime(2025, 1, 1)] == ()  # nothing named before the naming turn itself
    text = "Half the team can't make the 20th now, shall we move it?"
    assert may_take_up(text) and not may_take_up("The launch is on the 20th of April.")
    alone = discourses([(7, "c", text, later)])
    told = discourses([(7, "c", text, later)], {7: got[later]})
    assert [m.range_start for m in resolved_mentions(text, later, alone[7])] == ["2025-03-20"]
    assert [m.range_start for m in resolved_mentions(text, later, told[7])] == ["2025-04-20"]

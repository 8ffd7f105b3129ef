"""The separation list (True Memory stage 8): in a conversation with more than five speakers, the
turns of the people the question names, closest in meaning first.

With two or three speakers every turn is by someone the question could name, so a per-speaker list
would rank almost everything and dilute the other signals; True Memory fires it only above five
distinct senders and weighs it at 0.8 of the dense list. Pure functions; the query path runs the
speaker-filtered dense search.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

MIN_SPEAKERS = 6  # "more than five distinct senders"
WEIGHT_OF_DENSE = 0.8


def names_speaker(query: str, speaker: str) -> bool:
    """Whether the question names this speaker (by full name or first name, as a whole word)."""
    s = speaker.strip()
    names = {s, s.split()[0]} if s else set()
    return any(len(n) >= 2 and re.search(rf"\b{re.escape(n)}\b", query, re.I) for n in names)


def separated_speakers(query: str, speakers: Iterable[str]) -> tuple[str, ...]:
    """The speakers the question names, when the scope has enough speakers for the list to separate."""
    distinct = sorted({s for s in speakers if s and s.strip()})
    if len(distinct) < MIN_SPEAKERS:
        return ()
    return tuple(s for s in distinct if names_speaker(query, s))

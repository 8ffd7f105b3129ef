"""Who the question is about. The separation list (True Memory stage 8): in a conversation with
more than five speakers, the turns of the people the question names, closest in meaning first. And
the asker's own turns: in a conversation between a user and an assistant, "what did I decide" is
answered by what the user said, not by the assistant's longer replies that repeat the same words;
and the addressee's: "what did you recommend" by what the assistant said.

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


# The question speaks for the person asking: "I", "me", "my", "mine", "myself" (and "I'm", "I've"...).
# A quoted "I" is somebody else's words ("when did she say 'I quit'?"), so quotes are cut first.
_FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|myself)\b", re.I)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
ASKER_ROLE = "user"  # the role (OpenAI-style `role` of an event) of whoever asks in the first person


# A question addressed to "you" ("what did you recommend", "your suggestion") is about what the
# assistant said. A request form ("can you tell me", "could you remind me") addresses the service, not
# the assistant of the conversation, so it is cut before looking.
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself)\b", re.I)
_REQUEST = re.compile(r"\b(?:can|could|would|will)\s+you\s+(?:please\s+)?", re.I)
ADDRESSEE_ROLE = "assistant"  # the role of whom a question in the second person is about


def addressee_role(query: str) -> str | None:
    """The event role a question addressed to "you" is about (the assistant's), or None."""
    return ADDRESSEE_ROLE if _SECOND_PERSON.search(_REQUEST.sub(" ", _QUOTED.sub(" ", query))) else None


def asker_role(query: str) -> str | None:
    """The event role a first-person question is about (the user's), or None. Lower-case "i" and
    "me" are matched too: people type "what did i say"; "me" in "remind me" still points at the user."""
    return ASKER_ROLE if _FIRST_PERSON.search(_QUOTED.sub(" ", query)) else None

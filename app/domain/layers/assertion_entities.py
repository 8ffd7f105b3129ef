"""Whom a claim is about, said the same way every time in one conversation, so that a restated
attribute meets the claim it updates: "my sister" after "my sister Leah" is Leah; "Okoro" after
"Daniel Okoro" is Daniel Okoro; "Rui Tavares" said of the speaker Rui is Rui. Streaming (a name only
ever maps to one seen before it), so a timeline built in batches reads the same names as one built at
once from the same events. Pure, no I/O.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from app.domain.layers.aliases import stated_aliases
from app.domain.layers.assertion_model import Assertion
from app.domain.layers.text import norm_name


def _tokens(name: str) -> list[str]:
    return norm_name(name).split()


def _short_of(short: str, long_: str) -> bool:
    """"Okoro" of "Daniel Okoro", "Daniel" of "Daniel Okoro": a one-word name that is the first or the
    last word of a two- or three-word name (not a possessive: "Maya's sister" is someone else)."""
    s, ln = _tokens(short), _tokens(long_)
    if len(s) != 1 or not 2 <= len(ln) <= 3 or "'" in long_.replace("’", "'"):
        return False
    return s[0] in (ln[0], ln[-1])


class EntityNames:
    """The names of one conversation's claim holders, in the order they were first said."""

    def __init__(self) -> None:
        self.names: list[str] = []  # display names, first form said
        self.aliases: dict[str, str] = {}  # relation form key ("maya's sister") -> the name it stands for

    def read(self, text: str, speaker: str, addressee: str | None) -> None:
        """Take the aliases an event states ("my sister Leah" said by Maya: "Maya's sister" is Leah)."""
        if speaker:
            self.see(speaker)
        for form, name in stated_aliases(text, speaker, addressee):
            self.aliases.setdefault(norm_name(form), name)

    def see(self, name: str) -> None:
        if norm_name(name) in {norm_name(n) for n in self.names}:
            return
        if sum(1 for n in self.names if _short_of(name, n)) == 1:
            return  # a speaker "Joyce" after "Joyce Pemberton" was named: the same person, by the name said first
        self.names.append(name)

    def canonical(self, entity: str) -> str:
        """The name `entity` was first said by: an alias's name, else a one-word short form's long name
        (or the reverse) when exactly one fits, else `entity` itself (remembered)."""
        entity = self.aliases.get(norm_name(entity), entity)
        key = norm_name(entity)
        for n in self.names:
            if norm_name(n) == key:
                return n
        fits = [n for n in self.names if _short_of(entity, n) or _short_of(n, entity)]
        if len(fits) == 1:
            return fits[0]
        self.names.append(entity)
        return entity

    def named(self, found: list[Assertion], persons: Collection[str]) -> list[Assertion]:
        """Each claim with its entity by the name it goes by (`canonical`); no job "at" a person ("been
        with Amira": `persons` holds the conversation's people's name keys)."""
        return [a if (n := self.canonical(a.entity)) == a.entity else replace(a, entity=n) for a in found
                if not (a.attribute == "works_at" and norm_name(a.value) in persons)]

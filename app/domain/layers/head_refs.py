"""A name referred back to by its head noun: "the council" after "Kettleby Council", "the festival" after
"Montserrat Film Festival". Speakers name an organisation or a place once in full and then by the
common noun at its end, in lower case after "the"; when exactly one name the conversation has used ends
in that noun, the two are one entity. Only the nouns that head the names of institutions, venues and
places (`HEADS`: council, club, surgery, hall, festival, ...) are read so: a chat assistant's title-case
headings ("Engage the Interviewer", "Senior Producer Role") are in the conversation's names too, and
"the interviewer" or "the role" is not a reference to them. Pure, no I/O.
"""
from __future__ import annotations

import re
from typing import Container

from app.domain.layers.text import CALENDAR_WORDS, NOT_NAMES, STOPWORDS, norm_name, split_sentences

# a common noun in lower case after "the", heading exactly one known name of two to four words
_HEAD_REF_RE = re.compile(r"\b[Tt]he\s+([a-z][a-z\-]{2,})\b(?![\-'’])")
# the common nouns that end the names of institutions, venues and places (general English, not a list
# of one data set's names)
HEADS = frozenset("""
    council society association club league trust foundation charity institute academy school college
    university hospital clinic surgery practice pharmacy library museum gallery theatre theater cinema church
    chapel cathedral temple mosque synagogue hall centre center studio studios bakery cafe café restaurant
    bistro pub bar hotel inn hostel shop store market supermarket garage gym park gardens station airport
    harbour harbor port marina estate farm lab labs laboratory company agency firm bank factory mill brewery
    warehouse depot festival fair marathon choir band orchestra committee court tribunal ministry hospice
    kennels stadium arena rink pool leisure nursery """.split())
# words a name may hold between its capitalised ones ("Bank of Ireland", "Café de Flore")
_CONNECTORS = frozenset({"of", "de", "du", "da", "des", "la", "le", "and", "&"})


class HeadIndex:
    """The known names of two to four words that end in one of `HEADS`, by that word, and all of them by
    their first word, kept up to date as the set of known names grows (the fold adds to one set; a new set
    is indexed anew)."""

    def __init__(self) -> None:
        self.of: object = None
        self.indexed: set[str] = set()
        self.by_last: dict[str, set[str]] = {}
        self.by_first: dict[str, set[str]] = {}

    def _update(self, known: Container[str]) -> None:
        if known is not self.of:
            self.of, self.indexed, self.by_last, self.by_first = known, set(), {}, {}
        if len(self.indexed) != len(known):  # type: ignore[arg-type]
            for k in set(known) - self.indexed:  # type: ignore[call-overload]
                self.indexed.add(k)
                toks = k.split()
                if 2 <= len(toks) <= 4 and not any(t in STOPWORDS and t not in _CONNECTORS for t in toks):
                    self.by_first.setdefault(toks[0], set()).add(k)
                    if toks[-1] in HEADS:
                        self.by_last.setdefault(toks[-1], set()).add(k)

    def names(self, known: Container[str], last: str) -> set[str]:
        self._update(known)
        return self.by_last.get(last, set())

    def opened_by(self, known: Container[str], first: str) -> set[str]:
        """The known names of two to four words whose first word is `first`."""
        self._update(known)
        return self.by_first.get(first, set())


def head_references(clause: str, known: Container[str], index: HeadIndex | None = None,
                    common: Container[str] = frozenset()) -> list[tuple[str, str]]:
    """(noun, name) for each "the <noun>" of the clause that refers back to a name by its head: the one
    known name (`known`: normalised names seen so far) of two to four words whose last word is the noun,
    "the council" for "Kettleby Council". A noun heading no name, or two ("the hall": "Eastgate Hall" and
    "Memorial Hall"), refers to nothing known; nor does a name that opens with a word the conversation
    writes in lower case (`common`): "Current Company", "Writing Center" are headings, not names."""
    out = []
    for m in _HEAD_REF_RE.finditer(clause):
        noun = m.group(1)
        if noun not in HEADS:
            continue
        names = [k for k in (index or HeadIndex()).names(known, noun) if k.split()[0] not in common]
        if len(names) == 1:
            out.append((noun, names[0]))
    return out


# the first word of a sentence, with what follows it
_OPENING_RE = re.compile(r"^\W*(?P<w>[^\W\d_][\w\-]*)(?:['’]s)?(?P<rest>\s*\S?)")


def opening_short_names(clause: str, known: Container[str], index: HeadIndex | None = None,
                        common: Container[str] = frozenset(), taken: Container[str] = frozenset()) -> list[str]:
    """Words opening a sentence of the clause that are a known longer name said by its first word: "Ana just
    rang" after "Ana Sousa", "Ostrander never paid" after "Ostrander Hotel", "Pennant's great" after "Pennant
    Health". Grammar capitalises every first word, so such a word is a name only when exactly one known name
    (`known`: normalised, seen mid-sentence) of two to four words opens with it, the word is not one the
    conversation writes in lower case (`common`) nor a stop word, and no capitalised word follows it (that
    run is a name of its own). `taken`: normalised names the clause already holds."""
    out = []
    for sent in split_sentences(clause):
        m = _OPENING_RE.match(sent)
        if not m:
            continue
        w, rest = m.group("w"), m.group("rest").strip()
        k = norm_name(w)
        if (len(w) < 3 or not w[0].isupper() or w.isupper() or (rest[:1].isupper() and rest[:1].isalpha())
                or k in common or k in STOPWORDS or k in NOT_NAMES or k in CALENDAR_WORDS or k in taken):
            continue
        if len((index or HeadIndex()).opened_by(known, k)) == 1:
            out.append(w)
    return out

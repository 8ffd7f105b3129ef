"""Every match of a rule table in a text, found with fewer passes over it (pure).

The assertion rules are a few hundred regular expressions, and a rule's `finditer` tries it at every
position of the text. With long turns (an assistant's answer runs to thousands of characters) that
was most of a layer build's time. Two facts make it cheaper without changing a single match:

1. Most rules begin with the same subject alternation ("I", "we", "my sister", a capitalised
   name, ...). A match of such a rule can only start where that alternation matches, so the
   alternation is found once per text (a zero-width lookahead over it, under the rule's flags: a
   superset of the places any of those rules can start) and each rule is tried only there, in
   order, from the end of its previous match, which is what `finditer` does for a pattern whose
   matches are never empty. The lookbehinds and anchors of a rule see the whole text, as before
   (`Pattern.match(text, pos)` does not cut the text at `pos`).
2. A text's matches do not depend on who said it or what came before (the rules' post-processing
   does), so they are kept per text (`RuleScanner.matches`, bounded): the timeline, the surprise
   index and the engrams read the same turn with different context and scan it once.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache


def _nonempty_lead(prefix: str) -> bool:
    """A lead that can match the empty string gates nothing (a match of the rule might be empty, and
    the lookahead would hold everywhere): such leads are not used."""
    return re.compile(prefix).match("") is None


def _top_level_alternation(pattern: str) -> bool:
    """True when `pattern` has a `|` outside every group and class ("LEAD x|y" may match at "y")."""
    depth, in_class, escaped = 0, False, False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
    return False


class RuleScanner:
    """The matches of `patterns` in a text, by rule index, each rule's in text order: exactly what
    `{i: tuple(rx.finditer(text)) for i, rx in enumerate(patterns)}` gives, rules without a match left out.
    `leads`: pattern prefixes (regex source) many of the patterns begin with; a pattern whose source
    starts with one is tried only where that prefix matches."""

    def __init__(self, patterns: Sequence[re.Pattern[str]], leads: Sequence[str] = (), cache: int = 2048):
        self.patterns = list(patterns)
        self._gate: list[tuple[str, int] | None] = []
        self._lookahead: dict[tuple[str, int], re.Pattern[str]] = {}
        usable = [lead for lead in leads if _nonempty_lead(lead)]
        for rx in self.patterns:
            lead = None if _top_level_alternation(rx.pattern) else \
                next((p for p in usable if rx.pattern.startswith(p)), None)
            key = None if lead is None else (lead, rx.flags)
            if key is not None and key not in self._lookahead:
                self._lookahead[key] = re.compile(f"(?=(?:{lead}))", rx.flags)
            self._gate.append(key)
        self.matches = lru_cache(maxsize=cache)(self._scan)

    def _scan(self, text: str) -> dict[int, tuple[re.Match[str], ...]]:
        starts = {key: [m.start() for m in la.finditer(text)] for key, la in self._lookahead.items()}
        out: dict[int, tuple[re.Match[str], ...]] = {}
        for i, rx in enumerate(self.patterns):
            key = self._gate[i]
            found = tuple(rx.finditer(text) if key is None else _gated(rx, text, starts[key]))
            if found:
                out[i] = found
        return out


def _gated(rx: re.Pattern[str], text: str, starts: Sequence[int]) -> Iterator[re.Match[str]]:
    end = 0
    for pos in starts:
        if pos < end:
            continue
        m = rx.match(text, pos)
        if m is not None:
            yield m
            end = m.end()

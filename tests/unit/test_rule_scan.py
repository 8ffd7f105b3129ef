"""`RuleScanner` finds exactly what each rule's `finditer` finds, rule by rule, in text order, while
trying the rules that begin with the subject alternation only where it matches."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.layers.assertions import ALL_RULES, SUBJECT
from app.domain.layers.rule_scan import RuleScanner

WORDS = ["I", "we", "We", "you", "my", "sister", "My", "brother", "Leah", "Noor Haddad", "she", "They", "moved",
         "to", "Porto", "work", "works", "at", "Fernhill", "Labs", "live", "in", "Lisbon", "'m", "am", "moving",
         "started", "as", "a", "nurse", "job", "new", "got", "dog", "named", "Rex", "no", "longer", "don't",
         "since", "May", "last", "week", ",", ".", "!", "?", "and", "then", "Her", "husband", "Ana's", "is", "are"]
SCANNER = RuleScanner([rx for _, rx, _ in ALL_RULES], leads=(SUBJECT,), cache=0)


def reference(text: str) -> dict[int, list[tuple]]:
    out = {}
    for i, (_, rx, _) in enumerate(ALL_RULES):
        found = [(m.span(), m.groupdict()) for m in rx.finditer(text)]
        if found:
            out[i] = found
    return out


def scanned(text: str) -> dict[int, list[tuple]]:
    return {i: [(m.span(), m.groupdict()) for m in ms] for i, ms in SCANNER.matches(text).items()}


def test_most_rules_are_gated_and_a_plain_claim_is_found_the_same_way():
    assert sum(1 for g in SCANNER._gate if g) > len(ALL_RULES) // 2
    text = "Good news! I moved to Porto in May, and my sister works at Fernhill Labs now."
    assert scanned(text) == reference(text)
    assert scanned(text)  # something matched: the comparison is not between two empty tables


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=40))
def test_same_matches_as_finditer(words):
    text = " ".join(words).replace(" ,", ",").replace(" .", ".")
    assert scanned(text) == reference(text)


def test_a_lead_that_can_match_empty_gates_nothing():
    rx = re.compile(r"(?P<subj>)x")
    s = RuleScanner([rx], leads=("(?P<subj>)",), cache=0)
    assert s._gate == [None]
    assert [m.span() for m in s.matches("axbx")[0]] == [(1, 2), (3, 4)]


def test_a_text_is_scanned_once():
    s = RuleScanner([re.compile(r"\bI\b\s+\w+")], leads=(r"\bI\b",), cache=8)
    s.matches("so I left")
    s.matches("so I left")
    assert s.matches.cache_info().hits == 1


def test_a_pattern_with_a_top_level_alternative_is_not_gated():
    lead = r"\bI\b"
    rx = re.compile(lead + r"\s+left|gone")  # "gone" can match where no "I" stands
    s = RuleScanner([rx], leads=(lead,), cache=0)
    assert s._gate == [None]
    assert [m.group(0) for m in s.matches("all gone, so I left")[0]] == ["gone", "I left"]
    assert RuleScanner([re.compile(lead + r"\s+(?:left|went)")], leads=(lead,), cache=0)._gate != [None]
    assert RuleScanner([re.compile(lead + r"\s+[|]")], leads=(lead,), cache=0)._gate != [None]

"""What one event's rule matches mean together, before the cross-claim step: claims one match implies
(a named pet is a pet one has), one spelling per kind of pet, a status a noun phrase implies given up
to the status the same event states ("my partner and I are getting married": engaged, not "in a
relationship"), a "move" whose subject is a product (a migration, not a residence), a place one is moving
to (not yet where one lives), and the values of the value kinds the rule table adds (occupations in a work
frame, numbered addresses).
Pure functions; no I/O.
"""
from __future__ import annotations

import re
from typing import Sequence

from app.domain.layers.assertion_rules import CAT_BREEDS, DOG_BREEDS, OCCUPATIONS, TOOL_NOUNS
from app.domain.layers.assertion_text import tool_kind

# one spelling per kind of pet: "a puppy called Pip" is a dog named Pip
PET_KIND = {"puppy": "dog", "pup": "dog", "doggo": "dog", "kitten": "cat", "kitty": "cat", "bunny": "rabbit",
            "pony": "horse", **{b: "dog" for b in DOG_BREEDS.split("|")}, **{b: "cat" for b in CAT_BREEDS.split("|")}}
_KIND_AFTER = re.compile(rf"\s+(?:(?:as|for)\s+(?:our|the|my|a|an|their)\s+(?:new\s+|main\s+)?)?(?P<noun>{TOOL_NOUNS})s?\b", re.I)
_KIND_BEFORE = re.compile(rf"\b(?:the|our|my)\s+(?:new\s+|main\s+)?(?P<noun>{TOOL_NOUNS})\s+(?:\w+\s+){{0,3}}$", re.I)
_NOUN_KIND = {"db": "database", "optimiser": "optimizer", "host": "hosting", "base model": "model", "backbone": "model"}
# words shaped like a title that are not occupations, in "a ___ at X" ("a member at", "a regular at")
_NOT_TITLES = frozenset("""member customer user beginner partner mother father brother sister daughter other winner
    runner newcomer foreigner passenger patient resident parent client regular fan viewer reader listener follower
    supporter subscriber owner homeowner leaver visitor guest tenant neighbour neighbor volunteer believer lover
    prisoner stranger""".split())
_TITLE_SHAPE = re.compile(r"[a-z]+(?:er|or|ist|ian|ant|eer|man|woman|ess|ive|ent)")
_SENIORITY = frozenset("new junior senior first only trainee acting interim".split())
_STRONGER = {"in a relationship": ("engaged", "married")}

Found = tuple  # (start, entity, attribute, value, surface, negated, stop), as `assertions.extract_assertions` builds them


def framed_occupation(raw: str) -> str | None:
    """The title in a work frame ("a dispatcher at X", "the project manager job"): its last word is a
    known occupation or has a title's shape and is not a known non-title; seniority words dropped."""
    words = [w for w in raw.lower().split() if w]
    while words and words[0] in _SENIORITY:
        words = words[1:]
    if not words:
        return None
    last = words[-1]
    if last in OCCUPATIONS or (_TITLE_SHAPE.fullmatch(last) and last not in _NOT_TITLES):
        return " ".join(words)
    return None


def address(raw: str) -> str | None:
    """A numbered address as written ("5 Hollins Lane"), without trailing punctuation."""
    v = raw.strip().rstrip(".,;:!?")
    return v if re.match(r"\d{1,4}[A-Za-z]?\s+\S", v) else None


def kind_near(text: str, start: int, end: int) -> str | None:
    """The kind of an unknown tool from the nouns around its name: "the Quill optimizer", "Kestrel as our
    scheduler", "the optimizer from Adam to AdamW"."""
    m = _KIND_AFTER.match(text, end) or _KIND_BEFORE.search(text[max(0, start - 40):start])
    if not m:
        return None
    noun = m.group("noun").lower()
    return _NOUN_KIND.get(noun, noun)


def pet_attribute(attr: str) -> str:
    head, _, kind = attr.partition(":")
    return f"{head}:{PET_KIND.get(kind, kind)}" if head == "pet_name" and kind else attr


def settle_found(found: list[Found], speaker: str) -> list[Found]:
    """One event's matches made consistent (see the module's docstring)."""
    out: list[Found] = []
    # "my daughter started at Ashgrove Primary": a child's school, not where the child works
    found = [f for f in found if not (f[2] == "works_at" and _CHILD.search(f[1])
                                      and any(g[2] == "school" and g[1] == f[1] and g[3] == f[3] for g in found))]
    for f in found:
        start, entity, attr, value, surface, negated, stop = f
        attr = pet_attribute(attr)
        if attr == "has_pet":
            value = PET_KIND.get(value.lower(), value)
        if attr in ("lives_in", "moving_to") and tool_kind(entity) and not negated:
            # "Postgres moved to Neon": the product moved, the speaker's tool changed
            attr, entity = f"uses:{tool_kind(entity)}", speaker
        elif attr.startswith("uses:") and tool_kind(entity):  # "Our Postgres moved to X": still the speaker's
            entity = speaker
        elif attr == "works_at" and not negated and _PUPIL_SCHOOL.search(value) and not _WORK_WORDS.search(surface):
            attr = "school"  # "Orla starts at Hollybank Nursery": a pupil's school, not an employer
        elif attr in ("lives_in", "moving_to") and not negated and _ORG_NAME.search(value):
            attr = "works_at"  # "I've moved to Fernhill Games as art director": an employer, not a town
        elif attr == "works_at" and _STUDENT.search(surface) and not _WORK_WORDS.search(surface):
            attr = "school"  # "a chemistry student at Rowan": where one studies
        elif attr == "job_title" and _STUDENT.search(value):
            continue  # a student is no occupation: what is studied is `studies`
        out.append((start, entity, attr, value, surface, negated, stop))
    # a pet named is a pet one has: "my cat Biscuit"
    for start, entity, attr, value, surface, negated, stop in list(out):
        if attr.startswith("pet_name:") and not negated:
            kind = attr.partition(":")[2]
            if not any(g[1] == entity and g[2] == "has_pet" and g[3].lower() == kind for g in out):
                out.append((start, entity, "has_pet", kind, surface, False, stop))
    # a job left for another one said in the same event ("I'm leaving X. I accepted an offer from Y"): the new
    # job ends the old one, so the leaving is no claim of its own
    out = [g for g in out if not (g[2] == "works_at" and g[5] and g[3] not in ("job", "") and _NOTICE.search(g[4]) and any(
        h[1] == g[1] and h[2] == "works_at" and not h[5] and h[3] != g[3] for h in out))]
    # a status a noun phrase implies yields to a stronger one the same event states
    stated = {(g[1], g[3]) for g in out if g[2] == "relationship_status" and not _implied(g)}
    out = [g for g in out if not (g[2] == "relationship_status" and _implied(g)
                                  and any((g[1], s) in stated for s in _STRONGER.get(g[3], ())))]
    # a place one is moving to is not yet where one lives: "we've bought a house in X and move in June"
    moving = {(g[1], g[3].lower()) for g in out if g[2] == "moving_to" and not g[5]}
    out = [g for g in out if not (g[2] == "lives_in" and not g[5] and (g[1], g[3].lower()) in moving)]
    # what one sentence both names and ends is ended: "we've cancelled our trip to Japan" is no trip planned
    ended = {(g[1], g[2], g[3].lower()) for g in out if g[5]}
    return [g for g in out if g[5] or (g[1], g[2], g[3].lower()) not in ended]


_ORG_NAME = re.compile(r"\s(?:Labs?|Systems|Ltd|Inc|Corp|Corporation|Technologies|Software|Analytics|Consulting|Solutions|"
                       r"Logistics|Insurance|Holdings|Industries|Games|Studios?|Partners|Capital|Ventures|Robotics|Pharma|"
                       r"Therapeutics|Biotech|Media|Digital|Networks|Agency|Associates|LLP|PLC|GmbH)$")
_STUDENT = re.compile(r"(?i)\b(?:student|undergrad|undergraduate|pupil|postgrad|postgraduate|fresher)s?\b")
_CHILD = re.compile(r"\b(?:son|daughter|kids|children|child|grandson|granddaughter|grandchild|grandkids|grandchildren|"
                    r"stepson|stepdaughter|niece|nephew|eldest|youngest|toddler)$")
_PUPIL_SCHOOL = re.compile(r"(?i)\b(?:nursery|kindergarten|preschool|pre-school|primary|elementary|infants|junior\s+school|"
                           r"secondary|grammar|high\s+school|middle\s+school|sixth\s+form)\b")
_WORK_WORDS = re.compile(r"(?i)\b(?:teach\w*|work\w*|job|role|post|position|hired|employed|as\s+(?:a|an|the))\b")
_NOTICE = re.compile(r"(?i)\b(?:notice|leaving|resign)")


def _implied(f: Found) -> bool:
    return bool(re.fullmatch(r"(?i)my\s+\S+", f[4].strip()))


def implied_and_known(entity_key: str, attribute: str, value: str, surface: str,
                      said: Sequence) -> bool:
    """A status implied by a noun phrase ("my partner") that a stronger standing one already covers
    (the speaker said they are engaged): not a new claim, and no change."""
    if attribute != "relationship_status" or not re.fullmatch(r"(?i)my\s+\S+", surface.strip()):
        return False
    standing = [a.value for a in said if a.attribute == "relationship_status" and a.entity_key == entity_key]
    return bool(standing) and standing[-1] in _STRONGER.get(value, ())


_HE = "son|brother|dad|daddy|papa|father|husband|boyfriend|grandpa|grandfather|uncle|nephew|fiance"
_SHE = "daughter|sister|mom|mum|mam|mammy|mummy|mommy|mother|wife|girlfriend|grandma|grandmother|aunt|niece|fiancee|fiancée"
_EITHER = "partner|friend|best friend|boss|roommate|cousin|neighbour|neighbor|manager|colleague|teacher|doctor"


def relation_antecedent(text: str, pos: int, pronoun: str, speaker: str) -> str | None:
    """Whom "he"/"she" at `pos` stands for when no name comes before it: the last "my <relation>" of the
    text that fits the pronoun ("My son moved out, he lives in Bristol now": the speaker's son)."""
    nouns = f"{_HE if pronoun.lower() in ('he', 'his') else _SHE}|{_EITHER}"
    hits = list(re.finditer(rf"\b(?:[Mm]y|[Oo]ur)\s+(?:(?:new|older|younger|little|big|eldest|oldest|youngest)\s+)?({nouns})\b",
                            text[:pos]))
    return f"{speaker}'s {hits[-1].group(1).lower()}" if hits else None

"""What a lexicon frame's matched words name (`assertion_lexicon`): the attribute a named value's head noun
says it belongs to, an occupation from the words of a work frame, the teacher of what one teaches, and the
value of each of the frames' value kinds (`lexicon_value`). Pure functions over the matched words; no I/O.
"""
from __future__ import annotations

import re

from app.domain.layers.assertion_lexicon import (GERUND_TITLES, GROUP_HEADS, ORG_HEAD, SCHOOL_HEADS, SERVICE_KIND,
                                                 TEAM_HEADS, is_subject)
from app.domain.layers.assertion_rules import OCCUPATIONS
from app.domain.layers.assertion_text import clean_value, tool_kind
from app.domain.layers.text import STOPWORDS


_NOT_TAUGHT = frozenset("""kids children students pupils adults classes lessons people year grade part full online
    privately there here now too again still also full-time part-time evenings weekends nights mornings""".split())


def teacher_of(raw: str) -> str | None:
    """The teacher of what one teaches: "guitar" -> "guitar teacher", "English" -> "English teacher"."""
    w = raw.strip()
    if not w or w.lower() in _NOT_TAUGHT or w.lower() in STOPWORDS:
        return None
    return f"{w if w[:1].isupper() else w.lower()} teacher"


# words before a title that say how one holds it, not what it is: "our other hygienist", "a humble charge nurse",
# "I'll stay secretary", "still assistant manager"
_FILLER = frozenset("""a an the our their my your his her new other another still humble lowly best last fully qualified
    perfectly happy proud very usual current stay do being""".split())


def tidy_title(value: str) -> str:
    """A job title without the words before it that are no part of it ("other backend dev" -> "backend dev")."""
    words = value.split()
    while len(words) > 1 and words[0].lower() in _FILLER:
        words = words[1:]
    return " ".join(words)


def typed_attribute(attribute: str, value: str) -> str | None:
    """The attribute a named value's own head noun says it belongs to, for a verb that takes several
    ("joined X", "with X now"): a school, a club or choir, a team; a tool or product is none of an
    employer's (None); otherwise `attribute`."""
    words = value.lower().replace("’", "'").split()
    if not words:
        return None
    if tool_kind(value):
        return None
    if any(w in SCHOOL_HEADS for w in words):
        return "school"
    if words[-1] in GROUP_HEADS:
        return "member_of"
    if words[-1] in TEAM_HEADS:
        return "works_in"
    return attribute


_SENIORITY = frozenset("new junior senior first only trainee acting interim deputy assistant full-time part-time "
                       "freelance self-employed qualified newly-qualified locum relief agency permanent temporary".split())
_NOT_TITLES = frozenset("""member customer user beginner partner mother father brother sister daughter other winner
    runner newcomer foreigner passenger patient resident parent client regular fan viewer reader listener follower
    supporter subscriber owner homeowner leaver visitor guest tenant neighbour neighbor believer lover prisoner
    stranger one person people man woman guy girl boy kid type sort kind problem issue reason answer best worst
    first last same latter former learner talker worrier sleeper eater drinker smoker thinker achiever dreamer
    doer planner saver spender gamer reader mess wreck nightmare legend natural matter number order letter paper
    water weather corner dinner summer winter border answer chapter power tower finger danger factor error mirror
    colour color favour favor labour labor floor interior exterior sector motor minor major manner banner character
    monster filter trigger computer printer speaker sticker poster cluster server folder browser router river silver
    other another rather together further moment comment event present percent element segment talent content
    argument document payment statement apartment department alternative relative native incentive objective
    perspective initiative archive topic music logic public clinic traffic panic plant giant restaurant variant
    infant business process access address success progress dress stress press witness fitness wellness mattress
    project subject object effect aspect prospect defect insect respect suspect human german roman weekender
    teenager toddler youngster baby adult senior junior beginner hiker climber swimmer skier surfer golfer walker
    jogger skater rider remember whenever wonder consider discover deliver offer suffer prefer bother gather
    recover encounter register better bitter redundant pregnant important relevant elegant brilliant distant constant
    different excellent confident independent urgent efficient recent decent silent aware vegetarian vegan
    pescatarian introvert extrovert optimist pessimist perfectionist insomniac romantic grandmother grandfather
    godmother godfather stepmother stepfather granny grandma grandpa pensioner retiree newlywed widower starter
    joiner recruit newbie newcomer""".split())
_TITLE_SHAPE = re.compile(r"[a-z]+(?:er|or|ist|ian|ant|eer|ess|ive|ent|man|woman)")
DETERMINERS = frozenset("a an the my your his her our their its".split())
_HEAD_OF = re.compile(r"((?:deputy\s+|assistant\s+|acting\s+)?(?:head|director|chief|manager|lead|vp)\s+of\s+[a-z]+)\b")


def title(raw: str) -> str | None:
    """An occupation from the words after "as a"/"the new": the longest run that ends in a known
    occupation ("senior data analyst at" -> "data analyst"), else the words before the first function
    word when they end in a word with a title's shape that is no common non-title ("dispatcher at" ->
    "dispatcher"); "head of X" kept whole."""
    low = raw.lower().strip()
    m = _HEAD_OF.match(low)
    if m:
        return m.group(1)
    words = [w for w in low.split() if w]
    while words and (words[0] in _SENIORITY or words[0] in DETERMINERS):  # "your academic adviser": an adviser's title
        words = words[1:]
    head = []
    for w in words:
        if w in STOPWORDS:
            if w == "of":
                return None  # "a matter of fact", "a number of": no title
            break
        head.append(w)
    last = head[-1] if head else ""
    if 0 < len(head) <= 3 and (last in OCCUPATIONS or (_TITLE_SHAPE.fullmatch(last) and last not in _NOT_TITLES and len(last) > 4)):
        return " ".join(head)  # the words up to the clause's next function word: "volunteer coordinator"
    for k in range(len(words), 0, -1):
        if words[k - 1] in OCCUPATIONS:
            return " ".join(words[:k])
    return None


LEXICON_KINDS = frozenset("""service group group_the subject teach_subject teach_subject_negated tool_any tool_negated_any org_named race
    gerund_title title org""".split())


def _org_like(name: str) -> bool:
    """A name that cannot be a person's first name alone: two words or more, or an organisation's head noun."""
    return len(name.split()) >= 2 or bool(ORG_HEAD.search(name))


def lexicon_value(kind: str, raw: str, groups: dict, attribute: str) -> tuple[str, str, str, bool] | None:
    """(attribute, value, kind of tool or "", negated) of one match of a lexicon frame whose value kind is
    `kind` (one of LEXICON_KINDS), or None when its words name no such value."""
    value: str | None
    what, negated, target = "", kind.endswith("negated") or kind == "tool_negated_any", attribute
    if kind == "service":  # "my home insurance with Harbourline": the insurer
        value = clean_value(raw, "proper")
        what = SERVICE_KIND.get(re.sub(r"\s+", " ", (groups.get("noun") or "").lower()), "")
        if not what:
            return None
    elif kind == "group":  # a band or group played with: a name of two words or a group's head noun
        value = clean_value(raw, "proper")
        if not value or tool_kind(value) or (len(value.split()) < 2 and value.lower().split()[-1] not in GROUP_HEADS):
            return None
    elif kind == "group_the":  # "joined the Riverside Runners": a plural name or a group's head noun is a group
        value = clean_value(raw, "proper")
        last = (value or "").lower().split()[-1:] or [""]
        if not value or tool_kind(value) or ORG_HEAD.search(value) or not (
                last[0] in GROUP_HEADS or re.fullmatch(r"[a-z]+[^su]s", last[0])):
            return None
    elif kind.startswith("teach_subject"):  # "I teach guitar": a guitar teacher; "quitting the guitar teaching"
        value = teacher_of(raw)
    elif kind in ("tool_any", "tool_negated_any"):  # "I deleted Hinge": an app, whatever its name
        value = clean_value(raw, "proper")
    elif kind == "subject":  # "my nursing degree": a subject of study by name or shape
        value = clean_value(raw, "common")
        if not value or not is_subject(value):
            return None
    elif kind == "race":  # "the Harbour half marathon": the race as named
        value = re.sub(r"\s+", " ", raw).strip()
    elif kind == "gerund_title":  # "I'm temping at X": a temp; "driving for X" when X is an organisation's name
        org = groups.get("org") or ""
        value = None if org and not _org_like(org) else GERUND_TITLES.get(raw.lower())
    elif kind == "title":  # "working as a translator", "I'm the new office manager"
        value = title(raw)
    else:  # "org", "org_named": a name a verb of several attributes governs; its head noun decides ("joined X")
        value = clean_value(raw, "proper")
        if not value or (kind == "org_named" and (tool_kind(value) or not _org_like(value))):
            return None
        target = typed_attribute(attribute, value) or ("" if kind == "org" else attribute)
    if not value or not target:
        return None
    return target, value, what, negated

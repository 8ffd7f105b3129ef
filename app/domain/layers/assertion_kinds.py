"""What one rule match claims, by the rule's kind: the value its words name, the attribute it fills, the kind
of tool or plan it is about, whether it is negated, and whose it is when the kind says so ("Tariq proposed":
the speaker is engaged). `assertions._extract` finds the matches and who they are about; this module reads
each match's value; the caller keeps or drops the claim. Pure functions over the matched words; no I/O.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.domain.layers.assertion_derived import address, framed_occupation, kind_near
from app.domain.layers.assertion_forms import PLAN_KIND
from app.domain.layers.assertion_rules import ACTIVITIES, HABIT, OCCUPATIONS, PROPER
from app.domain.layers.assertion_text import PRONOUNS, PROPOSAL, clean_value, tool_kind
from app.domain.layers.assertion_values import DETERMINERS, LEXICON_KINDS, lexicon_value, title
from app.domain.layers.text import NUMBER_WORDS, norm_name

NEGATED_KINDS = ("negated", "hobby_negated", "common_negated")
_IMPLIED_STATUS = {"husba": "married", "wife": "married", "fianc": "engaged"}
_TERMS = frozenset("full-time part-time freelance self-employed locum relief agency permanent temporary".split())
NOT_PLACES = frozenset("bed work school church class practice lunch dinner breakfast sleep town year grade form room level "
                       "stage reception".split())


@dataclass(frozen=True)
class Reading:
    """A match's claim before the caller's checks: `target` is the attribute template (`plan:{pkind}`),
    `groups` the match's groups with the plan kind normalised, `undated` that the sentence's date is not
    when the claim starts ("we're getting married in June": engaged now)."""
    target: str
    value: str | None
    what: str
    negated: bool
    entity: str
    groups: dict[str, Any]
    undated: bool = False


def is_speaker(name: str, speaker: str) -> bool:
    """Whether `name` is the speaker's name or its first word ("Rui Tavares" said by "Rui")."""
    n, sp = norm_name(name), norm_name(speaker)
    return bool(sp) and (n == sp or n.split(" ")[0] == sp or sp.split(" ")[0] == n)


def _occupation(raw: str, text: str) -> str | None:
    """The occupation a phrase ends in ("a full-time carer" -> "carer"), else its words as a title; none
    when it is what someone is to a person ("a great mentor to me")."""
    cleaned = clean_value(raw, "common")
    words = (cleaned or "").lower().split()
    words = words[1:] if len(words) > 1 and words[0] in DETERMINERS else words  # "Matej, their conductor"
    # keep only phrases that end in an occupation noun ("a nurse", "a software engineer")
    lead = re.match(r"((?:deputy\s+|assistant\s+)?(?:head|director|chief|manager|lead)\s+of\s+[a-z]+)\b", " ".join(words))
    while words and words[-1] not in OCCUPATIONS and not lead:
        words.pop()
    words = words[1:] if len(words) > 1 and words[0] in _TERMS else words  # "a full-time carer": a carer
    words = lead.group(1).split() if lead else words
    value = " ".join(words) if words else title(cleaned or "")  # "an emergency call handler"
    if value and re.search(rf"(?i)\b{re.escape(value)}\s+(?:to|for)\s+(?:me|us|him|her|them|you|everyone|many)\b", text):
        return None  # "she's been a great mentor to me": what someone is to the speaker, not a job
    return value


def read_kind(kind: str, attribute: str, m: re.Match[str], groups: dict[str, Any], text: str, context: str,
              speaker: str, entity: str) -> Reading | None:
    """The claim of one match of a rule of `kind` (not an opinion: the caller reads those), or None when
    the match claims nothing. `entity` is whom the caller found it about; `speaker` who said it."""
    raw = groups.get("val") or groups.get("val2") or ""
    target, what, negated, undated = attribute, (groups.get("what") or "").lower(), kind in NEGATED_KINDS, False
    if kind == "breakup":
        value: str | None = "single"
    elif kind in ("dating", "married", "engaged", "divorced"):
        value = "in a relationship" if kind == "dating" else kind
        if (groups.get("name") or "").lower() in PRONOUNS | {"they", "we", "she", "he", "everyone", "everybody"} or (
                re.search(r"(?i)\bsaid\s+yes\b", m.group(0)) and not PROPOSAL.search(f"{context} {text}")):
            return None  # "they said yes" (to an offer), "Wiremu said yes, so ..." with no proposal in view: no engagement
        if groups.get("name"):  # "Tariq proposed": the speaker is engaged (to Tariq)
            entity = speaker or "speaker"
    elif kind == "team":
        value = clean_value(raw, "common")
        if value and value.lower() in PRONOUNS | {"same", "other", "new", "whole"}:
            value = None
        if value and re.search(rf"\b(?:{ACTIVITIES})\b", value.lower()):
            return None  # "the football team" is a membership, not where one works
    elif kind == "introduction":  # "this is X from <address>" is where X lives; else whom X works for
        value = clean_value(raw, "proper") if not raw[:1].isdigit() else raw.strip()
        if value is None or (not raw[:1].isdigit() and not is_speaker(entity, speaker)):
            return None
        target = "lives_in" if raw[:1].isdigit() else attribute
    elif kind in ("job_ended", "move_ended"):  # the job or move it ends is read in `extract_all`
        negated, value = True, ("job" if kind == "job_ended" else "move")
    elif kind in ("freelance", "teacher", "retired"):
        value = {"freelance": "freelancer"}.get(kind, kind)
    elif kind in ("hobby_negated", "common_negated"):
        value = clean_value(raw, "common")
    elif kind == "plan_place":  # "the wedding's moved to Kuala Lumpur"
        value = clean_value(raw, "proper")
        pk = (groups.get("pkind") or "").lower()
        groups = {**groups, "pkind": PLAN_KIND.get(pk, pk)}
    elif kind == "tool_noun":  # "our tracker is Linear now": the kind the sentence names
        value = clean_value(raw, "proper")
        noun = (groups.get("noun") or "").lower().rstrip("s")
        what = tool_kind(value) if value and tool_kind(value) else {"db": "database", "optimiser": "optimizer"}.get(noun, noun)
    elif kind in ("tool", "tool_negated"):
        negated = kind == "tool_negated"
        value = clean_value(raw, "proper")
        what = (tool_kind(value) or kind_near(text, m.start("val"), m.end("val"))) if value else None
        if what is None:
            return None
    elif kind in ("version", "device", "plan_tier"):
        value = clean_value(raw, "proper") if kind != "version" else raw
        what = (groups.get("tool") or ("plan" if kind == "plan_tier" else "")).lower()
        if kind == "plan_tier" and not re.search(r"\b(?:plan|tier|subscription|package|membership)\b", m.group(0)):
            return None  # "upgraded to Python 3.12" is a version, not a plan
        if not value or not what:
            return None
    elif kind == "place_negated":
        negated = True
        value = clean_value(raw, "proper")
        if not value or tool_kind(value):
            return None
    elif kind == "place":
        value = clean_value(raw, "proper")
        if value and (tool_kind(value) or value.lower() in NOT_PLACES):
            return None
    elif kind in ("plan", "plan_cancel"):
        negated = kind == "plan_cancel"
        pk = (groups.get("pkind") or "").lower()
        groups = {**groups, "pkind": PLAN_KIND.get(pk, pk)}
        where = re.match(rf"\s+(?:to|in)\s+({PROPER})", text[m.end():]) if negated else None
        value = clean_value(where.group(1), "proper") or "planned" if where else "planned"  # "cancelled the trip to Bruges"
    elif kind == "number":
        n = int(raw) if raw.isdigit() else NUMBER_WORDS.get(raw.lower())
        value = str(n) if n is not None else None
    elif kind == "status_noun":  # "I'm a widow"
        value = {"widow": "widowed", "widower": "widowed", "divorcee": "divorced"}[raw.lower()]
    elif kind == "status":  # "we're getting married" is a wedding to come: engaged
        value = "engaged" if raw.lower() == "married" and re.search(r"(?i)getting\s+married", m.group(0)) else raw.lower()
        undated = value != raw.lower()  # the wedding day is not when it starts
    elif kind == "occupation_framed":
        value = framed_occupation(raw)
    elif kind in LEXICON_KINDS:  # the lexicon frames' value kinds (assertion_lexicon.lexicon_value)
        read = lexicon_value(kind, raw, groups, attribute)
        if read is None:
            return None
        target, value, what, negated = read[0], read[1], read[2] or what, read[3]
    elif kind == "habit":
        value = HABIT.get(raw.lower())
    elif kind == "address":
        value = address(raw)
    elif kind == "implied_status":  # "my wife" says the speaker is married
        value = _IMPLIED_STATUS.get(raw.lower()[:5], "in a relationship")
    elif kind in ("occupation", "occupation_negated"):
        negated = kind == "occupation_negated"
        value = _occupation(raw, text)
    else:
        value = clean_value(raw, "proper" if kind in ("stay", "employer", "invited", "presupposed") else kind)
        if value and ((attribute in ("moving_to", "lives_in") and (tool_kind(value) or value.lower() in NOT_PLACES))
                      or (kind == "employer" and tool_kind(value))):
            return None  # "we're moving to Fly.io" is a migration (uses:hosting)
        if value and attribute == "member_of" and re.search(r"(?i)\bteam$", value):
            if not re.search(rf"(?i)\b(?:{ACTIVITIES})\b", value):
                return None  # "joined the data team" is where one works (works_in), a sports team a membership
            value = re.sub(r"(?i)^(?:company|office|work|works|local|village|church|uni|university|school|club)\s+", "", value)
    return Reading(target, value, what, negated, entity, groups, undated)

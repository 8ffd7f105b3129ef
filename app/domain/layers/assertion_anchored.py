"""Changes and retractions read through what the speaker already said: the attribute comes from the
conversation, not from a verb the rules know. "I've switched from chemistry to physics" after "I
study chemistry" is a new value of `studies`; "the outpatient clinic instead of the ward" after "I'm
on the cardiology ward" a new `works_in`; "I cancelled FitHaus" after "I'm a member of FitHaus" ends
that membership; "Lisbon is off" after a trip to Lisbon ends the trip (and, `colleague_claims`, "my colleague Jo" works
where the speaker said they work). Whatever the attribute,
the form is the same: an old value the speaker holds, named again in a change ("from A to B", "B
instead of A") or an ending ("cancelled A", "A is off"), so the forms need no list of attributes,
values or topics.

An old value matches one the speaker said before when it is the same name, one name's short or long
form ("Tallow" / "Tallow Studio"), or the same head word ("the ward" / "the cardiology ward").
Pure functions over one event's text and the speaker's earlier claims; no I/O.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Sequence

from app.domain.layers.assertion_context import same_name
from app.domain.layers.assertion_lexicon import OCC, TEAM_HEADS, is_subject
from app.domain.layers.text import LOWER, NOT_NAMES, STOPWORDS, UPPER, norm_name

_UP, _LOW = UPPER, LOWER

from app.domain.layers.assertion_dates import stated_day
from app.domain.layers.events import LayerEvent

if TYPE_CHECKING:
    from app.domain.layers.assertion_model import Assertion

_W = r"[\w'’&\.\-]+"
_PHRASE = rf"(?:{_W}\s+){{0,3}}?{_W}"
_DET = r"(?:(?:the|my|our|a|an|that|this)\s+)?"
# where a named value ends: punctuation, the end, or a word that starts a new part of the clause
_STOP = r"(?=\s*(?:[.,!?;:)]|$)|\s+(?:now|then|too|as\s+well|by\s+the\s+way|because|since|after|before|so|and|but|" \
        r"this|next|last|on|in|at|for|from|with|until|instead|anyway|though|already|again|over|during|when|while|" \
        r"after|before|around|within|yesterday|today|tonight|tomorrow)\b)"
_CHANGE_VERB = (r"(?:switch|switched|switching|change|changed|changing|move|moved|moving|transfer|transferred|"
                r"transferring|swap|swapped|swapping|go|went|going|upgrade|upgraded|downgrade|downgraded|convert|"
                r"converted|shift|shifted)")
_FROM_TO = re.compile(rf"(?i)\b{_CHANGE_VERB}\b[^.!?;]{{0,40}}?\bfrom\s+{_DET}(?P<old>{_PHRASE}?)\s+to\s+{_DET}(?P<new>{_PHRASE}){_STOP}")
_INSTEAD = re.compile(rf"(?i)\b(?:the|a|an|my|our|to|for|in|at|on|with|up|chose|picked|took)\s+(?P<new>{_PHRASE})\s+"
                      rf"instead\s+of\s+{_DET}(?P<old>{_PHRASE}){_STOP}")
_END_VERB = (r"(?:cancel(?:l)?ed|cancel(?:l)?ing|cancel|scrap|ditch|call\s+off|shelved|shelve|binned|axed|nixed|quit|left|dropped|ditched|scrapped|gave\s+up|given\s+up|stopped|"
             r"called\s+off|pulled\s+out\s+of|dropped\s+out\s+of|backed\s+out\s+of|withdrew\s+from|moved\s+off|moved\s+away\s+from|"
             r"migrated\s+(?:off|away\s+from)|got\s+rid\s+of|finished\s+(?:at|with)|walked\s+away\s+from|stepped\s+down\s+from|"
             r"resigned\s+from|deleted|uninstalled|decided\s+against|gave\s+up\s+on|given\s+up\s+on)")
_ENDED = re.compile(rf"(?i)\b(?P<subj>I|we)\b(?:\s+(?:have|had|just|finally|also|already|officially|will|then|probably|"
                    rf"(?:am|are)\s+going\s+to|need\s+to|have\s+to|had\s+to)|['’]ve|['’]d|['’]ll)*\s+{_END_VERB}\s+{_DET}(?P<old>{_PHRASE}){_STOP}")
_IS_OFF = re.compile(rf"(?i)(?:^|[.!?,;:]\s*|\bso\s+|\band\s+|\bbut\s+)(?:the\s+|our\s+|my\s+)?(?P<old>{_PHRASE})(?:\s+(?:is|are|has\s+been|have\s+been|was|were|got)|\s*['’]s(?:\s+been)?)\s+(?:now\s+|officially\s+|definitely\s+)?"
                     rf"(?:off|cancell?ed|called\s+off|not\s+happening|scrapped|shelved|dead)\b(?!\s+(?:to|on|at|the|work|early|late|there|here|with|for|by)\b)"
                     rf"|(?:^|[.!?,;:]\s*|\bso\s+|\band\s+|\bbut\s+)(?:the\s+|our\s+|my\s+)?(?P<old2>{_PHRASE})\s+(?:isn['’]t|is\s+not|won['’]t\s+be|will\s+not\s+be|"
                     rf"is\s+no\s+longer|aren['’]t|are\s+not)\s+happening\b|(?:^|[.!?,;:]\s*|\bso\s+|\band\s+|\bbut\s+)(?:the\s+|our\s+|my\s+)?"
                     rf"(?P<old3>{_PHRASE})\s+(?:fell\s+through|has\s+fallen\s+through|got\s+(?:cancell?ed|scrapped|called\s+off))\b")
# "dropped Jira for Linear", "swapped the Corolla for a Civic", "replaced Heroku with Fly.io": an old value for a new one
_SWAP = re.compile(rf"(?i)\b(?:dropped|ditched|swapped|swapping|swap|replaced|replacing|replace|traded|trading|exchanged|abandoned)\s+"
                   rf"{_DET}(?P<old>{_PHRASE})\s+(?:for|with|in\s+favou?r\s+of)\s+{_DET}(?P<new>{_PHRASE}){_STOP}")
# "we're switching to Calder Mutual", "I switched to history": a new value of the one attribute of its kind held
_TO_NEW = re.compile(rf"\b(?:(?:switch|switched|switching|changed\s+over|changing\s+over|moved\s+over|moving\s+over)\s+"
                     rf"(?:over\s+)?to|signed\s+up\s+(?:with|to)|signing\s+up\s+(?:with|to)|registered\s+with)\s+(?:the\s+)?(?:(?P<new>[{_UP}][\w'’&\.\-]*(?:\s+(?:&\s+)?[{_UP}][\w'’&\.\-]*){{0,3}})"
                     rf"|(?P<low>(?!(?:it|that|this|them|a|an|my|our|something|one|another|somewhere)\b)[a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){{0,2}}?){_STOP})")
_MOOD_BEFORE = re.compile(r"(?i)\b(?:thinking\s+(?:about|of)|considering|might|may|could|would|should|want\s+to|wants\s+to|"
                          r"hoping\s+to|hope\s+to|if|whether|maybe|perhaps|not\s+sure\s+about|tempted\s+to|debating)"
                          r"(?:\s+(?:be|just|actually|really|maybe))*\s+$")
_SWITCHABLE = ("uses:", "studies", "works_in", "school")
# a choice made between options: "Hokkaido it is", "we settled on Porto": a new value of the plan held
_DECIDED = re.compile(rf"(?:(?:^|[.!?,;:]\s*|\b(?:so|fine|ok|okay|right|then)\W+)(?P<new>[{_UP}][\w'’&\.\-]*(?:\s+[{_UP}][\w'’&\.\-]*){{0,2}})\s+it\s+is\b"
                      rf"|\b(?:decided\s+on|settled\s+on|opted\s+for|going\s+for|gone\s+for|went\s+for|going\s+with|gone\s+with|went\s+with)\s+"
                      rf"(?P<new2>[{_UP}][\w'’&\.\-]*(?:\s+[{_UP}][\w'’&\.\-]*){{0,2}})(?![\w'’&\.\-])(?!\s+(?:for|as)\b)"
                      # "we're doing Sicily instead": the plan's new value, the old one left unsaid
                      rf"|\b(?:doing|do|going\s+to|go\s+to|choosing|chose|picking|picked|booking|booked|having|visiting|"
                      rf"heading\s+to|flying\s+to|trying)\s+(?P<new3>[{_UP}][\w'’&\.\-]*(?:\s+[{_UP}][\w'’&\.\-]*){{0,2}})"
                      rf"(?:\s+(?:this\s+time|now))?\s+instead\b(?!\s+of))")
# "I'm at Corvis now", "Tom is with Kestrel these days": a new employer of one who holds one
_AT_NOW = re.compile(rf"(?<![\w'’])(?P<who>I|[Ww]e|[{_UP}][{_LOW}]{{2,}})\s*(?:['’]m|['’]s|['’]re|\s+am|\s+is|\s+are)\s+"
                     rf"(?:(?P<now>now)\s+)?(?:at|with)\s+(?:the\s+)?(?P<new>[{_UP}][\w'’&\.\-]*(?:\s+(?:&\s+)?[{_UP}][\w'’&\.\-]*){{0,3}})"
                     rf"(?(now)|\s+(?:now|these\s+days|nowadays)\b)")


def _of_kind(new: str, attribute: str) -> bool:
    """Whether a new value said in lower case can be a value of `attribute`: a subject of study, a team."""
    if new[:1].isupper():
        return True
    if attribute == "studies":
        return is_subject(new)
    if attribute == "works_in":
        return new.split()[-1] in TEAM_HEADS
    return False


def _head(key: str) -> str:
    return key.rsplit(" ", 1)[-1] if key else ""


def _matches(phrase: str, value_key: str) -> bool:
    """Whether the words `phrase` name the value keyed `value_key`: the same name, a short or long
    form of it, or the same head word (the last word: "ward" / "cardiology ward")."""
    k = norm_name(phrase)
    if not k or not value_key:
        return False
    return k == value_key or same_name(k, value_key) or (_head(k) == _head(value_key) and len(_head(k)) > 2)


def _held(phrase: str, said: Sequence["Assertion"]) -> "Assertion | None":
    """The speaker's latest claim whose value the phrase names, if exactly one attribute fits."""
    hits = [a for a in said if not a.negated and _matches(phrase, a.value_key)]
    if not hits or len({a.attribute for a in hits}) > 1:
        return None  # nothing held, or the name fits two attributes: not decidable from the words
    return hits[-1]


def _usable(value: str, like: "Assertion") -> str | None:
    """The new value as written, when it can stand for the old one's kind (a name for a name)."""
    v = re.sub(r"(?i)^(?:the|a|an|my|our)\s+", "", value.strip(" '’\"").rstrip(".,;:!?"))
    low = v.lower()
    if not v or low in STOPWORDS or low in NOT_NAMES or low.split(" ")[0] in ("it", "that", "this", "them", "one"):
        return None
    if like.value[:1].isupper() and not v[:1].isupper() and not v[:1].isdigit():
        return None  # "from Heroku to something cheaper": not a name where a name stood
    return v


def anchored_claims(event: LayerEvent, found: Sequence["Assertion"], said: Sequence["Assertion"],
                    held_of: Callable[[str], Sequence["Assertion"]] | None = None) -> list["Assertion"]:
    """Claims of one event (its content) read through the speaker's earlier claims `said` (their own, in order):
    a new value where the event changes one they hold, a negation where it ends one. Claims the
    event's rules already made (`found`, the same entity, attribute and value) are not repeated.
    `held_of(name)`: the claims held by someone the event names ("Tom is at Kestrel now")."""
    text = event.content
    out: list["Assertion"] = []

    def add(like: "Assertion", value: str, key: str, negated: bool, m: re.Match) -> None:
        if any(f.entity_key == like.entity_key and f.attribute == like.attribute and f.negated == negated
               and (f.value_key == key or same_name(f.value_key, key)) for f in [*found, *out]):
            return
        if negated and any(f.entity_key == like.entity_key and f.negated and (f.value_key == key or same_name(f.value_key, key))
                           for f in found):
            return  # the rules ended it already, under another attribute: the cross-claim step fixes that
        out.append(replace(like, id=f"{event.id}#{len(found) + len(out)}", event_id=event.id, value=value,
                           value_key=key, surface=m.group(0).strip(), negated=negated, superseded_by=None,
                           time=event.occurred_at, seq=event.seq,
                           valid_from=stated_day(text, m.start(), m.end(), event.occurred_at, like.attribute)))

    for rx in (_FROM_TO, _INSTEAD, _SWAP):
        for m in rx.finditer(text):
            old = _held(m.group("old"), said)
            new = _usable(m.group("new"), old) if old is not None else None
            if old is None or new is None or _matches(new, old.value_key):
                continue
            add(old, new, norm_name(new), False, m)
    for m in _TO_NEW.finditer(text):
        if _MOOD_BEFORE.search(text, max(0, m.start() - 40), m.start()):
            continue  # "I'm thinking about switching to philosophy": no switch yet
        new = (m.group("new") or m.group("low") or "").rstrip(".,;:!?")
        kinds = {a.attribute: a for a in said if a.attribute.startswith(_SWITCHABLE) and not a.negated
                 and a.value[:1].isupper() == new[:1].isupper() and _of_kind(new, a.attribute)}
        if new and len(kinds) == 1 and not any(
                _matches(new, f.value_key) or norm_name(new) in f.surface.lower() for f in found):
            old = next(iter(kinds.values()))
            if not _matches(new, old.value_key):
                add(old, new, norm_name(new), False, m)
    for m in _DECIDED.finditer(text):
        plans = {a.attribute: a for a in said if a.attribute.startswith("plan:") and not a.negated}
        new = (m.group("new") or m.group("new2") or m.group("new3") or "").rstrip(".,;:!?")
        if len(plans) == 1 and new and not any(_matches(new, f.value_key) for f in found):
            old = next(iter(plans.values()))
            if not _matches(new, old.value_key) and old.value[:1].isupper():
                add(old, new, norm_name(new), False, m)
    for m in _AT_NOW.finditer(text):
        who = m.group("who")
        held = said if who.lower() in ("i", "we") else (held_of(who) if held_of else [])
        jobs = [a for a in held if a.attribute == "works_at" and not a.negated]
        new = m.group("new").rstrip(".,;:!?")
        if jobs and not _matches(new, jobs[-1].value_key) and not any(f.attribute == "works_at" and _matches(new, f.value_key) for f in found):
            add(jobs[-1], new, norm_name(new), False, m)
    for rx in (_ENDED, _IS_OFF):
        for m in rx.finditer(text):
            old = _held(m.group("old") or m.groupdict().get("old2") or m.groupdict().get("old3") or "", said)
            if old is not None:
                add(old, old.value, old.value_key, True, m)
    return out


# "my colleague Tomás", "Henrike, a colleague of mine", "Ines, our new optician": whoever works with the speaker (a
# colleague, one who holds a title in "our" firm) works where the speaker does
_COLLEAGUE_NOUN = r"(?:colleague|co-worker|coworker|workmate)"
_NAME = rf"(?:(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+)?[{_UP}][\w'’\-]+(?:\s+[{_UP}][\w'’\-]+)?"
# a title "our" staff holds ("our pharmacist", "our new CTO", "our lab technician"), not a service a household buys in
_HOUSEHOLD = r"(?!(?:[a-z\-]+\s+)?(?:plumber|electrician|builder|cleaner|nanny|gp|GP|doctor|dentist|vet|solicitor|lawyer|accountant|gardener|childminder|tutor|mechanic|midwife|landlord|landlady|teacher|postman|postie|contractor|consultant|supplier|agent)\b)"
_STAFF = rf"(?:new\s+|other\s+|usual\s+|first\s+|only\s+)?{_HOUSEHOLD}(?:[a-z\-]+\s+){{0,2}}?(?:{OCC}|[A-Z]{{2,5}})"
_COLLEAGUE = re.compile(rf"\b(?:[Mm]y|[Oo]ur)\s+(?:new\s+|lovely\s+|fellow\s+)?{_COLLEAGUE_NOUN}s?,?\s+(?P<a>{_NAME})(?![\w'’])"
                        rf"|(?<![\w'’])(?P<b>{_NAME})(?:,\s+|\s+\()(?:a\s+|my\s+|our\s+)(?:new\s+)?{_COLLEAGUE_NOUN}\b"
                        rf"|\b[Oo]ur\s+{_STAFF},\s+(?P<c>{_NAME})(?![\w'’])"
                        rf"|(?<![\w'’])(?P<d>{_NAME}),\s+our\s+{_STAFF}\b")


def colleague_claims(event: LayerEvent, found: Sequence["Assertion"], said: Sequence["Assertion"]) -> list["Assertion"]:
    """The employer of a colleague the speaker names: the speaker's own standing one (`said`, the latest
    `works_at` claim); nothing when the speaker has said none, or the event already says where that one works."""
    jobs = [a for a in said if a.attribute == "works_at" and not a.negated and a.value_key != "job"]  # a job not named
    if not jobs:
        return []
    out: list["Assertion"] = []
    for m in _COLLEAGUE.finditer(event.content):
        name = (m.group("a") or m.group("b") or m.group("c") or m.group("d")).removesuffix("'s").removesuffix("’s")
        first = re.sub(r"^(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+", "", name).split()[0]  # "Ms Quillon": the name after the title
        if first.lower() in NOT_NAMES or any(norm_name(a.entity) == norm_name(name) and a.attribute == "works_at"
                                             for a in (*found, *out)):
            continue
        out.append(replace(jobs[-1], id=f"{event.id}#{len(found) + len(out)}", event_id=event.id, entity=name,
                           time=event.occurred_at, surface=m.group(0), seq=event.seq, superseded_by=None, valid_from=None))
    return out

"""Claims a model learned to read off the names in a turn: "I'm on earlies at Penhallow Infirmary" ->
(speaker, works_at, Penhallow Infirmary), "I'm staying put in Calder Vale" -> (speaker, lives_in, Calder Vale).

The rules (`assertions`) know the forms they were written for; on conversations written apart from
them they find one claim in five (docs/models.md, "Span claims"). This reader generalises over the
words around a name instead. Every capitalised span of a turn (`text.capitalised_spans`, the speakers
as known names) is a candidate; its features are the words just before and after it in its clause,
the words of the clause around it, its head word and length, the kind of name it is
(`graph_kinds.name_kind`), whether the clause is in the first or third person, a question, or says
something ended; a multinomial logistic model (`SpanModel`, fitted on the hand-labelled layer set by
`training/span_claims.py`, shipped as `app/adapters/span_model/span_model.json`) says which of
`ATTRIBUTES` the span is the value of (negated or not), or none. Role phrases are candidates too
(`role_spans`: an occupation or team word with up to two words before it, "senior data engineer", "the
returns team"), read for `ROLE_ATTRIBUTES` (job_title, works_in) with a kind of their own; of each
group's lengths the likeliest role is kept. A claim is kept when its probability
reaches the model's threshold, its subject is found (`_subject`), and the rules did not already find that
attribute or value in the event. The subject (since stop 43) is the person named just before the value ("Radek from
Sparkline"), the name beside a role ("my manager Efua", `role_holder`), the name "he" or "she" carries on from
("Ruben's leaving us, he's got a fellowship in Trevoran"), else the speaker when the clause is in the first person,
the name that opens the clause or the person named before the value in it, the one spoken to when the value's
sentence asks them ("How's Leeds?"), else the speaker unless it speaks of "he" or "she". An assistant's turns (a speaker
named assistant, system, bot, ...) give none: what it says in the first person is no one's life.

Pure: the model comes in as data (`SpanModel.from_dict`); the adapter reads the file.
"""
from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.layers.assertion_dates import stated_day
from app.domain.layers.assertion_model import Assertion
from app.domain.layers.assertion_rules import OCCUPATIONS, RELATION_NOUNS
from app.domain.layers.events import LayerEvent
from app.domain.layers.graph_kinds import name_kind
from app.domain.layers.text import CALENDAR_WORDS, NOT_NAMES, UPPER, capitalised_spans, norm_name

VERSION = "spans/6"  # 2: refitted on 97 dev conversations; 3: roles (job titles, teams) read too (stop 35);
# (stop 36: a refit on 109, "spans/4", found 4 claims fewer and made 3 more wrong on 12 conversations written
#  after it than spans/3; it was not kept); 5: refitted on 241 (stop 40: 11 claims more found and 1 fewer wrong
#  than spans/3 on 20 conversations written after it: docs/models.md, "Span claims"); 6: refitted on 301 (stop 41:
#  3 claims and 1 change more found, 7 and 3 more wrong, than spans/5 on 20 conversations written after it)
ATTRIBUTES = ("works_at", "lives_in", "moving_to", "member_of", "school", "from", "plan:trip", "works_in")
ROLE_ATTRIBUTES = ("job_title", "works_in")  # what a role phrase ("senior backend engineer", "the payments team") is
NEGATED = "~neg"  # a label's suffix: the span is the value of a claim that ended

_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_CLAUSE_BEFORE = re.compile(r"[.!?;:]\s|,\s(?:but|and|so)\s")
_CLAUSE_AFTER = re.compile(r"[.!?;:,]")
_SENTENCE_END = re.compile(r"[.!?]\s*$")
_FIRST = re.compile(r"\b(?:I|I'm|I’m|I've|I’ve|my|we|we're|we’re|we've|we’ve|our|me|us)\b")
_THIRD = re.compile(r"\b(?:he|she|his|her|they|their|he's|she's|they're)\b", re.I)
_ENDED = re.compile(
    r"\b(?:not|no|never|n't|left|leaving|quit|quitting|resign\w*|notice|redundan\w*|fired|sacked|retir\w*|"
    r"moved out|moving out|gave up|giving up|dropped|cancel\w*|ex-|former(?:ly)?|used to|no longer|any more|"
    r"anymore)\b", re.I)
_POSSESSIVE_AFTER = re.compile(r"^['’]s\b")
# words that stand before "at"/"from" or beside a role and name nobody ("Greetings from Bristol", "Lurking from
# Castlebrook", "Texting Kit now"); a name may end in -ing ("Mei-Ling", "Dr King"), so the verbs are listed
_NOBODY = frozenset({"greetings", "olá", "ola", "hola", "bonjour", "ciao", "cheers", "love", "regards", "morning",
                     "evening", "afternoon", "night", "work", "home", "news", "update", "sent", "lurking", "writing",
                     "calling", "checking", "reporting", "signing", "texting", "messaging", "emailing", "ringing",
                     "chatting", "posting", "typing", "sending", "working", "living", "coming", "heading", "waving"})
_NOT_A_NAME = NOT_NAMES | CALENDAR_WORDS | _NOBODY  # (`_a_name`: built once, not per word)
# a role the speaker says is theirs ("I'm a nurse, Tom": Tom is spoken to, not the nurse)
_MY_ROLE = re.compile(r"(?i)\b(?:I['’]m|I\s+am|I\s+was|I['’]ve\s+been|I\s+work(?:ed)?\s+as)\s+(?:(?:now|still|also|just|currently)\s+)*"
                      r"(?:a|an|the|your|their)\s+(?:[\w\-]+\s+){0,2}$")
_TITLE = r"(?:Dr|Mr|Mrs|Ms|Miss|Prof|Professor)\.?\s+"
_PERSON_NAME = rf"(?:{_TITLE})?[{UPPER}][^\W\d_]+(?:['’\-][^\W\d_]+)?(?:\s+[{UPPER}][^\W\d_]+(?:['’\-][^\W\d_]+)?)?"
# a person named just before the value, joined to it by "at" or "from" ("Radek from Sparkline will do the
# electrics", "Dr Ferreira at Millgate Surgery", "Henrike Aalders here at Brightwater", "my physio, Dr Nakamura, at
# the Ridgeway Clinic"): the claim is that person's, whoever speaks
_NAMED_AT = re.compile(rf"(?:^|(?<=[\s,(]))({_PERSON_NAME}),?\s+(?:here\s+)?(?:at|from)\s+(?:the\s+)?$")
# a name beside a role phrase (`role_holder`): after it ("my manager Efua", "an assistant, Kemi", "the new lead is
# Arjun") or before it ("Gustavo, my manager", "Tuan's our stage manager", "Hedda, the coach", "Lucía from our sound
# team")
_ROLE_THEN_NAME = re.compile(rf",?\s+(?:(?:is|was)\s+(?:now\s+)?|that['’]s\s+)?({_PERSON_NAME})(?![\w'’\-])(?!\s*[&(])")
_NAME_THEN_ROLE = re.compile(rf"(?:^|(?<=[\s,(]))({_PERSON_NAME})(?:,\s+|['’]s\s+|\s+is\s+|\s+from\s+)(?:now\s+)?"
                             rf"(?:the|my|our|your|his|her|their)(?:\s+(?:new|old|current|former|lovely|brilliant))?\s+$")
# ... or the one hired, appointed or promoted as it ("I've hired Tamsin Kerr as assistant winemaker")
_HIRED_AS = re.compile(rf"(?i:hired|recruited|appointed|taken\s+on|took\s+on|brought\s+in|promoted)\s+({_PERSON_NAME})\s+as\s+"
                       r"(?:(?:a|an|the|our|my|their)\s+)?(?:(?:new|head|senior|junior|lead|assistant|trainee)\s+)*"
                       r"(?:[\w\-]+\s+){0,2}$")
_SUBJECT_PRONOUN = re.compile(r"(?<![\w'’])(?:I|I['’](?:m|ve|ll|d)|[Ww]e|[Ww]e['’](?:re|ve|ll|d)|[Hh]e|[Ss]he|[Hh]e['’](?:s|d|ll)|"
                              r"[Ss]he['’](?:s|d|ll))(?![\w'’])")
_NAME_SUBJECT = re.compile(rf"(?:^|(?<=[\s,(]))({_PERSON_NAME})(?:['’]s|\s+(?:is|has|was|had|got|just))\s")
_ARTICLE_BEFORE = re.compile(r"(?i)\b(?:a|an|the|my|our|your|his|her|their)\s+$")
_PLACE_BEFORE = re.compile(r"(?i)\b(?:in|into|to|near|of|at|outside|around|across|through|on)\s+$")
# a question put to the one spoken to about the value: "How's Leeds?", "How's Wrenfield treating you?", "So you're
# leaving Falmouth?", "Are you still at the flat on Marlowe Road?"
_HOW_IS = re.compile(r"(?i)\bhow(?:['’]s|\s+is)\s+(?:(?:life|work|things|everything|it)\s+(?:at|in|on|after)\s+)?(?:the\s+)?$")
_YOU = re.compile(r"(?i)\byou(?:['’](?:re|ve|d|ll))?\b|\byour\b")
WINDOW = 200  # characters read on either side of a span
# where the clause puts the value, before the first-person default (`_subject`): something of the one spoken to
# ("your address in"), where the speaker is ("here in"), someone close to the speaker opening the clause, with their
# name ("My grandson Theo came down from", "and my friend Ana does"; not "my partner X and I") or without ("My mum's
# coming over from", "our son moved to"; not "my cousin's wedding", nor before "I'm" in the same clause)
_YOURS_IN = re.compile(r"(?i)(?<![\w'’])your\s+(?:[^\W\d_][\w\-]*\s+){1,3}(?:in|at|on)\s+$")
_HERE_IN = re.compile(r"(?i)(?<![\w'’])here\s+(?:in|on)\s+(?:the\s+)?$")
_OPENS_MY = (r"^\W*(?:(?:and|but|so|oh|also|plus)\s+)?(?:[Mm]y|[Oo]ur)\s+"
             r"(?:(?:new|older|younger|little|big|best|eldest|oldest|youngest|old|dear)\s+)?")
_KIN = rf"(?:{RELATION_NOUNS}|friend|mate|neighbour|neighbor|cousin|niece|nephew|aunt|auntie|uncle)"
_KIN_NAMED = re.compile(rf"{_OPENS_MY}{_KIN}\s+({_PERSON_NAME})(?![\w'’\-])(?!\s*,)(?!\s+(?:and|&)\s+(?:I|me)\b)")
_NOUN_ING = r"(?:wedding|thing|building|evening|morning|meeting|birthday|spring|ring)\b"  # -ing words that are nouns
_KIN_SUBJECT = re.compile(rf"{_OPENS_MY}({_KIN})(?:['’]s\s+(?=(?:(?!{_NOUN_ING})\w+ing|been|got|just|now|still|finally|back|off|"
                          r"over|in|at|from|a|an)\b)|\s+(?:is|was|has|had|just|finally|still|now|moved|lives|works|started|"
                          r"got|flew|came|went|left|joined)\s+)(?!and\b)")
_VISITED = re.compile(r"(?i)\bvisit(?:s|ed|ing)?\b")
_I_AFTER = re.compile(r"(?<![\w'’])(?:I|I['’](?:m|ve|ll|d)|[Ww]e|[Ww]e['’](?:re|ve|ll|d))(?![\w'’])")
_NAME_OPENS = re.compile(rf"^\W*([{UPPER}][^\W\d_]+)(?:['’]s\b|\s+(?:is|was|has|had|works|worked|lives|lived|got|just|"
                         r"moved|started|joined|left|quit|finally|still|now)\b)")
# speakers that are a system, not a person: an assistant's "I'm Craig from Port Michael" drafts the user's page
_SYSTEM_SPEAKERS = frozenset({"assistant", "system", "bot", "ai", "model", "tool"})


def _tokens(text: str) -> list[str]:
    return [w.lower() for w in _TOKEN.findall(text)]


def span_features(text: str, span: str, start: int, end: int, speaker_keys: Collection[str],
                  kind: str | None = None) -> dict[str, float]:
    """The features of the capitalised span text[start:end] (the model's vocabulary: "L1=at" is the word
    just before it, "lb=nights" a word of its clause before it, "head=general" its last word, ...). Only
    `WINDOW` characters on either side are read: a long turn costs in proportion to its length. `kind`:
    a candidate's kind when it is no name (a role phrase is "role"); else the kind of name it is, and
    whether it is a speaker's."""
    left, right = text[max(0, start - WINDOW):start], text[end:end + WINDOW]
    before = _CLAUSE_BEFORE.split(left)[-1]
    after = _CLAUSE_AFTER.split(right)[0]
    lt, rt, st = _tokens(before), _tokens(after), _tokens(span)
    f: dict[str, float] = {}
    for k in range(1, 4):
        if len(lt) >= k:
            f[f"L{k}={lt[-k]}"] = 1.0
    if len(lt) >= 2:
        f[f"L21={lt[-2]}_{lt[-1]}"] = 1.0
    for w in lt[-8:]:
        f[f"lb={w}"] = 1.0
    for k in range(1, 3):
        if len(rt) >= k:
            f[f"R{k}={rt[k - 1]}"] = 1.0
    for w in rt[:5]:
        f[f"rb={w}"] = 1.0
    f[f"head={st[-1] if st else ''}"] = 1.0
    f[f"ntok={min(len(st), 4)}"] = 1.0
    f[f"kind={kind or name_kind(span, left, speaker_keys)}"] = 1.0
    if kind is None and norm_name(span) in speaker_keys:
        f["is_speaker"] = 1.0
    if start == 0 or _SENTENCE_END.search(left):
        f["sent_start"] = 1.0
    if "?" in after or "?" in right[:80]:
        f["question"] = 1.0
    if _FIRST.search(before):
        f["first_person"] = 1.0
    if _ENDED.search(before) or _ENDED.search(after):
        f["neg_cue"] = 1.0
    if _THIRD.search(before):
        f["third_person"] = 1.0
    if _POSSESSIVE_AFTER.search(right):
        f["poss_after"] = 1.0
    return f


def candidate_spans(text: str, speaker_keys: Collection[str]) -> list[tuple[str, int, int]]:
    """(span, start, end) of each capitalised span of the text, in order."""
    out, pos = [], 0
    for s in capitalised_spans(text, frozenset(speaker_keys), frozenset(), models=True):
        i = text.find(s, pos)
        if i < 0:
            continue
        out.append((s, i, i + len(s)))
        pos = i + len(s)
    return out


_TEAM_HEADS = frozenset({"team", "department", "dept", "division", "unit", "ward", "desk", "squad", "lab"})
_ROLE_WORDS = sorted(map(re.escape, OCCUPATIONS | _TEAM_HEADS), key=len, reverse=True)
_ROLE_HEAD = re.compile(r"(?<![\w'’\-])(" + "|".join(_ROLE_WORDS) + r")(?![\w'’\-])", re.I)
# words that open no role phrase: function words, tense and time, praise ("my new manager" is a manager)
_NOT_MODIFIERS = frozenset("""a an the my your his her their our its this that these those as is am are was were be been
    being i you he she we they it me him them us at in on for with from to of by and or but so not no new old former ex
    current future first next last good great amazing lovely brilliant nice real proper full-time part-time now
    still just really very got get job role same other another only whole own every each some any one two best worst
    favourite favorite study studying studied become became becoming""".split())
_MODIFIER = re.compile(r"[^\W\d_][^\W_]*(?:-[^\W\d_]+)*$")
_WORD_BEFORE = re.compile(r"(?:^|\s)(\S+)\s+$")


def role_spans(text: str) -> list[list[tuple[str, int, int]]]:
    """The role phrases of the text, one group per head word ("engineer", "team"): the head alone and with
    one or two words before it ("backend engineer", "senior backend engineer"), as (span, start, end);
    the model says which of a group, if any, is a job title or a team. A team head needs a word before it."""
    groups = []
    for m in _ROLE_HEAD.finditer(text):
        before = text[max(0, m.start(1) - 8):m.start(1)]
        if m.group(1)[0].isupper() and not m.group(1).isupper() and m.start(1) > 0 and not _SENTENCE_END.search(before):
            continue  # "Engineer" inside a name
        team = m.group(1).lower() in _TEAM_HEADS
        group, start = [] if team else [(m.group(1), m.start(1), m.end(1))], m.start(1)
        for _ in range(2):
            lo = max(0, start - 40)
            prev = _WORD_BEFORE.search(text[lo:start])
            if prev is None or not _MODIFIER.match(prev.group(1)) or prev.group(1).lower() in _NOT_MODIFIERS:
                break
            start = lo + prev.start(1)
            group.append((text[start:m.end(1)], start, m.end(1)))
        if group:
            groups.append(group)
    return groups


@dataclass(frozen=True)
class SpanModel:
    """A multinomial logistic model over `span_features`: per class an intercept and the weights of the
    features it uses (absent features weigh 0), and the probability a claim needs."""

    classes: tuple[str, ...]
    intercept: tuple[float, ...]
    weights: dict[str, tuple[float, ...]]  # feature -> a weight per class
    threshold: float
    version: str = VERSION

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SpanModel":
        return cls(tuple(d["classes"]), tuple(d["intercept"]), {k: tuple(v) for k, v in d["weights"].items()},
                   float(d["threshold"]), str(d.get("version", VERSION)))

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "classes": list(self.classes), "intercept": list(self.intercept),
                "threshold": self.threshold, "weights": {k: list(v) for k, v in sorted(self.weights.items())}}

    def probabilities(self, features: dict[str, float]) -> list[float]:
        z = list(self.intercept)
        for name, value in features.items():
            w = self.weights.get(name)
            if w is not None:
                for i, wi in enumerate(w):
                    z[i] += wi * value
        top = max(z)
        e = [math.exp(v - top) for v in z]
        total = sum(e)
        return [v / total for v in e]

    def label(self, features: dict[str, float]) -> tuple[str, float]:
        """The most probable class and its probability."""
        p = self.probabilities(features)
        i = max(range(len(p)), key=p.__getitem__)
        return self.classes[i], p[i]


def learned_claims(event: LayerEvent, found: Sequence[Assertion], model: SpanModel, speaker_keys: Collection[str],
                   start_index: int = 0, addressee: str | None = None) -> list[Assertion]:
    """The claims the model reads off the event's names that the rules' `found` (the same event's) lack:
    a value they gave no claim, of an attribute they gave none in this event. The subject is the speaker
    when the clause is in the first person or names nobody; the person named before the value in its
    clause when it names one ("Callum's at Brannock Freight"); none when it speaks of "he" or "she" and
    names nobody (the person talked about last, tried, measured no better on dev); see the module's docstring
    for the names that come first. `addressee`: whom "you" means in the event (a question put to them)."""
    text = event.content
    if norm_name(event.speaker) in _SYSTEM_SPEAKERS:
        return []
    have_values = {norm_name(a.value) for a in found}
    have_attributes = {a.attribute for a in found}
    out: list[Assertion] = []
    candidates: list[tuple[str, int, int, dict[str, float], str, float]] = []
    for span, i, j in candidate_spans(text, speaker_keys):
        feats = span_features(text, span, i, j, speaker_keys)
        candidates.append((span, i, j, feats, *model.label(feats)))
    for group in role_spans(text):  # the likeliest role of each group's phrases
        roles = []
        for span, i, j in group:
            feats = span_features(text, span, i, j, speaker_keys, kind="role")
            label, p = model.label(feats)
            if label.removesuffix(NEGATED) in ROLE_ATTRIBUTES:
                roles.append((span, i, j, feats, label, p))
        if roles:
            candidates.append(max(roles, key=lambda c: c[5]))
    # a role phrase inside a longer one read too is that one's word ("assistant" of "assistant winemaker")
    candidates = [c for c in candidates if "kind=role" not in c[3] or not any(
        o is not c and "kind=role" in o[3] and o[5] >= model.threshold and o[1] <= c[1] and c[2] <= o[2]
        and (o[2] - o[1]) > (c[2] - c[1]) for o in candidates)]
    for span, i, j, feats, label, p in sorted(candidates, key=lambda c: c[1]):
        if label == "none" or p < model.threshold:
            continue
        attribute, negated = label.removesuffix(NEGATED), label.endswith(NEGATED)
        key = norm_name(span)
        if not key or key in have_values or attribute in have_attributes or key in speaker_keys:
            continue
        if attribute in ("moving_to", "lives_in") and _VISITED.search(_CLAUSE_BEFORE.split(text[max(0, i - WINDOW):i])[-1]) \
                and not re.search(r"(?i)\bfrom\s+(?:the\s+)?$", text[max(0, i - 12):i]):
            continue  # "My sister Leah visited us in Denver": a visit, not a home or a move ("visiting from Leeds" is)
        subject = ("kind=role" in feats and role_holder(text, i, j)) or _subject(
            text[max(0, i - WINDOW):i], event.speaker, speaker_keys, first="first_person" in feats,
            third="third_person" in feats, right=text[j:j + WINDOW], addressee=addressee)
        if subject is None:
            continue
        out.append(Assertion(id=f"{event.id}#{start_index + len(out)}", event_id=event.id, entity=subject,
                             attribute=attribute, value=span, value_key=key, time=event.occurred_at,
                             surface=text[max(0, i - 40):j], negated=negated, seq=event.seq,
                             valid_from=stated_day(text, i, j, event.occurred_at, attribute)))
        have_values.add(key)
        have_attributes.add(attribute)
    return out


def _a_name(name: str) -> bool:
    """Could these words name a person: none a function or calendar word, a greeting or a verb (`_NOBODY`), nor an
    acronym ("SRE")?"""
    words = re.sub(rf"^{_TITLE}", "", name).split()
    return bool(words) and not any(w.lower() in _NOT_A_NAME or w.isupper() for w in words)


def _a_person(name: str, speaker_keys: Collection[str]) -> bool:
    """`_a_name`, and not a name that is itself a place, a firm or an event ("Café Lumière", "Leeds")."""
    return _a_name(name) and name_kind(name, "", speaker_keys) not in ("place", "organization", "event")


def role_holder(text: str, start: int, end: int) -> str | None:
    """Whom a role phrase text[start:end] is said of when a name stands beside it: "my manager Efua", "our sous
    chef Dénes", "an assistant, Kemi", "the new lead is Arjun", "Gustavo, my manager", "Tuan's our stage manager",
    "I've hired Tamsin Kerr as assistant winemaker" (else None: the clause decides, `_subject`)."""
    after = _ROLE_THEN_NAME.match(text, end)
    if after and _a_name(after.group(1)) and not _MY_ROLE.search(text[max(0, start - 40):start]):
        return after.group(1)
    before = _NAME_THEN_ROLE.search(text[max(0, start - 60):start])
    if before and _a_name(before.group(1)):
        return before.group(1)
    hired = _HIRED_AS.search(text[max(0, start - 80):start])  # "I've hired Tamsin Kerr as assistant winemaker"
    if hired and _a_name(hired.group(1)):
        return hired.group(1)
    return None


def _named_just_before(clause: str, speaker_keys: Collection[str]) -> str | None:
    """The person named just before the value, joined to it by "at" or "from" (`_NAMED_AT`); not a place or a
    firm ("a job in Leeds at Acme"), nor a word that names nobody ("Thanks", "Sadly")."""
    m = _NAMED_AT.search(clause)
    if m is None:
        return None
    name = m.group(1)
    if not _a_person(name, speaker_keys) or _PLACE_BEFORE.search(clause[:m.start(1)]) \
            or _ARTICLE_BEFORE.search(clause[:m.start(1)]) \
            or (re.fullmatch(r"[^\W\d_]+ing", name) is not None and not clause[:m.start(1)].strip()):
        return None  # "Greetings from Bristol", "Saturdays at Flint's", "an SRE at Kestrel", "a job in Leeds at Acme",
        # "Curating at Greyhallow since 2014" (a word in -ing opening the clause is a verb; "Mei-Ling from X rang" is not)
    return name


def _named_then_he(clause: str) -> str | None:
    """The person a clause names as its subject when "he" or "she" carries it on to the value ("Ruben's leaving us at
    the end of July, he's got a fellowship in Trevoran"; "us" there is no first-person subject)."""
    said = _SUBJECT_PRONOUN.findall(clause)
    if not said or said[-1].lower()[:2] not in ("he", "sh"):
        return None
    names = [m.group(1) for m in _NAME_SUBJECT.finditer(clause) if _a_person(m.group(1), ())]
    return names[-1] if names else None


def _asked_of_you(clause: str, right: str) -> bool:
    """Is the value's sentence a question about the one spoken to ("How's Leeds?", "you're leaving Falmouth?")?"""
    asked = re.match(r"([^.!?]*)\?", right)  # the question ends the value's sentence
    if asked is None:
        return False
    return (_HOW_IS.search(clause) is not None or _YOU.search(clause) is not None
            or (len(asked.group(1).split()) <= 4 and _YOU.search(asked.group(1)) is not None))  # "... treating you?"


def _subject(left: str, speaker: str, speaker_keys: Collection[str], *, first: bool, third: bool, right: str = "",
             addressee: str | None = None) -> str | None:
    clause = _CLAUSE_BEFORE.split(left)[-1]
    named = _named_just_before(clause, speaker_keys) or _named_then_he(clause)
    if named is not None:
        return named
    if _YOURS_IN.search(clause):  # "I've posted it to your address in Ashcombe": the one spoken to, whoever speaks
        return addressee
    if _HERE_IN.search(clause):  # "Esteban's just started at Pell & Osgood here in Greywater": where the speaker is
        return speaker
    kin = _KIN_NAMED.match(clause)  # "My grandson Theo came down from ...": the one named, not the speaker
    if kin and _a_person(kin.group(1), speaker_keys) and norm_name(kin.group(1)) not in speaker_keys \
            and not re.search(r"['’]s$", kin.group(1)):  # "my flatmate Marisol's boyfriend" is not Marisol
        return kin.group(1)
    kin = _KIN_SUBJECT.match(clause)  # "My mum's coming over from ...": the speaker's mum, as the rules name her
    if kin and not _I_AFTER.search(clause, kin.end()):  # not "my landlord's selling so I'm moving to ..."
        return f"{speaker}'s {kin.group(1).lower()}"
    if first:
        return speaker
    opener = _NAME_OPENS.match(clause)  # "Priya's at ...", "Callum just started at ...": a name opens the clause
    if opener and opener.group(1).lower() not in NOT_NAMES:
        return opener.group(1)
    people = [s for s, _, _ in candidate_spans(clause, speaker_keys)
              if norm_name(s) in speaker_keys or name_kind(s, "", speaker_keys) == "person"]
    if people:
        return people[-1]
    if addressee and _asked_of_you(clause, right):
        return addressee
    return None if third else speaker

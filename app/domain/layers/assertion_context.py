"""What a turn means given the turns before it, as text the assertion rules can read:

- an elided answer: a short reply to a question about an attribute of the one asked ("Where do you live
  now?" - "Still Leeds."; "Which bank are you with?" - "Monzo, for now."; "Are you still at Brightwell?" -
  "Yes, three years now as their data engineer") says that attribute of the replier, written out here as
  the sentence the reply stands for ("I live in Leeds.");
- "here" and "there" after a verb of place ("I moved here in May", "her parents live there now"): the
  place named last in the conversation (`last_place`).

- what carries across claims of one conversation: one name's short and long forms (`same_name`), a
  "no" that retracts (`answered_no`), the partner a "we" includes (`with_partner`), the organisation a
  "we" speaks for (`as_organisation`).

Pure functions, no I/O; `assertions.extract_all` carries the state (previous turn, last place,
partners, organisations) and passes its `Assertion`s in (typed loosely here: that module imports this).
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Sequence

from app.domain.layers.assertion_rules import OCCUPATIONS, RELATION_NOUNS, TOOL_NOUNS
from app.domain.layers.assertion_text import TOOL_KINDS, asked_about, tool_kind
from app.domain.layers.events import LayerEvent
from app.domain.layers.text import CALENDAR_WORDS, LOWER, NOT_NAMES, STOPWORDS, UPPER, norm_name

_UP, _LOW = UPPER, LOWER
_LAST_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_YOU = r"(?:you|your|u|ya)"
# (pattern over the question's last sentence, the sentence a bare value answers it with)
_TOPICS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"(?i)\bwhere\b[^?]*\b{_YOU}\b[^?]*\b(?:from|grow\s+up|grew\s+up|born)\b"), "I am from {v}."),
    (re.compile(rf"(?i)\bwhere\b[^?]*\b{_YOU}\b[^?]*\b(?:moving|relocating)\b"), "I am moving to {v}."),
    (re.compile(rf"(?i)\b(?:where|who|which\s+(?:company|firm|employer|place))\b[^?]*\b{_YOU}\b[^?]*\b(?:work|working|employed)\b"),
     "I work at {v}."),
    (re.compile(rf"(?i)\b(?:where|which\s+(?:city|town|country|area|neighbou?rhood|part))\b[^?]*\b{_YOU}\b[^?]*"
                r"\b(?:live|living|based|staying|settled|now|these\s+days)\b"), "I live in {v}."),
    (re.compile(rf"(?i)\b(?:are|were)\s+{_YOU}\b[^?]*\b(?:relocating|moving)\b|\b(?:did|will)\s+{_YOU}\s+(?:\w+\s+)?(?:move|relocate)\b"), "MOVE"),  # "Are you moving?" - "No, still Leeds"
    (re.compile(rf"(?i)\bwhat\b[^?]*\b(?:{_YOU}\s+do(?:\s+(?:for\s+(?:work|a\s+living)|now|these\s+days))?\s*(?:\?|$)|{_YOU}r\s+(?:job|role|title|position)"
                r"|{_YOU}\s+work(?:ing)?\s+as)"), "I am a {v}."),
    (re.compile(rf"(?i)\bwhat\b[^?]*\b{_YOU}\b[^?]*\b(?:study|studying|major|majoring)\b"), "I study {v}."),
]
_TOOL_QUESTION = re.compile(rf"(?i)\b(?:which|what)\s+(?:(?-i:[{_UP}])[\w\-]+\s+)?(?P<kind>{TOOL_NOUNS}|{'|'.join(TOOL_KINDS)})\b[^?]*\b{_YOU}\b")
_INTERJECTION = re.compile(r"(?i)^(?:\W*(?:yes|yeah|yep|yup|no|nope|nah|well|um|uh|oh|still|just|currently|now|mostly|"
                           r"honestly|actually|ha|haha|lol|sure|ok|okay|right|in|at|with|for|to|a|an|the)\b[\s,.!:;-]*)+")
_VALUE_END = re.compile(r"(?i)\s*(?:[,.;!?(]|\s-\s|\b(?:for\s+now|now|still|these\s+days|at\s+the\s+moment|since|until|"
                        r"though|probably|I\s+think|and|but|because|so)\b)")
_STAYING = re.compile(r"(?i)^\W*(?:(?:no|nope|nah)\W+)?(?:still|staying|we\s+are\s+staying|I\s+am\s+staying)\b")
_VAGUE = frozenset("""same somewhere nowhere anywhere everywhere home usual here there nothing not none lunch work school
    bed town the thanks thank sorry wow great cool nice awesome congrats hmm hey hi hello good glad totally""".split())
_CLAUSE_VERB = re.compile(r"(?i)\b(?:I|we|he|she|they|it|you|my|our|is|am|are|was|were|do|does|did|have|has|had|will|would)\b")
_YES = re.compile(r"(?i)^\W*(?:yes|yeah|yep|yup|sure|still|that's\s+right|correct|I\s+am|we\s+are|I\s+do|we\s+do)\b")
_NO = re.compile(r"(?i)^\W*(?:no|nope|nah|not\s+any\s*more)\b")
_STILL_QUESTION = re.compile(rf"(?i)^(?:so|and|but|hey|oh|ok|okay)?[\s,]*(?:are|do)\s+{_YOU}\s+(?:still|now)\s+(?P<rest>[^?]+)\?")
_FRAGMENT = re.compile(r"(?i)^\s*(?:(?:\w+\s+){0,3}(?:years?|months?|weeks?)\s+now\s+)?(?P<rest>(?:as|based|working|living|not|"
                       r"no\s+longer)\b[^.!?;]*)")


_ECHO = re.compile(r"(?i)^\W*(?:(?:yes|yeah|yep|yup|sure|we|I)\b\W*$|(?:yes|yeah|yep|yup|sure|still)\b[\s,.!]+(?![\s,.!]*(?:but|not|no)\b)"
                   r"|(?:(?:yes|yeah|yep|yup)\W+)?(?P<s>I|we|he|she|they|it)\s+(?:did|do|does|am|are|is|have|has|was|were|will|sure\s+did)"
                   r"(?:\s+(?:too|indeed|already))?\s*(?:[,.!;]|$))")
_INVERTED = re.compile(rf"(?i)^(?:(?:so|and|but|oh|wait|ok|okay|hey|also)\W+)*(?P<aux>is|are|am|was|were|has|have|do|does|did|will)\s+"
                       rf"(?P<subj>you(?:\s+and\s+(?-i:[{_UP}])[\w'’\-]+)?|your\s+[a-z]+|(?-i:[{_UP}][\w'’\-]+(?:\s+[{_UP}][\w'’\-]+)?)|he|she|they)"
                       rf"\s+(?P<rest>[^?]+)")
_ASKING = re.compile(r"(?i)^(?:what|where|when|who|whom|whose|which|how|why|any)\b|\b(?:is|are|am|was|were|has|have|do|does|did|"
                    r"will|would|could|can|should|shall|may|might)\s+(?:you|I|we|he|she|they|there|it|that|this)\b")
_PAST = {"get": "got", "go": "went", "leave": "left", "quit": "quit", "find": "found", "take": "took", "buy": "bought",
         "sell": "sold", "break": "broke", "begin": "began", "become": "became", "split": "split", "run": "ran",
         "teach": "taught", "tie": "tied", "make": "made", "land": "landed", "see": "saw", "have": "had",
         "do": "did", "say": "said", "tell": "told", "meet": "met", "hear": "heard", "win": "won", "lose": "lost",
         "pay": "paid", "study": "studied", "marry": "married", "sign": "signed"}
_YOUR = [(re.compile(rf"(?i)\byou\s+and\s+([{_UP}][\w'’\-]+)"), rf"\1 and I"), (re.compile(rf"(?i)\byour\b"), "my"),
         (re.compile(r"(?i)\byou\s+are\b"), "I am"), (re.compile(r"(?i)\byou\s+were\b"), "I was"),
         (re.compile(r"(?i)\byou\b"), "I")]


def _first_person(text: str) -> str:
    for rx, rep in _YOUR:
        text = rx.sub(rep, text)
    return text


def _as_statement(question: str, subject: str | None) -> str | None:
    """The claim a yes answers: the question said as a statement from the replier's side ("Did you
    and Ama move to Leeds?" - "We did" -> "Ama and I moved to Leeds."); None when it is not one."""
    q = question.rstrip("?!. ")
    m = _INVERTED.match(q)
    if not m and re.match(r"(?i)(?:(?:so|and|but|oh)\W+)?(?:still|now)\s+(?:at|in|with|on|using|working|living)\b", q):
        return f"I am {q[0].lower()}{q[1:]}."  # "Still at Brightwell?" - "Yep."
    if not m:  # "She says you and Priyanka got engaged?!" - "We did!"; not "Would you like to see it?"
        if _ASKING.search(q) or not re.search(r"(?i)\byou\b", q):
            return None
        return _first_person(q) + "."
    aux, subj, rest = m.group("aux").lower(), m.group("subj"), m.group("rest").strip()
    if re.search(r"(?i)\b(?:any|anyone|anything|anybody|ever)\b", rest) or not rest.split()[0].isalpha():
        return None  # "Did McCain propose any reforms?" - "Yes, ...": asks about something, claims nothing
    you = subj.lower().startswith(("you", "your"))
    who = _first_person(subj)
    if you and (subject or "").lower() == "we" and " and " not in who:
        who = "we"
    if aux == "did":
        verb, _, tail = rest.partition(" ")
        low = verb.lower()
        past = _PAST.get(low) or (low + "d" if low.endswith("e") else low + "ed")
        return f"{who} {past} {tail}.".replace("  ", " ")
    if aux in ("do", "does"):
        if aux == "does":
            adv, verb, tail = ("", *rest.partition(" ")[::2])
            if verb.lower() in ("still", "now", "also", "really", "actually") and " " in tail:
                adv, (verb, _, tail) = verb + " ", tail.partition(" ")
            rest = f"{adv}{verb}{'es' if verb.endswith(('s', 'sh', 'ch')) else 's'} {tail}"
        return f"{who} {rest}."
    if you or who.lower() == "we":
        aux = {"are": "am", "were": "was"}.get(aux, aux) if who == "I" else {"am": "are", "is": "are"}.get(aux, aux)
    return f"{who} {aux} {_first_person(rest) if you else rest}."


_THIRD = re.compile(rf"(?i)\b(?:does|is|did|has|was)\s+(?P<who>(?-i:[{_UP}][{_LOW}]{{2,}})|your\s+(?:{RELATION_NOUNS}))\b")
_CONJUGATE = [("I live ", "lives "), ("I work ", "works "), ("I am ", "is "), ("I study ", "studies "), ("I use ", "uses ")]


def _third_person(sentence: str, who: str) -> str:
    """"I live in Denver." said of `who`: "Leah lives in Denver."."""
    for first, third in _CONJUGATE:
        if sentence.startswith(first):
            return f"{who} {third}{sentence[len(first):]}"
    return sentence


def _question(text: str) -> str:
    """The last sentence of `text` when it is a question, else ""."""
    t = text.strip().rstrip("!")
    if not t.endswith("?"):
        return ""
    return _LAST_SENTENCE.split(t)[-1]


def _bare_value(answer: str) -> str | None:
    """The value a reply gives without a clause of its own: "Still Leeds." -> "Leeds", "Monzo, for now."
    -> "Monzo", "a nurse, yeah" -> "nurse"; None when the reply is a sentence ("I moved to ...")."""
    first = _INTERJECTION.sub("", answer.strip())
    m = _VALUE_END.search(first)
    value = (first[: m.start()] if m else first).strip(" '\"")
    if not value or len(value.split()) > 4 or _CLAUSE_VERB.search(value):
        return None
    if value.lower() in STOPWORDS or value.lower() in NOT_NAMES or value.lower() in CALENDAR_WORDS:
        return None
    if value.split()[0].lower() in _VAGUE or value.split()[-1].lower() in _VAGUE:
        return None
    return value


def _name_like(value: str, answer: str) -> bool:
    """A name: each word capitalised but its joining words ("Bank of Ireland"), or a reply written all
    in lower case (chat: "still leeds")."""
    if answer == answer.lower():
        return True
    return all(any(c.isupper() for c in w) or w[:1].isdigit() or w in ("of", "de", "da", "do", "the", "on", "&", "upon", "am", "la", "le")
               for w in value.split())


def _proper(value: str) -> str:
    """A name written in lower case in chat ("leeds") as a name."""
    return value if value[:1].isupper() else " ".join(w.capitalize() for w in value.split())


def elided_reply(question_text: str, answer: str) -> str | None:
    """The sentences a reply stands for, given the question it answers (said by someone else, about
    "you": the replier), or None. A bare value answers the attribute asked about; a "yes" to "Are you
    still at X?" says the question's words of the replier; a subject-less clause after it ("..., based
    out of Leeds", "as their data engineer") is the replier's."""
    q = _question(question_text)
    if not q:
        return None
    asked = q
    third = _THIRD.search(q)
    if third and not re.search(r"(?i)\byou\b", q):  # "Where does Leah live now?" - "Denver."
        q = q[: third.start("who")] + "you" + q[third.end("who"):]
    else:
        third = None
    out: list[str] = []
    value = _bare_value(answer)
    tool = _TOOL_QUESTION.search(q)
    noun = tool.group("kind").lower() if tool else ""
    if value and tool:  # "Which plan are you on?" - "The Family plan." -> "My plan is Family."
        value = re.sub(rf"(?i)\s+{re.escape(noun)}$", "", value)
    if value and tool and _name_like(value, answer) and (tool_kind(value) in (None, noun) or noun not in TOOL_KINDS):
        out.append(f"My {noun} is {_proper(value)}.")
    elif value:
        for rx, sentence in _TOPICS:
            if rx.search(q):
                if sentence.startswith("I am a "):
                    words = re.sub(r"(?i)^(?:a|an|the)\s+", "", value).lower().split()
                    if not words or words[-1] not in OCCUPATIONS:
                        break
                    value = " ".join(words)
                elif sentence != "I study {v}.":
                    if not _name_like(value, answer):
                        break
                    value = _proper(value)
                if sentence == "MOVE":  # "still Leeds" is where one lives; "to Lisbon" is where one moves
                    sentence = "I live in {v}." if _STAYING.match(answer) else "I am moving to {v}."
                out.append(sentence.format(v=value))
                break
    still = _STILL_QUESTION.match(q)
    echo = _ECHO.match(answer)
    first = re.split(r"[,;.!?]|\s-\s", _ECHO.sub("", answer, count=1) if echo else answer, maxsplit=1)[0]
    if echo and not echo.group("s") and _CLAUSE_VERB.search(first):
        echo = None  # "Yes, the Borg is defeated twice": the answer says it in words of its own
    if echo and (said := _as_statement(asked, echo.group("s"))):  # "Has Ana settled in Porto?" - "She has"
        out.append(said)
    elif still and _NO.match(answer) and re.match(r"(?i)(?:at|with|working\s+(?:at|for))\s+", still.group("rest")):
        out.append(f"I am not {still.group('rest').strip()} any more.")
    if third:
        who = _first_person(third.group("who"))
        return " ".join(_third_person(o, who) if o.startswith("I ") else o for o in out) or None
    if (_YES.match(answer) or _NO.match(answer)) and re.search(r"(?i)\b(?:you|your)\b", asked):
        head = re.split(r"(?<=[.!?])\s+", answer.strip(), maxsplit=1)[0]  # the reply's first sentence only
        for clause in re.split(r"[,;]\s*", head)[1:] if len(head.split()) <= 16 else []:
            f = _FRAGMENT.match(clause)
            if f:
                rest = f.group("rest").strip().rstrip(".!?")
                out.append(f"I work {rest}." if rest.lower().startswith("as ") else f"I am {rest}.")
    return " ".join(out) or None


_PLACE_CUE = re.compile(rf"\b(?:in|to|from|visiting|visit|welcome\s+to|near|around)\s+(?P<v>[{_UP}][\w'’\-]+(?:\s+[{_UP}][\w'’\-]+){{0,2}})")
_HERE = re.compile(r"(?i)\b(?P<verb>moved|move|moving|relocated|relocating|came|come|went|go|going|live|lives|living|lived|"
                   r"based|settled|stay|staying|stayed|born|grew\s+up|(?:am|is|are|'m|'s|’m|’s)\s+(?:originally\s+)?from)"
                   r"\s+(?:back\s+)?(?:out\s+)?(?P<w>here|there)\b")


def last_place(text: str, names: set[str]) -> str | None:
    """The last place `text` names after a preposition of place ("in Toulouse", "from Bilbao"), not a
    person in `names` (name keys), a calendar word or a tool; None if none."""
    for m in reversed(list(_PLACE_CUE.finditer(text))):
        v = m.group("v")
        low = v.lower()
        if low in NOT_NAMES or low in CALENDAR_WORDS or low in STOPWORDS or low in names or tool_kind(v):
            continue
        return v
    return None


def resolve_here(text: str, place: str | None, names: set[str]) -> str:
    """`text` with "here"/"there" after a verb of place written as the place named last before it (in
    `text`, else `place`: "I moved here" -> "I moved to Toulouse"); unchanged when none is known."""

    def sub(m: re.Match[str]) -> str:
        where = last_place(text[: m.start()], names) or place
        if not where:
            return m.group(0)
        verb = m.group("verb")
        low = verb.lower()
        prep = "from" if low.endswith("from") else "to" if low.startswith(("mov", "reloc", "came", "come", "went", "go")) else "in"
        if prep == "from":
            return f"{verb} {where}"
        return f"{verb} {prep} {where}"

    return _HERE.sub(sub, text)


def same_name(a: str, b: str) -> bool:
    """One name's short and long forms: "Tallow" and "Tallow Studio", "Harbor" and "Harbor Analytics"."""
    return a != b and bool(a) and bool(b) and (a.startswith(b + " ") or b.startswith(a + " "))


def answered_no(event: LayerEvent, question: str, found: Sequence[Any], before: Sequence[Any]) -> list[Any]:
    """A "no" to a question about one of the speaker's own claims retracts it: "And the swimming?" -
    "Dropped it." The claim is the speaker's latest whose value the question names, unless the answer
    already says so in words the rules read. `found`, `before`: the event's and the speaker's earlier
    `assertions.Assertion`s (typed loosely: that module imports this one)."""
    for prior in reversed(before):
        if not asked_about(question, prior.value):
            continue
        if any(f.attribute == prior.attribute and (f.value_key == prior.value_key or same_name(f.value_key, prior.value_key))
               for f in found):
            return []
        return [replace(prior, id=f"{event.id}#{len(found)}", event_id=event.id, time=event.occurred_at,
                        surface=event.content[:60], negated=True, seq=event.seq, valid_from=None)]
    return []


SAID_WITH_WE = re.compile(r"(?i)we\b")  # a claim whose words open with "we" ("we're moving to X"): a couple's or a group's
_PARTNER_NOUNS = ("husband", "wife", "partner", "boyfriend", "girlfriend", "fiancé", "fiancée", "fiance", "fiancee", "hubby")


def with_partner(found: list[Any], partners: dict[tuple[str, str], str], conv: str, n: int,
                 aliases: dict[str, str] | None = None) -> list[Any]:
    """A relationship, a home or a move said with "we" ("We got married", "we're moving to Lisbon") is the
    partner's too: the one the speaker was last said to share a relationship with ("you and Priyanka got
    engaged"), else the one `aliases` names as the speaker's husband, wife, partner, ... ("my wife Ines").
    Not a plan: "we're going to Porto" is as often friends or colleagues (on dev, 18 copies wrong, none right).
    Learns partners from `found`."""
    rel = [a for a in found if a.attribute == "relationship_status"]
    for a in rel:
        for b in rel:
            if a.entity_key != b.entity_key and a.value_key == b.value_key and a.event_id == b.event_id:
                partners[(conv, a.entity_key)] = b.entity
    out: list[Any] = []
    for a in found:
        if a.attribute not in ("relationship_status", "lives_in", "moving_to") or not SAID_WITH_WE.match(a.surface):
            continue
        p = partners.get((conv, a.entity_key)) or next(
            (aliases[k] for k in (f"{a.entity_key}'s {w}" for w in _PARTNER_NOUNS) if aliases and k in aliases), None)
        if p and norm_name(p) != a.entity_key and not any(
                norm_name(p) == b.entity_key and b.attribute == a.attribute for b in (*found, *out)):
            out.append(replace(a, id=f"{a.event_id}#{n + len(out)}", entity=p))
    return out


def as_organisation(found: list[Any], orgs: dict[tuple[str, str], str], said: dict[tuple[str, str], list[Any]],
                    conv: str, speaker: str, speakers: set[str]) -> list[Any]:
    """A tool said with "we" by someone who speaks for an organisation ("We switched to HubSpot" from
    the one who works at Quayside, or who answered "We are" about Quayside) is the organisation's,
    when the organisation already holds a claim of that attribute. Learns who speaks for whom."""
    sp = norm_name(speaker)
    for a in found:
        if a.attribute == "works_at" and not a.negated and a.entity_key == sp:
            orgs[(conv, sp)] = a.value
        elif SAID_WITH_WE.match(a.surface) and a.entity_key not in speakers and "'" not in a.entity:
            orgs[(conv, sp)] = a.entity
    org = orgs.get((conv, sp))
    if not org:
        return found
    held = {b.attribute for b in said.get((conv, norm_name(org)), []) if b.attribute.startswith("uses:")}
    return [replace(a, entity=org) if a.entity_key == sp and a.attribute in held and re.match(r"(?i)(?:we|our|us)\b", a.surface)
            else a for a in found]

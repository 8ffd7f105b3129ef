"""Rule-based (entity, attribute, value) assertions: the claims that knowledge-update questions ask about.

"I live in Boston" -> (speaker, lives_in, Boston); "we moved to Denver" -> (speaker, lives_in, Denver);
"my sister works at Google" -> (speaker's sister, works_at, Google). The patterns are general English
first-person and named-subject forms (residence, employer, occupation, study, family size, age,
relationship status, pets, names, favourites, likes and dislikes), not fitted to one data set. An
attribute is single-valued (a new value supersedes the old one: that is what makes a contradiction)
unless it is listed in MULTI_VALUED (a second pet is not a contradiction of the first).

Used by consolidation (timeline, contradictions), surprise (update-verb contradictions) and the
memory graph (evolution edges).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

from app.domain.layers.events import LayerEvent
from app.domain.layers.text import (
    CALENDAR_WORDS,
    NOT_NAMES,
    NUMBER_WORDS,
    STOPWORDS,
    norm_name,
)

LAYER_VERSION = "assertions/1"

MULTI_VALUED_PREFIXES = ("pet_name:", "has_pet", "member_of", "hobby")

RELATION_NOUNS = (
    "wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|mom|mum|mother|dad|father|sister|brother|son|"
    "daughter|kids|children|friend|best friend|boss|roommate|grandma|grandpa|grandmother|grandfather|"
    "aunt|uncle|cousin|niece|nephew|parents|family|neighbor|neighbour"
)
_PETS = "dog|cat|puppy|kitten|pup|horse|rabbit|bunny|hamster|parrot|bird|fish|turtle|snake|guinea pig|pony|lizard|ferret"
OCCUPATIONS = frozenset(
    """teacher nurse doctor engineer developer programmer designer artist painter writer author musician
    singer dancer chef cook baker lawyer attorney accountant manager student counselor counsellor therapist
    psychologist scientist researcher professor firefighter officer soldier pilot driver mechanic
    electrician plumber carpenter farmer photographer journalist editor architect pharmacist dentist
    veterinarian vet paramedic consultant analyst entrepreneur barista waiter waitress cashier clerk
    librarian coach trainer athlete actor actress model volunteer intern freelancer youtuber streamer
    blogger influencer realtor banker salesperson secretary assistant receptionist nanny caregiver
    babysitter tutor principal surgeon sculptor potter illustrator animator filmmaker director producer
    composer dj poet novelist activist advocate mentor instructor lecturer pastor priest rabbi
    minister politician economist statistician technician contractor bartender florist tailor
    hairdresser stylist beautician cleaner gardener landscaper guard detective investigator judge
    mayor senator marine sailor astronaut biologist chemist physicist mathematician geologist
    historian philosopher translator interpreter""".split()
)

_PROPER = r"[A-Z][\w'’&\.\-]*(?:\s+(?:of\s+|de\s+|the\s+|on\s+)?[A-Z][\w'’&\.\-]*){0,4}"
_NP = r"[\w'’\-]+(?:\s+[\w'’\-]+){0,4}"  # an object phrase, trimmed afterwards
_NUMW = r"\d{1,3}|" + "|".join(sorted((w for w in NUMBER_WORDS if w not in {"a", "an", "few", "several", "couple", "dozen", "hundred", "thousand"}), key=len, reverse=True))
_SUBJ = rf"(?P<subj>\bI\b|\b[Ww]e\b|\b[Mm]y\s+(?:(?:new|older|younger|little|big|best|oldest|youngest)\s+)?(?:{RELATION_NOUNS})\b|\b[A-Z][a-z]{{2,}}\b)"
_ADV = r"(?:\s+(?:now|currently|still|just|recently|finally|actually|officially|also))*"


@dataclass(frozen=True)
class Assertion:
    id: str
    event_id: str
    entity: str  # display name: "Ana", "Ana's sister"
    attribute: str  # lives_in, works_at, job_title, favourite:book, opinion:hiking, ...
    value: str  # display value
    value_key: str  # what two values are compared by
    time: datetime
    surface: str  # the matched words
    negated: bool = False
    seq: int = 0
    superseded_by: str | None = None
    layer_version: str = LAYER_VERSION

    @property
    def entity_key(self) -> str:
        return norm_name(self.entity)

    @property
    def single_valued(self) -> bool:
        return not self.attribute.startswith(MULTI_VALUED_PREFIXES)


# (attribute, pattern, value kind). Attribute may name a group: "favourite:{what}", "pet_name:{pet}".
_RULES: list[tuple[str, re.Pattern[str], str]] = []


def _rule(attribute: str, pattern: str, kind: str = "proper", flags: int = 0) -> None:
    _RULES.append((attribute, re.compile(pattern, flags), kind))


# residence
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:live|lives|(?:am|'m|are|'re|is|'s)\s+living|(?:have|'ve|has)\s+been\s+living|(?:have|'ve|has)\s+lived)\s+in\s+(?P<val>{_PROPER})")
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:moved|relocated)\s+(?:back\s+|all the way\s+)?(?:to|into)\s+(?P<val>{_PROPER})")
_rule("lives_in", rf"{_SUBJ}\s+(?:(?:do not|don't|does not|doesn't)\s+live\s+in|no longer\s+lives?\s+in|moved\s+(?:out of|away from))\s+(?P<val>{_PROPER})", "negated")
_rule("moving_to", rf"{_SUBJ}\s+(?:am|'m|are|'re|is|'s)\s+(?:going to move|moving|relocating)\s+to\s+(?P<val>{_PROPER})")
_rule("from", rf"{_SUBJ}\s+(?:am|'m|are|'re|is|'s)\s+(?:originally\s+)?from\s+(?P<val>{_PROPER})")
_rule("from", rf"{_SUBJ}\s+grew up in\s+(?P<val>{_PROPER})")
# employment
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|'m|are|'re|is|'s)\s+working|(?:have|'ve|has)\s+been\s+working)\s+(?:at|for)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:got|landed|accepted|started|took|began)\s+(?:a\s+|an\s+|my\s+|her\s+|his\s+|the\s+)?(?:new\s+)?(?:job|position|role|internship|gig)\s+(?:at|with)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|'m|are|'re|is|'s)\s+working)\s+at\s+(?:a|an|the)\s+(?P<val>[a-z]+(?:\s+[a-z]+)?)", "common")
_rule("works_at", rf"{_SUBJ}\s+(?:quit|left|lost)\s+(?:my|her|his|the)\s+job\s+(?:at|with)\s+(?P<val>{_PROPER})", "negated")
_rule("works_at", rf"{_SUBJ}\s+(?:no longer|(?:do not|don't|does not|doesn't))\s+work\s+(?:at|for)\s+(?P<val>{_PROPER})", "negated")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|'m|are|'re|is|'s)\s+working)\b[^.!?]{{0,40}}?\s+as\s+(?:a|an)\s+(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:got|landed|accepted|started|took|began)\s+(?:a\s+|an\s+|my\s+)?(?:new\s+)?(?:job|position|role|career)\s+as\s+(?:a|an)\s+(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("job_title", rf"{_SUBJ}\s+(?:quit|left|lost)\s+(?:my|her|his|the)\s+job\s+as\s+(?:a|an)\s+(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation_negated")
_rule("job_title", rf"{_SUBJ}(?:\s+(?:am|'m|is|'s)|\s+became|\s+(?:have|'ve|has)\s+become){_ADV}\s+(?:a|an)\s+(?P<val>(?:[a-z]+\s+){{0,2}}[a-z]+)", "occupation")
_rule("job_title", r"\b(?P<subj>[Mm]y)\s+(?:new\s+)?(?:job|role|position|title)\s+is\s+(?:a|an)?\s*(?P<val>[a-z]+(?:\s+[a-z]+){0,2})", "occupation")
# study
_rule("studies", rf"{_SUBJ}{_ADV}\s+(?:study|studies|(?:am|'m|is|'s)\s+studying|majored in|major in|(?:am|'m|is|'s)\s+majoring in)\s+(?P<val>[a-z]+(?:\s+[a-z]+){{0,2}})", "common")
_rule("school", rf"{_SUBJ}{_ADV}\s+(?:go|goes|(?:am|'m|is|'s)\s+going|(?:am|'m|is|'s)\s+studying(?:\s+[a-z]+){{0,3}}|enrolled|(?:got|was|were)\s+accepted|(?:am|is)\s+a\s+student)\s+(?:to|at|in)\s+(?:the\s+)?(?P<val>(?=[^.!?]*\b(?:University|College|School|Academy|Institute|Conservatory)\b){_PROPER})")
# family, age, relationships, pets, names
_rule("children_count", rf"{_SUBJ}\s+(?:have|has|'ve got|have got|has got)\s+(?P<val>{_NUMW})\s+(?:kids|children|sons|daughters|boys|girls|little ones)\b", "number", re.I)
_rule("age", rf"{_SUBJ}\s+(?:am|'m|is|'s|just turned|turned|will turn|'ll turn)\s+(?P<val>\d{{1,3}}|{_NUMW})(?:\s+years?\s+old|\s+y/?o|\s+this year|\s+today)\b", "number")
_rule("age", rf"{_SUBJ}\s+(?:just\s+)?turned\s+(?P<val>\d{{1,3}})\b", "number")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:am|'m|are|'re|is|'s)\s+(?:now\s+|happily\s+)?(?:a\s+)?(?P<val>single|married|engaged|divorced|widowed|separated|in a relationship)\b", "status")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:got|are getting|'re getting|am getting|'m getting|is getting)\s+(?P<val>married|engaged|divorced)\b", "status")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:broke up|split up|separated)\b(?P<val>)", "breakup")
_rule("relationship_status", r"\b(?P<subj>[Aa]s)\s+a\s+(?P<val>single)\s+(?:mom|mum|mother|dad|father|parent)\b", "status")
_rule("pet_name:{pet}", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+|little\s+|sweet\s+)?(?P<pet>{_PETS})\s*,?\s+(?:is\s+)?(?:named|called)\s+(?P<val>[A-Z][a-z]+)")
_rule("pet_name:{pet}", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+|little\s+|sweet\s+)?(?P<pet>{_PETS})\s*,?\s+(?P<val>[A-Z][a-z]+)\b")
_rule("pet_name:{pet}", rf"\b(?P<subj>I|[Ww]e)\s+(?:have|got|adopted|rescued)\s+(?:a|an)\s+(?:new\s+)?(?P<pet>{_PETS})\s+(?:named|called)\s+(?P<val>[A-Z][a-z]+)")
_rule("pet_name:{pet}", rf"\b(?P<subj>[Aa]n?|[Oo]ur|[Mm]y)\s+(?:new\s+|little\s+|sweet\s+)?(?P<pet>{_PETS})\s+(?:named|called)\s+(?P<val>[A-Z][a-z]+)")
_rule("member_of", rf"{_SUBJ}{_ADV}\s+(?:joined|became a member of|signed up for)\s+(?:a|an|the|my|our)\s+(?P<val>(?:[\w'\-]+\s+){{0,3}}?(?:group|club|team|church|band|choir|league|community|society|gym|class|organization|organisation|association|platform|network|crew|circle|program|programme))\b", "common")
_rule("hobby", rf"{_SUBJ}{_ADV}\s+(?:started|began|took up|picked up)\s+(?:(?:playing|learning|practicing|practising|doing|taking)\s+(?:the\s+)?(?P<val>[a-z]+(?:\s+[a-z]+){{0,2}})|(?P<val2>[a-z]{{3,}}ing)\b(?!\s+(?:to|into|at|on|for|with|a|an|the|my|our|about|out|up|forward)\b))", "common")
_rule("relationship_status", r"\b(?P<subj>[Mm]y)\s+(?P<val>husband|wife|girlfriend|boyfriend|fianc[ée]e?)\b", "implied_status")
_rule("has_pet", rf"\b(?P<subj>I|[Ww]e)\s+(?:have|got|adopted|rescued)\s+(?:a|an|two|three)\s+(?:new\s+)?(?:little\s+)?(?P<val>{_PETS})s?\b", "common")
_rule("name", r"\b(?P<subj>[Mm]y)\s+name\s+is\s+(?P<val>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)")
_rule("favourite:{what}", rf"\b(?P<subj>[Mm]y)\s+(?:all-time\s+|absolute\s+|personal\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|was|has to be|would be|has always been)\s+(?P<val>{_NP})", "phrase")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:really\s+|absolutely\s+|just\s+|truly\s+)?(?P<verb>love|like|enjoy|adore|hate|dislike|cannot stand|do not like|no longer like|do not enjoy|am (?:a )?(?:big |huge )?fan of|am (?:really )?into|am passionate about)\s+(?P<val>{_NP})", "opinion")

_IMPLIED_STATUS = {"husba": "married", "wife": "married", "fianc": "engaged"}
_NEG_VERBS = ("hate", "dislike", "cannot stand", "do not like", "no longer like", "do not enjoy")
_PRONOUNS = frozenset("it that this you them him her those these everything anything something what how when".split())
_VALUE_STOP = re.compile(
    r"\s+(?:and|but|because|since|so|when|while|with|for|after|before|last|next|this|that|now|yesterday|today|"
    r"tomorrow|ago|too|again|anymore|though|which|who|where|if|to|as|at|in|on|by|from|or|like|lately|recently|about|around|every|each|"
    r"since|until|is|was|are|were|has|had|have|it|really|so much|a lot)\b.*$",
    re.I,
)


def _clean_value(raw: str, kind: str) -> str | None:
    v = raw.strip().strip(".,!?;:\"'’()")
    if kind in ("proper", "negated"):
        # stop a proper name where the capitalised run ends; drop a trailing possessive
        v = re.sub(r"['’]s$", "", v).rstrip(".")
        if not v or v.lower() in NOT_NAMES or v.lower() in CALENDAR_WORDS or v.lower() in STOPWORDS:
            return None
        return v
    v = _VALUE_STOP.sub("", " " + v).strip()
    v = re.sub(r"^(the|a|an|my|our|some)\s+", "", v, flags=re.I).strip(".,!?;:\"' ")
    if not v or v.lower() in _PRONOUNS or v.lower() in STOPWORDS:
        return None
    if len(v.split()) > 4:
        return None
    return v


def _entity_for(subj: str, speaker: str) -> str | None:
    s = subj.strip()
    low = s.lower()
    if low in ("i", "we", "my", "our", "as", "a", "an"):
        return speaker or "speaker"
    m = re.match(r"(?:my|our)\s+(.+)", s, re.I)
    if m:
        return f"{speaker}'s {m.group(1).lower()}"
    if low in NOT_NAMES or low in CALENDAR_WORDS or low in STOPWORDS:
        return None
    return s  # a named subject: "Jon works at ..."


_CONTRACTIONS = [
    (re.compile(r"\b(I)'m\b"), r"\1 am"),
    (re.compile(r"\b([Ww]e|[Yy]ou|[Tt]hey)'re\b"), r"\1 are"),
    (re.compile(r"\b(I|[Ww]e|[Yy]ou|[Tt]hey)'ve\b"), r"\1 have"),
    (re.compile(r"\b(I|[Ww]e|[Yy]ou|[Tt]hey|[Ss]he|[Hh]e)'ll\b"), r"\1 will"),
    (re.compile(r"\b([Dd]o|[Dd]oes|[Dd]id|[Ii]s|[Aa]re|[Ww]as|[Ww]ere|[Hh]ave|[Hh]as)n't\b"), r"\1 not"),
    (re.compile(r"\b([Cc]a)n't\b"), r"\1nnot"),
]


_ELIDED_I = re.compile(
    r"(^|[.!?]\s+|[-–—]\s*)((?:Just|Recently|Finally|Also)\s+)?(Lost|Started|Got|Joined|Moved|Quit|Graduated|Landed|Became|Adopted|Took up|Picked up|Began)\b"
)


def _expand(text: str) -> str:
    text = text.replace("’", "'")
    text = _ELIDED_I.sub(lambda m: f"{m.group(1)}I {(m.group(2) or '').lower()}{m.group(3).lower()}", text)
    for rx, rep in _CONTRACTIONS:
        text = rx.sub(rep, text)
    return text


def extract_assertions(event: LayerEvent) -> list[Assertion]:
    """Every assertion the rules find in one event, in text order."""
    text = _expand(event.content)
    found: list[tuple[int, str, str, str, str, bool]] = []
    spans: list[tuple[int, int, str]] = []
    for attribute, rx, kind in _RULES:
        for m in rx.finditer(text):
            groups = m.groupdict()
            entity = _entity_for(groups.get("subj") or "I", event.speaker)
            if entity is None:
                continue
            raw = groups.get("val") or groups.get("val2") or ""
            negated = kind == "negated"
            if kind == "breakup":
                value: str | None = "single"
            elif kind == "number":
                n = int(raw) if raw.isdigit() else NUMBER_WORDS.get(raw.lower())
                value = str(n) if n is not None else None
            elif kind == "status":
                value = raw.lower()
            elif kind == "implied_status":  # "my wife" says the speaker is married
                value = _IMPLIED_STATUS.get(raw.lower()[:5], "in a relationship")
            elif kind in ("occupation", "occupation_negated"):
                negated = kind == "occupation_negated"
                cleaned = _clean_value(raw, "common")
                words_ = (cleaned or "").lower().split()
                # keep only phrases that end in an occupation noun ("a nurse", "a software engineer")
                while words_ and words_[-1] not in OCCUPATIONS:
                    words_.pop()
                value = " ".join(words_) if words_ else None
            elif kind == "opinion":
                value = _clean_value(re.sub(r"^to\s+", "", raw), "phrase")
                if value is None:
                    continue
                verb = (groups.get("verb") or "").lower()
                attr = f"opinion:{value.lower()}"
                found.append((m.start(), entity, attr, "dislikes" if verb in _NEG_VERBS else "likes", m.group(0), False))
                spans.append((m.start(), m.end(), attr))
                continue
            else:
                value = _clean_value(raw, kind)
            if not value:
                continue
            attr = attribute.format(pet=(groups.get("pet") or "").lower(), what=(groups.get("what") or "").lower(), val=value.lower())
            # one attribute per span: the first (most specific) rule wins
            if any(s <= m.start() < e and a.split(":")[0] == attr.split(":")[0] for s, e, a in spans):
                continue
            spans.append((m.start(), m.end(), attr))
            found.append((m.start(), entity, attr, value, m.group(0), negated))
    found.sort(key=lambda f: f[0])
    out = []
    for k, (_, entity, attr, value, surface, negated) in enumerate(found):
        out.append(
            Assertion(
                id=f"{event.id}#{k}",
                event_id=event.id,
                entity=entity,
                attribute=attr,
                value=value,
                value_key=norm_name(value),
                time=event.occurred_at,
                surface=surface,
                negated=negated,
                seq=event.seq,
            )
        )
    return out


def extract_all(events: Iterable[LayerEvent]) -> list[Assertion]:
    return [a for e in events for a in extract_assertions(e)]

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
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Iterable

from app.domain.layers.assertion_text import _CO_SUBJECT, antecedent, expand, tool_kind
from app.domain.layers.events import LayerEvent
from app.domain.layers.text import (
    CALENDAR_WORDS,
    NOT_NAMES,
    NUMBER_WORDS,
    STOPWORDS,
    norm_name,
)

LAYER_VERSION = "assertions/2"  # 2: moves, teams, tools, plans and cancellations, dating; Unicode names

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

_UP = "A-ZÀ-ÖØ-Þ"  # capitals, Latin-1 included ("Évora", "Öresund")
_CAL = r"(?:January|February|March|April|May|June|July|August|September|October|November|December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b"
_PROPER = rf"[{_UP}][\w'’&\.\-]*(?:\s+(?:of\s+|de\s+|da\s+|do\s+|the\s+|on\s+|&\s+)?(?!{_CAL})[{_UP}][\w'’&\.\-]*){{0,4}}"
_NP = r"[\w'’\-]+(?:\s+[\w'’\-]+){0,4}"  # an object phrase, trimmed afterwards
_NUMW = r"\d{1,3}|" + "|".join(sorted((w for w in NUMBER_WORDS if w not in {"a", "an", "few", "several", "couple", "dozen", "hundred", "thousand"}), key=len, reverse=True))
_SUBJ = rf"(?P<subj>\bI\b|\b[Ww]e\b|\b[Mm]y\s+(?:(?:new|older|younger|little|big|best|oldest|youngest)\s+)?(?:{RELATION_NOUNS})\b|\b[{_UP}][a-zß-öø-ÿ]{{2,}}\b|\b[Hh]e\b|\b[Ss]he\b)"
_ADV = (r"(?:\s+(?:have|has|had)(?=\s+(?:\w+\s+)?(?:\w+ed|got|gotten|been|become|left|quit|begun|taken)\b))?"
        r"(?:\s+(?:now|currently|still|just|recently|finally|actually|officially|also))*")


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
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:moved|relocated)\s+(?:back\s+|all the way\s+)?(?:home\s+)?(?:to|into)\s+(?:(?:a|an|the|our|my)\s+(?:new\s+)?(?:flat|apartment|house|place|condo|home)\s+in\s+)?(?P<val>{_PROPER})")
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
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|'m|are|'re|is|'s)\s+working)\b[^.!?]{{0,40}}?\s+as\s+(?:a|an|the|our|their)\s+(?:(?:only|sole|lead|main|new|senior|junior|head)\s+)?(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:got|landed|accepted|started|took|began)\s+(?:a\s+|an\s+|my\s+)?(?:new\s+)?(?:job|position|role|career)\s+as\s+(?:a|an)\s+(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("job_title", rf"{_SUBJ}\s+(?:quit|left|lost)\s+(?:my|her|his|the)\s+job\s+as\s+(?:a|an)\s+(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation_negated")
_rule("works_at", rf"{_SUBJ}(?:\s+(?:am|is|was)|\s+(?:have|has)\s+been){_ADV}\s+(?:a|an|the)\s+(?:[a-z]+\s+){{0,2}}(?=(?:{'|'.join(sorted(OCCUPATIONS))})\s+(?:at|for|with)\b)[a-z]+\s+(?:at|for|with)\s+(?P<val>{_PROPER})")
_rule("job_title", rf"{_SUBJ}(?:\s+(?:am|'m|is|'s)|\s+became|\s+(?:have|'ve|has)\s+(?:become|been)){_ADV}\s+(?:a|an)\s+(?P<val>(?:[a-z]+\s+){{0,2}}[a-z]+)", "occupation")
_rule("job_title", r"\b(?P<subj>[Mm]y)\s+(?:new\s+)?(?:job|role|position|title)\s+is\s+(?:a|an)?\s*(?P<val>[a-z]+(?:\s+[a-z]+){0,2})", "occupation")
# study
_rule("studies", rf"{_SUBJ}{_ADV}\s+(?:switched|changed|moved)\s+(?:my|her|his|our)\s+major\s+(?:over\s+)?to\s+(?P<val>[a-z]+(?:\s+[a-z]+){{0,2}})", "common")
_rule("studies", rf"{_SUBJ}{_ADV}\s+(?:study|studies|(?:am|'m|is|'s)\s+studying|majored in|major in|(?:am|'m|is|'s)\s+majoring in)\s+(?P<val>[a-z]+(?:\s+[a-z]+){{0,2}})", "common")
_rule("school", rf"{_SUBJ}{_ADV}\s+(?:go|goes|(?:am|'m|is|'s)\s+going|(?:am|'m|is|'s)\s+studying(?:\s+[a-z]+){{0,3}}|enrolled|transferred|(?:got|was|were)\s+accepted|(?:am|is)\s+a\s+student)\s+(?:to|at|in)\s+(?:the\s+)?(?P<val>(?=[^.!?]*\b(?:University|College|School|Academy|Institute|Conservatory)\b){_PROPER})")
# family, age, relationships, pets, names
_rule("children_count", rf"{_SUBJ}\s+(?:have|has|'ve got|have got|has got)\s+(?P<val>{_NUMW})\s+(?:kids|children|sons|daughters|boys|girls|little ones)\b", "number", re.I)
_rule("age", rf"{_SUBJ}{_ADV}\s+(?:am|'m|is|'s|just turned|turned|will turn|'ll turn)\s+(?:also\s+|now\s+|already\s+)?(?P<val>\d{{1,3}}|{_NUMW})(?:\s+years?\s+old|\s+y/?o|\s+this year|\s+today)\b", "number")
_rule("age", rf"{_SUBJ}\s+(?:just\s+)?turned\s+(?P<val>\d{{1,3}}|{_NUMW})\b(?!\s+(?:of|to|around|down|up|out|into|off|over|away|back)\b)", "number")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:am|'m|are|'re|is|'s)\s+(?:(?:now|still|happily|officially|finally|also)\s+)*(?:a\s+)?(?P<val>single|married|engaged|divorced|widowed|separated|in a relationship)\b", "status")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:got|are getting|'re getting|am getting|'m getting|is getting)\s+(?P<val>married|engaged|divorced)\b", "status")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:broke up|split up|separated)\b(?P<val>)", "breakup")
_rule("relationship_status", r"\b(?P<subj>[Aa]s)\s+a\s+(?P<val>single)\s+(?:mom|mum|mother|dad|father|parent)\b", "status")
_rule("pet_name:{pet}", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+|little\s+|sweet\s+)?(?P<pet>{_PETS})\s*,?\s+(?:is\s+)?(?:named|called)\s+(?P<val>[A-Z][a-z]+)")
_rule("pet_name:{pet}", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+|little\s+|sweet\s+)?(?P<pet>{_PETS})\s*,?\s+(?P<val>[A-Z][a-z]+)\b")
_rule("pet_name:{pet}", rf"\b(?P<subj>I|[Ww]e)\s+(?:have|got|adopted|rescued)\s+(?:a|an)\s+(?:new\s+)?(?P<pet>{_PETS})\s+(?:named|called)\s+(?P<val>[A-Z][a-z]+)")
_rule("pet_name:{pet}", rf"\b(?P<subj>[Aa]n?|[Oo]ur|[Mm]y)\s+(?:new\s+|little\s+|sweet\s+)?(?P<pet>{_PETS})\s+(?:named|called)\s+(?P<val>[A-Z][a-z]+)")
_rule("member_of", rf"{_SUBJ}{_ADV}\s+(?:joined|became a member of|signed up for)\s+(?:a|an|the|my|our)\s+(?P<val>(?:[\w'\-]+\s+){{0,3}}?(?:group|club|team|church|band|choir|league|community|society|gym|class|organization|organisation|association|platform|network|crew|circle|program|programme))\b", "common")
_rule("hobby", rf"{_SUBJ}{_ADV}\s+(?:started|began|took up|picked up)\s+(?:(?:playing|learning|practicing|practising|doing|taking)\s+(?:the\s+)?(?P<val>[a-z]+(?:\s+[a-z]+){{0,2}})|(?P<val2>[a-z]{{3,}}ing)\b(?!\s+(?:to|into|at|on|for|with|a|an|the|my|our|about|out|up|forward)\b))", "common")
_rule("relationship_status", r"\b(?P<subj>[Mm]y)\s+(?P<val>husband|wife|girlfriend|boyfriend|fianc[ée]e?|partner|gf|bf|hubby)\b(?!\s+(?:in\s+crime|at\s+work)\b)", "implied_status")
_rule("has_pet", rf"\b(?P<subj>I|[Ww]e){_ADV}\s+(?:have|got|adopted|rescued)\s+(?:a|an|two|three)\s+(?:new\s+)?(?:little\s+)?(?P<val>{_PETS})s?\b", "common")
_rule("name", r"\b(?P<subj>[Mm]y)\s+name\s+is\s+(?P<val>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)")
_rule("favourite:{what}", rf"\b(?P<subj>[Mm]y)\s+(?:all-time\s+|absolute\s+|personal\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|was|has to be|would be|has always been)\s+(?P<val>{_NP})", "phrase")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:really\s+|absolutely\s+|just\s+|truly\s+)?(?P<verb>love|like|enjoy|adore|prefer|hate|dislike|cannot stand|do not like|no longer like|do not enjoy|am (?:a )?(?:big |huge )?fan of|am (?:really )?into|am passionate about)\s+(?P<val>{_NP})", "opinion")

# ---- changes: moves, jobs, teams, relationships, preferences, tools, plans and their cancellation
_BE = r"(?:am|are|is|was|were)"
_MOVE_VERB = r"(?:move|moving|relocate|relocating)"
_rule("moving_to", rf"{_SUBJ}{_ADV}\s+(?:will|(?:am|are|is)\s+going\s+to|plan\s+to|(?:am|are|is)\s+planning\s+to|decided\s+to|want\s+to|(?:have|has)\s+to)\s+(?:be\s+)?{_MOVE_VERB}\s+(?:back\s+)?to\s+(?P<val>{_PROPER})")
_rule("moving_to", rf"{_SUBJ}\s+(?:am|are|is)\s+(?:not|no longer)\s+(?:going to move|moving|relocating)\s+to\s+(?P<val>{_PROPER})", "negated")
_rule("lives_in", rf"{_SUBJ}\s+(?:am|are|is)\s+(?:still|now)\s+(?:based\s+)?in\s+(?P<val>{_PROPER})(?!\s+(?:for|until|till)\b)")
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:now\s+)?(?:based|settled|living)|(?:have|has)\s+(?:just\s+)?settled|settled)\s+in\s+(?P<val>{_PROPER})")
_rule("lives_in", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+)?(?:place|apartment|flat|house|home)\s+(?:is\s+)?in\s+(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|are|is)\s+working)\s+(?:in|on|as)\s+[^.!?,;]{{2,40}}?\s+(?:at|for)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:joined|(?:got|was|were)\s+hired\s+(?:at|by)|(?:start|starts|started|am\s+starting|will\s+start)\s+(?:work\s+|working\s+)?at|(?:got|accepted|took|signed)\s+(?:an|the)\s+offer\s+(?:from|at|with))\s+(?P<val>{_PROPER})")
_rule("works_at", rf"\b(?P<subj>[Mm]y)\s+new\s+(?:job|position|role)\s+(?:at|with)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"(?<![\w'’])(?P<subj>)(?P<val>{_PROPER})\s+(?:just\s+|finally\s+)?(?:hired|offered)\s+me\b")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:was|got|have\s+been|has\s+been)\s+promoted\s+to\s+(?:a\s+|an\s+)?(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("plan:trip", rf"\b(?P<subj>[Tt]he|[Oo]ur|[Mm]y)\s+(?P<val>{_PROPER})\s+(?:trip|vacation|holiday|visit)\s+(?:is|was|has\s+been|got)\s+(?:off|cancell?ed|called\s+off)\b", "place_negated")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:quit|left|(?:was|were|got)\s+(?:laid off|let go|fired)\s+(?:from|at|by))\s+(?P<val>{_PROPER})", "negated")
_TEAM_NOUN = r"(?:department|dept|team|ward|unit|division|group|floor|desk|squad|practice)"
_rule("works_in", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|are|is)\s+working)\b[^.!?]{{0,50}}?,\s*(?:mostly|mainly|usually)?\s*(?:on|in)\s+the\s+(?P<val>(?:[\w\-]+\s+){{0,2}}{_TEAM_NOUN}\b)", "team")
_rule("works_in", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|are|is)\s+working)\s+in\s+(?P<val>(?!the\b|a\b|an\b|my\b|our\b|this\b|that\b|here\b|there\b|it\b)[a-z]{{3,}}(?:\s+(?:care|medicine|surgery|support|sales|marketing|engineering|finance|research|design|development|operations|relations|resources|management))?)\b", "team")
_rule("works_in", rf"{_SUBJ}{_ADV}\s+(?:switched|transferred|moved|rotated|got\s+transferred|(?:am|are|is)\s+(?:switching|transferring|moving))\s+(?:over\s+|back\s+)?(?:to|into)\s+(?:the\s+)?(?P<val>[A-Z]{{2,5}}\b|(?:[\w\-]+\s+){{0,2}}{_TEAM_NOUN}\b|(?=[^.!?,;]{{0,30}}\b{_TEAM_NOUN}\b)[\w\-]+)", "team")
_rule("works_in", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|are|is)\s+(?:working|now|still)|(?:am|are|is))\s+(?:in|on|with)\s+the\s+(?P<val>[A-Z]{{2,5}}\b(?!\s+[A-Za-z])|(?:[\w\-]+\s+){{0,2}}{_TEAM_NOUN}\b)", "team")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:now\s+)?(?:seeing\s+someone|dating|going\s+out\s+with)|(?:have|has)\s+been\s+(?:dating|seeing\s+each\s+other|together)|started\s+(?:dating|seeing)|got\s+back\s+together)\b(?P<val>)", "dating")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:tied the knot|got hitched)\b(?P<val>)", "married")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:proposed|said yes)\b(?P<val>)", "engaged")
_rule("relationship_status", rf"(?<![\w'’])(?P<subj>)(?P<name>[{_UP}][a-zß-öø-ÿ]{{2,}})\s+(?:finally\s+|just\s+)?proposed(?:\s+to\s+me)?\b(?!\s+to\b)(?P<val>)", "engaged")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:(?:am|have)\s+)?(?:no longer|not)\s+(?:really\s+)?(?:into|a fan of|fond of)\s+(?P<val>{_NP})", "opinion_neg")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:do not|no longer|never)\s+(?:eat|drink|watch|play|wear)\s+(?P<val>{_NP})", "opinion_neg")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:have\s+)?(?:got|gotten|grown|become)\s+(?:tired|sick|bored)\s+of\s+(?P<val>{_NP})", "opinion_neg")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:have\s+)?(?:gotten|got|gone)\s+(?:really\s+)?into\s+(?P<val>{_NP})", "opinion_pos")
_rule("favourite:{what}", rf"\b(?P<val>[{_UP}][\w'’\-]*(?:\s+[{_UP}][\w'’\-]*){{0,3}})\s+is\s+(?P<subj>my|our)\s+(?:new\s+|all-time\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\b", "proper")
_VERSIONED = r"Python|Node|Java|Ruby|PHP|Go|Rust|Django|Rails|React|Postgres|PostgreSQL|MySQL|iOS|Android|Windows|macOS|Ubuntu"
_TOOL = rf"(?:[{_UP}]|i(?=[A-Z]))[\w'’&\.\-]*(?:\s+[{_UP}][\w'’&\.\-]*){{0,3}}(?:\s+\d+[\w.]*)?"
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:use|uses|(?:am|are|is)\s+using|switched\s+(?:over\s+|back\s+)?to|(?:got|bought))\s+(?:a|an|the|my|our)\s+(?:new\s+)?(?P<val>{_TOOL})", "tool")
_rule("uses:{what}", rf"\b(?P<subj>[Oo]ur|[Mm]y)\s+(?P<val>{_PROPER})\s+(?:app|site|website|frontend|backend|service|project|api|stack)\b", "tool")
_rule("uses:{what}", rf"\b(?P<subj>[Oo]ur|[Mm]y|[Ww]e|I)\b[^.!?]{{0,30}}?\b(?:deploys?|deployed|is\s+hosted|are\s+hosted|runs|run|hosts?)\s+(?:to|on|at|with)\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:finished|completed|started|began)\s+(?:the|our|my)\s+(?:move|migration|switch)\s+(?:over\s+)?to\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:bumped|upgraded|updated|moved|switched)\s+(?:us|it|everything|the\s+\w+)\s+(?:up\s+)?to\s+(?P<tool>{_VERSIONED})\s+(?P<val>\d+(?:\.\d+)*)\b", "version")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:use|uses|(?:am|are|is)\s+using|(?:have|has)\s+been\s+using|switched\s+(?:over\s+|back\s+)?to|migrated\s+(?:back\s+)?to|moved\s+(?:over\s+|back\s+)?to|(?:got|bought)\s+(?:a|an|the)\s+(?:new\s+)?|went\s+with|chose|picked)\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"\b(?P<subj>[Oo]ur|[Mm]y)\s+(?:\w+\s+)?(?:app|service|backend|stack|project|site|server|team)\s+(?:uses|runs on|is on|is built on)\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:(?:stopped|quit)\s+using|(?:dropped|ditched|replaced))\s+(?P<val>{_PROPER})", "tool_negated")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:(?:upgraded|updated|downgraded|moved|switched)\s+(?:back\s+)?to|(?:am|are|is)\s+(?:on|using)|use|run|(?:am|are|is)\s+running)\s+(?P<tool>{_VERSIONED})\s+(?P<val>\d+(?:\.\d+)+|\d+)\b", "version")
_rule("uses:{what}", rf"(?:^|[.!?]\s+)(?P<subj>)(?P<tool>{_VERSIONED})\s+(?P<val>\d+(?:\.\d+)*)(?:\s+(?:right now|now|currently|at the moment)\b|\s*[.!]\s|\s*[.!]?$)", "version")
_rule("uses:{what}", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+)?(?P<val>{_PROPER})\s+(?P<tool>router|modem|phone|laptop|tablet|watch|camera|car|bike|printer|console|headphones|tv)\b", "device")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+(?:on|subscribed\s+to)\s+(?:your|the|a|my|our)\s+(?P<val>{_PROPER})\s+(?P<tool>plan|tier|subscription|package|membership)\b", "device")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}(?:(?:\s+would|'d)\s+like\s+to|\s+want\s+to|\s+(?:am|are|is)\s+going\s+to|\s+will|\s+just)?\s+(?:downgrade|upgrade)d?\s+(?:from\s+(?:the|my|our|your)\s+{_PROPER}\s+(?:plan|tier|subscription|package)\s+)?to\s+(?:the\s+)?(?P<val>{_PROPER})(?:\s+(?P<tool>plan|tier|subscription|package))?", "plan_tier")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}(?:(?:\s+would|'d)\s+like\s+to|\s+want\s+to|\s+(?:am|are|is)\s+going\s+to|\s+will|\s+just)?\s+(?:switch|move|change)d?\s+from\s+(?:the|my|our|your)\s+{_PROPER}\s+(?:plan|tier|subscription|package)\s+to\s+(?:the\s+)?(?P<val>{_PROPER})", "plan_tier")
_rule("uses:{what}", rf"{_SUBJ}\s+(?:am|are|is)\s+[^.!?]{{0,40}}?\band\s+(?:moving|switching|migrating)\s+(?:over\s+|back\s+)?to\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+(?:building|writing|making|developing)\s+(?:a|an|the|our|my)\s+[^.!?]{{0,40}}?\b(?:in|with|on)\s+(?P<val>{_PROPER})", "tool")
_PLAN_KINDS = r"trip|vacation|holiday|party|wedding|dinner|move|visit|launch|release|meeting|concert|reunion|barbecue|bbq|getaway|cruise|camping trip|road trip|honeymoon|surprise party|birthday party"
_rule("plan:trip", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:planning|taking|going\s+on|booking)|(?:have|has)\s+(?:planned|booked)|planned|booked|plan)\s+(?:a|an|our|my|the)\s+(?:\w+\s+)?(?:trip|vacation|holiday|getaway|visit|road trip)\s+to\s+(?P<val>{_PROPER})")
_rule("plan:trip", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:going|heading|flying|travelling|traveling|off)|will\s+(?:go|fly|travel|be\s+going)|(?:plan|plans|want|hope)\s+to\s+(?:go|fly|travel)|(?:am|are|is)\s+planning\s+to\s+(?:go|fly|travel))\s+to\s+(?P<val>{_PROPER})(?=[^.!?]*\b(?:in|next|this|on|for|over|at|from|trip|vacation|holiday|week|month|summer|winter|spring|fall|autumn)\b)", "place")
_rule("plan:trip", rf"{_SUBJ}{_ADV}\s+(?:will\s+(?:be\s+)?visit(?:ing)?|(?:am|are|is)\s+visiting|(?:plan|plans|want|hope)\s+to\s+visit|(?:am|are|is)\s+planning\s+to\s+visit)\s+(?P<val>{_PROPER})", "place")
_rule("plan:trip", rf"{_SUBJ}\s+(?:am|are|is)\s+(?:not|no longer)\s+(?:going|flying|travelling|traveling)\s+to\s+(?P<val>{_PROPER})", "negated")
_rule("plan:trip", rf"{_SUBJ}{_ADV}\s+(?:will\s+|(?:have|has)\s+to\s+|(?:have|has)\s+)?(?:cancel|cancelled|canceled|called\s+off|call\s+off|scrapped|scrap)\s+(?:the\s+|our\s+|my\s+)?(?P<val>{_PROPER})(?:\s+(?:trip|vacation|holiday|visit))?\b", "place_negated")
_rule("plan:{pkind}", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:planning|throwing|hosting|organi[sz]ing|having)|(?:have|has)\s+planned|planned|will\s+(?:throw|host|have))\s+(?:a|an|our|my|the|his|her)\s+(?:\w+\s+){{0,2}}?(?P<pkind>{_PLAN_KINDS})\b(?P<val>)", "plan")
_rule("plan:{pkind}", rf"{_SUBJ}{_ADV}\s+(?:(?:have|has)\s+)?(?:cancell?ed|called\s+off|scrapped|(?:had|have|has)\s+to\s+cancel|(?:am|are|is)\s+cancell?ing|(?:decided|had)\s+to\s+(?:cancel|call\s+off|skip))\s+(?:the|our|my|his|her|this|that)\s+(?:\w+\s+){{0,2}}?(?P<pkind>{_PLAN_KINDS})\b(?P<val>)", "plan_cancel")
_rule("plan:{pkind}", rf"\b(?P<subj>[Tt]he|[Oo]ur|[Mm]y)\s+(?:\w+\s+){{0,2}}?(?P<pkind>{_PLAN_KINDS})\s+(?:is|was|has been|got)\s+(?:off|cancell?ed|called off)\b(?P<val>)", "plan_cancel")

_rule("pet_name:{pet}", r"\b(?P<subj>[Hh]er|[Hh]is|[Ii]ts)\s+name\s+is\s+(?P<val>[A-Z][a-z]+)\b", "pet_pronoun")
_IMPLIED_STATUS = {"husba": "married", "wife": "married", "fianc": "engaged"}
_NOT_PLACES = frozenset("bed work school church class practice lunch dinner breakfast sleep town".split())
_NEG_VERBS = ("hate", "dislike", "cannot stand", "do not like", "no longer like", "do not enjoy")
_PRONOUNS = frozenset("it that this you them him her those these everything anything something what how when".split())
_VALUE_STOP = re.compile(
    r"\s+(?:and|but|because|since|so|when|while|with|for|after|before|last|next|this|that|now|yesterday|today|"
    r"tomorrow|ago|too|again|anymore|though|which|who|where|if|to|as|at|in|on|by|from|or|like|lately|recently|about|around|every|each|"
    r"since|until|is|was|are|were|has|had|have|it|really|so much|a lot|these days|nowadays|at the moment)\b.*$",
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


def extract_assertions(event: LayerEvent) -> list[Assertion]:
    """Every assertion the rules find in one event, in text order."""
    text = expand(event.content)
    found: list[tuple[int, str, str, str, str, bool]] = []
    spans: list[tuple[int, int, str, str]] = []
    for attribute, rx, kind in _RULES:
        for m in rx.finditer(text):
            groups = m.groupdict()
            subj = groups.get("subj") or "I"
            if kind in ("plan_cancel", "place_negated") and subj.lower() == "the":  # "the trip is off": the speaker's plan
                subj = "I"
            if subj.lower() in ("he", "she"):
                entity = antecedent(text, m.start())
            elif kind == "pet_pronoun":  # "I adopted a dog. Her name is Mochi."
                pets = re.findall(rf"\b({_PETS})\b", text[: m.start()], re.I)
                if not pets:
                    continue
                groups = {**groups, "pet": pets[-1]}
                entity = _entity_for("my", event.speaker)
            else:
                entity = _entity_for(subj, event.speaker)
            if entity is None:
                continue
            raw = groups.get("val") or groups.get("val2") or ""
            negated = kind == "negated"
            what = (groups.get("what") or "").lower()
            if kind == "breakup":
                value: str | None = "single"
            elif kind in ("dating", "married", "engaged"):
                value = "in a relationship" if kind == "dating" else kind
                if groups.get("name"):  # "Tariq proposed": the speaker is engaged (to Tariq)
                    entity = event.speaker or "speaker"
            elif kind == "team":
                value = _clean_value(raw, "common")
                if value and value.lower() in _PRONOUNS | {"same", "other", "new", "whole"}:
                    value = None
            elif kind in ("tool", "tool_negated"):
                negated = kind == "tool_negated"
                value = _clean_value(raw, "proper")
                what = tool_kind(value) if value else None
                if what is None:
                    continue
            elif kind in ("version", "device", "plan_tier"):
                value = _clean_value(raw, "proper") if kind != "version" else raw
                what = (groups.get("tool") or ("plan" if kind == "plan_tier" else "")).lower()
                if kind == "plan_tier" and not re.search(r"\b(?:plan|tier|subscription|package|membership)\b", m.group(0)):
                    continue  # "upgraded to Python 3.12" is a version, not a plan
                if not value or not what:
                    continue
            elif kind == "place_negated":
                negated = True
                value = _clean_value(raw, "proper")
                if not value or tool_kind(value):
                    continue
            elif kind == "place":
                value = _clean_value(raw, "proper")
                if value and (tool_kind(value) or value.lower() in _NOT_PLACES):
                    continue
            elif kind in ("plan", "plan_cancel"):
                negated = kind == "plan_cancel"
                pk = (groups.get("pkind") or "").lower()
                pk = {"vacation": "trip", "holiday": "trip", "getaway": "trip", "road trip": "trip", "camping trip": "trip",
                      "visit": "trip", "cruise": "trip", "honeymoon": "trip", "bbq": "barbecue",
                      "birthday party": "party", "surprise party": "party"}.get(pk, pk)
                groups = {**groups, "pkind": pk}
                value = "planned"
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
            elif kind in ("opinion", "opinion_neg", "opinion_pos"):
                value = _clean_value(re.sub(r"^to\s+", "", raw), "phrase")
                if value is None:
                    continue
                verb = (groups.get("verb") or "").lower()
                attr = f"opinion:{value.lower()}"
                if any(s0 <= m.start() < e0 and a0 == attr for s0, e0, a0, _ in spans):
                    continue
                liking = "dislikes" if verb in _NEG_VERBS or kind == "opinion_neg" else "likes"
                found.append((m.start(), entity, attr, liking, m.group(0), False))
                spans.append((m.start(), m.end(), attr, entity))
                continue
            else:
                value = _clean_value(raw, kind)
                if value and attribute in ("moving_to", "lives_in") and tool_kind(value):
                    continue  # "we're moving to Fly.io" is a migration (uses:hosting)
            if not value:
                continue
            attr = attribute.format(pet=(groups.get("pet") or "").lower(), what=what, val=value.lower(),
                                    pkind=groups.get("pkind") or "")
            # one attribute per span and entity: the first (most specific) rule wins; tools of different
            # kinds ("our React app deploys to Heroku") are different attributes
            base = attr if attr.startswith(("uses:", "plan:")) else attr.split(":")[0]
            if any(s <= m.start() < e and b == base and en == entity for s, e, b, en in spans):
                continue
            # the same claim twice in one event ("we've been dating ... my boyfriend") is one claim
            if any(f[1] == entity and f[2] == attr and norm_name(f[3]) == norm_name(value) and f[5] == negated
                   for f in found):
                continue
            spans.append((m.start(), m.end(), base, entity))
            found.append((m.start(), entity, attr, value, m.group(0), negated))
            co = _CO_SUBJECT.search(text[max(0, m.start() - 30):m.start()]) if subj in ("I", "I ") else None
            if co and co.group(1).lower() not in NOT_NAMES:  # "Priyanka and I are moving to Denver"
                found.append((m.start(), co.group(1), attr, value, m.group(0), negated))
    if any(f[2] == "relationship_status" and f[3] == "single" for f in found):
        found = [f for f in found if not (f[2] == "relationship_status" and f[3] != "single" and f[1] == event.speaker
                                          and re.match(r"(?i)my\b", f[4]))]
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
                # a cancellation naming no plan ("we called off the trip") retracts whatever stands
                value_key="" if negated and attr.startswith("plan:") and value == "planned" else norm_name(value),
                time=event.occurred_at,
                surface=surface,
                negated=negated,
                seq=event.seq,
            )
        )
    return out


def extract_all(events: Iterable[LayerEvent]) -> list[Assertion]:
    """Every event's assertions, in the events' order. A cancellation that does not name what it
    cancels ("we called off the trip") takes the plan it ends: the latest plan of that kind, the
    speaker's own first, so the timeline can mark that plan as ended."""
    out: list[Assertion] = []
    latest: dict[tuple[str, str], Assertion] = {}  # (entity key, attribute) -> latest standing plan
    latest_any: dict[str, Assertion] = {}
    for e in events:
        for a in extract_assertions(e):
            if a.attribute.startswith("plan:"):
                if a.negated and a.value == "planned":
                    prior = latest.get((a.entity_key, a.attribute)) or latest_any.get(a.attribute)
                    if prior is not None:
                        a = replace(a, entity=prior.entity, value=prior.value, value_key=prior.value_key)
                elif not a.negated:
                    latest[(a.entity_key, a.attribute)] = latest_any[a.attribute] = a
            out.append(a)
    return out

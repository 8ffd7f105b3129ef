"""Relations and the aliases a conversation states for them: "my husband Tom" said by Grace makes
"Grace's husband" and "Tom" one entity; so do "Tom, my husband", "my husband is Tom", "my dog's
name is Rex", and "your sister Leah" said to Maya ("Maya's sister"). Pure, no I/O.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from app.domain.layers.assertion_text import antecedent
from app.domain.layers.text import CALENDAR_WORDS, LOWER, NOT_NAMES, TITLES, UPPER

RELATIONS = (
    # compound roles and kin before their heads ("form tutor" before "tutor", "sister-in-law" before "sister")
    r"business\s+partner|co-?founder|co-?supervisor|other\s+half|form\s+tutor|personal\s+trainer|line\s+manager|team\s+lead|head\s+teacher|headteacher|driving\s+instructor|"
    r"best\s+man|maid\s+of\s+honou?r|bridesmaid|wedding\s+planner|estate\s+agent|letting\s+agent|social\s+worker|"
    r"project\s+manager|account\s+manager|mother-in-law|father-in-law|sister-in-law|brother-in-law|son-in-law|"
    r"daughter-in-law|in-laws|half-sister|half-brother|stepsister|stepbrother|stepmum|godmother|godfather|godson|"
    r"goddaughter|grandkids|grandchildren|grandchild|ex-wife|ex-husband|ex-girlfriend|ex-boyfriend|ex-partner|"
    r"labmate|flatmate|housemate|classmate|supervisor|advisor|adviser|mentor|physio|physiotherapist|GP|vet|"
    r"accountant|solicitor|lawyer|agent|assistant|PA|nanny|cleaner|builder|plumber|electrician|mechanic|"
    r"hairdresser|barber|instructor|carer|midwife|consultant|surgeon|optician|teacher|"
    r"university|uni|college|employer|company|firm|gym|choir|band|church|"
    r"wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|mom|mum|mother|dad|father|sister|brother|son|"
    r"daughter|kids|children|friends?|best friend|mate|boss|roommate|grandma|grandpa|grandmother|grandfather|"
    r"aunt|uncle|cousin|niece|nephew|parents|family|dog|cat|puppy|kitten|pets?|"
    r"terrier|spaniel|labrador|retriever|collie|beagle|poodle|greyhound|whippet|lurcher|pug|husky|corgi|dachshund|"
    r"rabbit|bunny|hamster|guinea\s+pig|parrot|budgie|tortoise|horse|pony|"
    r"doctor|dentist|therapist|teammate|coworker|co-worker|colleague|manager|landlord|landlady|coach|tutor|"
    r"trainer|neighbou?r|stepmom|stepdad|stepson|stepdaughter|grandson|granddaughter|gf|bf|hubby|bestie"
)

# Aliases stated in the text: apposition ("my husband Tom", "Tom, my husband"), copula ("Tom is my
# husband"), naming ("my sister's name is Leah", "my dog, called Rex") and possession by a named
# person ("Tom's mother"), or by the one addressed ("your sister", said to Maya: "Maya's sister").
_MODS = r"(?:(?:little|older|younger|new|oldest|youngest|big|baby|twin|step|late|old)\s+)?"
_UP, _LOW = UPPER, LOWER
_PARTICLE = r"(?:de|van|von|da|di|du|del|der|den|le|la|ter|ten)"  # "Anouk de Vries", "Ludwig van der Berg"
_NAME_ANY = rf"(?P<name>(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+)?[{_UP}][\w\-]*\b(?:\s+(?:{_PARTICLE}\s+){{0,2}}[{_UP}][\w\-]*\b)?)"
_NAME = _NAME_ANY + r"(?!['’]s\b)"  # "my sister is Mirela's age": no alias
_OWNER = rf"(?P<owner>[{_UP}][{_LOW}]{{2,}})"
_ALIAS_RES = [
    # right after its relation a name may carry a possessive: "my daughter Ada's fish tank" (Ada is the daughter)
    re.compile(rf"\b(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})\s*,?\s+(?:(?:is\s+)?(?:named|called)\s+)?{_NAME_ANY}"),
    re.compile(rf"\b(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})['’]s\s+name\s+is\s+{_NAME}"),
    re.compile(rf"\b(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})\s+(?:is|was)\s+{_NAME}"),
    re.compile(rf"{_NAME}\s*(?:,\s*|\s+(?:is|was|,\s*who\s+is)\s+)(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})\b"),
    # in brackets: "Priya (my manager)", "my manager (Priya)"
    re.compile(rf"{_NAME}\s*\(\s*(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})\s*\)"),
    re.compile(rf"\b(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})\s*\(\s*{_NAME}\s*\)"),
    # someone of a named person's: "Astrid's sister Karin", "Karin, Astrid's sister", "Astrid's sister is Karin"
    re.compile(rf"(?<![\w'’]){_OWNER}['’]s\s+{_MODS}(?P<rel>{RELATIONS})\s*,?\s+(?:(?:is\s+)?(?:named|called)\s+|is\s+)?{_NAME}"),
    re.compile(rf"{_NAME}\s*(?:,\s*|\s+(?:is|was)\s+){_OWNER}['’]s\s+{_MODS}(?P<rel>{RELATIONS})\b"),
    # the speaker as someone of a named person's: "I'm Matěj's mum", "this is Teo's dad"
    re.compile(rf"(?<![\w'’])(?:I'm|I’m|I\s+am|[Ii]t's\s+me,?|[Tt]his\s+is)\s+"
               rf"{_OWNER}['’]s\s+{_MODS}(?P<rel>{RELATIONS})\b(?!['’]s)(?P<me>)"),
    # "with Inês and her fiancé, Duarte": her / his is the person just named
    re.compile(rf"(?<![\w'’]){_OWNER}(?:\s+[{_UP}][\w\-]*)?\s+(?:and|with)\s+(?:her|his)\s+{_MODS}(?P<rel>{RELATIONS})\s*,?\s+"
               rf"(?:(?:named|called)\s+)?{_NAME}"),
    # "I come with a greyhound called Biscotti", "we've got a cat named Miso": the speaker's
    re.compile(rf"\b(?P<first>I|I'm|I've|we|we're|we've)\b[^.!?;]{{0,40}}?\b(?:a|an)\s+(?:(?:very|really|tiny|big|little|"
               rf"old|young|new|lovely|needy|grey|black|white|brown|ginger|rescue)\s+){{0,2}}(?P<rel>{RELATIONS})\s*,?\s+"
               rf"(?:(?:who\s+is|that\s+is|who's)\s+)?(?:named|called)\s+{_NAME}"),
    # "I'm taking on an assistant, Kemi, from May": a name set off by commas after "a <relation>"
    re.compile(rf"\b(?P<first>I|I'm|I've|[Ww]e|[Ww]e're|[Ww]e've)\b[^.!?;]{{0,40}}?\b(?:a|an)\s+(?:(?:new|lovely|rescue|"
               rf"little|young)\s+)?(?P<rel>{RELATIONS}),\s+{_NAME}(?=\s*(?:[,.!?;)]|$))"),
    # last, as it is the least sure: someone of the person a pronoun stands for ("Jannik can't come, his wife Birte
    # is due any day": Jannik's wife), a name none of the forms above gave
    re.compile(rf"\b(?P<pron>[Hh]is|[Hh]er)\s+{_MODS}(?P<rel>{RELATIONS})\s*,?\s+(?:(?:is\s+)?(?:named|called)\s+)?{_NAME}"),
]
YOUR_REL_RE = re.compile(rf"\b[Yy]our\s+({_MODS}(?:{RELATIONS}))\b")
NAMED_POSS_RE = re.compile(rf"\b(?P<owner>[{_UP}][\w\-]+)['’]s\s+{_MODS}(?P<rel>{RELATIONS})\b")
_ALIAS_NOT = frozenset("and but so or then also just really".split())


def relation(rel: str) -> str:
    """The relation noun without its modifiers, lower case but for an acronym ("GP")."""
    words_ = re.sub(rf"^{_MODS}", "", rel.strip(), flags=re.I).split()
    return " ".join(w if len(w) > 1 and w.isupper() else w.lower() for w in words_)


def norm(name: str) -> str:
    return name.strip().lower()


def stated_aliases(text: str, speaker: str, addressee: str | None) -> list[tuple[str, str]]:
    """(relation form, name) pairs the text states: "my husband Tom" said by Grace -> ("Grace's husband",
    "Tom"). "your" needs the addressee; the name must not be a common word or a calendar word."""
    out: list[tuple[str, str]] = []
    for rx in _ALIAS_RES:
        for m in rx.finditer(text):
            gd = m.groupdict()
            poss, name = (gd.get("poss") or "").lower(), speaker if gd.get("me") is not None else m.group("name")
            if not name:
                continue
            first = re.sub(r"^(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+", "", name).split()[0]  # "Mr Osei": Osei
            if first.lower() in NOT_NAMES or first.lower() in CALENDAR_WORDS or first.lower() in _ALIAS_NOT:
                continue
            if len(name.split()) > 1 and name.split()[1].lower() in NOT_NAMES | CALENDAR_WORDS and first == name.split()[0]:
                name = first
            if gd.get("pron"):  # whom "his" / "her" stands for, when no form above named this one already
                owner = None if any(norm(n) == norm(name) for _, n in out) else antecedent(text, m.start())
            else:
                owner = gd.get("owner") or (addressee if poss == "your" else speaker)  # "first": the speaker too
            if not owner or owner.lower() in NOT_NAMES or owner.lower() in CALENDAR_WORDS or norm(owner) == norm(name):
                continue
            out.append((f"{owner}'s {relation(m.group('rel'))}", name))
    return out


# a kinship word said as a name ("Mum's coming Friday", "ask Dad"): the speaker's own, when no possessive
# comes before it ("my Mum", "Tom's Dad", "your Gran" are read as relations above)
_KIN_NAME = re.compile(r"(?<![\w'’])(?<!my\s)(?<!My\s)(?<!our\s)(?<!Our\s)(?<!your\s)(?<!Your\s)(?<!his\s)(?<!her\s)"
                       r"(?<!their\s)(?<!['’]s\s)(?<!\bthe\s)(?<!\bThe\s)"
                       r"(?P<kin>Mum|Mam|Mom|Mummy|Mommy|Dad|Daddy|Mama|Papa|Nan|Nana|Gran|Granny|Grandma|Grandpa|Grandad|Granddad)"
                       r"(?![\w\-])(?!\s+(?:and\s+)?[A-Z])")


def kin_said(text: str) -> list[str]:
    """The kinship words (lower case) the text says as a name ("Mum's coming Friday", "ask Dad")."""
    return list(dict.fromkeys(m.group("kin").lower() for m in _KIN_NAME.finditer(text)))


def own_kin(owners: dict[str, str], text: str, speaker: str) -> None:
    """Add to `owners` (kin word -> the first speaker who said it as a name) what `speaker` says in `text`."""
    for k in kin_said(text) if speaker else ():
        owners.setdefault(k, speaker)


def kin_names(text: str, speaker: str, owners: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """("<speaker>'s mum", "Mum") for each kinship word the text says as a name: a capitalised "Mum", "Dad",
    "Gran" with no possessive before it and no name after it ("Mum Jones", "Gran Ellis" are someone's name),
    said by `speaker`, is the speaker's mum, dad, gran. `owners` (kin word -> the first speaker who said it
    as a name, `own_kin`): a word another speaker said first is left alone ("Mum" from two friends is two
    mothers; only the first is tied to the word)."""
    if not speaker:
        return []
    return list(dict.fromkeys((f"{speaker}'s {m.group('kin').lower()}", m.group("kin")) for m in _KIN_NAME.finditer(text)
                              if owners is None or owners.get(m.group("kin").lower(), speaker) == speaker))


# A speaker naming themself ("Hi, it's Oluwaseun Barker in claims", "Morning Seun, Tadek from the service
# desk", "I'm Oksana from Harbourline") or the other speaker ("Morning Hattie.", "You'd better, Farrant.")
_GREETING = r"(?:hi|hello|hey|morning|good\s+morning|good\s+afternoon|good\s+evening|afternoon|evening)"
_TWO = rf"[{_UP}][\w\-]+(?:\s+[{_UP}][\w\-]+)?"
_INTRO = re.compile(
    rf"^\W*(?:(?P<greet>(?i:{_GREETING})\b[^,.!?]{{0,24}}[,.!]\s*))?(?:"
    rf"(?i:my\s+name\s+is|my\s+name's)\s+(?P<a>{_TWO})(?=\s*[,.!?]|\s+(?i:from|at|on|in|here|speaking)\b)"
    rf"|(?i:it's|it’s|it\s+is|this\s+is)\s+(?P<d>{_TWO})(?=\s+(?i:from|at|on|in|here|speaking|calling)\b)"
    rf"|(?i:I'm|I’m|I\s+am)\s+(?P<b>[{_UP}][\w\-]+(?:\s+[{_UP}][\w\-]+(?=\s*[,.!?])|(?=\s+(?i:from|at|here|speaking)\b)))"
    rf"|(?P<c>[{_UP}][\w\-]+)\s+(?:(?i:from)\s+(?:(?i:the)\s+|[{_UP}])|(?i:here|speaking)\b))")  # not "Apart from meetings"
_CALLED = re.compile(rf"^\W*(?i:{_GREETING}|thanks|thank\s+you|cheers|bye|night|congrats|congratulations),?\s+"
                     rf"(?P<a>[{_UP}][{_LOW}]{{2,}})\s*[,!.?](?!\w)|,\s*(?P<c>[{_UP}][{_LOW}]{{2,}})\s*[.!]*\s*$")
_YOU = re.compile(r"\b(?i:you|your|you're|you've|you'd|you'll)\b")
_ROLES = frozenset("user assistant system bot ai model".split())
# a speaker named for a desk, not a person: whoever answers it names themself ("Reception": "Dalia here", later
# "Rafa speaking"), so no name they give is the speaker's own
_DESKS = frozenset("reception front desk helpdesk help support service customer office bookings booking admin "
                   "concierge enquiries team staff switchboard"
                   .split())
_TITLE_WORDS = frozenset("prof professor dr doctor mr mrs ms miss sir madam doc mate love dear".split())


def _desk(name: str) -> bool:
    return bool(set(norm(name).split()) & _DESKS)


def speaker_aliases(text: str, speaker: str, addressee: str | None) -> list[tuple[str, str, str]]:
    """(speaker, other name, how) for what a turn states about who is talking: the speaker introducing
    themself by another name ("self": "Hi, it's Oluwaseun Barker"), or, with one other speaker
    (`addressee`), calling them by one ("called": "Morning Hattie.", "Thanks, Chef!", "You'd better,
    Farrant."). A name opening a turn without a greeting is left alone ("Busan, actually."; "Cormac, our
    brake specialist"); one closing it needs a "you" beside it and no question ("Where are you, Seoul?").
    A caller keeps a "called" name only if the conversation uses it as a name elsewhere. A speaker named for a
    desk ("Reception", "Customer Support") has no name of its own: the names its people give are theirs."""
    out: list[tuple[str, str, str]] = []
    intro = _INTRO.match(text)
    # "Radek from Sparkline will do it" names someone else: "X from ..." introduces only after a greeting
    # "It's Shia Labeouf!" names someone in a photo: "it's X" introduces only before "from / here / in ..."
    name = intro and (intro.group("a") or intro.group("b") or intro.group("d")
                      or (intro.group("c") if intro.group("greet") else None))
    if name and _nameish(name) and norm(name) != norm(speaker) and not _desk(speaker):
        out.append((speaker, name, "self"))
    # a role ("user", "assistant") has no name to be called by: a "Hi Karen," there opens a drafted letter
    called = _CALLED.search(text) if addressee and norm(addressee) not in _ROLES and not _desk(addressee) else None
    name = called and (called.group("a") or (called.group("c") if _YOU.search(text) else None))
    if name and addressee and _nameish(name) and name.lower() not in _TITLE_WORDS and norm(name) != norm(addressee) \
            and norm(name) != norm(speaker):
        out.append((addressee, name, "called"))
    return out


# a name said to someone: opening the turn ("Rhi!", "Zof, don't be mad", "Oh Pav."), after a greeting or
# "love you", or closing it ("Thanks, Rhi")
_VOCATIVE = re.compile(rf"^\W*(?:(?i:oh|hi|hey|hiya|morning|thanks|cheers|love\s+you|night|bye),?\s+)?(?P<a>[{_UP}][{_LOW}]+)\s*[,!.?]"
                       rf"|,\s*(?P<b>[{_UP}][{_LOW}]+)\s*[.!?]*\s*$")


def nickname_calls(text: str, speaker: str, speakers: list[str]) -> list[tuple[str, str]]:
    """(speaker called, nickname) when the turn addresses another speaker by the start of their first name:
    "Rhi!" said to Rhiannon, "Zof, don't be mad" to Zofia. The nickname has at least three letters, is
    shorter than the name and opens exactly one other speaker's first name; a name that opens no speaker's
    ("Ana!") or two ("Sam" with Samira and Samuel speaking) calls nobody by a nickname."""
    m = _VOCATIVE.search(text)
    nick = m and (m.group("a") or m.group("b"))
    if not nick or len(nick) < 3 or nick.lower() in NOT_NAMES or nick.lower() in CALENDAR_WORDS:
        return []
    fits = [sp for sp in dict.fromkeys(speakers) if sp and norm(sp) != norm(speaker)
            and len(first := sp.split()[0]) > len(nick) and first.lower().startswith(nick.lower())]
    return [(fits[0], nick)] if len(fits) == 1 else []


def _nameish(name: str) -> bool:
    return all(w.lower() not in NOT_NAMES and w.lower() not in CALENDAR_WORDS and w.lower() not in _ALIAS_NOT
               for w in name.split())


_NAME_TOKEN = re.compile(rf"^[{_UP}][\w'’\-]*\.?$")
_JOINERS = frozenset({"&", "of", "de", "da"})  # lower-case words a long name may hold
_NOT_INITIALS = _JOINERS | {"the", "and", "for"}


def _titled(toks: list[str]) -> bool:
    """'Mr Şahin', 'Dr. Nakamura': a title and one name."""
    return len(toks) == 2 and toks[0].rstrip(".").lower() in TITLES


def initials(name: str) -> str:
    """'Marine Conservation Society' -> 'MCS' (its capitalised words' first letters, the joiners left
    out); '' for a name of one word or with a word not capitalised."""
    words = [t for t in name.split() if t.lower() not in _NOT_INITIALS]
    if len(words) < 2 or not all(_NAME_TOKEN.match(t) for t in words):
        return ""
    return "".join(t[0] for t in words).upper()


def mostly_places(place: Counter[str], said: Counter[str]) -> frozenset[str]:
    """The names used as a place in more than half of their mentions (`place`: the mentions as a place,
    `said`: all but those as a concept). One "from Skerrow" among "Skerrow do a Friday drop" and "ring
    Skerrow" leaves Skerrow the supplier; "moved to Denver", said mostly so, keeps Denver a place."""
    return frozenset(n for n, k in place.items() if 2 * k > said.get(n, k))


def short_forms(names: list[str], places: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(short, long) pairs of one name said in two lengths in one conversation: "Brightwell" and
    "Brightwell Logistics" (the long name's first word), "Okoro", "Mr Okoro" or "Dr. Okoro" and "Daniel
    Okoro" (a two-word name's last word, with or without a title), "MCS" and "Marine Conservation
    Society" (its initials), "Corrib View" and "Corrib View Hotel" (a longer name's first words). A short
    form that fits two long names ("Tom" with "Tom Hale" and "Tom
    Reyes") joins neither, and a place never joins what is named after it ("Denver" and "Denver
    Health"): `places` holds the names seen used as places."""
    singles, titled, longs = set(), set(), set()
    for n in dict.fromkeys(names):
        toks = n.split()
        if "'s " in n.replace("’", "'") and not _NAME_TOKEN.match(toks[-1]):
            continue  # "Sana's parents" is someone of Sana's, not a longer name
        if len(toks) == 1 and len(n) >= 3 and n.lower() not in NOT_NAMES | CALENDAR_WORDS and n not in places:
            singles.add(n)
        elif _titled(toks):
            if _NAME_TOKEN.match(toks[1]) and toks[1].lower() not in NOT_NAMES:
                titled.add(n)
        elif 2 <= len(toks) <= 4 and all(_NAME_TOKEN.match(t) or t in _JOINERS for t in toks):
            longs.add(n)
    out = []
    for s in sorted(n for n in longs if len(n.split()) < 4 and n not in places):  # "Corrib View" ... "Corrib View Hotel"
        fits = [ln for ln in longs if ln.startswith(s + " ")]
        if len(fits) == 1 and not any(ln.startswith(fits[0] + " ") for ln in longs):
            out.append((s, fits[0]))
    for s in sorted(singles):
        fits = [ln for ln in sorted(longs) if ln.split()[0] == s or (len(ln.split()) == 2 and ln.split()[1] == s)
                or (s.isupper() and initials(ln) == s)]
        if len(fits) == 1:
            out.append((s, fits[0]))
    for t in sorted(titled):
        last = t.split()[1]
        fits = [ln for ln in sorted(longs) if len(ln.split()) == 2 and ln.split()[1] == last]
        if len(fits) == 1:
            out.append((t, fits[0]))
    return out


_NICK_ENDS = ("ie", "y", "i")  # "Bernie" / "Bernadette", "Toby" / "Tobias", "Tobi" / "Tobias"
NOT_PEOPLE = frozenset({"place", "organization", "event"})  # kinds a first name is not


def _nick_stem(name: str) -> str:
    for end in _NICK_ENDS:
        if name.endswith(end) and len(name) - len(end) >= 3:
            return name[: -len(end)]
    return name


def nicknames(names: list[str], blocked: frozenset[str] = frozenset(),
              speakers: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(short, long) pairs of a first name said short in one conversation: "Bron" and "Bronwen", "Bea"
    and "Beatriz Lopes", "Bernie" and "Bernadette" (a pet form's -ie, -y or -i taken off). The short
    form is one word; what is left of it (three letters at least) opens the first word of exactly one
    other name, two letters longer at least, said alone or with one surname: a short form that fits two
    ("Sam" with Samira and Samuel), or that opens a longer name of its own ("Bea Santos"), joins none. A
    plural ("Achterberg" and "Achterbergs"), two speakers, or a name in `blocked` (used as a place, an
    organisation, an event) never pair. Names are grouped by their first three letters (`nick_key`),
    so a caller holding an index by that key can pass one group at a time."""
    names = [n for n in dict.fromkeys(names) if n not in blocked]
    spoken = {norm(x) for x in speakers}
    out = []
    for s in names:
        stem = _nick_stem(s)
        if " " in s or len(stem) < 3 or not s.isalpha() or not _NAME_TOKEN.match(s) or s.lower() in NOT_NAMES:
            continue
        if any(n.startswith(s + " ") for n in names):
            continue
        fits = [n for n in names if n != s and len(toks := n.split()) <= 2 and all(_NAME_TOKEN.match(t) for t in toks)
                and toks[0].isalpha() and toks[0] != s and toks[0] != s + "s"
                and len(toks[0]) >= len(stem) + 2 and toks[0].lower().startswith(stem.lower())]
        firsts, longs = {n.split()[0] for n in fits}, [n for n in fits if " " in n]
        if len(firsts) != 1 or len(longs) > 1:
            continue
        long_ = longs[0] if longs else fits[0]
        if not (norm(s) in spoken and norm(long_) in spoken):
            out.append((s, long_))
    return out


def nick_key(name: str) -> str:
    """The index key `nicknames` groups names by: their first word's first three letters, lower-cased."""
    return name.split()[0][:3].lower() if name.split() else ""


def not_people(kinds: Mapping[str, Counter[str]]) -> frozenset[str]:
    """The names (keys of `kinds`, their kind votes) that more than half of their votes other than as a
    concept call a place, an organisation or an event."""
    out = set()
    for n, votes in kinds.items():
        named = sum(v for k, v in votes.items() if k != "concept")
        if 2 * sum(v for k, v in votes.items() if k in NOT_PEOPLE) > named:
            out.add(n)
    return frozenset(out)

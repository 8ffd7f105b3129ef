"""Relations and the aliases a conversation states for them: "my husband Tom" said by Grace makes
"Grace's husband" and "Tom" one entity; so do "Tom, my husband", "my husband is Tom", "my dog's
name is Rex", and "your sister Leah" said to Maya ("Maya's sister"). Pure, no I/O.
"""
from __future__ import annotations

import re

from app.domain.layers.text import CALENDAR_WORDS, NOT_NAMES

RELATIONS = (
    # compound roles and kin before their heads ("form tutor" before "tutor", "sister-in-law" before "sister")
    r"form\s+tutor|personal\s+trainer|line\s+manager|team\s+lead|head\s+teacher|headteacher|driving\s+instructor|"
    r"best\s+man|maid\s+of\s+honou?r|bridesmaid|wedding\s+planner|estate\s+agent|letting\s+agent|social\s+worker|"
    r"project\s+manager|account\s+manager|mother-in-law|father-in-law|sister-in-law|brother-in-law|son-in-law|"
    r"daughter-in-law|in-laws|half-sister|half-brother|stepsister|stepbrother|stepmum|godmother|godfather|godson|"
    r"goddaughter|grandkids|grandchildren|grandchild|ex-wife|ex-husband|ex-girlfriend|ex-boyfriend|ex-partner|"
    r"labmate|flatmate|housemate|classmate|supervisor|advisor|adviser|mentor|physio|physiotherapist|GP|vet|"
    r"accountant|solicitor|lawyer|agent|assistant|PA|nanny|cleaner|builder|plumber|electrician|mechanic|"
    r"hairdresser|barber|instructor|carer|midwife|consultant|surgeon|optician|teacher|"
    r"university|uni|college|employer|company|firm|gym|choir|band|church|"
    r"wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|mom|mum|mother|dad|father|sister|brother|son|"
    r"daughter|kids|children|friends?|best friend|boss|roommate|grandma|grandpa|grandmother|grandfather|"
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
_NAME = r"(?P<name>(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+)?[A-ZÀ-ÖØ-Þ][\w\-]*\b(?:\s+[A-ZÀ-ÖØ-Þ][\w\-]*\b)?)(?!['’]s\b)"
_ALIAS_RES = [
    re.compile(rf"\b(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})\s*,?\s+(?:(?:is\s+)?(?:named|called)\s+)?{_NAME}"),
    re.compile(rf"\b(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})['’]s\s+name\s+is\s+{_NAME}"),
    re.compile(rf"\b(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})\s+(?:is|was)\s+{_NAME}"),
    re.compile(rf"{_NAME}\s*(?:,\s*|\s+(?:is|was|,\s*who\s+is)\s+)(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})\b"),
    # in brackets: "Priya (my manager)", "my manager (Priya)"
    re.compile(rf"{_NAME}\s*\(\s*(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})\s*\)"),
    re.compile(rf"\b(?P<poss>[Mm]y|[Oo]ur|[Yy]our)\s+{_MODS}(?P<rel>{RELATIONS})\s*\(\s*{_NAME}\s*\)"),
    # someone of a named person's: "Astrid's sister Karin", "Karin, Astrid's sister", "Astrid's sister is Karin"
    re.compile(rf"(?<![\w'’])(?P<owner>[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]{{2,}})['’]s\s+{_MODS}(?P<rel>{RELATIONS})\s*,?\s+(?:(?:is\s+)?(?:named|called)\s+|is\s+)?{_NAME}"),
    re.compile(rf"{_NAME}\s*(?:,\s*|\s+(?:is|was)\s+)(?P<owner>[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]{{2,}})['’]s\s+{_MODS}(?P<rel>{RELATIONS})\b"),
]
YOUR_REL_RE = re.compile(rf"\b[Yy]our\s+({_MODS}(?:{RELATIONS}))\b")
NAMED_POSS_RE = re.compile(rf"\b(?P<owner>[A-ZÀ-ÖØ-Þ][\w\-]+)['’]s\s+{_MODS}(?P<rel>{RELATIONS})\b")
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
            poss, name = (gd.get("poss") or "").lower(), m.group("name")
            first = re.sub(r"^(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+", "", name).split()[0]  # "Mr Osei": Osei
            if first.lower() in NOT_NAMES or first.lower() in CALENDAR_WORDS or first.lower() in _ALIAS_NOT:
                continue
            if len(name.split()) > 1 and name.split()[1].lower() in NOT_NAMES | CALENDAR_WORDS and first == name.split()[0]:
                name = first
            owner = gd.get("owner") or (addressee if poss == "your" else speaker)
            if not owner or owner.lower() in NOT_NAMES or owner.lower() in CALENDAR_WORDS or norm(owner) == norm(name):
                continue
            out.append((f"{owner}'s {relation(m.group('rel'))}", name))
    return out


_NAME_TOKEN = re.compile(r"^[A-ZÀ-ÖØ-Þ][\w'’\-]*\.?$")


def short_forms(names: list[str], places: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(short, long) pairs of one name said in two lengths in one conversation: "Brightwell" and
    "Brightwell Logistics" (the long name's first word), "Okoro" and "Daniel Okoro" (a two-word name's
    last word). A short form that fits two long names ("Tom" with "Tom Hale" and "Tom Reyes") joins
    neither, and a place never joins what is named after it ("Denver" and "Denver Health"): `places`
    holds the names seen used as places."""
    singles, longs = set(), set()
    for n in dict.fromkeys(names):
        toks = n.split()
        if "'s " in n.replace("’", "'") and not _NAME_TOKEN.match(toks[-1]):
            continue  # "Sana's parents" is someone of Sana's, not a longer name
        if len(toks) == 1 and len(n) >= 3 and n.lower() not in NOT_NAMES | CALENDAR_WORDS and n not in places:
            singles.add(n)
        elif 2 <= len(toks) <= 4 and all(_NAME_TOKEN.match(t) or t in ("&", "of", "de", "da") for t in toks):
            longs.add(n)
    out = []
    for s in sorted(singles):
        fits = [ln for ln in sorted(longs) if ln.split()[0] == s or (len(ln.split()) == 2 and ln.split()[1] == s)]
        if len(fits) == 1:
            out.append((s, fits[0]))
    return out

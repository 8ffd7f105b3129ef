"""Memory-graph extraction (PRISM §3.2, App. C.1) without an LLM: the default `Extractor`.

Per event: sentences, split further into clauses at causal cues, become facet points (small talk
with no content words, names, numbers or dates is skipped). Each carries its entities (speaker names,
capitalised spans, "my sister" -> "<speaker>'s sister", the speaker when the clause is in the first
person, and recurring common-noun concepts such as "pottery class" or "camping" that the conversation
returns to in at least two events), a topic from a small keyword lexicon, and its time expressions
resolved against the event's time. Causal edges come from cue words within a sentence ("because", "so", "led to") and at the
start of one ("That's why", "So,", "As a result") pointing back to the sentence before.

The statistics the rules read (the conversation's lower-case words, the names seen mid-sentence, the
recurring concepts, the speakers) are folded event by event (`app.domain.layers.graph_fold`, graph/4):
`extract` is that fold over the whole log, `event_facts` one event's facts with the statistics held.

The `Extractor` protocol is what the graph build depends on; `LLMExtractor` (app.domain.layers.llm_extract)
is the other implementation, and `app.domain.layers.extractors` chooses between the two.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Container, Protocol, Sequence

import numpy as np

from app.domain.layers.aliases import (NAMED_POSS_RE, RELATIONS, YOUR_REL_RE, kin_names, nickname_calls, own_kin,
                                       relation, speaker_aliases, stated_aliases)
from app.domain.layers.head_refs import HeadIndex, head_references, opening_short_names
from app.domain.layers.consolidation import Episode, segment_episodes
from app.domain.layers.events import LayerEvent, in_time_order
from app.domain.layers.graph_fold import PREVIOUS_EVENT, add_short_forms, chain_facts, fold_facts
from app.domain.layers.graph_model import GraphFragment, RawFact, assemble
from app.domain.layers.text import (
    CALENDAR_WORDS,
    NOT_NAMES,
    STOPWORDS,
    TITLES,
    capitalised_spans,
    common_words,
    content_words,
    norm_name,
    numbers_in,
    split_sentences,
    words,
)
from app.domain.layers.graph_kinds import name_kind
from app.domain.layers.timediscourse import NO_DISCOURSE, Discourse
from app.domain.layers.timeparse import resolve_time_expressions
from app.domain.layers.timeturns import DateThread

# 2: lone capitalised ordinary words are not names (common_words); 3: time mentions' ranges are half-open
# 4: Unicode names, titles ("Dr. Okafor"), stated aliases ("my husband Tom"), "your sister", "Tom's mother"
# 5: one name said short and long ("Tallow", "Tallow Studio") is one entity; "Hartley's Pharmacy", "St. Brigid"
LAYER_VERSION = "graph_extract/14"  # 6: named possessors, role and place nouns, house numbers, model numbers
# 7: a speaker's other names (self-introduction, being greeted), "X and her fiancé, Y", "a greyhound called Y",
#    "my daughter Ada's ...", Latin capitals beyond Latin-1, "Oksana from Harbourline" is a firm; dates read
#    with the conversation before them (timeparse/7)
# 8: a name referred back to by its head noun ("the council" after "Kettleby Council": head_refs)
# 9: a titled surname ("Mr Şahin") and initials ("MCS") are short forms of the one full name they fit
# 10: a longer name's first words are a short form of it ("Corrib View" ... "Corrib View Hotel"); a name is a place
#    (and keeps apart from what is named after it) only when most of its mentions are; assertions/8's names
# 11: a sentence's first word that opens one known longer name ("Ana just rang" after "Ana Sousa"); a speaker
#    called by the start of their name ("Rhi!" to Rhiannon); "Mum", "Dad" said as a name are the speaker's;
#    "I'm Matěj's mum"; names with particles ("Anouk de Vries"); "my mate Jon"
# 12: a first name said short is the one longer first name it opens ("Bron" ... "Bronwen": aliases.nicknames)
# 13: someone of the person a pronoun stands for ("Jannik can't come, his wife Birte ..."); a speaker named for a desk
#     ("Reception") takes none of the names its people give (test_layers_stop40)
# 14: a sentence adverb ("Sadly", "Funnily", "Probably") or "Nothing", "Everyone" opening a sentence is no name
#     (text.NOT_NAMES; test_layers_stop42_claims)

Encode = Callable[[list[str]], np.ndarray]


class Extractor(Protocol):
    """Turns one conversation's events into a memory-graph fragment."""

    name: str

    def extract(self, events: Sequence[LayerEvent], episodes: Sequence[Episode] | None = None) -> GraphFragment: ...


TOPICS: dict[str, frozenset[str]] = {
    name: frozenset(ws.split())
    for name, ws in {
        "family": "family kids kid children child son daughter mom mum mother dad father sister brother husband wife "
                  "parents baby grandma grandpa grandmother grandfather aunt uncle cousin niece nephew married wedding",
        "work": "work job career boss office company colleague colleagues coworker project promotion business "
                "interview salary client clients startup meeting shift manager hired fired",
        "education": "school college university study studying degree course exam exams teacher "
                     "student students graduate graduated graduation homework semester",
        "art": "paint painting paintings painted art artwork drawing draw pottery sculpture artist museum craft "
               "crafts canvas gallery sketch photography photo photos",
        "music": "music song songs guitar piano band concert sing singing singer violin album drums playlist",
        "fitness": "run running ran gym yoga soccer football basketball marathon workout exercise swim swimming "
                   "tennis fitness training race cycling bike",
        "travel": "trip travel traveling travelling vacation beach camping hike hiking mountains flight visit "
                  "visited road abroad tour journey",
        "food": "cook cooking recipe recipes dinner food restaurant bake baking cake meal lunch breakfast",
        "pets": "dog dogs cat cats pet pets puppy kitten vet",
        "health": "health doctor hospital sick therapy therapist mental anxiety surgery illness diagnosis "
                  "medication healing",
        "community": "community support group volunteer volunteering charity activism advocacy rights pride "
                     "lgbtq transgender trans event events parade fundraiser",
        "social": "friend friends date dating relationship partner party boyfriend girlfriend",
        "media": "book books read reading novel movie movies film show series game games gaming",
        "home": "house home apartment garden move moved moving neighborhood",
    }.items()
}

_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "i'm", "i've", "i'd", "i'll", "we're", "we've"})
_REL_RE = re.compile(rf"\b(?:my|our)\s+((?:little\s+|older\s+|younger\s+|new\s+|oldest\s+|youngest\s+)?(?:{RELATIONS}))\b", re.I)
_ANIMALS = {"dog", "cat", "puppy", "kitten", "pet", "pets", "terrier", "spaniel", "labrador", "retriever", "collie", "beagle",
            "poodle", "greyhound", "whippet", "lurcher", "pug", "husky", "corgi", "dachshund", "rabbit", "bunny", "hamster",
            "guinea pig", "parrot", "budgie", "tortoise", "horse", "pony"}
_STREET_RE = re.compile(r"\b(?:Street|St|Road|Rd|Lane|Ln|Avenue|Ave|Row|Close|Drive|Dr|Way|Place|Crescent|Terrace|Court|"
                        r"Gardens|Square|Grove|Walk|Mews|Parade|Hill|Boulevard|Blvd)\.?$")
_HOUSE_NUMBER = re.compile(r"\b(\d{1,4}[A-Za-z]?)\s+$")
# causal cues inside a sentence: (regex, which side is the cause)
_CAUSE_AFTER = re.compile(r"\s*(?:,\s*)?\b(because of|because|due to|thanks to|as a result of|since(?=\s+(?:i|we|you|he|she|they|it|my|our|the|there)\b))\b\s*", re.I)
_CAUSE_BEFORE = re.compile(r"\s*(?:,\s*)?\b(which led to|led to|leading to|which is why|that's why|that is why|therefore|as a result|so(?=\s+(?:i|we|you|he|she|they|it|my|our|now)\b))\b\s*,?\s*", re.I)
_CAUSE_START = re.compile(r"^(that's why|that is why|so,|so that's|therefore|as a result|because of that|because of this|this is why|thanks to that|that led)\b", re.I)
_AFTER_START = re.compile(r"^(after|since)\s+([^,]{6,}),\s*(.+)$", re.I)


_DET_RE = re.compile(r"\b(?:a|an|the|my|our|his|her|their|this|that|some|these|those|any|another)\s+", re.I)
_GERUND_RE = re.compile(
    r"\b(?:go|goes|went|going|love|loves|loved|enjoy|enjoys|enjoyed|started|start|tried|took up|into|"
    r"passion for|love of)\s+([a-z]{3,}ing)\b",
    re.I,
)
_ADJECTIVES = frozenset(
    """great good new nice amazing awesome big little small huge old fun cool beautiful lovely special whole
    real best favorite favourite first last next other same different hard tough rough busy long short quick
    wonderful fantastic incredible awful terrible bad sweet cute local own perfect entire main latest recent
    few many several much more most such certain full free high low early late young older younger
    important difficult easy true right wrong crazy wild huge tiny major minor extra whole single red blue
    green yellow black white orange purple pink brown gray grey golden dark bright colorful""".split()
)
_BREAK_WORDS = frozenset(
    """yesterday today tomorrow tonight ago last next love loves like likes make makes go goes went get gets
    got take takes took see saw feel feels felt think thought know knew want wants need needs help helps
    gave give find found keep kept bring brought come came look looks seem seems start starts try tries
    play plays made says said told tell tells means mean brings makes really always never sounds sound
    sounded looks looked seems""".split()
)
GENERIC_NOUNS = frozenset(
    """time times day days thing things lot lots way ways bit idea ideas moment moments week weeks year years
    month months people person one ones stuff place places kind sort part end start rest point side reason
    fact case world life experience experiences feeling feelings news word words story stories question
    questions answer answers chance look sense spot today yesterday tomorrow weekend morning night evening
    afternoon hour hours minute minutes photo pic picture pictures while same other others something
    everything anything nothing everyone someone anyone journey step steps support love hope job work fun
    difference blast bunch break fan fave reminder process details detail form ground source man woman men
    women guy guys girl boy lady kid group safe red blue green yellow black white orange purple pink brown
    gray grey chance effort plan plans goal goals dream dreams""".split()
)

_PHRASE_STOPS = STOPWORDS | CALENDAR_WORDS | _BREAK_WORDS  # words that end a concept phrase


def concept_candidates(text: str) -> set[str]:
    """Common-noun phrases a fact is about ("pottery class", "charity race", "camping"): noun phrases
    after a determiner, cut at the first stop word and stripped of leading adjectives, and activities
    named by a gerund after "went", "love", "started". The extractor keeps the recurring ones."""
    out: set[str] = set()
    for m in _DET_RE.finditer(text):
        toks = []
        for w in text[m.end() : m.end() + 60].split()[:4]:
            lw = w.lower().strip("'\"")
            stop = lw.rstrip(".,!?;:)")
            if (stop in _PHRASE_STOPS or not stop.replace("-", "").isalpha()
                    or (stop.endswith("ed") and len(stop) > 4) or (toks and stop.endswith("ing"))):
                break  # a verb, or a participle after the noun ("a person holding ...") ends the phrase
            toks.append(stop)
            if stop != lw:  # punctuation ends the phrase
                break
        while toks and toks[0] in _ADJECTIVES:
            toks.pop(0)
        toks = toks[-2:]
        if toks and toks[-1] not in GENERIC_NOUNS and len(toks[-1]) > 2 and not toks[-1].endswith("ly"):
            out.add(" ".join(toks))
    for m in _GERUND_RE.finditer(text):
        out.add(m.group(1).lower())
    return out


_TOPIC_NAMES = tuple(TOPICS)
_TOPICS_OF: dict[str, tuple[int, ...]] = {}  # word -> the topics (positions in TOPICS) listing it
for _i, _lex in enumerate(TOPICS.values()):
    for _w in _lex:
        _TOPICS_OF[_w] = (*_TOPICS_OF.get(_w, ()), _i)


def topic_of(text: str) -> str:
    """The lexicon topic with most hits among the text's words (the first listed of those tied);
    'general' when none."""
    hits = [0] * len(_TOPIC_NAMES)
    for w in words(text):
        for i in _TOPICS_OF.get(w.lower(), ()):
            hits[i] += 1
    best_n = max(hits)
    return _TOPIC_NAMES[hits.index(best_n)] if best_n else "general"


def _clauses(sentence: str) -> list[tuple[str, int | None, str | None]]:
    """Split one sentence at a causal cue: [(clause, index of its cause within the list or None, cue)]."""
    m = _AFTER_START.match(sentence)
    if m and len(content_words(m.group(2))) >= 2 and len(content_words(m.group(3))) >= 2:
        return [(m.group(2).strip(), None, None), (m.group(3).strip(), 0, m.group(1).lower())]
    for rx, cause_first in ((_CAUSE_BEFORE, True), (_CAUSE_AFTER, False)):
        m = rx.search(sentence)
        if not m or m.start() == 0:
            continue
        left, right = sentence[: m.start()].strip(" ,"), sentence[m.end():].strip(" ,")
        if len(content_words(left)) >= 2 and len(content_words(right)) >= 2:
            cue = m.group(1).lower()
            return [(left, None, None), (right, 0, cue)] if cause_first else [(left, 1, cue), (right, None, None)]
    return [(sentence, None, None)]


class RuleExtractor:
    """The default extractor: rules only, no model calls except the optional `encode` for merging."""

    name = "rules"
    concepts_in = staticmethod(lambda text: concept_candidates(text))  # what the fold counts per event

    def __init__(self, encode: Encode | None = None, min_concept_events: int = 2, max_concept_share: float = 0.05):
        self.encode = encode
        self.min_concept_events = min_concept_events
        self.max_concept_share = max_concept_share
        self._concepts: Container[str] = frozenset()
        self._common: Container[str] = frozenset()
        self._speakers: list[str] = []
        self._kin_owner: dict[str, str] = {}  # kin word said as a name -> the first speaker who did (aliases)
        self._heads = HeadIndex()  # the known names by their last word ("the council": "Kettleby Council")

    def common_words(self, events: Sequence[LayerEvent]) -> frozenset[str]:
        """Words this conversation mostly writes in lower case (`app.domain.layers.text.common_words`);
        capitalised alone they are formatting, not names. Speakers are names whatever their case."""
        speakers = {norm_name(e.speaker) for e in events if e.speaker}
        return common_words(e.content for e in events) - speakers

    def known_names(self, events: Sequence[LayerEvent], common: frozenset[str] | None = None) -> frozenset[str]:
        """Speakers plus every name seen capitalised in mid-sentence somewhere in the conversation:
        such a name also counts when it opens a sentence."""
        common = common if common is not None else self.common_words(events)
        known = {norm_name(e.speaker) for e in events if e.speaker}
        for e in events:
            known.update(norm_name(s) for s in capitalised_spans(e.content, common=common, models=True))
        return frozenset(k for k in known if k and k not in NOT_NAMES)

    def recurring_concepts(self, events: Sequence[LayerEvent]) -> frozenset[str]:
        """Concept phrases found in at least `min_concept_events` events (and not in most of them)."""
        df: Counter[str] = Counter()
        for e in events:
            df.update(concept_candidates(e.content))
        cap = max(self.min_concept_events, int(self.max_concept_share * len(events)))
        return frozenset(c for c, n in df.items() if self.min_concept_events <= n <= cap)

    def facts(
        self,
        events: Sequence[LayerEvent],
        known: frozenset[str] | None = None,
        concepts: frozenset[str] | None = None,
        common: frozenset[str] | None = None,
    ) -> list[RawFact]:
        evs = in_time_order(events)
        self._common = common if common is not None else self.common_words(evs)
        known = known if known is not None else self.known_names(evs, self._common)
        self._concepts = concepts if concepts is not None else self.recurring_concepts(evs)
        speaker_keys = {norm_name(e.speaker) for e in evs if e.speaker}
        self._speakers = list(dict.fromkeys(e.speaker for e in evs if e.speaker))
        self._kin_owner = {}
        for e in evs:
            own_kin(self._kin_owner, e.content, e.speaker)
        out: list[RawFact] = []
        dates = DateThread()  # what the turns before each one said about dates
        for ev in evs:
            out.extend(chain_facts(out, self.event_facts(ev, known, speaker_keys, dates.read(ev.content, ev.occurred_at)[0])))
        add_short_forms(out, self._speakers)
        return out

    def event_facts(self, ev: LayerEvent, known: Container[str], speaker_keys: Container[str],
                    said: Discourse = NO_DISCOURSE) -> list[RawFact]:
        """One event's facts, with the statistics the extractor holds (`_common`, `_concepts`,
        `_speakers`). A cause is an index among these facts, or `PREVIOUS_EVENT`: the last fact
        before the event ("That's why ..." opening it); `chain_facts` makes them indices of a log's."""
        out: list[RawFact] = []
        prev_in_event: int | None = None
        for sentence in split_sentences(ev.content):
            clauses = _clauses(sentence)
            made = [self._fact(ev, clause, known, speaker_keys, said) for clause, _, _ in clauses]
            index: dict[int, int] = {}  # clause position -> index in `out`
            for ci, fact in enumerate(made):
                if fact is not None:
                    index[ci] = len(out)
                    out.append(fact)
            for ci, (clause, cause_idx, cue) in enumerate(clauses):
                if ci not in index:
                    continue
                fact = out[index[ci]]
                if cause_idx is not None and cause_idx in index:
                    fact.causes.append(index[cause_idx])
                    fact.cue = cue
                elif ci == 0 and _CAUSE_START.match(clause.strip()):
                    # "That's why ..." points back to the sentence before, or to the previous event
                    fact.causes.append(prev_in_event if prev_in_event is not None else PREVIOUS_EVENT)
                    fact.cue = _CAUSE_START.match(clause.strip()).group(1).lower().rstrip(",")  # type: ignore[union-attr]
            if index:
                prev_in_event = max(index.values())
        if out:  # "Hi, it's Oluwaseun Barker", "Morning Hattie.": another name of a speaker, on the event's first fact
            calls = [(who, nick, "nickname") for who, nick in nickname_calls(ev.content, ev.speaker, self._speakers)]
            for who, name, how in speaker_aliases(ev.content, ev.speaker, self._addressee(ev)) + calls:
                if norm_name(name) in speaker_keys or (how == "called" and norm_name(name) not in known):
                    continue
                for n in (who, name):
                    if norm_name(n) not in {norm_name(x) for x, _ in out[0].entities}:
                        out[0].entities.append((n, "person"))
                out[0].same_as.append((name, who))
        return out

    def _fact(self, ev: LayerEvent, clause: str, known: Container[str], speaker_keys: Container[str],
              said: Discourse = NO_DISCOURSE) -> RawFact | None:
        spans = capitalised_spans(clause, known, self._common, models=True)
        spans += opening_short_names(clause, known, self._heads, self._common, {norm_name(s) for s in spans})
        dates = resolve_time_expressions(clause, ev.occurred_at, said)
        cw = content_words(clause)
        if len(cw) < 2 and not spans and not numbers_in(clause) and not dates:
            return None  # "Wow!", "Thanks, Mel!": nothing to remember
        if len(cw) < 2 and not dates and all(norm_name(s) in speaker_keys or name_kind(s, "", speaker_keys) == "person" for s in spans) and not numbers_in(clause):
            return None  # a greeting that only names the other speaker
        ents: list[tuple[str, str]] = []
        for s in spans:
            pos = clause.find(s)
            ents.append((s, name_kind(s, clause[:pos] if pos >= 0 else "", speaker_keys)))
        toks = {w.lower().replace("’", "'") for w in words(clause)}
        if ev.speaker and toks & _FIRST_PERSON:
            ents.insert(0, (ev.speaker, "person"))
        for m in _REL_RE.finditer(clause):
            rel = re.sub(r"^(little|older|younger|new|oldest|youngest)\s+", "", m.group(1).lower())
            ents.append((f"{ev.speaker}'s {rel}", "animal" if rel in _ANIMALS else "person"))
        addressee = self._addressee(ev)
        if addressee:
            for m in YOUR_REL_RE.finditer(clause):
                rel = relation(m.group(1))
                ents.append((f"{addressee}'s {rel}", "animal" if rel in _ANIMALS else "person"))
        for m in NAMED_POSS_RE.finditer(clause):  # "Tom's mother": someone of her own
            owner = m.group("owner")
            if owner.lower() not in NOT_NAMES and owner.lower() not in CALENDAR_WORDS:
                rel = relation(m.group("rel"))
                ents.append((f"{owner}'s {rel}", "animal" if rel in _ANIMALS else "person"))
        same_as = []
        for s in spans:  # "Dr. Okafor" is also "Okafor"; "22 Canal Street" is also "Canal Street"
            num = _HOUSE_NUMBER.search(clause, 0, max(0, clause.find(s))) if _STREET_RE.search(s) else None
            if num and num.end() == clause.find(s):
                ents.append((f"{num.group(1)} {s}", "place"))
                same_as.append((f"{num.group(1)} {s}", s))
            parts = s.split(" ", 1)
            if len(parts) == 2 and parts[0].rstrip(".").lower() in TITLES:
                ents.append((parts[1], "person"))
                same_as.append((s, parts[1]))
        for form, name in stated_aliases(clause, ev.speaker, addressee) + kin_names(clause, ev.speaker, self._kin_owner):
            if norm_name(name) in speaker_keys and norm_name(form).split("'")[0] == norm_name(name):
                continue
            if norm_name(name) not in {norm_name(n) for n, _ in ents}:
                ents.append((name, "person"))
            if norm_name(form) not in {norm_name(n) for n, _ in ents}:
                ents.append((form, "animal" if form.rsplit(" ", 1)[-1] in _ANIMALS else "person"))
            same_as.append((form, name))
        span_keys = {norm_name(s) for s in spans}
        for noun, name in head_references(clause, known, self._heads, self._common):
            if noun not in span_keys:
                ents.append((noun, "concept"))
                same_as.append((noun, name))
        for c in sorted(c for c in concept_candidates(clause) if c in self._concepts):
            if c not in span_keys and not re.fullmatch(RELATIONS, c.split()[-1], re.I):  # "my son" is a relative
                ents.append((c, "concept"))
        seen: set[str] = set()
        uniq = []
        for n, k in ents:
            if norm_name(n) not in seen:
                seen.add(norm_name(n))
                uniq.append((n, k))
        return RawFact(ev.id, clause.strip(), uniq, dates, topic_of(clause), same_as=same_as)

    def _addressee(self, ev: LayerEvent) -> str | None:
        """Who "you" is: the event's recipient, else the other speaker of a two-person conversation."""
        if ev.recipient:
            return ev.recipient
        others = [sp for sp in self._speakers if sp != ev.speaker]
        return others[0] if len(self._speakers) == 2 and len(others) == 1 else None

    def extract(self, events: Sequence[LayerEvent], episodes: Sequence[Episode] | None = None) -> GraphFragment:
        evs = in_time_order(events)
        eps = list(episodes) if episodes is not None else segment_episodes(evs)
        conv = evs[0].conversation_id if evs else ""
        _, facts = fold_facts(evs, rules=self)  # graph/4: the fold, as the layer builds it
        return assemble(conv, evs, facts, eps, self.encode, extractor=self.name)


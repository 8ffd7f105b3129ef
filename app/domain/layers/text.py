"""Shared, dependency-free text rules: tokens, sentences, capitalised spans, numbers, markers.

Every layer that needs "named things", "numbers" or "emotion markers" reads them from here, so
the gate, the surprise index, the engrams and the graph agree on what those words mean.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Container, Iterable
from functools import lru_cache

# Letters are any script's letters ("Belém", "Müller", "Zoë"), not ASCII only.
_L = r"[^\W\d_]"
WORD_RE = re.compile(rf"{_L}(?:{_L}|['’&\-])*{_L}|{_L}|\d+(?:[.,:/]\d+)*(?:st|nd|rd|th|s|k|%)?")
# not after a title ("Dr. Okafor" is one name)
_SENT_SPLIT_RE = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bMx\.)(?<!\bProf\.)(?<!\bSt\.)(?<!\bMt\.)"
                            r"(?<=[.!?…])[\"')\]]*\s+|\n+")
EMOJI_RE = re.compile(
    "[\U0001F300-\U0001FAFF\U0001F000-\U0001F2FF\u2600-\u27BF\u2B00-\u2BFF]|(?<!\\w)(?::-?[)(DPp]|;-?\\)|<3)"
)
DIGIT_RE = re.compile(r"\d")

# capitals and small letters of the Latin alphabets ("Şahin", "Łukasz", "Paweł", "Đặng"), not only Latin-1's: the
# character classes of every pattern that reads a name. Latin Extended-A/B and Extended Additional are given whole,
# both cases, as ranges: listed letter by letter (their cases alternate) they cost every process ~0.4 s of compiling
# the patterns that hold them, and a word opening with one of their small letters is rare in English
UPPER = "A-ZÀ-ÖØ-Þ\u0100-\u024f\u1e00-\u1eff"
LOWER = "a-zß-öø-ÿ\u0100-\u024f\u1e00-\u1eff"

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
    down during each few for from further get got had hadn't has hasn't have haven't having he he'd he'll
    he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it
    it's its itself just let's like me more most mustn't my myself no nor not now of off on once only or
    other ought our ours ourselves out over own really same shan't she she'd she'll she's should shouldn't
    so some such than that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've this those through to too under until up very was wasn't we we'd we'll we're
    we've were weren't what what's when when's where where's which while who who's whom why why's will
    with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves yeah yes oh ok
    okay hey hi hello wow thanks thank lol haha hahaha um uh hmm well gonna wanna kinda sorta lot lots
    thing things stuff something anything everything one ones much many way even still always never
    ever yet since though although super pretty quite bit sure definitely totally absolutely glad""".split()
)

# Sentence starters and interjections: capitalised only because they open a sentence or a greeting.
NOT_NAMES = STOPWORDS | frozenset(
    """hey hi hello wow thanks thank yeah yes no oh ok okay well so and but the that this it what
    congrats congratulations awesome great cool nice sorry please good love lol omg haha yep nope sure
    wait anyway also maybe hopefully honestly actually really totally absolutely definitely dear
    i i'm i've i'd i'll im ive tv mr mrs ms dr st bye goodbye woohoo woo yay hooray aww aw ah ahh
    hmm wow whoa yup yep perfect exactly right true agreed indeed gosh geez jeez ugh oops huh cheers
    last next this these those my your our his her their its we you they he she anyway btw lmao lmk
    omg rofl xoxo ty thx pls plz ooh oooh oh recently lately finally then now today yesterday tomorrow
    later soon sometimes usually often once twice again still
    sadly luckily unluckily fortunately unfortunately thankfully apparently obviously seriously basically probably
    possibly certainly clearly surely funnily oddly weirdly strangely interestingly annoyingly frankly personally
    ideally naturally admittedly presumably supposedly evidently technically literally hopefully nothing nobody
    everyone everybody someone somebody""".split()
)

MONTHS = (
    "january february march april may june july august september october november december".split()
)
MONTH_ABBR = {m[:3]: i + 1 for i, m in enumerate(MONTHS)} | {"sept": 9}
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
WEEKDAY_ABBR = "mon tue tues wed weds thu thur thurs fri sat sun".split()
CALENDAR_WORDS = frozenset(MONTHS + WEEKDAYS + [d + "s" for d in WEEKDAYS] + list(MONTH_ABBR) + WEEKDAY_ABBR)

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100, "thousand": 1000, "dozen": 12, "a": 1, "an": 1, "couple": 2, "few": 3, "several": 3,
}

EMOTION_WORDS = frozenset(
    """love loved loving hate hated happy happier happiest sad sadder excited exciting thrilled scared
    afraid fear worried worry anxious anxiety angry mad upset grateful thankful proud stressed stress
    devastated heartbroken amazing awesome terrible awful horrible overwhelmed lonely nervous miss
    missed cry cried crying tears joy joyful blessed frustrated frustrating annoyed disappointed
    depressed depression hurt pain painful furious ecstatic delighted relieved hopeful inspired
    inspiring moved touched emotional passionate""".split()
)


def words(text: str) -> list[str]:
    return WORD_RE.findall(text)


def content_words(text: str) -> list[str]:
    """Lower-cased words that carry topic: no stop words, no one-letter tokens."""
    return [w.lower() for w in words(text) if len(w) > 2 and w.lower() not in STOPWORDS and not w[0].isdigit()]


def split_sentences(text: str) -> list[str]:
    parts = (p.strip() for p in _SENT_SPLIT_RE.split(text))
    return [p for p in parts if p and any(c.isalnum() for c in p)]


def fold(text: str) -> str:
    """Case and diacritics folded ("Belém" -> "belem", "MÜLLER" -> "muller"), for comparing only:
    what is shown keeps its own letters."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _edge_punct(c: str) -> bool:
    cat = unicodedata.category(c)
    return (cat[0] in "PZ" or cat in ("Sk", "Sm", "So")) and c not in "&%#@+"


def strip_punct(text: str) -> str:
    """`text` without the punctuation, symbols and spaces at either end ("Seattle!" -> "Seattle",
    "«Belém»" -> "Belém"); inner punctuation stays ("St. Louis", "AT&T")."""
    i, j = 0, len(text)
    while i < j and _edge_punct(text[i]):
        i += 1
    while j > i and _edge_punct(text[j - 1]):
        j -= 1
    return text[i:j]


@lru_cache(maxsize=1 << 16)
def norm_name(name: str) -> str:
    """The key two surface forms share when they name the same thing ("The Louvre's" ~ "louvre",
    "Seattle!" ~ "seattle", "Belém" ~ "belem"): folded case and diacritics, no edge punctuation,
    no possessive, no leading article or possessive pronoun."""
    s = strip_punct(fold(name).replace("’", "'"))
    s = re.sub(r"'s$", "", s)
    s = re.sub(r"^(the|a|an|my|our|his|her|their)\s+", "", s)
    return strip_punct(re.sub(r"\s+", " ", s).strip())


_TOKEN_SPAN_RE = re.compile(r"[^\W\d_][\w'’&\.\-]*|\S")
_TOKEN_MODEL_RE = re.compile(r"[^\W\d_][\w'’&\.\-]*|\d{1,4}[A-Za-z]{0,2}\b|\S")  # digits kept whole: "iPhone 15"
# a product line and its model number are one name: "iPhone 15", "Pixel 7", "Galaxy S23", "Windows 11"
PRODUCT_LINES = frozenset("""pixel galaxy iphone ipad macbook kindle xbox playstation ps switch surface thinkpad
    windows python java ubuntu android ios macos model series version generation gen mark""".split())
_MODEL_NUMBER = re.compile(r"\d{1,4}[A-Za-z]{0,2}")
_CAMEL = re.compile(r"[a-z]{1,2}[A-Z][\w\-]*")  # "iPhone", "eBay"
_CONNECTORS = frozenset({"of", "the", "de", "da", "do", "&"})
TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof", "mx"})
NAME_PREFIXES = frozenset({"st", "mt"})  # "St. Brigid's", "Mt. Hood": part of the name, not a title
# imperatives that open a sentence before a name ("Meet Theo!", "Ask Ben")
OPENING_VERBS = frozenset("""meet ask tell call text thank welcome invite visit congratulate say give send email
    message introduce let help hug wish remind greet""".split())


def _is_cap(tok: str, models: bool = False) -> bool:
    return (tok[:1].isupper() and tok[:1].isalpha()) or (models and bool(_CAMEL.fullmatch(tok)))


@lru_cache(maxsize=1 << 16)
def _clean_tok(tok: str) -> str:
    tok = tok.rstrip(".-")
    return re.sub(r"['’]s$", "", tok)


_TITLE_WORDS = TITLES | NAME_PREFIXES
_NOT_OPENING = NOT_NAMES | CALENDAR_WORDS  # (also no title's name)


@lru_cache(maxsize=65536)
def _spans_cached(text: str, known: frozenset[str], common: frozenset[str], models: bool = False) -> tuple[str, ...]:
    return _spans(text, known, common, models)


# what only follows a person's name: "Margaux and I got engaged", "Jasper, who used to work there",
# "Eunice's grandson set it up" (a word opening a sentence is a name then, though never seen mid-sentence)
_NAMES_SOMEONE = re.compile(r"(?:\s+and\s+(?:I|me)\b|,\s+who\b|['’]s\s+(?:wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?|"
                            r"mum|mom|dad|mother|father|son|daughter|sister|brother|grandson|granddaughter|kids|children)\b)")


def _names_someone(sent: str, span: str) -> bool:
    at = sent.find(span)
    return at >= 0 and _NAMES_SOMEONE.match(sent, at + len(span)) is not None


def _spans(text: str, known: Container[str], common: Container[str], models: bool = False) -> tuple[str, ...]:
    out: list[str] = []
    for sent in split_sentences(text):
        toks = (_TOKEN_MODEL_RE if models else _TOKEN_SPAN_RE).findall(sent)
        i, n = 0, len(toks)
        # The first alphabetic token of the sentence is capitalised by grammar, not by name.
        first_alpha = next((k for k, t in enumerate(toks) if t[:1].isalpha()), -1)
        while i < n:
            tok = toks[i]
            title = None
            if (_clean_tok(tok).lower() in _TITLE_WORDS and i + 1 < n and _is_cap(toks[i + 1])
                    and _clean_tok(toks[i + 1]).lower() not in _NOT_OPENING):
                title = tok  # "Dr. Okafor": the title belongs to the name
                i += 1
                tok = toks[i]
            if not _is_cap(tok, models) or _clean_tok(tok).lower() in NOT_NAMES or _clean_tok(tok).lower() in CALENDAR_WORDS:
                i += 1
                continue
            j = i + 1
            while j < n:
                if _is_cap(toks[j]) and _clean_tok(toks[j]).lower() not in CALENDAR_WORDS and _clean_tok(toks[j]).lower() not in {"i", "i'm"}:
                    j += 1
                elif models and _MODEL_NUMBER.fullmatch(toks[j]) and (_CAMEL.fullmatch(toks[j - 1]) or toks[j - 1].lower() in PRODUCT_LINES):
                    j += 1  # "iPhone 15", "Pixel 7"
                elif (toks[j].lower() in _CONNECTORS and j + 1 < n and _is_cap(toks[j + 1])
                      and _clean_tok(toks[j + 1]).lower() not in NOT_NAMES):
                    j += 2
                else:
                    break
            # inside a name a token keeps its possessive and its period ("Hartley's Pharmacy", "St. Brigid");
            # the last one loses them ("Seattle." -> "Seattle", "Ana's" -> "Ana")
            span_toks = [t if _clean_tok(t).lower() in TITLES else (_clean_tok(t) if k == j - 1 else t.rstrip("-"))
                         for k, t in enumerate(toks[i:j], start=i)]
            while span_toks and span_toks[-1].lower() in _CONNECTORS:
                span_toks.pop()
            initial = i == first_alpha
            # "Bye Ana", "Congrats Ben", "Meet Theo": an opening word glued to a name is not part of it
            if initial and len(span_toks) > 1 and norm_name(span_toks[0]) not in known and (
                    norm_name(" ".join(span_toks[1:])) in known or span_toks[0].lower() in OPENING_VERBS):
                span_toks = span_toks[1:]
                initial = False
            span = " ".join(span_toks)
            if len(span_toks) == 1 and norm_name(span) in common:
                span = ""
            if span and title:
                span, initial = f"{title} {span}", False
            if span and (not initial or j - i > 1 or norm_name(span) in known or _names_someone(sent, span)):
                out.append(span)
            i = j
    return tuple(out)


def capitalised_spans(text: str, known: Container[str] = frozenset(),
                      common: Container[str] = frozenset(), models: bool = False) -> list[str]:
    """Named things: runs of capitalised tokens ("Grand Canyon", "University of Michigan").

    A sentence-initial word counts only when it starts a multi-word run or is a name already known
    (`known` holds normalised names, e.g. the speakers), since grammar capitalises every first word.
    A lone word in `common` (see `common_words`) never counts: "Ensure" opening a list item is not a name.
    `models` (the memory graph's reading): a camel-case word starts a name ("iPhone") and a product line
    keeps its model number ("iPhone 15", "Pixel 7").
    """
    if isinstance(known, frozenset) and isinstance(common, frozenset):
        return list(_spans_cached(text, known, common, models))
    return list(_spans(text, known, common, models))  # live sets (the graph's fold): not cached


_WORD_CASE_RE = re.compile(r"\b[^\W\d_](?:[^\W\d_A-Z]|['’\-])*[^\W\d_A-Z]\b")
COMMON_SHARE = 0.5  # lower-case uses per capitalised use at which a word reads as an ordinary word


def common_words(texts: Iterable[str], share: float = COMMON_SHARE, min_lower: int = 2) -> frozenset[str]:
    """Words a body of text writes in lower case at least `share` times as often as capitalised
    (and at least `min_lower` times): ordinary words that grammar or formatting capitalised.

    Technical prose capitalises every list item and heading ("Ensure the key is set", "Use a pool"),
    so mid-sentence capitals alone do not make a name there. A person's name is almost never written
    in lower case (a first name: 0 of 129 uses in three long conversations we measured); "ensure" is
    lower case in 273 of its 526 uses in two technical conversations. Only words with an initial
    capital and lower case after it are counted, so acronyms ("API") stay names."""
    low: Counter[str] = Counter()
    cap: Counter[str] = Counter()
    for text in texts:
        for w in _WORD_CASE_RE.findall(text):
            (cap if w[0].isupper() else low)[w.lower()] += 1
    return frozenset(w for w, n in low.items() if n >= min_lower and n >= share * cap.get(w, 0) and w in cap)


def numbers_in(text: str) -> list[str]:
    """Digit tokens and number words (not "a"/"an": too common to be a fact)."""
    out = [w for w in words(text) if DIGIT_RE.search(w)]
    out += [w.lower() for w in words(text) if w.lower() in NUMBER_WORDS and w.lower() not in {"a", "an", "few", "couple", "several"}]
    return out


def calendar_words_in(text: str) -> list[str]:
    return [w.lower() for w in words(text) if w.lower() in MONTHS or w.lower() in WEEKDAYS]


def emotion_markers(text: str) -> int:
    """Emotion words, exclamation runs and emoji: a count, not a sentiment."""
    low = [w.lower() for w in words(text)]
    return sum(w in EMOTION_WORDS for w in low) + len(re.findall(r"!+", text)) + len(EMOJI_RE.findall(text))


def parse_number(word: str) -> int | None:
    w = word.lower().strip()
    if w.isdigit():
        return int(w)
    return NUMBER_WORDS.get(w)


def answer_json_text(content: str) -> str:
    """The JSON object in a model's answer, as text: inside a ```json fence if there is one, else
    from its first "{" to its last "}". Raises ValueError when there is none (both LLM extractors,
    `llm_extract` and `llm_assertions`, read their answers with it)."""
    text = content.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    if not text.startswith("{"):
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("no JSON object in the answer")
        text = text[start : end + 1]
    return text

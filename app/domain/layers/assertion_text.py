"""Text helpers of the assertion rules (`app.domain.layers.assertions`): the contractions and elided
subjects the rules read past ("i'm", "Moved to Ghent!"), who "he"/"she" stands for, and what kind
of thing a named tool or product is (`uses:<kind>`). Pure functions, no I/O.
"""
from __future__ import annotations

import re

from app.domain.layers.assertion_grammar import normalise
from app.domain.layers.assertion_rules import RELATION_NOUNS
from app.domain.layers.text import CALENDAR_WORDS, LOWER, NOT_NAMES, STOPWORDS, UPPER
from app.domain.layers.timeparse import find_time_expressions
from app.domain.layers.timewords import MONTHS_AS_NAMES

_UP, _LOW = UPPER, LOWER

# what kind of thing a tool or product is (uses:<kind>)
TOOL_KINDS = {
    "database": "postgres postgresql mysql mariadb sqlite mongodb mongo redis cassandra dynamodb oracle "
                "supabase firebase elasticsearch clickhouse snowflake bigquery cockroachdb",
    "phone": "iphone android pixel galaxy samsung oneplus nokia motorola xiaomi",
    "editor": "vim neovim emacs vscode intellij pycharm sublime atom cursor zed",
    "language": "rust golang java kotlin swift typescript javascript ruby php elixir scala haskell",
    "framework": "django flask fastapi rails react vue angular svelte next.js spring laravel express pytorch "
                 "tensorflow jax keras scikit-learn",
    "os": "linux ubuntu debian fedora windows macos arch",
    "hosting": "aws azure gcp heroku vercel netlify digitalocean fly.io render railway cloudflare",
    "laptop": "macbook thinkpad chromebook surface",
    "bank": "chase monzo revolut starling barclays hsbc santander lloyds natwest citibank n26",
    "car": "tesla prius civic corolla subaru toyota honda ford volkswagen vw volvo bmw audi mazda nissan kia "
           "hyundai jeep fiat renault peugeot skoda",
    "crm": "salesforce hubspot pipedrive zoho",
    "tracker": "jira linear asana trello clickup basecamp",
    "tracking": "wandb mlflow tensorboard neptune",
    "notebook": "jupyter colab",
    "optimizer": "adam adamw sgd rmsprop adagrad adafactor",
    "gpu": "a100 h100 h200 v100 t4 l4 a10 a10g l40s rtx",
    "chat": "slack discord whatsapp telegram mattermost",
    "notes": "notion evernote obsidian onenote",
    "design": "figma",
    "repository": "github gitlab bitbucket",
    "ci": "jenkins circleci travis buildkite",
    "model": "bert roberta distilbert llama mistral mixtral gemma qwen gpt-4 gpt-4o gpt-3.5 t5 resnet yolo whisper",
}
_TOOL_OF = {w: kind for kind, ws in TOOL_KINDS.items() for w in ws.split()}


# names of more than one word, matched whole ("Wells" alone is a town, "server" and "code" are words)
_TOOL_PHRASES = {"github actions": "ci", "gitlab ci": "ci", "github pages": "hosting", "sql server": "database",
                 "vs code": "editor", "wells fargo": "bank"}


def tool_kind(value: str) -> str | None:
    """The kind of a named tool or product ("Postgres" -> "database"), from its first matching word."""
    low = value.lower()
    for phrase, kind in _TOOL_PHRASES.items():
        if low == phrase or low.startswith(phrase + " "):
            return kind
    for w in [low, *low.split()]:
        if w in _TOOL_OF:
            return _TOOL_OF[w]
    return None


_HE_SHE = re.compile(r"\b(?:[Hh]e|[Ss]he)\b")
_ANTECEDENT_RE = re.compile(rf"(?<![\w'’])([{_UP}][{_LOW}]{{2,}})\b")
PLACE_PREP = re.compile(r"\b(?:to|in|at|from|for|of|near|on|into|via|by)\s+$", re.I)
# what makes "she said yes" an engagement: a proposal in the turn or the one before ("I proposed on Sunday and she
# said yes", "Sana said yes 💍"); without one it is a yes to an offer, a booking, a request ("Wiremu said yes, so ...")
PROPOSAL = re.compile(r"(?i)\bpropos(?:e|ed|al|ing)\b|\bpopped\s+the\s+question\b|\bone\s+knee\b|\bengage(?:d|ment)\b|"
                      r"\bmarry\b|\b(?:the|a|her|his|my|engagement)\s+ring\b|💍")  # not "I'll ring you"


def antecedent(text: str, pos: int) -> str | None:
    """Whom "he"/"she" at `pos` stands for: the last capitalised name before it in the text that is
    not a common word or a calendar word and does not follow a preposition (that is a place), unless
    it is a possessive ("at Ayo's"). A name after an earlier "he"/"she" of the same text is that one's
    object ("He's left Lyle, he's freelancing now"): the later pronoun is the earlier one's person."""
    here = re.match(r"\s*(he|his|him|she|her)\b", text[pos:pos + 8], re.I)
    male = here and here.group(1).lower() in ("he", "his", "him")
    # an earlier pronoun of the same gender (or any, when the one asked about is in another turn)
    earlier = [p for p in _HE_SHE.finditer(text, 0, pos) if not here or (p.group(0).lower() == "he") == bool(male)]
    for m in reversed(list(_ANTECEDENT_RE.finditer(text, 0, pos))):
        before = [p for p in earlier if p.start() < m.start()]
        if before:  # the name follows a "he"/"she": it is that one's object, so the pronoun's person is meant
            return antecedent(text, before[-1].start())
        w = m.group(1)
        if w.lower() in NOT_NAMES or w.lower() in CALENDAR_WORDS or w.lower() in STOPWORDS:
            continue
        # the whole name the word ends ("Joyce Pemberton"), and what comes before it
        run = _NAME_BEFORE.search(text, 0, m.start())
        first = run.group(1) if run and run.group(1).lower() not in NOT_NAMES else None
        start = run.start(1) if first else m.start()
        if re.search(r"(?i)\bthe\s+$", text[max(0, start - 4):start]) or text[max(0, start - 1):start] in ('"', "“", "'"):
            continue  # "the Tin Orchard", a title in quotes: a thing, not a person
        if (not first and re.match(r"\s*(?:[!.]|,(?!\s*(?:he|she)\b))", text[m.end():m.end() + 8], re.I)
                and re.search(r"(?:^|[.!?]\s*)$", text[:m.start()])):
            continue  # "Done, I've switched", "Great!", "Lovely.": an opening word, and a vocative is "you", not
            # "he"/"she"; but "Paweł, he teaches PE" names the one the pronoun is
        if first and _ORG_LAST.match(w):
            continue  # "Lyle Capital", "Marlow Dental": an organisation, not a person
        prep = PLACE_PREP.search(text[max(0, start - 8):start])
        if prep and not text.startswith(("'s", "’s"), m.end()):
            if not (first and re.search(r"(?i)\b(?:next\s+to|beside|with|by)\s+$", text[max(0, start - 8):start])):
                continue
        return f"{first} {w}" if first else w
    return None


_ORG_LAST = re.compile(r"(?:Capital|Labs?|Systems|Group|Ltd|Inc|Corp|Bank|Health|Healthcare|Studios?|Partners|Technologies|"
                       r"Tech|Software|Media|Analytics|Consulting|Solutions|Foods|Logistics|Insurance|Agency|Holdings|"
                       r"Industries|Motors|Airlines|Hospital|Clinic|Council|Ventures|Digital|Networks|Energy|Dental|"
                       r"Freight|Couriers|Pharma|Bakery|Hotel|Foundation|Trust|Institute|Services|Design|University|"
                       r"College|School|Academy|Society|Club|Street|Road|Lane|Avenue)$")
_NAME_BEFORE = re.compile(rf"(?<![\w'’])([{_UP}][{_LOW}]{{2,}})\s+$")


_PLURAL = re.compile(rf"\b(?:(?P<rel>[Mm]y|[Oo]ur)\s+(?P<group>parents|kids|children|grandparents|in-laws|neighbou?rs|"
                     rf"cousins|flatmates|roommates)\b|[Tt]he\s+(?P<family>[{_UP}][a-z]{{2,}}s)\b|"
                     rf"(?<![\w'’])(?P<a>[{_UP}][{_LOW}]{{2,}})\s+and\s+(?P<b>[{_UP}][{_LOW}]{{2,}})\b(?!\s+I\b))")


def plural_antecedent(text: str, pos: int, speaker: str) -> list[str]:
    """Whom "they" at `pos` stands for: the last group named before it ("my parents" -> the speaker's
    parents, "the Hendersons", "Tom and Ella" -> both); [] when none."""
    for m in reversed(list(_PLURAL.finditer(text, 0, pos))):
        if m.group("group"):
            return [f"{speaker}'s {m.group('group').lower()}"]
        if m.group("family"):
            return [m.group("family")]
        names = [m.group("a"), m.group("b")]
        if not any(n.lower() in NOT_NAMES or n.lower() in CALENDAR_WORDS for n in names):
            return names
    return []


_SENTENCE_END = re.compile(r"[.!?]+|$")
_QUESTION_START = re.compile(
    r"(?i)^(?:(?:so|and|but|also|wait|ok|okay|hey|oh|well|then)\b[\s,]*)*(?:is|are|was|were|do|does|did|has|have|had|"
    r"can|could|will|would|should|shall|may|might|am|what|where|when|who|whom|whose|which|how|why|any)\b")


def in_question(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is asked rather than said: its sentence ends with a question mark and
    either opens as a question ("Has Beatriz settled in Porto?") or the words are in the clause the
    question mark closes ("So you live in Leeds now?"), not before a tag ("..., is that okay?")."""
    m = _SENTENCE_END.search(text, end)
    if not (m and m.group(0).startswith("?")) or "!" in m.group(0):  # "you got engaged?!" is news, not a question
        return False
    s0 = max((x.end() for x in _SENTENCE_END.finditer(text, 0, start) if x.group(0)), default=0)
    sentence = text[s0:m.start()].strip()
    if _QUESTION_START.match(sentence):
        return True
    if re.match(r"(?i)(?:come|visit|stay|pop)\b", sentence):  # "Come stay with me in Leeds?": an invitation
        return False
    return start >= text.rfind(",", s0, m.start())


CO_SUBJECT = re.compile(rf"\b([{_UP}][{_LOW}]{{2,}})\s+and\s+$")


# "at Ayo's on Saturday" is a place: a name's "'s" after a preposition stays a possessive, as does a saint's
# ("St Anselm's in Redland" is the school there)
_NOT_AFTER_PREP = (r"(?<![\w'])(?<!\bto\s)(?<!\bat\s)(?<!\bby\s)(?<!\bfrom\s)(?<!\bnear\s)(?<!\bround\s)(?<!\bover\s)(?<!\bin\s)"
                   r"(?<!\bSt\s)(?<!\bSt\.\s)(?<!\bSaint\s)")
_CONTRACTIONS = [
    # "Sophie's just started", "he's finally left": "'s" before an adverb and a participle is "has"
    (re.compile(r"\b([A-Za-zÀ-ÖØ-öø-ÿ]+)'s(?=\s+(?:just|finally|already|recently|never|also|since|now|officially)\s+(?:been|got|gotten|had|done|"
                r"moved|left|quit|joined|started|finished|become|decided|taken|found|bought|adopted|split|broken|landed|"
                r"accepted|signed|passed|retired|gone|begun|graduated|switched|changed|married|relocated|resigned)\b)"), r"\1 has"),
    # "my husband's a firefighter", "her daughter's at Kingsmead now": a relation's "'s" before a state is "is"
    (re.compile(rf"\b((?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Yy]our|[Tt]heir)\s+(?:(?:older|younger|little|big|eldest|new)\s+)?(?:{RELATION_NOUNS}))'s"
                r"(?=\s+(?:a|an|at|in|now|still|moving|living|working|studying|married|engaged|single|divorced|retired|"
                r"pregnant|from|based|with|dating|seeing|also|just|finally|starting|off|back|over|doing|teaching)\b)"), r"\1 is"),
    (re.compile(rf"\b((?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Yy]our|[Tt]heir)\s+(?:(?:older|younger|little|big|eldest|new)\s+)?(?:{RELATION_NOUNS}))'s"
                r"(?=\s+(?:been|got|gotten|moved|left|quit|joined|started|finished|become|decided|taken|found)\b)"), r"\1 has"),
    (re.compile(r"\b(I)'m\b"), r"\1 am"),
    (re.compile(r"\b([Ww]e|[Yy]ou|[Tt]hey)'re\b"), r"\1 are"),
    (re.compile(r"\b(I|[Ww]e|[Yy]ou|[Tt]hey)'ve\b"), r"\1 have"),
    (re.compile(r"\b(I|[Ww]e|[Yy]ou|[Tt]hey|[Ss]he|[Hh]e)'ll\b"), r"\1 will"),
    (re.compile(r"\b([Dd]o|[Dd]oes|[Dd]id|[Ii]s|[Aa]re|[Ww]as|[Ww]ere|[Hh]ave|[Hh]as|[Cc]ould|[Ww]ould|[Ss]hould|[Mm]ust)n't\b"), r"\1 not"),
    (re.compile(r"\b([Cc]a)n't\b"), r"\1nnot"),
    # "he's a pharmacist" / "she's been promoted": the pronoun's "'s" is "is" or "has", never a possessive
    (re.compile(r"\b([Hh]e|[Ss]he)'s(?=\s+(?:been|got|gotten|had|done|moved|left|quit|joined|started|finished)\b)"), r"\1 has"),
    (re.compile(r"\b([Hh]e|[Ss]he)'s\b"), r"\1 is"),
    # a name's "'s" before a verb or a state is "is"/"has" ("Leah's moving", "Jon's been at Kessler")
    (re.compile(rf"{_NOT_AFTER_PREP}([{_UP}][{_LOW}]{{2,}})'s(?=\s+(?:been|got|gotten|moved|left|quit|joined|started|finished|"
                r"become|decided|taken|found)\b)"), r"\1 has"),
    (re.compile(rf"{_NOT_AFTER_PREP}([{_UP}][{_LOW}]{{2,}})'s(?=\s+(?:moving|going|living|working|staying|starting|leaving|"
                r"getting|now|still|married|engaged|pregnant|retired|single|divorced|a|an|from|in|at|with|based|finally|"
                r"just|also|currently|officially|no\s+longer|not|studying|teaching|dating|seeing|taking|planning|thinking|hoping|heading|"
                r"flying|joining|switching|expecting|retiring|relocating|emigrating)\b(?!-))"), r"\1 is"),
]

# a second verb of the same first-person subject: "I sold the Corolla and got a Subaru"
_SHARED_I = re.compile(rf"(\b(I|[Ww]e|[Hh]e|[Ss]he|(?<![\w'’])[{_UP}][{_LOW}]{{2,}}(?:\s+[{_UP}][{_LOW}]{{2,}})?(?=\s+(?:has|have|had|just|[a-z]+ed)\b))"
                       r"\s[^.!?;]{0,60}?\s)and\s+(?:now\s+|also\s+|then\s+)?(?=(?:got|bought|moved|started|joined|switched|"
                       r"signed|took|accepted|left|quit|adopted|rented|found|work|live|teach|study|use|became|am|are|"
                       r"play|run|have)\b)")
# "I'm 29 and still living with my parents": the same subject's "-ing" clause after "and"
_SHARED_ING = re.compile(r"(\b(I|[Ww]e)\s(?:(?!\b(?:he|she|they|you|it|He|She|They|You|It)\b)[^.!?;,]){0,60}?\s)and\s+((?:still|now|also|currently)\s+)?(?=(?:living|working|studying|staying|"
                         r"teaching|training|dating|seeing|leasing|buying|getting|selling|renting|adopting)\b)")
# a place or an employer written in lower case in chat ("i moved to leeds"): the word after a strong cue,
# in a message with no capitalised word inside a sentence, is a name
_CUED_LOWER = re.compile(r"\b((?:moved|moving|relocated|relocating)\s+(?:back\s+)?to|(?:live|lives|living|based|settled)\s+in|"
                         r"(?:work|works|working)\s+(?:at|for)|(?:am|is|are)\s+from|(?:start|starts|started|starting)\s+(?:work\s+)?at|"
                         rf"joined|joining|job\s+(?:at|with))\s+([{_LOW}][{_LOW}\-]{{2,}})\b")
_CUED_TOOL = re.compile(r"\b((?:use|uses|using|used|to|from|on|with|into|chose|picked|dropped|ditched))\s+([a-z][a-z\-]{2,})\b")
_ALSO_WORDS = frozenset("""swift rust express spring atom cursor surface render railway arch linear chase ford civic
    pixel galaxy windows oracle java go ruby zed comet model whisper adam""".split())  # tools that are also common words
_MID_CAPITAL = re.compile(rf"[\w,;]\s+(?!I\b)[{_UP}]")
_NOT_LOWER_NAMES = frozenset("""home work school town city country here there the a an my our their his her this that
    it london's uni college office bed abroad downstairs upstairs nights night weekends weekend part full remote""".split())


_ELIDED_I = re.compile(
    r"(^|[.!?:]\s+|[-–—]\s*)((?:Just|Recently|Finally|Also|just|recently|finally|also)\s+)?((?i:lost|started|got|joined|moved|quit|graduated|landed|became|adopted|took up|picked up|began))\b(?!\s+(?:it|that|this|me|you)\b)"
)


# a clause whose "I am" is left out: "Moving to Ghent in May!", "... 😬 moving in with Ama in Leeds"
_ELIDED_ING = re.compile(r"(^|[.!?:;]\s+|[-–—]\s*|[^\w\s,.'’\"()]\s+)((?i:(?:(?:currently|still|now)\s+)?(?:moving|starting|leaving|relocating|heading|joining|switching|"
                         r"temping|freelancing|interning|living|working|staying)))\b(?!\s+(?:it|that|this|me|you|on|up|is|was|can|could|will|would|should|"
                         r"has|had|must|might|may|seems|sounds|makes|made|helps|gives|takes|feels|looks|means|sucks|rocks)\b)")
_ELIDED_BEEN = re.compile(r"(^|[.!?:;]\s+|[-–—]\s*)(?:Been|been|Just\s+been)\b(?=\s+(?:living|working|based|studying|teaching|"
                          r"dating|seeing|married|single|engaged|with|at|in|on)\b)")
_LOWER_I = re.compile(r"(?<![\w'])i(?=\s|'m\b|'ve\b|'ll\b|'d\b)")


def expand(text: str) -> str:
    text = text.replace("’", "'")
    text = _LOWER_I.sub("I", text)  # chat register: "i moved", "i'm"
    text = normalise(text)  # appositions, "'s" perfects, "a firm called X", a favourite said first
    text = _ELIDED_I.sub(lambda m: f"{m.group(1)}I {(m.group(2) or '').lower()}{m.group(3).lower()}", text)
    text = _ELIDED_BEEN.sub(lambda m: f"{m.group(1)}I have been", text)
    text = _ELIDED_ING.sub(lambda m: f"{m.group(1)}I am {m.group(2).lower()}", text)
    for rx, rep in _CONTRACTIONS:
        text = rx.sub(rep, text)
    text = _CUED_TOOL.sub(lambda m: f"{m.group(1)} {m.group(2).capitalize()}" if m.group(2) in _TOOL_OF
                          and m.group(2) not in _ALSO_WORDS else m.group(0), text)
    if not _MID_CAPITAL.search(text):
        text = _CUED_LOWER.sub(lambda m: m.group(0) if m.group(2) in _NOT_LOWER_NAMES or m.group(2) in STOPWORDS
                               or m.group(2) in NOT_NAMES else f"{m.group(1)} {m.group(2).capitalize()}", text)
    text = _SHARED_ING.sub(lambda m: f"{m.group(1)}and {m.group(2)} {'am' if m.group(2) == 'I' else 'are'} {m.group(3) or ''}", text)
    return _SHARED_I.sub(lambda m: f"{m.group(1)}and then {m.group(2)} ", text)


_NEGATIVE_ANSWER = re.compile(
    r"(?i)^\W*(?:no\b|nope\b|nah\b|not\s+(?:any\s*more|really|now)\b|dropped\s+(?:it|that)\b|quit\b|"
    r"gave\s+(?:it|that)\s+up\b|stopped\b|not\s+since\b)")
_WORD = re.compile(r"[^\W\d_]{4,}")


def negative_answer(question: str, answer: str) -> bool:
    """Whether `answer` opens by saying no to the question `question` ends with ("Are you still
    climbing?" - "Not anymore, the club shut down")."""
    return question.rstrip().endswith("?") and bool(_NEGATIVE_ANSWER.match(answer))


def asked_about(question: str, value: str) -> bool:
    """Whether the last sentence of `question` names `value` by one of its words ("the swimming" names
    "swimming", "still climbing" names "climbing club")."""
    last = re.split(r"(?<=[.!?])\s+", question.strip())[-1].lower()
    asked = set(_WORD.findall(last))
    return any(w in asked for w in _WORD.findall(value.lower()) if w not in STOPWORDS)


PRONOUNS = frozenset("it that this you them him her those these everything anything something what how when".split())
VALUE_STOP = re.compile(
    r"\s+(?:and|but|because|since|so|when|while|with|for|after|before|last|next|this|that|now|yesterday|today|"
    r"tomorrow|ago|too|again|anymore|any\s+more|though|which|who|where|if|to|as|at|in|on|by|from|or|like|lately|recently|about|around|every|each|"
    r"since|until|is|was|are|were|has|had|have|it|really|so much|a lot|these days|nowadays|at the moment)\b.*$",
    re.I,
)


def names_a_time(value: str) -> bool:
    """A value that is only a time ("2 November", "Christmas", "Next Saturday", "Thursdays"): no place, organisation,
    school or plan names itself so, whatever the pattern that took it."""
    v = value.strip().strip(".,!?;:\"'’()")  # a name that is also a month ("a cat called May") reads as no time
    if v in MONTHS_AS_NAMES:  # alone, with nothing around it, these are read as names (timewords: said alone in a
        return False  # sentence, as months)
    return any(s == 0 and e >= len(v) - 1 for s, e, _, _ in find_time_expressions(v))


def clean_value(raw: str, kind: str) -> str | None:
    """A matched value trimmed to what names the thing: a proper name where its capitalised run ends, a
    phrase before the words that start a new clause ("hiking with my dad" -> "hiking"); None when
    nothing is left that names anything."""
    v = raw.strip().strip(".,!?;:\"'’()")
    if kind in ("proper", "negated"):
        # stop a proper name where the capitalised run ends; drop a trailing possessive
        v = re.sub(r"(\w{3,})\.\s.*$", r"\1", v)  # a name ends at its sentence's end ("Japan. That"), not at "St."
        v = re.sub(r"(\w['’]s)\.\s.*$", r"\1", v)  # "St. Brigid's. I start": the sentence ends after the possessive
        v = re.sub(r"\b([A-Z]{2})\.\s.*$", r"\1", v)  # an acronym ends a sentence too ("Brightgate IT. Sure")
        v = re.sub(r"['’]s\s+[A-Z]{2,4}\b.*$", "", v)  # the firm, not its officer ("Halvorsen Marine's COO")
        # a name never runs on into a sentence that opens with a pronoun or a determiner ("Brackwater & Co. My colleague")
        v = re.sub(r"\.\s+(?:I|My|Our|We|He|She|They|It|It's|The|This|That|There|But|And|So|Also|Anyway|Then)\b.*$", "", v)
        v = re.sub(r"['’]s$", "", v).rstrip(".")
        if not v or v.lower() in NOT_NAMES or v.lower() in CALENDAR_WORDS or v.lower() in STOPWORDS:
            return None
        return v
    v = VALUE_STOP.sub("", " " + v).strip()
    v = re.sub(r"^(the|a|an|my|our|some)\s+", "", v, flags=re.I).strip(".,!?;:\"' ")
    if not v or v.lower() in PRONOUNS or v.lower() in STOPWORDS:
        return None
    if len(v.split()) > 4:
        return None
    return v


_VOCATIVE = re.compile(rf"^\W*(?:(?:hi|hey|hello|thanks|thank you|ok|okay|so|and|oh|morning|evening)\s+)?([{_UP}][{_LOW}]{{2,}})\s*[,!:]", re.I)


def vocative(text: str) -> str | None:
    """The person a turn opens by addressing ("Sam, Mom called.", "Hi Owen, ..."), if any."""
    m = _VOCATIVE.match(text)
    if not m or m.group(1).lower() in NOT_NAMES or m.group(1).lower() in CALENDAR_WORDS:
        return None
    return m.group(1)

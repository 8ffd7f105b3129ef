"""Grammar the assertion rules read through, as rewrites of the expanded text (`assertion_text.expand`):
forms of English that say the same claim as a form the rule table and the lexicon frames already read.

* a subject in apposition is the name it gives: "His wife, Efua, teaches maths" and "Efua, my
  sister-in-law, teaches maths" -> "Efua teaches maths" (the alias itself is the graph's: `aliases`);
* a participle after "'s" is a perfect: "my daughter's just turned six", "Priya's switched teams" ->
  "has"; a state after it stays "is" ("my son's engaged");
* an employer introduced by its kind: "works for a small firm called Dunmore Build" -> "works for
  Dunmore Build";
* a favourite said first: "Olives are my favourite snack" -> "my favourite snack is Olives".

Each rewrite is general English, not a data set's phrase. Pure functions, no I/O.
"""
from __future__ import annotations

import re

from app.domain.layers.assertion_rules import RELATION_NOUNS
from app.domain.layers.text import LOWER, UPPER

_UP, _LOW = UPPER, LOWER
_NAME = rf"[{_UP}][{_LOW}'\-]+(?:\s+[{_UP}][{_LOW}'\-]+)?"
_POSS = r"(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Yy]our|[Tt]heir)"
_MODS = r"(?:(?:new|older|younger|little|big|eldest|oldest|youngest|best|baby|twin)\s+)?"
_ROLE = rf"(?:{RELATION_NOUNS}|doctor|GP|dentist|therapist|tutor|coach|mentor|adviser|advisor|teacher|supervisor|boss|line\s+manager|neighbou?r|friend)"
# what follows a subject: a lowercase word that is no conjunction ("Efua, my sister, and I" is a list)
_PRED = r"(?=(?!(?:and|or|but|who|whom|whose|which|that|if|so|because|then|too)\b)[a-z])"

# "His wife, Efua, teaches maths" / "my manager (Priyanka) has left": the name
_APPOS_REL_NAME = re.compile(rf"\b{_POSS}\s+{_MODS}{_ROLE}\s*(?:,\s*|\(\s*)(?P<name>{_NAME})\s*(?:,|\))\s+{_PRED}")
# "Efua, my sister-in-law, teaches maths" / "Declan (my husband) works nights": the name
_APPOS_NAME_REL = re.compile(rf"(?<![\w'])(?P<name>{_NAME})\s*(?:,\s*|\(\s*){_POSS}\s+{_MODS}{_ROLE}\s*(?:,|\))\s+{_PRED}")

# a participle after "'s": a perfect ("has"), unless it is a state one is in ("is")
_STATES = ("married|engaged|retired|divorced|separated|widowed|excited|thrilled|delighted|pleased|tired|worried|"
           "based|qualified|interested|involved|obsessed|hooked|scared|stressed|bored|annoyed|exhausted|employed|"
           "unemployed|self-employed|settled|booked|sorted|finished|done|closed|located|supposed|allowed|used|"
           "expected|required|needed|called|named")
_IRREGULAR = ("been|got|gotten|gone|done|had|made|taken|given|begun|become|grown|bought|sold|left|quit|split|"
              "broken|found|met|won|lost|run|set|spent|sent|thrown|written|driven|flown|known|seen|put|cut|"
              "chosen|fallen|stolen|sworn|shown|swum|hung|built|kept|held|paid|told|brought|taught|caught")
_PERFECT_S = re.compile(rf"(?<![\w'])((?:{_POSS}\s+{_MODS}(?:{RELATION_NOUNS}))|[{_UP}][{_LOW}]{{2,}})'s"
                        rf"(?=\s+(?:(?:just|finally|already|recently|never|also|since|now|officially|only|actually)\s+)*"
                        rf"(?!(?:{_STATES})\b)(?:{_IRREGULAR}|[a-z]{{2,}}ed)\b)")

# "a small firm called Dunmore Build": the firm is its name
_KIND_CALLED = re.compile(r"\b(?:a|an)\s+(?:(?:small|big|tiny|huge|new|little|local|young|family|family-run|tech|"
                          r"software|design|law|marketing|consulting|construction|logistics|shipping|recruitment|"
                          r"property|engineering|accounting|architecture|insurance|[a-z]+-based)\s+){0,2}"
                          r"(?:company|firm|startup|start-up|agency|business|consultancy|practice|outfit|"
                          r"organisation|organization|charity|non-?profit|employer|studio|publisher|brand)"
                          rf"\s*,?\s+(?:called|named)\s+(?=[{_UP}])")

# "Olives are my favourite snack" -> "my favourite snack is Olives" (the rule table reads the latter)
_FAV_FIRST = re.compile(rf"(?<![\w'])(?P<val>[{_UP}][\w'\-]*(?:\s+[\w'\-]+){{0,3}}?)\s+(?:is|are|was|has\s+(?:always\s+)?been|have\s+(?:always\s+)?been)"
                        rf"\s+(?:(?:definitely|probably|still|now|easily|honestly|always|officially)\s+)?"
                        rf"(?P<poss>{_POSS})\s+(?P<fav>(?:(?:all-time|absolute|new|current|top)\s+)?(?:favourite|favorite))\s+"
                        r"(?P<what>[a-z]+(?:\s+[a-z]+)?)(?=\s*[.!,;]|\s*$|\s+(?:these|at|of|now|ever|right|by)\b)")
_FAV_NOT = frozenset("it this that what which there here he she they you we i".split())


def _fav(m: re.Match[str]) -> str:
    val = m.group("val")
    if val.split()[0].lower() in _FAV_NOT:
        return m.group(0)
    return f"{m.group('poss')} {m.group('fav')} {m.group('what')} is {val}"


# a relation's or a name's "'s" before a verb's "-ing" is "is" ("my brother's relocating"), not before a noun in "-ing"
_ING_NOUNS = ("wedding|building|painting|meeting|ceiling|clothing|evening|morning|feeling|thing|something|nothing|"
              "anything|everything|ring|king|spring|string|sibling|wing|darling|earring|offspring|christening|"
              "housewarming|leaving|drawing|writing|cooking|singing|funding|booking|hearing|setting|wording|"
              "stuffing|pudding|icing|filling|parking|bedding|landing|ending|beginning|opening|training|"
              "savings|belongings|surroundings|earnings|lodging|dwelling|outing|sibling|understanding|upbringing")
_PROGRESSIVE_S = re.compile(rf"(?<![\w'])((?:{_POSS}\s+{_MODS}(?:{RELATION_NOUNS}))|[{_UP}][{_LOW}]{{2,}})'s"
                            rf"(?=\s+(?:(?:now|still|finally|also|currently|officially|actually)\s+)*(?!(?:{_ING_NOUNS})\b)[a-z]{{3,}}ing\b)")


# a plan's "'s" before its fate: "the barbecue's cancelled", "the party's been called off"
_FATE_S = re.compile(r"\b([a-z]{3,})'s(?=\s+(?:(?:now|officially|definitely|been)\s+)*(?:cancell?ed|off|postponed|called\s+off|"
                     r"scrapped|moved|on\s+hold|rescheduled)\b)")

_BEEN = re.compile(r"(?:\s+(?:now|officially|definitely))*\s+been\b")


def normalise(text: str) -> str:
    """The expanded text with the forms above rewritten to the ones the rules read."""
    text = _APPOS_REL_NAME.sub(lambda m: f"{m.group('name')} ", text)
    text = _APPOS_NAME_REL.sub(lambda m: f"{m.group('name')} ", text)
    text = _PERFECT_S.sub(r"\1 has", text)
    text = _PROGRESSIVE_S.sub(r"\1 is", text)
    text = _FATE_S.sub(lambda m: m.group(1) + (" has" if _BEEN.match(m.string, m.end()) else " is"), text)
    text = _KIND_CALLED.sub("", text)
    return _FAV_FIRST.sub(_fav, text)


_CLAUSE_SUBJECT = re.compile(rf"^\s*(?:(?:and|so|then|now|well|oh|also|plus|apparently)\W+)*(?P<s>(?i:he|she|they)|"
                             rf"{_POSS}\s+{_MODS}(?:{RELATION_NOUNS})|[{_UP}][{_LOW}]{{2,}})\s+[a-z]")
_CLAUSE_END = re.compile(r"[.!?;:]\s")


def clause_subject(text: str, pos: int) -> str | None:
    """The subject of the clause that `pos` is in, when it is someone other than the speaker: "They've
    got a retriever named Sunny" -> "They" (so "a retriever named Sunny" is theirs), "my son has a cat
    called Tig" -> "my son"; None for "I"/"we" or no subject."""
    start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, pos)), default=0)
    m = _CLAUSE_SUBJECT.match(text[start:pos])
    if not m or re.match(r"\s*(?:is|was|are|were)\b", text[start + m.end("s"):pos]):
        return None  # "She's a cockapoo called Nell": the subject is the pet itself
    return m.group("s")

"""More clause frames for the lexicon (`assertion_lexicon`), in its format: verb families it lacked.

* a place at a school offered, won or taken ("I've been offered a place at Trenton University");
* a subject one goes somewhere to study ("she's off to Leeds in September to study law");
* a tool traded for another ("I swapped my Android for an iPhone", "we replaced Trello with Asana");
* an employer one is about to start at, in any mood ("I'm excited to start at Orbit Freight");
* a status a divorce or a wedding states ("my divorce came through", "we tied the knot");
* a move said with where it starts, or up or down the country ("we're moving from Orrinford to Tressick": where
  one is moving and where one lives until then; "he's moving up to Aberdeen"), a home bought or an offer on one
  accepted (where one is moving), a home named by its owner ("at my aunt Rhoswen's in Brynmor": where the owner lives);
* an employer named by the shifts worked there ("I'm on nights at Vordale Infirmary").

Read after the rule table and the lexicon (`assertions.ALL_RULES`), so a specific form wins where both
read the same words. Pure data.
"""
from __future__ import annotations

import re

from app.domain.layers.assertion_lexicon import _AUX, _CHAIN, _ORG, _PLACE, _TEAM, _TO_COME, HOBBY_NOUNS, OCC, ORG_HEADS, VENUES
from app.domain.layers.assertion_rules import ACTIVITIES, PETS, PROPER, RELATION_NOUNS, SUBJECT, TOOL
from app.domain.layers.assertion_text import clean_value, in_question
from app.domain.layers.text import LOWER, UPPER

_UPW, _LOW = UPPER, LOWER  # capitals and small letters, Latin-1 and beyond

# the kind of plan a party or a trip of another name is (`plan:<kind>`)
PLAN_KIND = {"vacation": "trip", "holiday": "trip", "getaway": "trip", "road trip": "trip", "camping trip": "trip",
              "visit": "trip", "cruise": "trip", "honeymoon": "trip", "bbq": "barbecue",
              "birthday party": "party", "surprise party": "party", "dinner party": "party", "garden party": "party",
              "house party": "party", "leaving party": "party", "engagement party": "party", "housewarming party": "party",
              "housewarming": "party", **dict.fromkeys(("leaving do", "hen do", "stag do", "hen party", "stag party", "retirement party",
                                                         "anniversary party", "baby shower", "leaving drinks"), "party")}
_MOOD = rf"{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*"

FORMS: list[tuple[str, str, str]] = [
    ("school", rf"{SUBJECT}{_CHAIN}\s+(?:been\s+offered|was\s+offered|were\s+offered|got|accepted|took\s+up|taken\s+up|won|"
               rf"secured|landed|have|has)\s+(?:a|her|his|my|their|our)\s+(?:university\s+|college\s+)?place\s+(?:at|with)\s+"
               rf"(?!(?:[{_UPW}][\w'’&\.\-]*\s+){{0,4}}(?:{VENUES})\b){_PLACE}", "place"),
    ("studies", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is|was|were|going|off|heading|went|go|goes|moving|moved|left|leaving)\b"
                rf"[^.!?,;]{{0,50}}?\bto\s+(?:study|read|train\s+in|do\s+(?:a\s+|an\s+)?(?:degree|masters|PhD|BA|BSc|MA|MSc)\s+in)\s+"
                r"(?P<val>[a-z]+(?:\s+[a-z]+)?)", "subject"),
    ("uses:{what}", rf"{SUBJECT}{_CHAIN}\s+(?:swapped|swapping|swap|traded|trading|trade|exchanged|replaced|replacing|ditched|"
                    rf"dropped)\s+(?:(?:my|our|the|a|an|his|her|their)\s+)?(?:old\s+)?{TOOL}\s+(?:for|with)\s+(?:(?:a|an|the)\s+)?"
                    rf"(?:new\s+|shiny\s+)?(?P<val>{TOOL})", "tool"),
    ("works_at", rf"{SUBJECT}{_MOOD}\s+(?:start|begin|starting|beginning)\s+(?:work\s+|working\s+|my\s+(?:new\s+)?job\s+)?at\s+"
                 rf"(?!(?:the\s+)?(?:[{_UPW}][\w'’&\.\-]*\s+){{0,4}}(?:{VENUES})\b){_ORG}(?![\w'’&\.\-])", "org"),
    ("relationship_status", r"\b(?P<subj>[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir)\s+divorce\s+(?:has\s+)?(?:finally\s+)?"
                            r"(?:came\s+through|come\s+through|went\s+through|gone\s+through|is\s+final|was\s+finali[sz]ed|"
                            r"is\s+finali[sz]ed|(?:has\s+)?been\s+finali[sz]ed)\b(?P<val>)", "divorced"),
    ("relationship_status", rf"{SUBJECT}{_CHAIN}\s+(?:tied\s+the\s+knot|got\s+hitched|said\s+(?:our|their)\s+vows)\b(?P<val>)", "married"),
]

# departments and teams said by their function: "Mei works in HR", "I'm in accounts now"
DEPARTMENTS = ("HR|IT|finance|marketing|sales|accounts|accounting|admin|administration|operations|ops|logistics|"
               "procurement|payroll|legal|compliance|engineering|product|design|research|R&D|customer\\s+service|"
               "customer\\s+support|tech\\s+support|support|recruitment|recruiting|communications|comms|PR|reception|"
               "A&E|ICU|ER|paediatrics|pediatrics|oncology|cardiology|radiology|maternity|theatres|outpatients|"
               "pharmacy|housekeeping|facilities|security|quality|QA|analytics|data|infrastructure|infra|IT\\s+support|"
               "the\\s+kitchen|front\\s+of\\s+house|the\\s+warehouse|dispatch|distribution|purchasing|buying|"
               "merchandising|editorial|production|post-production|investor\\s+relations|treasury|audit|tax|risk")
FORMS += [
    ("works_in", rf"{SUBJECT}{_CHAIN}\s+(?:work|works|working|worked|am|are|is|started|start|starting|moved|transferred|"
                 rf"switched|been\s+moved|been\s+transferred)\s+(?:over\s+)?(?:in|into|to)\s+(?P<val>(?-i:{DEPARTMENTS}))"
                 r"(?![\w'’&\-])(?!\s+(?:at|on)\s+(?:the\s+)?(?:weekend|night|Monday|Tuesday|Wednesday|Thursday|Friday)\b)"
                 r"(?=\s*[.!,;]|\s*$|\s+(?:now|these\s+days|at|for|since|from|as|team|department|and|but|full[- ]time|part[- ]time)\b)",
     "team"),
    # a dislike said as a liking denied: "I've never liked cricket", "I don't really enjoy opera"
    ("opinion:{val}", r"\b(?P<subj>I)\b(?:\s+(?:have|had|do|did|honestly|really|just|actually))*\s+(?:never|not|no\s+longer)\s+"
                      r"(?:really\s+|much\s+|particularly\s+|ever\s+)?(?:liked|loved|enjoyed|like|love|enjoy|cared\s+for|been\s+(?:into|a\s+fan\s+of))\s+"
                      r"(?!(?:it|that|this|them|him|her|you|the\s+way|the\s+idea|how|what|when|where|being|having|to)\b)"
                      r"(?P<val>[\w'’\-]+(?:\s+[\w'’\-]+){0,3})", "opinion_neg"),
    # a visit to someone somewhere, to come: "we're visiting my parents in Cork at Easter"
    ("plan:trip", rf"{SUBJECT}{_MOOD}\s+(?:visiting|visit|seeing|see|staying\s+with|stay\s+with|going\s+to\s+see)\s+"
                  rf"(?:my|our|his|her|their)\s+(?:[a-z\-]+\s+){{0,2}}?(?:{'|'.join(('parents','mum','mom','dad','family','sister','brother','grandparents','grandma','grandpa','gran','nan','aunt','uncle','cousins?','in-laws','daughter','son','kids','friends?'))})\s+"
                  rf"(?:(?:out|over|up|down|back)\s+)?in\s+{_PLACE}(?=[^.!?]*\b(?:in|next|this|on|for|over|at|weekend|week|month|summer|winter|spring|autumn|fall|Christmas|Easter|soon)\b)", "place"),
]

_WHO = rf"(?P<subj>I|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|[{_UPW}][{_LOW}]{{2,}}|(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er)\s+[a-z\-]+)"
_NAMED = rf"(?P<val>[{_UPW}][\w'’&\.\-]*(?:\s+(?:of\s+|&\s+)?[{_UPW}][\w'’&\.\-]*){{0,4}})"
FORMS += [
    # a relative clause says what the name is to someone: "Corbin Logistics, where he works", "Leeds, where we live"
    ("works_at", rf"(?<![\w'’]){_NAMED},?\s+where\s+{_WHO}(?:\s+(?:now|still|currently|also))?\s+(?:works?|is\s+working|has\s+worked|"
                 r"(?:has|have)\s+been\s+working|am\s+working|are\s+working)\b(?!\s+(?:out|on|from\s+home)\b)", "proper"),
    ("lives_in", rf"(?<![\w'’]){_NAMED},?\s+where\s+{_WHO}(?:\s+(?:now|still|currently|also))?\s+(?:lives?|is\s+living|am\s+living|"
                 r"are\s+living|(?:has|have)\s+(?:been\s+living|lived)|(?:am|are|is)\s+based)\b", "place"),
    ("school", rf"(?<![\w'’]){_NAMED},?\s+where\s+{_WHO}(?:\s+(?:now|still|currently|also))?\s+(?:study|studies|is\s+studying|am\s+studying|"
               r"are\s+studying)\b", "place"),
    # a noun in apposition names what it is: "my university, Danford Tech", "our gym, Ironside"
    ("school", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+|old\s+)?(?:university|uni|college|school)\s*(?:,|\()\s*(?:the\s+)?{_NAMED}(?=\s*[,.!?;)]|\s*$)", "place"),
    ("works_at", rf"\b(?P<subj>[Mm]y)\s+(?:new\s+)?(?:employer|company|firm|workplace)\s*(?:,|\()\s*(?:the\s+)?{_NAMED}(?=\s*[,.!?;)]|\s*$)", "proper"),
    ("member_of", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+|local\s+)?(?:gym|club|choir|band|team|society|book\s+club)\s*(?:,|\()\s*(?:the\s+)?{_NAMED}(?=\s*[,.!?;)]|\s*$)", "proper"),
    # work verbs of a trade or a placement: "I'm going to intern at Pellucid AI", "she temps for Harwood"
    ("works_at", rf"{SUBJECT}{_MOOD}\s+(?:intern|interns|interned|interning|temp|temps|temped|temping|volunteer|volunteers|"
                 rf"freelance|freelances|consult|consults|train|trains|apprentice)\s+(?:at|for|with)\s+{_ORG}(?![\w'’&\.\-])", "org"),
    ("job_title", rf"{SUBJECT}{_MOOD}\s+(?P<val>intern|temp)\s+(?:at|for|with)\s+[{_UPW}]", "title"),
    # a car got or given up: "we're leasing a Tesla", "I'm selling the old Corolla"
    ("uses:car", rf"{SUBJECT}{_MOOD}\s+(?:leasing|lease|leased|buying|buy|bought|financing|getting|got|picked\s+up|pick\s+up)\s+"
                 rf"(?:a|an|the|my|our)\s+(?:new\s+|used\s+|second-?hand\s+|secondhand\s+|electric\s+)?(?P<val>{TOOL})", "tool"),
    # one being sold is still had (the new one ends it); one sold is gone
    ("uses:car", rf"{SUBJECT}{_MOOD}\s+(?:selling|sell|scrapping|scrap|trading\s+in|part-exchanging)\s+(?:the|my|our)\s+(?:old\s+)?(?P<val>{TOOL})", "tool"),
    ("uses:car", rf"{SUBJECT}{_CHAIN}\s+(?:sold|scrapped|traded\s+in|part-exchanged|got\s+rid\s+of)\s+(?:the|my|our)\s+(?:old\s+)?(?P<val>{TOOL})", "tool_negated"),
]

FORMS += [
    # a subject of study switched to, done: "I've switched to politics", "she changed over to law"
    ("studies", rf"{SUBJECT}{_CHAIN}\s+(?:switched|changed|moved|transferred|swapped)\s+(?:(?:my\s+(?:major|degree|course|subject)\s+)?"
                r"(?:over\s+)?to|over\s+to)\s+(?P<val>[a-z]+(?:\s+[a-z]+)?)(?=\s*[.!,;]|\s*$|\s+(?:now|instead|this|from|after|at|in|and)\b)", "subject"),
    # where one is, in a team: "you'll be in the billing team", "she's on the night team now"
    ("works_in", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is|be)(?:\s+(?:now|still|currently|initially|first))*\s+(?:in|on|with)\s+{_TEAM}", "team"),
    # a welcome names what one joins: "Welcome to Halcyon Health, Omar", "welcome to the Riverside Choir, Pat!"
    ("works_at", rf"\b[Ww]elcome\s+(?:aboard\s+)?to\s+(?:the\s+)?(?P<val>(?:[{_UPW}][\w'’&\.\-]*\s+){{0,3}}(?:{ORG_HEADS}|Society|Club|Choir|"
                 rf"Band|Orchestra|Association|Union|League|Team|University|College|School|Academy))\s*,\s+(?P<subj>[{_UPW}][{_LOW}]{{2,}})\b", "org"),
]

FORMS += [
    # a home found or secured somewhere is where one is moving: "we've found a place in Wells", "we got the flat on Mossop Street"
    ("moving_to", rf"{SUBJECT}{_CHAIN}\s+(?:found|secured|got|signed\s+for|put\s+(?:an\s+)?offer\s+on)\s+(?:a|an|our|the)\s+(?:[a-z\-]+\s+){{0,2}}?"
                  rf"(?:place|flat|house|home|apartment|cottage|room|terrace|bungalow)\s+(?:in|near|on)\s+{_PLACE}", "place"),
    # a hobby denied: "I'm not doing pottery any more", "we don't play squash now"
    ("hobby", rf"{SUBJECT}{_CHAIN}\s+(?:not|no\s+longer|never)\s+(?:really\s+)?(?:doing|playing|do|play|going\s+to)\s+(?:any\s+)?"
              rf"(?P<val>{HOBBY_NOUNS}|{ACTIVITIES})\b(?=[^.!?]*\b(?:any\s*more|now|these\s+days|since)\b|\s*[.!,;]|\s*$)", "hobby_negated"),
]

FORMS += [
    # a student of a subject: "I'm a second-year chemistry student", "she's a history undergrad at Rowan"
    ("studies", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is|was|were)(?:\s+(?:now|still|currently|also))*\s+(?:a|an)\s+"
                r"(?:(?:first|second|third|fourth|final|[a-z]+)-year\s+|mature\s+|part-time\s+|full-time\s+|postgrad(?:uate)?\s+|"
                r"PhD\s+|masters\s+|graduate\s+)?(?P<val>[a-z]+(?:\s+[a-z]+)?)\s+(?:student|undergrad|undergraduate|major|postgrad|"
                r"PhD\s+student|researcher|graduate)\b", "subject"),
]

# likings in any tense, with the adverbs people put before them
_ADVS = (r"(?:\s+(?:really|absolutely|just|truly|quite|totally|honestly|genuinely|actually|still|also|do|did|always|so|"
         r"properly|secretly|kind\s+of|sort\s+of|definitely|thoroughly|particularly|both|all|completely|utterly|"
         r"massively|seriously|have|had|am|was|have\s+always|now))*")
_NOUN = (r"(?!(?:it|that|this|them|him|her|you|your|our|me|us|to|the\s+way|the\s+fact|the\s+idea|the\s+sound|the\s+look|"
         r"the\s+thought|how|what|when|why|where|being|having|"
         r"getting|doing|going|seeing|making|a\s+lot|every\s+minute|every\s+second|each)\b)(?P<val>[\w'’\-]+(?:\s+[\w'’\-]+){0,4})")
FORMS += [
    ("opinion:{val}", rf"\b(?P<subj>I)\b{_ADVS}\s+(?:loved|liked|enjoyed|adored|love|like|enjoy|adore|(?:am|was)\s+(?:loving|enjoying)|"
                      r"(?:am|was)\s+(?:a\s+)?(?:big|huge|massive|real|great|total|die-hard|devoted|lifelong|long-time)?\s*fan\s+of|"
                      r"(?:am|was)\s+(?:getting\s+)?(?:really\s+|so\s+)?into|(?:can|could)\s*not\s+get\s+enough\s+of|"
                      r"(?:am|was)\s+(?:a\s+)?sucker\s+for|(?:have|had)\s+a\s+soft\s+spot\s+for|(?:am|was)\s+partial\s+to|"
                      rf"(?:could|can)\s*not\s+put\s+down|(?:am|was)\s+(?:hooked|obsessed)\s+on)\s+{_NOUN}", "opinion_pos"),
    ("opinion:{val}", rf"\b(?P<subj>I)\b{_ADVS}\s+(?:(?:did|do)\s+not|never)\s+(?:really\s+|much\s+|particularly\s+|ever\s+)?"
                      r"(?:like|enjoy|love|care\s+for|get\s+on\s+with|rate|get\s+into)\s+" + _NOUN, "opinion_neg"),
    ("opinion:{val}", rf"\b(?P<subj>I)\b{_ADVS}\s+(?:hated|disliked|loathed|detested|(?:could|can)\s*not\s+(?:stand|bear|get\s+into|finish))\s+{_NOUN}",
     "opinion_neg"),
    ("opinion:{val}", rf"\b(?P<subj>I)\s+(?:found|find|thought|think)\s+(?P<val>(?:the\s+)?[{_UPW}][\w'’\-]*(?:\s+[{_UPW}][\w'’\-]*){{0,3}})\s+"
                      r"(?:(?:is|was|are|were)\s+)?(?:a\s+bit\s+(?:of\s+)?|so\s+|really\s+|pretty\s+|very\s+|massively\s+|totally\s+|quite\s+)?"
                      r"(?:overrated|boring|dull|tedious|a\s+slog|hard\s+going|awful|terrible|rubbish|dreadful|disappointing|a\s+letdown|"
                      r"pretentious|unreadable)\b", "opinion_neg"),
    ("opinion:{val}", rf"\b(?P<subj>I)\s+(?:found|find|thought|think)\s+(?P<val>(?:the\s+)?[{_UPW}][\w'’\-]*(?:\s+[{_UPW}][\w'’\-]*){{0,3}})\s+"
                      r"(?:(?:is|was|are|were)\s+)?(?:so\s+|really\s+|pretty\s+|very\s+|absolutely\s+|just\s+)?"
                      r"(?:brilliant|amazing|wonderful|fantastic|beautiful|gorgeous|superb|excellent|a\s+joy|a\s+masterpiece|"
                      r"gripping|unputdownable|hilarious|moving)\b", "opinion_pos"),
    ("opinion:{val}", r"(?:^|(?<=[.!?;:,]\s)|(?<=[.!?;:,]))\s*(?P<subj>)(?P<val>[A-Za-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2})"
                      r"(?:['’]s\s+|\s+(?:has|have|is|are)\s+)?(?:never|not)\s+(?:really\s+)?(?:been\s+)?(?:my\s+thing|for\s+me|my\s+cup\s+of\s+tea)\b",
     "opinion_neg"),
    ("favourite:{what}", r"\b(?P<subj>[Mm]y)\s+(?:all-time\s+|absolute\s+)?(?:favourite|favorite)\s+(?P<what>[a-z]+)\s+of\s+all\s+time\s+is\s+"
                         rf"(?P<val>[{_UPW}][\w'’\-]*(?:\s+[{_UPW}][\w'’\-]*){{0,3}})", "proper"),
]

FORMS += [
    # left by someone: "Dee dumped me", "he's left me" (the speaker is single)
    ("relationship_status", rf"(?<![\w'’])(?:[{_UPW}][{_LOW}]{{2,}}|[Hh]e|[Ss]he)(?:\s+(?:has|just|finally))*\s+(?:dumped|left|ditched|"
                            r"broke\s+up\s+with|split\s+up\s+with|walked\s+out\s+on|cheated\s+on)\s+me\b(?P<subj>)(?P<val>)", "breakup"),
    # a title said after where one works: "I've been at Fenwick Hall for six years as the head chef"
    ("job_title", rf"{SUBJECT}{_CHAIN}\s+(?:been|am|are|is|was|were|started|joined|join|joining|work|works|worked|working|moved|moving|"
                  r"gone|went|going|back)\s+(?:at|with|for|to)\s+[^.!?,;]{1,50}?\s+as\s+(?:(?:the|a|an)\s+)?(?!(?:our|their|its|my|your)\b)(?:new\s+)?"
                  r"(?P<val>[a-z\-]+(?:\s+[a-z\-]+){0,2})(?![\w'’])", "title"),
]


FORMS += [
    # speaking in one's capacity: "As a pharmacist, I'd say no", "Speaking as a nurse, I ..."
    ("job_title", rf"(?:^|(?<=[.!?]\s))\s*(?:[Ss]peaking\s+|[Jj]ust\s+|[Ww]ell,?\s+)?(?:[Aa]s)\s+(?:a|an)\s+"
                  rf"(?P<val>(?:[a-z\-]+\s+){{0,2}}(?:{OCC}))\s*,\s+(?P<subj>I|[Ww]e)\b", "occupation"),
    # a department one is from: "I'm Rosa from accounts", "Jen from marketing is leaving"
    ("works_in", rf"(?:\b(?P<subj>I)\s+am\s+[{_UPW}][{_LOW}]+|(?<![\w'’])(?P<subj2>[{_UPW}][{_LOW}]{{2,}}))\s+(?:here\s+)?from\s+"
                 rf"(?:the\s+)?(?P<val>(?-i:{DEPARTMENTS}))(?:\s+(?:team|department|dept))?\b(?![\w'’&\-])", "team"),
]


_COUNTED = r"(?:a|an|one|two|three|four|five|six)\s+(?:[a-z\-]+\s+){0,2}?"
FORMS += [
    # one's whole household moved: "we've relocated the whole family to Cork"
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+(?:moved|relocated)\s+(?:the\s+(?:whole\s+)?(?:family|kids|household)|everyone|us|ourselves)\s+"
                 rf"(?:(?:back|over|out)\s+)?to\s+{_PLACE}", "place"),
    # work kept up to now: "I've worked at Nettle & Co since 2015", "she has been working for Orly for years"
    ("works_at", rf"{SUBJECT}\s+(?:have|has)(?:\s+(?:now|also|always|actually))*\s+(?:been\s+working|worked)\s+(?:at|for|with)\s+{_ORG}"
                 r"(?![\w'’&\.\-])", "org"),
    # the second pet of a list: "we have a cat and two guinea pigs"
    ("has_pet", rf"{SUBJECT}{_CHAIN}\s+(?:have|has|got|adopted|rescued|own|owns)\s+{_COUNTED}(?:{PETS})(?:s|es)?\s*(?:,\s*(?:and\s+)?|\s+and\s+)"
                rf"{_COUNTED}(?P<val>{PETS})(?:s|es)?\b", "common"),
]


_MOVE_FROM = rf"from\s+(?:{PROPER})\s+(?:(?:up|down|over|out|across|back)\s+)?to\s+"
FORMS += [
    # a move said with where it starts: "we're moving from Orrinford to Tressick", "I'm moving from Leith up to Perth"
    # (where one is moving, and where one lives until then)
    ("moving_to", rf"{SUBJECT}{_MOOD}\s+(?:moving|move|relocating|relocate)\s+{_MOVE_FROM}{_PLACE}", "place"),
    ("lives_in", rf"{SUBJECT}{_MOOD}\s+(?:moving|move|relocating|relocate)\s+from\s+{_PLACE}\s+(?:(?:up|down|over|out|across|back)\s+)?to\s+[{_UPW}]", "place"),
    # a move up or down the country: "he's moving up to Aberdeen", "I move down to Exeter on the 20th"
    ("moving_to", rf"{SUBJECT}{_MOOD}\s+(?:moving|move|relocating)\s+(?:up|down|across)\s+to\s+{_PLACE}", "place"),
]

_KIN_TITLE = r"(?:Aunt|Auntie|Aunty|Uncle|Gran|Granny|Grandma|Grandpa|Nan|Nana|Nanna|Cousin)"
FORMS += [
    # one's home named by its owner, visited: "off to my cousin Ilka's in Brynmor", "Christmas at Aunt Rhoswen's in
    # Lowenna Vale", "back at my mum's in Cwm Tawel" (whose home it is lives there; a shop's name is none of these)
    ("lives_in", rf"\b(?:to|at|from)\s+(?:(?:(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir|[Yy]our)\s+(?:{RELATION_NOUNS})\s+|{_KIN_TITLE}\s+)"
                 rf"(?P<subj>[{_UPW}][{_LOW}]{{2,}})|(?P<subj2>(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Yy]our)\s+(?:{RELATION_NOUNS})))"
                 rf"(?:'s|’s|\s+is)\s+(?:(?:place|house|flat|home|cottage|farm)\s+)?in\s+{_PLACE}", "place"),
]

FORMS += [
    # shifts worked somewhere are where one works: "he's moved onto day shifts at Vordale Infirmary", "she's a nurse
    # on nights at the Royal Kelvane", "I'm doing days at Penmorrow Clinic"
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:[\w\-]+\s+){{0,4}}?shifts?\s+at\s+(?:the\s+)?{_NAMED}(?![\w'’&\.\-])", "proper"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:(?:a|an)\s+[a-z\-]+\s+)?(?:on|doing|working|work|works|finishes|finishing)\s+"
                 rf"(?:days|nights|weekends|Saturdays|Sundays)\s+at\s+(?:the\s+)?{_NAMED}(?![\w'’&\.\-])", "proper"),
]

FORMS += [
    # a home being bought, or an offer on one accepted, is where one is moving: "we're buying a flat in Drelby", "we've had
    # an offer accepted on a little terrace in Tressick"; one bought is too when the move is still to come ("we've
    # bought a house in Orrinford and move in June"; without one it is where one lives: `assertion_rules`)
    ("moving_to", rf"{SUBJECT}{_CHAIN}\s+(?:buying|buy|(?:had|got)\s+(?:an\s+|our\s+)?offer\s+accepted\s+on|bought(?=[^.!?]*[.!?]?[^.!?]*"
                  r"\b(?:move|moving|keys|complete|completion)\b))\s+(?:a|an|our|my|their)\s+"
                  r"(?:[a-z\-]+\s+){0,2}?(?:house|flat|home|apartment|place|condo|cottage|bungalow|terrace|semi|maisonette)\s+"
                  rf"(?:(?:over|out|up|down)\s+)?(?:in|on)\s+{_PLACE}", "place"),
]

# "what's your favourite band?" - "mine's Elbow": the answer names the favourite the question asked for
FAVOURITE_ASKED = re.compile(r"(?i)(?:\b(?:your|ur)\s+|^\W*|[.!?]\s+)(?:all-time\s+|absolute\s+)?(?:favourite|favorite|fave)\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\b[^.!?]*\?")
FAVOURITE_MINE = re.compile(r"(?<![\w'’])(?:[Mm]ine|[Mm]y\s+(?:favourite|favorite|fave))(?:\s+(?:is|has\s+to\s+be|would\s+be)|'s)\s+"
                            rf"(?:(?:probably|definitely|easily|still|always)\s+)?(?:the\s+)?(?P<val>[{_UPW}][\w'’&\-]*(?:\s+[{_UPW}][\w'’&\-]*){{0,3}})")

FORM_RULES: list[tuple[str, re.Pattern[str], str]] = [(a, re.compile(p), k) for a, p, k in FORMS]


def favourite_answer(text: str, context: str, speaker: str, found: list) -> list:
    """The favourite a reply names when the question before it (in the same text or the turn before)
    asked for one: "What's your favourite band?" - "Mine's Elbow" -> (speaker, favourite:band, Elbow)."""
    mine = FAVOURITE_MINE.search(text)
    asked = mine and (FAVOURITE_ASKED.search(text, 0, mine.start()) or FAVOURITE_ASKED.search(context))
    if not mine or not asked or in_question(text, mine.start(), mine.end()):
        return []
    value = clean_value(mine.group("val"), "proper")
    attr = f"favourite:{asked.group('what').lower().split()[-1]}"
    if not value or any(f[2] == attr for f in found):
        return []
    return [(mine.start(), speaker, attr, value, mine.group(0), False, mine.end())]


# a provider one is with, named where a service is talked about: "we're with Skyline Fibre" (broadband)
_SERVICE_NOUNS = {"broadband": "broadband", "internet": "broadband", "wifi": "broadband", "wi-fi": "broadband",
                  "fibre": "broadband", "energy": "energy", "electricity": "energy", "gas": "energy",
                  "insurance": "insurer", "insurer": "insurer", "mobile": "phone", "network": "phone", "sim": "phone",
                  "bank": "bank", "current account": "bank", "mortgage": "lender", "lender": "lender", "pension": "pension",
                  "vet": "vet", "vets": "vet", "dentist": "dentist", "GP": "gp", "surgery": "gp"}
_SERVICE_RE = re.compile(r"\b(" + "|".join(sorted(_SERVICE_NOUNS, key=len, reverse=True)) + r")\b", re.I)
_WITH_PROVIDER = re.compile(rf"\b(?P<subj>I|[Ww]e)\s+(?:(?:am|are|have|has|had|just|now|still|currently|finally|been)\s+)*"
                            rf"(?:with|on|signed\s+up\s+(?:with|to)|registered\s+with|switched(?:\s+over)?\s+to|moved\s+over\s+to|"
                            rf"changed\s+to|gone\s+with|went\s+with|going\s+with|joined)\s+(?:the\s+)?(?P<val>[{_UPW}][\w'’&\.\-]*"
                            rf"(?:\s+[{_UPW}][\w'’&\.\-]*){{0,3}})")


def provider_claims(text: str, context: str, speaker: str, found: list) -> list:
    """`found` with a provider the speaker is with (or has signed up with) where the event or the turn
    before talks about a service (broadband, energy, insurance, a bank, a vet): uses:<service>, in place
    of an employer read from the same words ("we're with Skyline Fibre" is no job)."""
    service = _SERVICE_RE.search(text) or _SERVICE_RE.search(context)
    if not service:
        return found
    kind = _SERVICE_NOUNS.get(service.group(1)) or _SERVICE_NOUNS.get(service.group(1).lower())
    out = list(found)
    for m in _WITH_PROVIDER.finditer(text):
        value = clean_value(m.group("val"), "proper")
        if not value or in_question(text, m.start(), m.end()) or value.lower() == service.group(1).lower():
            continue
        out = [f for f in out if not (f[2] in ("works_at", "member_of") and f[3] == value)]
        if not any(f[2] == f"uses:{kind}" and f[3] == value for f in out):
            out.append((m.start(), speaker, f"uses:{kind}", value, m.group(0), False, m.end()))
    return out

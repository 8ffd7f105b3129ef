"""Verb and noun lexicons per attribute, compiled into clause frames: the rules' general layer.

The rule table (`assertion_rules.RULES`) holds one pattern per English form; this module holds words.
A frame is a clause read left to right: a subject (I, we, my sister, a name, he/she), a chain of
auxiliaries and adverbs ("have now", "'ve finally", "will be"), an optional negation ("not",
"no longer"), the mood the chain sets (done or stated; to come: "going to", "thinking of", "about
to"), then a verb or noun phrase from an attribute's lexicon and the value it governs (a place, an
organisation, an occupation, a team, a subject of study, a thing liked or disliked). The mood picks
the attribute where a verb serves two ("we moved to Lyon" is where one lives, "we're thinking of
moving to Lyon" where one is moving), the value's own head noun picks it where a name serves
several ("joining Harbour Choir" is a membership, "joining Kestrel University" a school, "joining
Tern Labs" an employer: `assertion_values.typed_attribute`; the frames' value kinds are read there too).

The frames come after every pattern of the rule table, so a specific pattern wins where both read the
same words (`assertions.extract_assertions` keeps one claim per span, attribute and entity). Words are
general English, chosen per attribute, not taken from any data set. Pure data and pure functions.
"""
from __future__ import annotations

import re

from app.domain.layers.assertion_rules import _NUMW, ACTIVITIES, OCCUPATIONS, PETS, PLAN_KINDS, PROPER, RELATION_NOUNS, SUBJECT, TOOL
from app.domain.layers.text import LOWER, UPPER

_UP, _LOW = UPPER, LOWER
# auxiliaries and adverbs between a subject and its verb: "I have now", "we are finally", "she will be"
_AUX = ("am|are|is|was|were|have|has|had|will|would|be|been|being|do|does|did|now|just|finally|recently|actually|"
        "also|officially|already|eventually|happily|still|currently|really|only|even|then|both|all|literally|"
        "honestly|definitely|probably|originally|permanently|properly|gladly|proudly|somehow|since|got|get|gets|getting")
_CHAIN = rf"(?:\s+(?:{_AUX}))*"
_NEG = rf"{_CHAIN}\s+(?:not|never|no\s+longer)(?:\s+(?:{_AUX}|really|even))*"
# a mood of things to come: a plan, an intention, a thought
_TO_COME = ("going\\s+to|gonna|about\\s+to|planning\\s+(?:to|on)|plan\\s+to|plans\\s+to|thinking\\s+(?:of|about)|"
            "considering|hoping\\s+to|hope\\s+to|hopes\\s+to|set\\s+to|due\\s+to|looking\\s+to|want\\s+to|wants\\s+to|"
            "would\\s+like\\s+to|intend\\s+to|intends\\s+to|might|may|could|should|will|keen\\s+to|dreaming\\s+of|"
            "talking\\s+about|aiming\\s+to|trying\\s+to|getting\\s+ready\\s+to|preparing\\s+to|need\\s+to|have\\s+to|"
            # a decision or a feeling about what comes: "decided to", "excited to", "can't wait to"
            "decided\\s+to|deciding\\s+to|chose\\s+to|opted\\s+to|agreed\\s+to|arranged\\s+to|"
            "(?:so\\s+|really\\s+)?(?:excited|thrilled|delighted|happy|glad|pleased|proud|nervous|eager)\\s+to|"
            "can\\s*not\\s+wait\\s+to|looking\\s+forward\\s+to|expected\\s+to|expecting\\s+to|scheduled\\s+to|"
            "supposed\\s+to|meant\\s+to|ready\\s+to")
_PLAN = rf"{_CHAIN}\s+(?:{_TO_COME})(?:\s+(?:{_AUX}))*"
_SUBJLESS = r"(?:^|(?<=[.!?;:,]\s)|(?<=[.!?;:,]))\s*(?P<subj>)"

# ---- noun lexicons: what a value's head noun says it is
ORG_HEADS = ("Labs|Lab|Systems|Group|Ltd|Limited|Inc|Co|Corp|Corporation|Company|Bank|Health|Healthcare|Studio|Studios|"
             "Partners|Capital|Technologies|Tech|Software|Media|Analytics|Consulting|Solutions|Foods|Logistics|"
             "Shipping|Pharma|Pharmaceuticals|Insurance|Agency|Associates|Holdings|Industries|Works|Motors|Airlines|"
             "Airways|Hospital|Clinic|Council|Ventures|Digital|Networks|Energy|Robotics|Games|Press|Publishing|"
             "Architects|Sons|Brothers|Bros|Engineering|Construction|Properties|Realty|Brewing|Bakery|Café|Cafe|Hotel|Foundation|"
             "Trust|Institute|Services|Retail|Design|Dynamics|AI|Bio|Biotech|Therapeutics|Medical|Law|Legal|LLP|PLC|GmbH")
SCHOOL_HEADS = frozenset("university college school academy institute conservatory high primary elementary "
                         "polytechnic seminary gymnasium nursery kindergarten preschool secondary grammar infants".split())
GROUP_HEADS = frozenset("club choir band orchestra society league circle crew collective ensemble troupe "
                        "gym guild association union".split())
TEAM_HEADS = frozenset("team department dept unit ward division desk squad office branch".split())
TEAM_NOUN = "team|department|dept|unit|ward|division|desk|squad"  # not "group": a group joined is a membership
DEGREES = ("degree|BA|BSc|MA|MSc|MBA|MEng|PhD|doctorate|masters|master's|bachelor's|bachelors|diploma|course|major|"
           "minor|apprenticeship|qualification|certificate|foundation\\s+year|postgrad|postgraduate|undergrad|A-levels")
HOBBY_NOUNS = ("pottery|knitting|crochet|photography|woodwork|woodworking|archery|calligraphy|origami|ceramics|"
               "sculpture|poetry|salsa|tango|tai\\s+chi|parkour|kayaking|sailing|birdwatching|gardening|baking|"
               "embroidery|sewing|quilting|astronomy|juggling|fishing|meditation|drawing|painting|singing|"
               "crossfit|triathlon|marathons?|ultrarunning|spinning|zumba|aikido|kickboxing|taekwondo|kung\\s+fu|"
               "jiu-?jitsu|capoeira|watercolou?rs?|improv|stand-up|scuba|diving|snowboarding|skateboarding")
_PLACE = rf"(?P<val>{PROPER})"
OCC = "|".join(sorted(OCCUPATIONS, key=len, reverse=True))
RELATIONS = RELATION_NOUNS
# a service one holds with a provider, and the kind of provider it makes (`uses:<kind>`)
SERVICE_KIND = {"insurance": "insurer", "policy": "insurer", "cover": "insurer", "mortgage": "lender", "loan": "lender",
                "account": "bank", "bank account": "bank", "savings": "bank", "current account": "bank", "pension": "pension",
                "broadband": "broadband", "internet": "broadband", "contract": "phone", "phone contract": "phone",
                "energy": "energy", "electricity": "energy", "gas": "energy", "subscription": "subscription",
                "membership": "membership", "gym membership": "gym"}
SERVICES = "|".join(sorted((k.replace(" ", "\\s+") for k in SERVICE_KIND), key=len, reverse=True))
# a place one visits that is no trip's destination: "visit the Public Library on Monday"
VENUES = "Library|Museum|Gallery|Store|Shop|Mall|Centre|Center|Park|Restaurant|Café|Cafe|Bar|Pub|Grill|Hotel|Office|Clinic|Hospital|Surgery|Bank|Market|Cinema|Theatre|Theater|Gym|Pool|Church|School|Station"
# what one studies: a subject of study, by name or by its shape ("-ology", "-ics")
ACADEMIC = frozenset("""law history maths math physics chemistry biology economics medicine nursing pharmacy engineering
    philosophy psychology sociology politics geography geology english french spanish german italian music art arts
    architecture accounting finance business management marketing computing linguistics literature classics theology
    anthropology astronomy statistics education dentistry midwifery journalism design drama film media nutrition""".split())
_ACADEMIC_SHAPE = re.compile(r"(?:[a-z]+\s+)?(?:[a-z]+(?:ology|ics|istry|ography|onomy|science|sciences|studies)|computer\s+science)")


def is_subject(words: str) -> bool:
    """Whether `words` name a subject of study ("history", "marine biology", "data science")."""
    low = words.lower().strip()
    words_ = low.split()
    return bool(words_) and (low in ACADEMIC or words_[-1] in ACADEMIC or bool(_ACADEMIC_SHAPE.fullmatch(low)))


# what one teaches for a living: a language or subject named with a capital, or one of these
TAUGHT = ("maths|math|science|history|geography|art|music|drama|chemistry|physics|biology|economics|law|"
          "piano|guitar|violin|cello|drums|singing|voice|dance|ballet|yoga|pilates|swimming|tennis|climbing|"
          "karate|judo|boxing|kickboxing|fitness|spin|cooking|pottery|painting|drawing|photography|coding|"
          "programming|computing|reception|nursery|primary|secondary|kindergarten|preschool")
INSTITUTIONS = ("council|city\\s+council|county\\s+council|government|civil\\s+service|NHS|army|navy|air\\s+force|police|"
                "fire\\s+service|post\\s+office|railways?|ministry|health\\s+service|local\\s+paper|BBC|UN|EU")
GERUND_TITLES = {"driving": "driver", "writing": "writer", "cleaning": "cleaner", "cooking": "cook", "designing": "designer",
                 "teaching": "teacher", "coaching": "coach", "nursing": "nurse", "editing": "editor", "modelling": "model",
                 "temping": "temp", "interning": "intern", "nannying": "nanny", "bartending": "bartender",
                 "waitressing": "waitress", "tutoring": "tutor", "lecturing": "lecturer", "consulting": "consultant",
                 "freelancing": "freelancer"}
_ORG = rf"(?:the\s+)?(?P<val>{PROPER})"
ORG_HEAD = re.compile(rf"\b(?:{ORG_HEADS})$")
_ORG_PROPER = rf"(?:the\s+)?(?P<val>{PROPER})"
_ORG_NAMED = rf"(?:the\s+)?(?P<val>[{_UP}][\w'’&\.\-]*(?:\s+(?:of\s+|&\s+)?[{_UP}][\w'’&\.\-]*){{0,3}}\s+(?:{ORG_HEADS}))\b"
_SCHOOL_NAMED = (rf"(?:the\s+)?(?P<val>[{_UP}][\w'’&\.\-]*(?:\s+(?:of\s+)?[{_UP}][\w'’&\.\-]*){{0,3}}\s+"
                 rf"(?i:University|College|School|Academy|Institute|Conservatory|High|Primary|Polytechnic)"
                 rf"(?:\s+of\s+[{_UP}][\w'’\-]*(?:\s+[{_UP}][\w'’\-]*)?)?|(?:University|College)\s+of\s+[{_UP}][\w'’\-]*(?:\s+[{_UP}][\w'’\-]*)?)")
_TITLE = r"(?:(?:a|an|the|their|our|its)\s+)?(?:(?:new|senior|junior|lead(?!\s+of\b)|head(?!\s+of\b)|only|trainee|qualified|full-time|part-time|freelance|first)\s+)?(?P<val>[a-z\-]+(?:\s+[a-z\-]+){0,2})(?![\w'’])"
_TEAM = rf"(?:the\s+|a\s+|our\s+|my\s+)(?P<val>(?:[\w\-]+\s+){{0,2}}(?:{TEAM_NOUN}))\b"
_SUBJECT = r"(?P<val>[a-z]+(?:\s+[a-z]+){0,2})"
_NP = r"(?!(?:the\s+way|the\s+fact|the\s+idea|how|what|when|why|where|that|making|being|getting|having|seeing|knowing|helping)\b)(?P<val>[\w'’\-]+(?:\s+[\w'’\-]+){0,4})"
_TIME_CUE = (r"(?=[^.!?]*\b(?:in|next|this|on|for|over|at|from|trip|holiday|vacation|week|weeks|weekend|month|summer|"
             r"winter|spring|fall|autumn|year|honeymoon|break|soon)\b)")
_NOW_CUE = r"(?=\s+(?:now|these\s+days|nowadays|for\s+good|permanently|full[- ]time|since|as\s+(?:a|an|of)\b)|\s*[.!,;]|\s*$)"

_MOVED = (r"(?:moved\s+(?:again|once\s+more|yet\s+again),?(?:\s+this\s+time)?|moved|relocated|emigrated|ended\s+up|wound\s+up|settled(?:\s+down)?|made\s+the\s+move|"
          r"moved\s+(?:house|back|out|over|up|down|home|across|abroad|permanently))")
_HOME = r"(?:(?:a|an|the|our|my|their)\s+(?:new\s+|little\s+|first\s+)?(?:flat|apartment|house|place|condo|home|cottage|bungalow|studio)\s+(?:in|on)\s+)?"

FRAMES: list[tuple[str, str, str]] = [
    # residence: a move done, a place one is in "now", a place called home
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+{_MOVED}\s+(?:(?:back\s+|out\s+|over\s+)?(?:to|in|into|down\s+in)\s+){_HOME}{_PLACE}", "place"),
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|back|currently|happily|finally|settled|living|based|home))*\s+in\s+{_PLACE}(?![\w'’&\.\-]){_NOW_CUE}", "place"),
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+(?:call|calls)\s+{_PLACE}\s+home\b", "place"),
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+(?:bought|rented|got\s+the\s+keys\s+to|moved\s+into)\s+(?:a|an|our|the|my|their)\s+(?:[a-z\-]+\s+){{0,2}}?(?:house|flat|home|apartment|place|condo|cottage|bungalow|studio)\s+(?:in|on)\s+{_PLACE}", "place"),
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+moved\s+(?:back\s+)?in\s+with\s+[^.!?,;]{{1,40}}?\s+in\s+{_PLACE}", "place"),
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+(?:living|staying|live|lives|lodging)\s+(?:with|at)\s+[^.!?,;]{{1,30}}?\s+in\s+{_PLACE}", "place"),
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+(?:live|lives|living|lived|staying|renting)\s+in\s+(?:a|an|the|our|my)\s+(?:[a-z\-]+\s+){{0,3}}?(?:flat|apartment|house|place|home|room|studio|cottage|bungalow|bedsit|houseshare|house\s+share)\s+(?:in|on)\s+{_PLACE}", "place"),
    ("lives_in", rf"\b(?:(?P<subj>[Oo]ur|[Mm]y)|[Tt]he)\s+(?:new\s+)?{_PLACE}\s+(?:flat|apartment|house|place|home)\s+(?:is|feels|looks)\s+(?!(?:off|cancell?ed|not|no|gone|sold|on\s+the\s+market)\b)", "place"),
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+(?:live|lives|living|lived|based|settled)\s+(?:out|over|up|down|back|right|just|somewhere)\s+(?:in|near)\s+{_PLACE}", "place"),
    ("lives_in", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?!(?:old|former|previous|last|holiday|summer|parents|mum's|mom's|dad's)\b)(?:[a-z\-]+\s+){{0,2}}?(?:flat|apartment|house|place|home|room|studio|condo|cottage|bedsit|digs)\s+in\s+{_PLACE}", "place"),
    ("lives_in", rf"(?<!moved\sin\swith\s)(?<!moving\sin\swith\s)\b(?P<subj>[Mm]y\s+(?:{RELATIONS}))\s+(?:(?:over|up|down|out|back)\s+)?in\s+{_PLACE}(?![\w'’&\.\-])(?!\s+(?:on|at|last|this|next|yesterday|today|tonight|tomorrow|for)\b)", "place"),
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)\s+leaving\s+{_PLACE}(?![\w'’&\.\-])(?=[^.!?]{{0,60}}\b(?:moving|relocating|move|relocate|moved|relocated)\b)", "place"),
    ("lives_in", rf"{_SUBJLESS}(?:[Hh]ome|[Hh]ome\s+base|[Bb]ase)\s+is\s+(?:now\s+)?{_PLACE}(?![\w'’&\.\-]){_NOW_CUE}", "place"),
    ("lives_in", rf"{SUBJECT}{_NEG}\s+(?:live|living|based)\s+in\s+{_PLACE}", "negated"),
    ("lives_in", rf"{SUBJECT}{_CHAIN}\s+(?:(?:am|are|is|been|got|get|went|came|moved)\s+)?back\s+home\s+(?:at|in|on|to)\s+{_PLACE}", "place"),
    ("lives_in", rf"\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir)\s+(?:{RELATIONS})\s+(?P<subj>[{_UP}][{_LOW}]{{2,}})\s+(?:(?:over|up|down|out|back)\s+)?in\s+{_PLACE}(?![\w'’&\.\-])(?!\s+(?:on|at|last|this|next|yesterday|today|tonight|tomorrow)\b)", "place"),
    # origin
    ("from", rf"{SUBJECT}{_CHAIN}\s+(?:was|were)\s+(?:born\s+(?:and\s+(?:raised|bred)\s+)?|raised\s+|brought\s+up\s+)in\s+{_PLACE}", "place"),
    ("from", rf"{SUBJECT}{_CHAIN}\s+(?:come|comes|hail|hails)\s+(?:originally\s+)?from\s+{_PLACE}", "place"),
    # a move to come: the same verbs in a mood of things to come
    ("moving_to", rf"\b(?P<subj>)(?:[Tt]he|[Oo]ur|[Mm]y)\s+(?:plan|idea|hope|goal)\s+is\s+(?:still\s+)?to\s+(?:move|relocate|emigrate)(?:\s+(?:back|over|out|abroad))?\s+to\s+{_PLACE}", "place"),
    ("moving_to", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|finally|officially|also))*\s+(?:emigrating|relocating|moving\s+(?:back|over|out|abroad|house|permanently))\s+to\s+{_PLACE}", "place"),
    ("moving_to", rf"{SUBJECT}{_PLAN}\s+(?:move|moving|relocate|relocating|emigrate|emigrating|relocation)(?:\s+(?:back|over|out|abroad|house|permanently))?\s+to\s+{_PLACE}", "place"),
    ("moving_to", rf"(?<![\w'’])(?P<subj>)(?:[Tt]hey|[{_UP}][\w'’&\-]+)(?:\s+(?:is|are|will\s+be|have|has|just))*\s+(?:sending|moving|transferring|relocating|posting|going\s+to\s+(?:send|move|transfer|relocate|post))\s+me\s+(?:out\s+|over\s+)?to\s+{_PLACE}", "place"),
    ("moving_to", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)\s+(?:taking|accepting|starting)\s+(?:a|the)\s+(?:new\s+)?(?:job|position|role|post)\s+in\s+{_PLACE}(?![\w'’&\.\-])", "place"),
    ("moving_to", rf"\b(?P<subj>[Oo]ur|[Mm]y)\s+(?:big\s+)?(?:move|relocation)\s+to\s+{_PLACE}(?=\s+(?:is|will|has\s+been\s+(?:set|booked|confirmed)|in|next|this|on)\b)", "place"),
    ("moving_to", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:moving|move)\s+in\s+with\s+[^.!?,;]{{1,40}}?\s+in\s+{_PLACE}", "place"),
    # employer: a state, a start, a hire; its end
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|currently|happily|back))*\s+with\s+{_ORG}(?![\w'’&\.\-]){_NOW_CUE}", "org"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|currently|happily|back))*\s+at\s+{_ORG_NAMED}", "org"),
    ("works_at", rf"(?<![\w'’])(?:I|[Ww]e|[{_UP}][{_LOW}]{{2,}})(?:\s+(?:have|has|had|just|finally|also))*\s+(?:hired|taken\s+on|took\s+on|recruited|brought\s+on|brought\s+in|appointed|signed)\s+(?P<subj>[{_UP}][{_LOW}]{{2,}})\s+as\s+[^.!?,;]{{0,40}}?\s+(?:at|for|with)\s+{_ORG_PROPER}", "org"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:employed|hired|taken\s+on|recruited|poached|headhunted|snapped\s+up)\s+by\s+{_ORG}", "org"),
    ("works_at", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:joining|join|joined|starting\s+(?:at|with)|start\s+(?:at|with)|started\s+(?:at|with)|signing\s+with|going\s+to\s+work\s+(?:at|for)|moving\s+(?:over\s+)?to)\s+{_ORG_NAMED}", "org"),
    ("member_of", rf"{SUBJECT}{_CHAIN}\s+(?:joined|joining|join)\s+the\s+(?P<val>{PROPER})", "group_the"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:work|works|working|worked)\s+(?:\w+\s+)?for\s+the\s+(?P<val>{INSTITUTIONS})\b", "common"),
    ("works_at", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:joining|join)\s+{_ORG}(?![\w'’&\.\-])(?=\s+(?:as|in|on|next|this|from|at\s+the\s+end)\b)", "org"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:(?:got|landed|found|took|accepted|have|has)\s+(?:a\s+|an\s+|the\s+)?(?:new\s+|permanent\s+|part-time\s+|full-time\s+)?(?:job|role|position|post|contract|gig|work)|(?:got|accepted|took)\s+(?:an|the)\s+offer)\s+(?:with|at|from)\s+{_ORG}", "org"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:handed|handing|hand|put|putting|gave|giving)\s+in\s+(?:my|her|his|their|our)\s+notice\s+(?:at|to|with)\s+{_ORG}", "negated"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)\s+(?:leaving|quitting)\s+{_ORG_NAMED}", "negated"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:work|works|worked|working)\s+(?:\w+\s+)?(?:at|for)\s+the\s+(?P<val>{PROPER})", "org"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:left|quit|leaving|quitting|resigned\s+from)\s+[^.!?,;]{{1,40}}?\s+to\s+(?:join|work\s+(?:at|for)|start\s+at)\s+{_ORG}", "org"),
    ("works_at", rf"(?:years?|months?|decades?|stint|spell|time)\s+(?:at|with)\s+{_ORG}(?![\w'’&\.\-]),?\s+(?P<subj>I|[Ww]e)\s+(?:\w+\s+)?(?:left|quit|resigned|moved\s+on|called\s+it\s+a\s+day)\b", "negated"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:finished|finishing|finish)\s+(?:up\s+)?(?:at|with)\s+{_ORG}(?![\w'’&\.\-])(?!\s+(?:work|school|uni|college)\b)", "negated"),
    ("works_at", rf"\b(?P<subj>[Mm]y)\s+last\s+day\s+(?:at|with)\s+{_ORG}", "negated"),
    # an employer named through the people and days of work: "my boss at Kestrel", "first day at Tern Labs!"
    ("works_at", rf"\b(?P<subj>[Mm]y)\s+(?:boss|manager|line\s+manager|supervisor|colleagues?|co-?workers?|team\s+lead|employer)\s+at\s+{_ORG}", "org"),
    ("works_at", rf"(?:\b(?P<subj>[Mm]y)\s+|(?:^|(?<=[.!?]\s))(?P<subj2>))(?:[Ff]irst|[Ss]econd)\s+(?:day|week|shift)\s+(?:at|with)\s+{_ORG}", "org"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:temping|interning|volunteering|freelancing|moonlighting|consulting|contracting|doing\s+(?:agency\s+|shift\s+|temp\s+)?(?:work|shifts)|on\s+(?:a\s+)?placement|doing\s+(?:an?\s+)?(?:internship|placement|residency|apprenticeship))\s+(?:at|for|with)\s+{_ORG}", "org"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:got|landed|accepted|took|won|start|started|starting)\s+the\s+(?P<val>{PROPER})\s+(?:job|role|position|offer|post|contract|gig)\b", "org"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:walked\s+out\s+(?:of|on)|resigned\s+from|left\s+my\s+(?:job|role|post|position)\s+at|parted\s+ways\s+with|(?:was|were|got)\s+(?:dismissed|sacked|fired|laid\s+off|let\s+go)\s+(?:from|by|at))\s+{_ORG}", "negated"),
    ("works_at", rf"{SUBJECT}{_NEG}\s+(?:with|at|working\s+(?:at|for|with)|employed\s+(?:at|by))\s+{_ORG}(?![\w'’&\.\-])(?=\s+(?:any\s?more|now|these\s+days)\b|\s*[.!,;]|\s*$)", "negated"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:handed|handing|hand|put|gave)\s+in\s+(?:my|her|his|their|our)\s+notice\b(?!\s+(?:at|to|with)\b)(?P<val>)", "job_ended"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is|has|have)\s+(?:leaving|left|quitting|quit)\s+(?:us|the\s+(?:company|firm|team|business|practice|startup|agency|office))\b(?P<val>)", "job_ended"),
    # an employer one works for under another verb: "I'm driving for Medway Couriers now", "volunteering with X"
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|currently))*\s+(?P<verb>driving|writing|cleaning|cooking|designing|teaching|coaching|nursing|editing|modelling|delivering|working|coding|consulting|freelancing|contracting|temping|nannying|tutoring)\s+(?:for|with)\s+{_ORG}(?![\w'’&\.\-]){_NOW_CUE}", "org_named"),
    ("job_title", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|currently))*\s+(?P<val>driving|writing|cleaning|cooking|designing|coaching|nursing|editing|modelling)\s+(?:for|with)\s+(?:the\s+)?(?P<org>{PROPER})(?![\w'’&\.\-]){_NOW_CUE}", "gerund_title"),
    ("member_of", rf"{SUBJECT}{_CHAIN}\s+(?:volunteer|volunteers|volunteered|volunteering|help\s+out|helps\s+out|helped\s+out|helping\s+out)\s+(?:with|at|for)\s+{_ORG}", "org_named"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:started|starting|start|began|begin|joined|joining|hired|taken\s+on|work|works|worked|working|going\s+back\s+to|gone\s+back\s+to|went\s+back\s+to|returning\s+to|returned\s+to|rejoining|rejoined)\s+as\s+(?:a|an|the)\s+[a-z\- ]{{2,30}}?\s+(?:at|for|with|in)\s+{_ORG_PROPER}", "org"),
    ("works_at", rf"{SUBJECT}{_CHAIN}\s+(?:going\s+back\s+to|gone\s+back\s+to|went\s+back\s+to|returning\s+to|returned\s+to|rejoining|rejoined|back\s+at)\s+(?:the\s+)?(?P<val>{PROPER})\s+as\s+(?:a|an|the|their|its)\b", "org"),
    ("job_title", rf"(?:^|(?<=[.!?]\s)|(?<=[.!?]))\s*(?P<subj>)(?P<val>(?i:(?:[a-z\-]+\s+){{0,2}}(?:{OCC})))(?:\s+(?:at|for|with)\s+(?:the\s+)?[{_UP}]|\s*,\s*(?:started|starting|from|since|beginning|begins|as\s+of)\b)", "occupation"),
    ("works_at", rf"(?:^|(?<=[.!?]\s)|(?<=[.!?]))\s*(?P<subj>)(?i:(?:[a-z\-]+\s+){{0,2}}(?:{OCC}))\s+(?:at|for|with)\s+{_ORG_PROPER}", "org"),
    # occupation: working or starting as, made or named, "the new X", a name in apposition, a trade done
    ("job_title", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|currently|officially|actually))*\s+(?:a|an)\s+(?P<val>[a-z\-]+(?:\s+[a-z\-]+){{0,2}})(?![\w'’])", "title"),
    ("job_title", rf"{SUBJECT}{_CHAIN}\s+(?:teach|teaches)\s+(?P<val>[{_UP}][a-z]+|{TAUGHT})(?![\w'’\-])", "teach_subject"),
    ("job_title", rf"{SUBJECT}{_CHAIN}\s+(?:quitting|quit|stopping|stopped|giving\s+up|gave\s+up|given\s+up|leaving|left|dropping|dropped)\s+(?:the\s+|my\s+)?(?P<val>[A-Za-z]+)\s+teaching\b", "teach_subject_negated"),
    ("job_title", rf"{SUBJECT}{_CHAIN}\s+(?P<val>temping|interning|nannying|bartending|waitressing|tutoring|lecturing|consulting|freelancing)\b(?=\s+(?:at|for|with|now|these\s+days|full[- ]time|part[- ]time|again|still)\b|\s*[.!,;]|\s*$)", "gerund_title"),
    ("job_title", rf"(?<![\w'’])(?P<subj>[{_UP}][\w'’\-]+(?:\s+[{_UP}][\w'’\-]+)?),\s+(?:the\s+|our\s+|my\s+|your\s+)?(?:new\s+)?(?P<val>(?:(?:[a-z\-]+|[A-Z]{{2,4}})\s+){{0,2}}(?:{OCC}))(?=\s*(?:[^\w\s]|$)|\s+(?:at|for|with|from|here)\b)", "occupation"),
    ("job_title", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:work|works|worked|working|retrained|retraining|trained|qualified|qualifying|started|start|starting|began|begin|hired|taken\s+on|signed\s+on|employed|freelance|freelancing|volunteer|volunteers|volunteering|temping|moonlighting|(?:took|taken|got|found|landed|have|has|accepted)\s+(?:a\s+|an\s+)?(?:new\s+)?(?:job|work|role|position|post|offer)(?:\s+(?:at|with|from)\s+(?:the\s+)?{PROPER})?|(?:taken|took|taking)\s+over(?:\s+from\s+[{_UP}][\w'’\-]+)?|(?:stepped|stepping|step)\s+(?:in|up)(?:\s+for\s+[{_UP}][\w'’\-]+)?)\s+as\s+{_TITLE}", "title"),
    ("job_title", rf"{SUBJECT}{_CHAIN}\s+(?:work|works|worked|working)\b[^.!?]{{0,60}}?,\s+as\s+(?:a|an)\s+(?P<val>[a-z\-]+(?:\s+[a-z\-]+){{0,2}})(?![\w'’])", "title"),
    ("job_title", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is|be)(?:\s+(?:now|still|currently|officially))*\s+(?:the|their|our|its|your)\s+(?:new\s+|only\s+|acting\s+|interim\s+)?(?P<val>[a-z\-]+(?:\s+[a-z\-]+){{0,2}})(?![\w'’])(?!\s+(?:of|for|to|in|on|who|that)\b)", "title"),
    ("job_title", rf"{SUBJECT}{_CHAIN}\s+(?:been|was|were|got|get|gets|getting)\s+(?:made|appointed|named|elected|promoted\s+to)\s+(?:the\s+|a\s+|an\s+|their\s+|our\s+)?(?:new\s+)?(?P<val>[a-z\-]+(?:\s+[a-z\-]+){{0,3}})", "title"),
    ("job_title", rf"(?<![\w'’])(?P<subj>)(?:[Tt]hey|[{_UP}][\w'’&\-]+)(?:\s+(?:have|has|just|finally))*\s+(?:(?:made|named|appointed)\s+me\s+(?:a|an|the|their|our|its)|promoted\s+me\s+to(?:\s+(?:a|an|the))?)\s+(?:new\s+)?(?P<val>[a-z\-]+(?:\s+[a-z\-]+){{0,3}})", "title"),
    # team or department
    ("works_in", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:joined|joining|join|(?:got\s+|been\s+|was\s+|were\s+)?(?:moved|transferred|put|assigned|reassigned|switched|rotated|placed|posted)\s+(?:over\s+|back\s+)?(?:on|onto|to|into)|moving\s+(?:over\s+)?to|transferring\s+to|rotated\s+(?:on)?to|placed\s+(?:on|in)|assigned\s+to|put\s+on|heading\s+up|head\s+up|heads\s+up|lead|leads|leading|run|runs|running)\s+{_TEAM}", "team"),
    # study and school
    ("studies", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:doing|do|taking|take|took|studying\s+for|started|starting|start|began|begun|finishing|completing|pursuing|working\s+(?:on|towards)|enrolled\s+(?:in|on)|signed\s+up\s+for|applied\s+for|got)\s+(?:a|an|my|her|his|the|their)\s+(?:[\w'’\-]+\s+)?(?:{DEGREES})\s+in\s+{_SUBJECT}", "common"),
    ("school", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:started|starting|start|going\s+to|goes\s+to|off\s+to|(?:am|are|is)\s+at|(?:am|are|is)\s+in|applied\s+to|got\s+into)\s+(?:uni|university|college)\s+(?:in|at)\s+{_PLACE}", "place"),
    ("studies", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|currently))*\s+in\s+(?:my|her|his|their|the)\s+(?:[a-z]+\s+)?year\s+(?:of|studying|doing)\s+{_SUBJECT}", "common"),
    ("school", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|currently))*\s+in\s+(?:my|her|his|their|the)\s+(?:[a-z]+\s+)?year\s+(?:(?:of|studying|doing)\s+[a-z]+(?:\s+[a-z]+){{0,2}}\s+)?at\s+(?:the\s+)?{_PLACE}", "place"),
    ("studies", rf"{SUBJECT}{_CHAIN}\s+(?:got|have|has|been\s+offered|was\s+offered|accepted|took|won)\s+a\s+(?:place|spot|seat|scholarship)\s+(?:on|in|at|for)\s+(?:the|a|an)\s+(?P<val>[a-z]+(?:\s+[a-z]+){{0,2}}?)\s+(?:{DEGREES})\b", "common"),
    ("school", rf"{SUBJECT}{_CHAIN}\s+(?:got|have|has|been\s+offered|was\s+offered|accepted|took|won|doing|do|starting|start|started|studying|taking)\s+(?:a\s+place\s+(?:on|in)\s+)?(?:the|a|an|my|her|his)\s+(?:[a-z]+\s+){{0,3}}?(?:{DEGREES})\s+(?:in\s+[a-z]+(?:\s+[a-z]+){{0,2}}\s+)?(?:course\s+|programme\s+|program\s+)?at\s+(?:the\s+)?{_PLACE}", "place"),
    ("studies", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:going\s+back\s+to|go\s+back\s+to|went\s+back\s+to|back\s+at|off\s+to|starting|started|going\s+to|applied\s+to|got\s+into)\s+(?:uni|university|college|school)\s+to\s+(?:study|do|read|train\s+in)\s+{_SUBJECT}", "common"),
    ("studies", rf"{SUBJECT}{_CHAIN}\s+(?:studying\s+for|doing|finishing|started|starting|working\s+(?:on|towards)|halfway\s+through)\s+(?:a|an|my|her|his|the|their)\s+(?P<val>[a-z]+(?:\s+[a-z]+)?)\s+(?:degree|diploma|course|masters|master's|BA|BSc|MA|MSc|PhD|apprenticeship|qualification)\b", "subject"),
    ("studies", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|currently|also))*\s+doing\s+(?:a\s+degree\s+in\s+)?(?P<val>[a-z]+(?:\s+[a-z]+)?)(?=\s*[.!,;]|\s*$|\s+(?:at|in|this|now|too|as|and|but|with)\b)", "subject"),
    ("studies", rf"{SUBJECT}{_CHAIN}\s+(?:reading|read|reads|studying|studied)\s+{_SUBJECT}\s+at\s+(?=[{_UP}])", "common"),
    ("school", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:enrolled|enrolling|enrol|enroll|registered|attend|attends|attending|attended|starting|started|start|transferring|transferred|going|go|goes|heading\s+off|off)\s+(?:at|in|with|to)?\s*{_SCHOOL_NAMED}", "place"),
    ("school", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|currently))*\s+(?:at|in)\s+{_SCHOOL_NAMED}", "place"),
    # relationships
    ("relationship_status", rf"{SUBJECT}{_CHAIN}\s+(?:have|has|got|have\s+got|has\s+got)(?:\s+(?:{_AUX}))*\s+a\s+(?:new\s+)?(?:girlfriend|boyfriend|partner|gf|bf)\b(?P<val>)", "dating"),
    ("relationship_status", rf"{SUBJECT}{_CHAIN}\s+(?:(?:am|are|is)\s+(?:now\s+)?(?:in\s+a\s+(?:new\s+)?relationship|with\s+someone(?:\s+new)?|taken(?=\s*[.!,;]|\s*$)|off\s+the\s+market)|(?:started|began)\s+(?:going\s+out|seeing\s+each\s+other))\b(?P<val>)", "dating"),
    ("relationship_status", rf"{SUBJECT}\s+(?:have|has)(?:\s+(?:just|finally|actually|also))*\s+(?:met|found)\s+someone(?:\s+(?:new|special))?(?=\s*[.!,;]|\s*$|\s+(?:and|at|on|through|online)\b)(?P<val>)", "dating"),
    ("relationship_status", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)(?:\s+(?:now|still|currently))*\s+(?:seeing\s+(?:someone|somebody|(?:a|this)\s+(?:guy|girl|man|woman|lad|bloke|chap|lady|person|colleague|friend))|dating\s+(?:a|this|someone|somebody)\s*(?:guy|girl|man|woman|lad|bloke|chap|lady|person|nurse|doctor|teacher|colleague|friend)?)\b(?P<val>)", "dating"),  # "seeing a physio" is no date
    ("relationship_status", rf"{SUBJECT}{_CHAIN}\s+(?:am|is)\s+(?:now\s+)?an?\s+(?P<val>widow|widower|divorcee)\b", "status_noun"),
    ("relationship_status", rf"{SUBJECT}\s+(?:are|were)\s+(?:so\s+|totally\s+|officially\s+|definitely\s+)?(?:over|through)\b(?!\s+(?:the|it|there|here|with|that|this|a|an|to)\b)(?P<val>)", "breakup"),
    ("relationship_status", rf"{SUBJECT}{_CHAIN}\s+(?:married|wed)\s+(?P<name>[{_UP}][{_LOW}]{{2,}})\b(?P<val>)", "married"),
    ("relationship_status", rf"{SUBJECT}{_CHAIN}\s+(?:split(?:\s+up)?(?=\s*[.!,;]|\s*$|\s+(?:in|last|after|this|a|over|for)\b)|parted\s+ways|broke\s+it\s+off|called\s+it\s+a\s+day|(?:am|are|is)\s+no\s+longer\s+(?:a\s+couple|an\s+item|seeing\s+each\s+other))(?P<val>)", "breakup"),
    ("relationship_status", rf"{SUBJECT}{_CHAIN}\s+(?:(?:called\s+it\s+(?:quits|off))|(?:ended\s+(?:it|things))|(?:am|are|is)\s+(?:now\s+)?(?:single|back\s+on\s+the\s+market)|(?:went|go)\s+(?:our|their)\s+separate\s+ways)\b(?P<val>)", "breakup"),
    ("relationship_status", rf"{SUBJECT}{_CHAIN}\s+(?:got|am|are|is|were|was|been)\s+(?:now\s+)?(?:happily\s+)?(?P<val>married|engaged|divorced|separated|widowed|single)\b(?!\s+(?:to\s+the\s+idea|in\s+(?:the\s+)?(?:spring|summer|autumn|fall|winter|\w+uary|March|April|May|June|July|August|September|October|November|December)))", "status"),
    # likes and dislikes
    ("opinion:{val}", rf"\b(?P<subj>I)\b{_CHAIN}\s+(?:am|have\s+(?:been|become|gotten|got))?(?:\s+(?:{_AUX}))*\s*(?:obsessed\s+with|crazy\s+about|mad\s+about|nuts\s+about|hooked\s+on|keen\s+on|fond\s+of|in\s+love\s+with|addicted\s+to|a\s+(?:big\s+|huge\s+)?fan\s+of|passionate\s+about)\s+{_NP}", "opinion_pos"),
    ("opinion:{val}", rf"\b(?P<subj>I)\b{_CHAIN}\s+(?:(?:can\s*not|could\s+not|cannot)\s+(?:stand|bear|stomach)|loathe|detest|despise|(?:am\s+)?(?:not\s+(?:keen\s+on|big\s+on|fond\s+of|a\s+(?:big\s+)?fan\s+of)|(?:(?:so|really|totally|completely|absolutely|just|well)\s+)*(?:sick\s+of|fed\s+up\s+with|tired\s+of|done\s+with)))\s+{_NP}", "opinion_neg"),
    ("opinion:{val}", rf"{_SUBJLESS}(?P<val>[A-Za-z][\w'’\-]*(?:\s+[a-z][\w'’\-]*){{0,2}})\s+(?:is|are)\s+(?:really\s+|just\s+|honestly\s+)?not\s+(?:really\s+)?(?:my\s+thing|for\s+me|my\s+cup\s+of\s+tea|my\s+scene)\b", "opinion_neg"),
    ("opinion:{val}", rf"{_SUBJLESS}(?P<val>[A-Za-z][\w'’\-]*(?:\s+[a-z][\w'’\-]*){{0,2}})\s+(?:is|are)\s+(?:totally\s+|really\s+|definitely\s+)?(?:my\s+thing|my\s+jam|my\s+happy\s+place)\b", "opinion_pos"),
    ("opinion:{val}", rf"\b(?P<subj>I)\s+(?:have|had)(?:\s+(?:always|long|really))*\s+(?:loved|liked|enjoyed|adored)\s+{_NP}", "opinion_pos"),
    ("opinion:{val}", rf"\b(?P<subj>I)\s+(?:have|had)(?:\s+(?:always|long|really))*\s+(?:hated|disliked|loathed|detested)\s+{_NP}", "opinion_neg"),
    ("opinion:{val}", rf"\b(?P<subj>I)\b{_CHAIN}\s+(?:gone\s+off|went\s+off|go\s+off|fallen\s+out\s+of\s+love\s+with|fell\s+out\s+of\s+love\s+with|lost\s+(?:all\s+)?interest\s+in|lost\s+my\s+taste\s+for|turned\s+against|gone\s+right\s+off)\s+{_NP}", "opinion_neg"),
    ("opinion:{val}", rf"\b(?P<subj>I)\b{_CHAIN}\s+(?:grown|grew|come|came|learned|learnt|started|begun|began|starting|coming|growing)\s+to\s+(?:really\s+)?(?:love|like|enjoy|appreciate|adore)\s+{_NP}", "opinion_pos"),
    ("opinion:{val}", rf"\b(?P<subj>I)\b{_CHAIN}\s+(?:grown|grew|come|came|learned|learnt|started|begun|began|starting|coming|growing)\s+to\s+(?:really\s+)?(?:hate|dislike|loathe|resent|dread)\s+{_NP}", "opinion_neg"),
    # tools: from one to another, a thing moved onto a platform
    ("uses:{what}", rf"{SUBJECT}{_CHAIN}\s+(?:switched|moved|changed|swapped|went|gone|migrated|upgraded|downgraded|converted)\s+(?:over\s+)?from\s+(?:(?:a|an|the|my|our)\s+)?{TOOL}\s+to\s+(?:(?:a|an|the)\s+)?(?:new\s+)?(?P<val>{TOOL})", "tool"),
    ("uses:{what}", rf"{SUBJECT}{_CHAIN}\s+(?:moved|migrated|switched|ported|shifted|put)\s+(?:the|our|my|everything|it|us|all)\b(?:\s+[\w\-]+){{0,3}}?\s+(?:over\s+)?(?:to|onto)\s+(?P<val>{TOOL})", "tool"),
    ("age", rf"\b(?P<subj>[Mm]y|[Hh]er|[Hh]is)\s+(?P<val>\d{{2,3}})(?:st|nd|rd|th)\s+birthday\b(?=[^.!?]*\b(?:today|tomorrow|on|this|next|is|was|party|celebrat))", "number"),
    # an age to come
    ("age", rf"{SUBJECT}{_CHAIN}\s+(?:will\s+be|(?:am|is)\s+going\s+to\s+be)\s+(?P<val>\d{{1,3}}|{_NUMW})(?=\s+(?:in|on|next|this|years?|soon)\b|\s*[.!,;]|\s*$)", "number"),
    ("plan:trip", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)\s+(?:flying|heading|going|travelling|traveling|driving|sailing|off|taking\s+(?:the\s+kids|the\s+family|the\s+children|my\s+\w+|our\s+\w+|him|her|them|everyone))\s+(?:(?:out|over|off|back|down|up|away)\s+)?to\s+{_PLACE}{_TIME_CUE}", "place"),
    ("plan:trip", rf"{SUBJECT}\s+(?:am|are)\s+(?:(?:now|still|really)\s+)?thinking\s+(?:of\s+|about\s+)?(?P<val>{PROPER})(?![\w'’&\.\-])(?=\s*[.!,;]|\s+(?:for|in|this|next|over|around)\b)", "place"),
    ("plan:trip", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)\s+(?:spending|having)\s+(?:Christmas|Easter|New\s+Year|Hanukkah|Eid|Diwali|the\s+(?:holidays|summer|winter|weekend|break)|(?:a|two|three|four|our|my|half)\s+\w+(?:\s+\w+)?)\s+in\s+{_PLACE}", "place"),
    # plans: trips to come, flights booked
    ("plan:trip", rf"{SUBJECT}{_PLAN}\s+(?:go|going|travel|travelling|traveling|fly|flying|head|heading|visit|visiting|get\s+away\s+to|take\s+a\s+trip\s+to|do\s+a\s+trip\s+to|spend\s+(?:a|two|three|four|some|the)\s+(?:\w+\s+)?(?:week|weeks|days|month|summer|winter|holidays?)\s+in)\s+(?:to\s+|in\s+)?(?!(?:[{_UP}][\w'’&\.\-]*\s+){{0,4}}(?:{VENUES})\b){_PLACE}{_TIME_CUE}", "place"),
    ("plan:trip", rf"{SUBJECT}{_CHAIN}\s+(?:booked|book|booking|reserved|got)\s+(?:our\s+|the\s+|my\s+|a\s+|an\s+|two\s+|some\s+)?(?:\w+\s+)?(?:flights?|tickets?|trip|holiday|vacation|getaway|ferry|train|cabin|hotel|room|stay|cottage|villa|week|weekend)\s+(?:to|in|for)\s+{_PLACE}", "place"),
    # a pet described ("a very needy greyhound called Biscotti"), adopted ("a second cat, Pamonha")
    ("pet_name:{pet}", rf"\b(?P<subj>[Aa]n?|[Oo]ur|[Mm]y)\s+(?:[a-z\-]+\s+){{0,3}}?(?P<pet>{PETS})\s*,?\s+(?:who\s+is\s+|is\s+)?(?:named|called)\s+(?P<val>[{_UP}][a-z]+)", "proper"),
    ("pet_name:{pet}", rf"{SUBJECT}{_CHAIN}\s+(?:have|got|adopted|rescued|bought|took\s+in|brought\s+home|welcomed|fostered|come\s+with)\s+(?:a|an|another|two|three|both)\s+(?:[a-z\-]+\s+){{0,2}}?(?P<pet>{PETS})(?:s|es)?\s*,\s+(?P<val>[{_UP}][a-z]+)\b", "proper"),
    ("pet_name:{pet}", rf"{SUBJECT}{_CHAIN}\s+(?:have|got|adopted|rescued|bought|took\s+in|brought\s+home|welcomed|fostered)\s+(?:two|both)\s+(?:[a-z\-]+\s+){{0,2}}?(?P<pet>{PETS})(?:s|es)?\s*,\s+[{_UP}][a-z]+\s+and\s+(?P<val>[{_UP}][a-z]+)\b", "proper"),
    ("has_pet", rf"{SUBJECT}{_CHAIN}\s+(?:have|has|got|adopted|rescued|bought|took\s+in|brought\s+home|welcomed|fostered|come\s+with|own|owns)\s+(?:a|an|another|two|three|four)\s+(?!(?:few|couple|lot|bunch|load|dozen|pair|school|shoal|bag|tin|can|plate|bowl|piece)\b)(?:[a-z\-]+\s+){{0,2}}?(?P<val>{PETS})(?:s|es)?\b", "common"),
    ("pet_name:{pet}", rf"\b(?P<subj>[Ss]he|[Hh]e|[Ii]t)\s+is\s+(?:called|named)\s+(?P<val>[{_UP}][a-z]+)\b", "pet_pronoun"),
    ("has_pet", rf"{SUBJECT}{_CHAIN}\s+(?:have|has|got|adopted|rescued|bought|took\s+in|brought\s+home|welcomed|fostered)\s+(?:a|an|another|two|three)\s+(?!(?:few|couple|lot|bunch|load|dozen|pair|school|shoal|bag|tin|can|plate|bowl|piece)\b)(?:[a-z\-]+\s+){{0,2}}?(?:[{_UP}][a-z]+\s+)?(?P<val>(?i:{PETS}))(?:s|es)?\b", "common"),
    # a pet named by the noun phrase that owns it: "I'm taking my dog to the vet" (as "my wife" says married)
    ("has_pet", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?!(?:old|late|former|previous|last|first|childhood|dead)\b)(?:(?:new|little|two|three|four|rescue|beloved|sweet|young|baby|big)\s+)?(?P<val>{PETS})(?:s|es)?\b(?!\s+(?:painting|picture|photo|drawing|print|poster|toy|costume|tattoo|mug|book|show|sitter|walker|trainer|training|lover|years|allergy|allergies|impression|emoji|fact)\b)", "common"),
    # an app deleted or installed
    ("uses:app", rf"{SUBJECT}{_CHAIN}\s+(?:deleted|uninstalled|removed|got\s+rid\s+of)\s+(?:the\s+)?(?P<val>{PROPER})(?:\s+app)?(?![\w'’&\.\-])", "tool_negated_any"),
    ("uses:app", rf"{SUBJECT}{_CHAIN}\s+(?:downloaded|installed|(?:am|are|is)\s+(?:now\s+)?on)\s+(?:the\s+)?(?P<val>{PROPER})\s+app\b", "tool_any"),
    # a pet of someone named or "her"/"his": "Joyce's terrier Mabel", "her cat, Tibbles"
    ("pet_name:{pet}", rf"(?:\b(?P<subj>[Hh]er|[Hh]is|[Tt]heir)|(?<![\w'’])(?P<subj2>[{_UP}][{_LOW}]{{2,}})'s)\s+(?:(?:new|little|old|young|rescue|sweet)\s+)?(?P<pet>{PETS})\s*,?\s+(?:(?:is\s+)?(?:named|called)\s+)?(?P<val>[{_UP}][a-z]+)\b", "proper"),
    # committees, boards and clubs joined or left
    ("member_of", rf"{SUBJECT}{_CHAIN}\s+(?:joined|joining|elected\s+to|co-opted\s+(?:on)?to|(?:sit|sits|sitting|am|are|is)\s+on|chair|chairs|chaired|chairing|run|runs|ran)\s+(?:the|a|our|my)\s+(?P<val>(?:[\w'\-]+\s+){{0,2}}?(?:committee|board|panel|council|trustees))\b", "common"),
    ("member_of", rf"{SUBJECT}{_CHAIN}\s+(?:stepped\s+down\s+from|stepping\s+down\s+from|resigned\s+from|left|quit|came\s+off|coming\s+off|dropped\s+out\s+of|pulled\s+out\s+of|leaving)\s+(?:the|my|our)\s+(?P<val>(?:[\w'\-]+\s+){{0,2}}?(?:committee|board|panel|council|trustees|club|band|choir|orchestra|league|society|circle|gym|group|union|crew))\b", "common_negated"),
    # a service held with a provider: "I have my home insurance with Harbourline", "our mortgage is with Calder"
    ("uses:{what}", rf"{SUBJECT}{_CHAIN}\s+(?:have|has|got|keep|took\s+out)\s+(?:my|our|the|a|an|her|his|their)\s+(?:[\w\-]+\s+)?(?P<noun>{SERVICES})\s+(?:with|through|at)\s+(?:the\s+)?(?P<val>{PROPER})", "service"),
    ("uses:bank", rf"{SUBJECT}{_CHAIN}\s+(?:bank|banks|banking|banked)\s+with\s+(?:the\s+)?(?P<val>{PROPER})", "tool_any"),
    ("uses:insurer", rf"{SUBJECT}{_CHAIN}\s+(?:am|are|is)\s+insured\s+(?:with|by|through)\s+(?:the\s+)?(?P<val>{PROPER})", "tool_any"),
    ("uses:{what}", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:[\w\-]+\s+)?(?P<noun>{SERVICES})\s+is\s+(?:now\s+|still\s+)?(?:with|through|at)\s+(?:the\s+)?(?P<val>{PROPER})", "service"),
    ("member_of", rf"{SUBJECT}{_CHAIN}\s+(?:play|plays|playing|played|sing|sings|singing|row|rows|rowing|run|runs|running|swim|swims|swimming|dance|dances|dancing)\s+(?:in|for|with)\s+(?:a|an|the|our|my)\s+(?P<val>(?:[\w'\-]+\s+){{0,2}}?(?:team|league|club|band|choir|orchestra|squad|crew|society|ensemble))\b", "common"),
    # a band or a group one plays or sings with: "she's played with Lowfield Static for years"
    ("member_of", rf"{SUBJECT}{_CHAIN}\s+(?:play|plays|played|playing|sing|sings|sang|singing|drum|drums|drummed|drumming|perform|performs|performed|performing|gig|gigs|gigged|gigging)\s+(?:(?:guitar|bass|drums|keys|keyboards|piano|violin|cello|sax|trumpet|lead|backing\s+vocals)\s+)?(?:with|in|for)\s+(?:the\s+)?(?P<val>{PROPER})", "group"),
    ("plan:trip", rf"{SUBJECT}{_CHAIN}\s+(?:want|wants|need|needs|fancy|fancies|would\s+love|would\s+like|(?:am|are|is)\s+(?:hoping|planning)\s+(?:for|on)|(?:am|are|is)\s+thinking|(?:am|are|is)\s+after)\s+(?:a|an|two|three|four|five|ten|a\s+few|some|a\s+couple\s+of)\s+(?:\w+\s+)?(?:weeks?|days?|nights?|months?|weekend|break|holiday|getaway|trip)\s+(?:in|on|at)\s+{_PLACE}", "place"),
    # an event to come at a named place: "I'm doing my internship at the X in August", "come to my party at the Bell"
    ("plan:{pkind}", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:doing|do|having|have|throwing|throw|hosting|host|holding|hold|attending|attend|playing|play|starting|start|running|run|going\s+to|booked|organi[sz]ing)\s+(?:my|our|the|a|an|his|her|their)\s+(?:[\w\-]+\s+)?(?P<pkind>{PLAN_KINDS})\s+(?:at|in)\s+(?:the\s+)?(?P<val>{PROPER}){_TIME_CUE}", "plan_place"),
    ("plan:{pkind}", rf"\b(?:[Cc]ome|[Jj]oin\s+us)\s+(?:to|for|at)\s+(?P<subj>[Mm]y|[Oo]ur)\s+(?:[\w\-]+\s+)?(?P<pkind>{PLAN_KINDS})\s+(?:at|in)\s+(?P<val>(?:the\s+)?{PROPER})", "plan_place"),
    ("plan:trip", rf"{SUBJECT}{_CHAIN}\s+(?:decided\s+against|backed\s+out\s+of|pulled\s+out\s+of|gave\s+up\s+on|given\s+up\s+on|abandoned|bailed\s+on)\s+(?:the|our|my)\s+(?P<val>{PROPER})\s+(?:trip|holiday|vacation|visit|getaway|break|weekend)\b", "place_negated"),
    ("plan:trip", rf"\b(?P<subj>[Tt]he|[Oo]ur|[Mm]y)\s+(?:\w+\s+)?(?:trip|vacation|holiday|visit|flight|getaway|break|weekend)\s+(?:to|in)\s+{_PLACE}\s+(?:is|was|has\s+been|have\s+been|got)\s+(?:now\s+)?(?:off|cancell?ed|called\s+off|scrapped)\b", "place_negated"),
    ("plan:{pkind}", rf"{SUBJECT}{_CHAIN}\s+(?:moved|changed|switched|shifted|relocated|moving|switching)\s+(?:the|our|my)\s+(?P<pkind>{PLAN_KINDS})\s+(?:over\s+)?to\s+(?P<val>{PROPER})", "plan_place"),
    # a race entered or trained for: "signed up for the Harbour half marathon"
    ("plan:race", rf"{SUBJECT}{_CHAIN}(?:\s+(?:{_TO_COME}))?(?:\s+(?:{_AUX}))*\s+(?:signed\s+up\s+(?:for|to)|entered|enter|entering|registered\s+for|training\s+for|run|running|do|doing|race|racing|ride|riding|swim|swimming)\s+(?:the|a|an|my|our)\s+(?P<val>(?:[{_UP}][\w'’\-]*\s+)*(?:\d+\s?[Kk]|half[- ]marathon|marathon|half|triathlon|ultra|ultramarathon|sportive|fun\s+run|relay|Ironman|[{_UP}][\w'’\-]*\s+(?:race|run|ride|swim|challenge)))\b", "race"),
    # activities played or done as a habit: "I've been playing five-a-side", "I do pottery"
    ("hobby", rf"{SUBJECT}{_CHAIN}\s+(?:play|plays|playing|do|does|doing)\s+(?:a\s+(?:bit|lot)\s+of\s+|some\s+|regular\s+)?(?P<val>{ACTIVITIES}|{HOBBY_NOUNS})\b(?!\s+(?:team|club|with|match|game|tomorrow|tonight|today|later|this|next|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b)(?!\s+for\s+(?!(?:a|an|\d+|two|three|four|five|six|ten|years|months|weeks|ages|decades|a\s+while|the\s+(?:last|past))\b))", "common"),
    # hobbies taken up or given up, by name
    ("hobby", rf"{SUBJECT}{_CHAIN}\s+(?:took\s+up|taken\s+up|take\s+up|taking\s+up|picked\s+up|started|begun|began|got\s+into|getting\s+into|learning|learnt|learned|(?:am|are|is)\s+(?:doing|learning))\s+(?:some\s+)?(?P<val>{HOBBY_NOUNS}|{ACTIVITIES})\b", "common"),
    ("hobby", rf"{SUBJECT}{_CHAIN}\s+(?:quit|gave\s+up|given\s+up|stopped|dropped)\s+(?P<val>{HOBBY_NOUNS})\b", "hobby_negated"),
    ("hobby", rf"{SUBJECT}{_CHAIN}\s+(?:(?:started|begun|began|taken\s+up|took\s+up|picked\s+up)\s+(?:learning|studying)|(?:am|are|is)\s+learning)\s+(?:(?:to\s+play\s+)?the\s+)?(?P<val>[{_UP}][a-z]+(?![\w'’])|{HOBBY_NOUNS}|{ACTIVITIES})\b", "common"),
]


LEXICON_RULES: list[tuple[str, re.Pattern[str], str]] = [(a, re.compile(p), k) for a, p, k in FRAMES]

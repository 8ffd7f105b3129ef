"""The rule table of `app.domain.layers.assertions`: (attribute, pattern, value kind) triples over the
expanded text of one event ("I'm" -> "I am"). General English first-person and named-subject forms;
order matters: where two rules of the same attribute family cover one span, the earlier wins.
Pure data, no I/O.
"""
from __future__ import annotations

import re

from app.domain.layers.text import LOWER, NUMBER_WORDS, UPPER

MULTI_VALUED_PREFIXES = ("pet_name:", "has_pet", "member_of", "hobby")

RELATION_NOUNS = (
    # compounds before their heads ("sister-in-law" before "sister"), then kin, partners and the people around one
    "mother-in-law|father-in-law|sister-in-law|brother-in-law|son-in-law|daughter-in-law|in-laws|half-sister|"
    "half-brother|stepsister|stepbrother|stepmum|stepmom|stepdad|stepson|stepdaughter|granddaughter|grandson|"
    "grandkids|grandchildren|grandchild|godson|goddaughter|godmother|godfather|ex-wife|ex-husband|ex-girlfriend|"
    "ex-boyfriend|ex-partner|ex|flatmate|housemate|colleague|co-worker|coworker|manager|landlord|landlady|"
    "teammate|classmate|bestie|hubby|twin|eldest|youngest|oldest|toddler|little\\s+one|boy|girl|"
    "wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|mom|mum|mother|dad|father|sister|brother|son|"
    "daughter|kids|children|friend|best friend|boss|roommate|grandma|grandpa|grandmother|grandfather|"
    "aunt|uncle|cousin|niece|nephew|parents|family|neighbor|neighbour|mam|mammy|mummy|mommy|daddy|papa"
)
DOG_BREEDS = ("labrador|retriever|beagle|poodle|spaniel|terrier|collie|greyhound|whippet|dachshund|pug|husky|corgi|"
              "bulldog|sheepdog|rottweiler|doberman|chihuahua|schnauzer|lurcher|staffie|mutt|dalmatian|pointer|setter|"
              "cockapoo|cavapoo|labradoodle|goldendoodle|cavachon|jack russell|shih tzu|westie|bichon|maltese|"
              "pomeranian|alsatian|german shepherd|sausage dog|springer|cocker|staffy|border collie|vizsla|weimaraner|"
              "samoyed|akita|shiba|basset|bloodhound|mastiff|great dane|newfoundland|saluki")
CAT_BREEDS = "tabby|siamese|persian|ragdoll|maine coon|bengal|sphynx|moggy|british shorthair|burmese|birman|tortoiseshell"
PETS = ("dog|cat|puppy|kitten|pup|horse|rabbit|bunny|hamster|parrot|bird|fish|turtle|snake|guinea pig|pony|lizard|ferret|"
        f"{DOG_BREEDS}|{CAT_BREEDS}")
OCCUPATIONS = frozenset(
    """teacher nurse doctor engineer developer dev programmer designer artist painter writer author musician
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
    historian philosopher translator interpreter ceo cfo cto coo cmo lead supervisor coordinator administrator
    specialist technologist strategist paralegal midwife carer courier porter dispatcher housekeeper welder roofer
    builder joiner surveyor optician physiotherapist physio radiographer sonographer hygienist
    chairman chairwoman chairperson gp planner curator conductor handler childminder drummer guitarist
    bassist pianist violinist cellist saxophonist trumpeter organist harpist vocalist harbourmaster tester postdoc
    apprentice caretaker publicist sous-chef conservator registrar founder co-founder cofounder adviser advisor
    fitter sommelier foreman postman postwoman actuary solicitor barrister headteacher headmaster headmistress
    locksmith vicar chaplain curate brewer churchwarden warden winemaker proofreader copywriter copyeditor signalman
    sysadmin hydrologist ecologist understudy farmhand draughtsman draughtsperson critic ceramicist bookkeeper
    goalkeeper groomer publican butcher fishmonger grocer shopkeeper jeweller jeweler glazier plasterer
    bricklayer tiler upholsterer cobbler seamstress dressmaker auditor underwriter archivist cataloguer
    archaeologist anthropologist sociologist astronomer epidemiologist pathologist radiologist anaesthetist
    anesthetist psychiatrist paediatrician pediatrician obstetrician dermatologist neurologist optometrist
    orthodontist podiatrist chiropractor osteopath dietitian dietician nutritionist phlebotomist lifeguard constable
    sergeant ranger chauffeur deckhand fisherman shepherd forester arborist horticulturist beekeeper patissier
    butler concierge janitor caterer barber manicurist tattooist videographer cinematographer reporter
    correspondent presenter broadcaster columnist podcaster screenwriter playwright songwriter choreographer
    stagehand coder""".split()
)

_UP, _LOW = UPPER, LOWER  # capitals and small letters, Latin-1 and beyond ("Évora", "Łódź")
_CAL = r"(?:January|February|March|April|May|June|July|August|September|October|November|December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b"
_PROPER = rf"[{_UP}][\w'’&\.\-]*(?:\s+(?:of\s+|de\s+|da\s+|do\s+|the\s+|on\s+|&\s+)?(?!{_CAL})[{_UP}][\w'’&\.\-]*){{0,4}}"
_NP = r"[\w'’\-]+(?:\s+[\w'’\-]+){0,4}"  # an object phrase, trimmed afterwards
_NUMW = r"\d{1,3}|" + "|".join(sorted((w for w in NUMBER_WORDS if w not in {"a", "an", "few", "several", "couple", "dozen", "hundred", "thousand"}), key=len, reverse=True))
# activities and sports: a hobby given up, a club or team one plays in (not where one works)
ACTIVITIES = (
    "football|soccer|tennis|basketball|baseball|volleyball|rugby|hockey|cricket|golf|chess|yoga|pilates|"
    "karate|judo|boxing|ballet|dance|piano|guitar|violin|drums|cello|climbing|bouldering|swimming|running|"
    "cycling|rowing|netball|badminton|squash|skating|surfing|skiing|hiking|fencing|athletics|gymnastics|"
    "futsal|five-a-side|softball|lacrosse|handball|dodgeball|kickball|curling|darts|snooker|bowling|frisbee|ultimate|"
    "water polo|polo|triathlon|kayaking|canoeing|sailing|archery|karting|padel|gaming|esports|e-sports|debate|quiz|trivia|"
    "drama|robotics|cheerleading"
)
_SUBJ = rf"(?P<subj>\bI\b|\b[Ww]e\b|\b[Yy]ou\b(?!\s+know\b)|\b[Yy]our\s+(?:(?:new|older|younger|little|big|best|oldest|youngest)\s+)?(?:{RELATION_NOUNS})\b|\b(?:[Mm]y|[Oo]ur)\s+(?:(?:new|older|younger|little|big|best|oldest|youngest)\s+)?(?:{RELATION_NOUNS})s?\b|\b[{_UP}][{_LOW}]{{2,}}'s\s+(?:(?:new|older|younger|little|big|best|oldest|youngest)\s+)?(?:{RELATION_NOUNS})\b|\b[Hh](?:is|er)\s+(?:(?:new|older|younger|little|big|best|oldest|youngest)\s+)?(?:{RELATION_NOUNS})\b|\b[{_UP}][{_LOW}]{{2,}}(?:\s+[{_UP}][{_LOW}]{{2,}})?\b|\b[Hh]e\b|\b[Ss]he\b|\b[Tt]hey\b)"
_ADV = (r"(?:\s+(?:have|has|had)(?=\s+(?:\w+\s+)?(?:\w+ed|got|gotten|been|become|left|quit|begun|taken)\b))?"
        r"(?:\s+(?:now|currently|still|just|recently|finally|actually|officially|also))*")

# (attribute, pattern, value kind). Attribute may name a group: "favourite:{what}", "pet_name:{pet}".
RULES: list[tuple[str, re.Pattern[str], str]] = []


def _rule(attribute: str, pattern: str, kind: str = "proper", flags: int = 0) -> None:
    RULES.append((attribute, re.compile(pattern, flags), kind))


# residence
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:live|lives|(?:am|'m|are|'re|is|'s)\s+living|(?:have|'ve|has)\s+been\s+living|(?:have|'ve|has)\s+lived)\s+(?:in|on(?=\s+(?:the\s+)?(?:[{_UP}][\w'’\-]*\s+){{1,3}}(?:Lane|Road|Street|Avenue|Close|Row|Terrace|Drive|Way|Crescent|Place|Square|Gardens|Mews|Court|Hill|Walk|Grove|Rise)\b))\s+(?P<val>{_PROPER})")
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:moved|relocated)\s+(?:back\s+|all the way\s+)?(?:home\s+)?(?:to|into)\s+(?:(?:a|an|the|our|my)\s+(?:new\s+)?(?:flat|apartment|house|place|condo|home)\s+(?:in|on)\s+)?(?P<val>{_PROPER})")
_rule("lives_in", rf"{_SUBJ}\s+(?:(?:do not|don't|does not|doesn't)\s+live\s+in|no longer\s+lives?\s+in|moved\s+(?:out of|away from))\s+(?P<val>{_PROPER})", "negated")
_rule("moving_to", rf"{_SUBJ}\s+(?:am|'m|are|'re|is|'s)\s+(?:going to move|moving|relocating)\s+(?:(?:again|back),?\s+)?to\s+(?:(?:our|the|their|a)\s+(?={_PROPER}\s+(?:office|branch|campus|site|HQ|headquarters)\b))?(?P<val>{_PROPER})")
_rule("from", rf"{_SUBJ}\s+(?:am|'m|are|'re|is|'s)\s+(?:originally\s+)?from\s+(?P<val>{_PROPER})")
_rule("from", rf"{_SUBJ}\s+grew up in\s+(?P<val>{_PROPER})")
# employment
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|'m|are|'re|is|'s)\s+working|(?:have|'ve|has)\s+been\s+working)\s+(?:at|for)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:got|landed|accepted|started|took|began|(?:been|was|were)\s+offered)\s+(?:a\s+|an\s+|my\s+|her\s+|his\s+|the\s+)?(?:new\s+)?(?:[\w\-]+\s+){{0,2}}?(?:job|position|post|role|internship|gig|lectureship|professorship|fellowship|placement|apprenticeship|traineeship|residency)\s+(?:at|with)\s+(?:the\s+)?(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|'m|are|'re|is|'s)\s+working)\s+at\s+(?:a|an|the)\s+(?P<val>[a-z]+(?:\s+[a-z]+)?)", "common")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:quit|left|lost)\s+(?:my|her|his|the)\s+job\s+(?:at|with)\s+(?P<val>{_PROPER})", "negated")
_rule("works_at", rf"{_SUBJ}\s+(?:no longer|(?:do not|don't|does not|doesn't))\s+work\s+(?:at|for)\s+(?P<val>{_PROPER})", "negated")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|'m|are|'re|is|'s)\s+working)\b[^.!?]{{0,40}}?\s+as\s+(?:a|an|the|our|their)\s+(?:(?:only|sole|lead|main|new|senior|junior|head)\s+)?(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:got|landed|accepted|started|took|began)\s+(?:a\s+|an\s+|my\s+)?(?:new\s+)?(?:job|position|role|career)\s+as\s+(?:a|an)\s+(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("job_title", rf"{_SUBJ}\s+(?:quit|left|lost)\s+(?:my|her|his|the)\s+job\s+as\s+(?:a|an)\s+(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation_negated")
_rule("works_at", rf"{_SUBJ}(?:\s+(?:am|is|was)|\s+(?:have|has)\s+been){_ADV}\s+(?:a|an|the)\s+(?:[a-z]+\s+){{0,2}}(?=(?:{'|'.join(sorted(OCCUPATIONS))})\s+(?:at|for|with)\b)[a-z]+\s+(?:at|for|with)\s+(?P<val>{_PROPER})")
_rule("job_title", rf"{_SUBJ}(?:\s+(?:am|'m|is|'s)|\s+became|\s+(?:have|'ve|has)\s+(?:become|been)){_ADV}\s+(?:a|an)\s+(?P<val>(?:[a-z\-]+\s+){{0,2}}[a-z]+)", "occupation")
_rule("job_title", r"\b(?P<subj>[Mm]y)\s+(?:new\s+)?(?:job|role|position|title)\s+is\s+(?:a|an)?\s*(?P<val>[a-z]+(?:\s+[a-z]+){0,2})", "occupation")
# study
_rule("studies", rf"{_SUBJ}{_ADV}\s+(?:switched|changed|moved)\s+(?:my|her|his|our)\s+major\s+(?:over\s+)?to\s+(?P<val>[a-z]+(?:\s+[a-z]+){{0,2}})", "common")
_rule("studies", rf"{_SUBJ}{_ADV}\s+(?:study|studies|(?:am|'m|is|'s)\s+studying|majored in|major in|(?:am|'m|is|'s)\s+majoring in)\s+(?P<val>[a-z]+(?:\s+[a-z]+){{0,2}})", "common")
_rule("school", rf"{_SUBJ}{_ADV}\s+(?:go|goes|(?:am|'m|is|'s)\s+going|(?:am|'m|is|'s)\s+studying(?:\s+[a-z]+){{0,3}}|enrolled|transferred|(?:got|was|were)\s+accepted|start|starts|started|will\s+start|(?:am|'m|is|'s|are)\s+starting|(?:am|is)\s+a\s+student)\s+(?:to|at|in)\s+(?:the\s+)?(?P<val>(?=[^.!?]*\b(?:University|College|School|Academy|Institute|Conservatory|High|Primary|Elementary|Gymnasium)\b){_PROPER})")
# family, age, relationships, pets, names
_rule("children_count", rf"{_SUBJ}\s+(?:have|has|'ve got|have got|has got)\s+(?P<val>{_NUMW})\s+(?:kids|children|sons|daughters|boys|girls|little ones)\b", "number", re.I)
_rule("age", rf"{_SUBJ}{_ADV}\s+(?:am|'m|is|'s|just turned|turned|will turn|'ll turn)\s+(?:also\s+|now\s+|already\s+)?(?P<val>\d{{1,3}}|{_NUMW})(?:\s+years?\s+old|\s+y/?o|\s+this year|\s+today)\b", "number")
_rule("age", rf"{_SUBJ}{_ADV}\s+(?:just\s+)?turned\s+(?P<val>\d{{1,3}}|{_NUMW})\b(?!\s+(?:of|to|around|down|up|out|into|off|over|away|back)\b)", "number")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:am|'m|are|'re|is|'s)\s+(?:(?:now|still|happily|officially|finally|also)\s+)*(?:a\s+)?(?P<val>single|married|engaged|divorced|widowed|separated|in a relationship)\b", "status")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:got|are getting|'re getting|am getting|'m getting|is getting)\s+(?P<val>married|engaged|divorced)\b", "status")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:broke up|split up|separated|(?:am|are|is)\s+no\s+longer\s+together|(?:am|are|is)\s+not\s+together\s+any\s?more)\b(?P<val>)", "breakup")
_rule("relationship_status", r"\b(?P<subj>[Aa]s)\s+a\s+(?P<val>single)\s+(?:mom|mum|mother|dad|father|parent)\b", "status")
_rule("pet_name:{pet}", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:(?:new|little|sweet|rescue|rescued|old|young|baby)\s+)?(?P<pet>{PETS})\s*,?\s+(?:is\s+)?(?:named|called)\s+(?P<val>[{_UP}][{_LOW}]+)")
_rule("pet_name:{pet}", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:(?:new|little|sweet|rescue|rescued|old|young|baby)\s+)?(?P<pet>{PETS})\s*,?\s+(?P<val>[{_UP}][{_LOW}]+)\b")
_rule("pet_name:{pet}", rf"\b(?P<subj>I|[Ww]e)\s+(?:have|got|adopted|rescued)\s+(?:a|an)\s+(?:(?:new|little|rescue|rescued|young|baby)\s+)*(?P<pet>{PETS})\s+(?:named|called)\s+(?P<val>[{_UP}][{_LOW}]+)")
_rule("pet_name:{pet}", rf"\b(?P<subj>[Aa]n?|[Oo]ur|[Mm]y)\s+(?:(?:new|little|sweet|rescue|rescued|old|young|baby)\s+)?(?P<pet>{PETS})\s+(?:named|called)\s+(?P<val>[{_UP}][{_LOW}]+)")
_rule("member_of", rf"{_SUBJ}{_ADV}\s+(?:joined|became a member of|signed up for)\s+(?:a|an|the|my|our)\s+(?P<val>(?:[\w'\-]+\s+){{0,3}}?(?:group|club|team|church|band|choir|league|community|society|gym|class|organization|organisation|association|platform|network|crew|circle|program|programme))\b", "common")
_rule("hobby", rf"{_SUBJ}{_ADV}\s+(?:started|began|begun|took up|taken up|picked up)\s+(?:(?:playing|learning|practicing|practising|doing|taking)\s+(?:the\s+)?(?P<val>[a-z]+(?:\s+[a-z]+){{0,2}})|(?P<val2>(?:{ACTIVITIES})\b|[a-z]{{3,}}ing\b(?<!\bworking)(?<!\busing)(?<!\blearning)(?<!\bdoing)(?<!\btrying)(?<!\bgetting)(?<!\bgoing)(?<!\bmaking)(?<!\btaking)(?<!\bthinking)(?<!\bplanning)(?<!\blooking)(?<!\bfeeling)(?!\s+(?:to|into|at|on|for|with|a|an|the|my|our|about|out|up|forward|school|college|uni|university|course|degree|shifts?|job|work)\b)))", "common")
_rule("relationship_status", r"\b(?P<subj>[Mm]y)\s+(?P<val>husband|wife|girlfriend|boyfriend|fianc[ée]e?|partner|gf|bf|hubby)\b(?!\s+(?:in\s+crime|at\s+work)\b)", "implied_status")
_rule("has_pet", rf"\b(?P<subj>I|[Ww]e){_ADV}\s+(?:have|got|adopted|rescued)\s+(?:a|an|two|three)\s+(?:(?:new|little|rescue|rescued|young|baby)\s+)*(?P<val>{PETS})s?\b", "common")
_rule("name", rf"\b(?P<subj>[Mm]y)\s+name\s+is\s+(?P<val>[{_UP}][{_LOW}]+(?:\s+[{_UP}][{_LOW}]+)?)")
_rule("favourite:{what}", rf"\b(?P<subj>[Mm]y)\s+(?:all-time\s+|absolute\s+|personal\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|was|has to be|would be|has always been)\s+(?P<val>{_NP})", "phrase")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:really\s+|absolutely\s+|just\s+|truly\s+)?(?P<verb>love|like|enjoy|adore|prefer|hate|dislike|cannot stand|do not like|no longer like|do not enjoy|am (?:a )?(?:big |huge )?fan of|am (?:really )?into|am passionate about)\s+(?!(?:your|our|the\s+sound|the\s+look|the\s+idea|the\s+thought|the\s+way|the\s+fact|"
      rf"to\s+(?:think|say|believe|know|imagine|hope|see|hear))\b)(?P<val>{_NP})", "opinion")

# ---- changes: moves, jobs, teams, relationships, preferences, tools, plans and their cancellation
_BE = r"(?:am|are|is|was|were)"
_MOVE_VERB = r"(?:move|moving|relocate|relocating)"
_rule("moving_to", rf"{_SUBJ}{_ADV}\s+(?:will|(?:am|are|is)\s+going\s+to|plan\s+to|(?:am|are|is)\s+planning\s+to|decided\s+to|want\s+to|(?:have|has)\s+to)\s+(?:be\s+)?{_MOVE_VERB}\s+(?:back\s+)?to\s+(?P<val>{_PROPER})")
_rule("moving_to", rf"{_SUBJ}\s+(?:am|are|is)\s+(?:not|no longer)\s+(?:going to move|moving|relocating)\s+to\s+(?P<val>{_PROPER})", "negated")
_rule("lives_in", rf"{_SUBJ}\s+(?:am|are|is)\s+(?:still|now)\s+(?:based\s+)?in\s+(?P<val>{_PROPER})(?![\w'’&\.\-])(?!\s+(?:for|until|till)\b)")  # the whole name: "London till" is no "Londo"
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:now\s+)?(?:based|settled|living)|(?:have|has)\s+(?:just\s+)?settled|settled)\s+in\s+(?P<val>{_PROPER})")
_rule("lives_in", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+)?(?:place|apartment|flat|house|home)\s+(?:is\s+)?in\s+(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|are|is)\s+working)\s+(?:in|on|as)\s+[^.!?,;]{{2,40}}?\s+(?:at|for)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:joined|(?:got|was|were)\s+hired\s+(?:at|by)|(?:start|starts|started|am\s+starting|will\s+start)\s+(?:work\s+|working\s+)?at|(?:got|accepted|took|signed)\s+(?:an|the)\s+offer\s+(?:from|at|with)|signed\s+(?:on\s+)?with)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"\b(?P<subj>[Mm]y)\s+new\s+(?:job|position|role)\s+(?:at|with)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"(?<![\w'’])(?P<subj>)(?P<val>{_PROPER})\s+(?:just\s+|finally\s+)?(?:hired|offered)\s+me\b")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:was|got|have\s+been|has\s+been)\s+promoted\s+to\s+(?:a\s+|an\s+)?(?P<val>[A-Za-z]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("plan:trip", rf"\b(?P<subj>[Tt]he|[Oo]ur|[Mm]y)\s+(?P<val>{_PROPER})\s+(?:trip|vacation|holiday|visit)\s+(?:is|was|has\s+been|got)\s+(?:off|cancell?ed|called\s+off)\b", "place_negated")
_rule("moving_to", rf"\b(?P<subj>[Tt]he|[Oo]ur|[Mm]y)\s+(?P<val>{_PROPER})\s+(?:flat|apartment|house|place|move|sale)\s+(?:fell\s+through|(?:is|was|has\s+been|got)\s+(?:off|cancell?ed|called\s+off)|(?:is|was)\s+not\s+happening)\b", "place_negated")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:quit|left|(?:was|were|got)\s+(?:laid off|let go|fired)\s+(?:from|at|by))\s+(?P<val>{_PROPER})", "negated")
_TEAM_NOUN = r"(?:department|dept|team|ward|unit|division|group|floor|desk|squad|practice)"
_rule("works_in", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|are|is)\s+working)\b[^.!?]{{0,50}}?,\s*(?:mostly|mainly|usually)?\s*(?:on|in)\s+the\s+(?P<val>(?:[\w\-]+\s+){{0,2}}{_TEAM_NOUN}\b)", "team")
_rule("works_in", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|are|is)\s+working)\s+in\s+(?P<val>(?!the\b|a\b|an\b|my\b|our\b|this\b|that\b|here\b|there\b|it\b)[a-z]{{3,}}(?:\s+(?:care|medicine|surgery|support|sales|marketing|engineering|finance|research|design|development|operations|relations|resources|management))?)\b", "team")
_rule("works_in", rf"{_SUBJ}{_ADV}\s+(?:switched|transferred|moved|rotated|got\s+transferred|(?:am|are|is)\s+(?:switching|transferring|moving))\s+(?:over\s+|back\s+)?(?:to|into)\s+(?:the\s+)?(?P<val>[A-Z]{{2,5}}\b|(?:[\w\-]+\s+){{0,2}}{_TEAM_NOUN}\b|(?=[^.!?,;]{{0,30}}\b{_TEAM_NOUN}\b)[\w\-]+)", "team")
_rule("works_in", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|are|is)\s+(?:working|now|still)|(?:am|are|is))\s+(?:in|on|with)\s+the\s+(?P<val>[A-Z]{{2,5}}\b(?!\s+[A-Za-z])|(?:[\w\-]+\s+){{0,2}}{_TEAM_NOUN}\b)", "team")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:now\s+)?(?:seeing\s+someone|dating|going\s+out\s+with)|(?:have|has)\s+been\s+(?:dating|seeing\s+(?:each\s+other|someone)|together)|started\s+(?:dating|seeing)|got\s+back\s+together)\b(?P<val>)", "dating")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:tied the knot|got hitched)\b(?P<val>)", "married")
_rule("relationship_status", rf"{_SUBJ}{_ADV}\s+(?:proposed|said yes)\b(?P<val>)", "engaged")
_rule("relationship_status", rf"(?<![\w'’])(?P<subj>)(?P<name>[{_UP}][{_LOW}]{{2,}})\s+(?:finally\s+|just\s+)?(?:proposed(?:\s+to\s+me)?\b(?!\s+to\b)|said\s+yes\b)(?P<val>)", "engaged")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:(?:am|have)\s+)?(?:no longer|not)\s+(?:really\s+)?(?:into|a fan of|fond of)\s+(?P<val>{_NP})", "opinion_neg")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:do not|no longer|never)\s+(?:eat|drink|watch|play|wear)\s+(?P<val>{_NP})", "opinion_neg")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:have\s+)?(?:got|gotten|grown|become)\s+(?:tired|sick|bored)\s+of\s+(?P<val>{_NP})", "opinion_neg")
_rule("opinion:{val}", rf"\b(?P<subj>I)\s+(?:have\s+)?(?:gotten|got|gone)\s+(?:really\s+)?into\s+(?![{_UP}])(?P<val>{_NP})", "opinion_pos")  # "got into Oxford" is no taste
_rule("favourite:{what}", rf"\b(?P<val>[{_UP}][\w'’\-]*(?:\s+[{_UP}][\w'’\-]*){{0,3}})\s+is\s+(?P<subj>my|our)\s+(?:new\s+|all-time\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\b", "proper")
_VERSIONED = r"Python|Node|Java|Ruby|PHP|Go|Rust|Django|Rails|React|Postgres|PostgreSQL|MySQL|iOS|Android|Windows|macOS|Ubuntu"
_TOOL = rf"(?:[{_UP}]|i(?=[A-Z]))[\w'’&\.\-]*(?:\s+[{_UP}][\w'’&\.\-]*){{0,3}}(?:\s+\d+[\w.]*){{0,2}}"
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:use|uses|(?:am|are|is)\s+using|switched\s+(?:over\s+|back\s+)?to|(?:got|bought))\s+(?:a|an|the|my|our)\s+(?:new\s+)?(?P<val>{_TOOL})", "tool")
_rule("uses:{what}", rf"\b(?P<subj>[Oo]ur|[Mm]y)\s+(?P<val>{_PROPER})\s+(?:app|site|website|frontend|backend|service|project|api|stack)\b", "tool")
_rule("uses:{what}", rf"\b(?P<subj>[Oo]ur|[Mm]y|[Ww]e|I)\b[^.!?]{{0,30}}?\b(?:deploys?|deployed|is\s+hosted|are\s+hosted|runs|run|hosts?)(?:\s+(?:it|[{_UP}][\w\-]*|(?:the|our|my)\s+[\w\-]+))?\s+(?:to|on|at|with)\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:finished|completed|started|began)\s+(?:the|our|my)\s+(?:move|migration|switch)\s+(?:over\s+)?to\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:bumped|upgraded|updated|moved|switched)\s+(?:us|it|everything|the\s+\w+)\s+(?:up\s+)?to\s+(?P<tool>{_VERSIONED})\s+(?P<val>\d+(?:\.\d+)*)\b", "version")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:use|uses|(?:am|are|is)\s+using|(?:have|has)\s+been\s+using|switched\s+(?:over\s+|back\s+)?to|migrated\s+(?:back\s+)?to|moved\s+(?:over\s+|back\s+)?to|(?:got|bought)\s+(?:a|an|the)\s+(?:new\s+)?|went\s+with|chose|picked)\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"\b(?P<subj>[Oo]ur|[Mm]y)\s+(?:\w+\s+)?(?:app|service|backend|stack|project|site|server|team)\s+(?:uses|runs on|is on|is built on)\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:(?:stopped|quit)\s+using|(?:dropped|ditched|replaced|sold|got\s+rid\s+of|traded\s+in))\s+(?:the\s+|my\s+|our\s+|an?\s+)?(?:old\s+)?(?P<val>{_PROPER})", "tool_negated")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:(?:upgraded|updated|downgraded|moved|switched)\s+(?:back\s+)?to|(?:am|are|is)\s+(?:on|using)|use|run|(?:am|are|is)\s+running)\s+(?P<tool>{_VERSIONED})\s+(?P<val>\d+(?:\.\d+)+|\d+)\b", "version")
_rule("uses:{what}", rf"(?:^|[.!?]\s+)(?P<subj>)(?P<tool>{_VERSIONED})\s+(?P<val>\d+(?:\.\d+)*)(?:\s+(?:right now|now|currently|at the moment)\b|\s*[.!]\s|\s*[.!]?$)", "version")
_rule("uses:{what}", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+)?(?P<val>{_PROPER})\s+(?P<tool>router|modem|phone|laptop|tablet|watch|camera|car|bike|printer|console|headphones|tv)\b", "device")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+(?:on|subscribed\s+to)\s+(?:your|the|a|my|our)\s+(?P<val>{_PROPER})\s+(?P<tool>plan|tier|subscription|package|membership)\b", "device")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}(?:(?:\s+would|'d)\s+like\s+to|\s+want\s+to|\s+(?:am|are|is)\s+going\s+to|\s+will|\s+just)?\s+(?:downgrade|upgrade)d?\s+(?:from\s+(?:the|my|our|your)\s+{_PROPER}\s+(?:plan|tier|subscription|package)\s+)?to\s+(?:the\s+)?(?P<val>{_PROPER})(?:\s+(?P<tool>plan|tier|subscription|package))?", "plan_tier")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}(?:(?:\s+would|'d)\s+like\s+to|\s+want\s+to|\s+(?:am|are|is)\s+going\s+to|\s+will|\s+just)?\s+(?:switch|move|change)d?\s+from\s+(?:the|my|our|your)\s+{_PROPER}\s+(?:plan|tier|subscription|package)\s+to\s+(?:the\s+)?(?P<val>{_PROPER})", "plan_tier")
_rule("uses:{what}", rf"{_SUBJ}\s+(?:am|are|is)\s+[^.!?]{{0,40}}?\band\s+(?:moving|switching|migrating)\s+(?:over\s+|back\s+)?to\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+(?:building|writing|making|developing)\s+(?:a|an|the|our|my)\s+[^.!?]{{0,40}}?\b(?:in|with|on)\s+(?P<val>{_PROPER})", "tool")
_PLAN_KINDS = (r"leaving do|hen do|stag do|hen party|stag party|retirement party|anniversary party|baby shower|leaving drinks|"
               r"christening|naming ceremony|dinner party|garden party|house party|leaving party|engagement party|housewarming party|housewarming|trip|vacation|holiday|party|wedding|dinner|move|visit|launch|release|meeting|concert|reunion|barbecue|bbq|getaway|cruise|camping trip|road trip|honeymoon|surprise party|birthday party|"
               r"internship|placement|gig|show|exhibition|festival|retreat|workshop|conference|residency|tour|recital|fundraiser|party|date")
PLAN_KINDS = _PLAN_KINDS
_rule("plan:trip", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:planning|taking|going\s+on|booking)|(?:have|has)\s+(?:planned|booked)|planned|booked|plan)\s+(?:a|an|our|my|the)\s+(?:\w+\s+)?(?:trip|vacation|holiday|getaway|visit|road trip)\s+to\s+(?P<val>{_PROPER})")
_rule("plan:trip", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:going|heading|flying|travelling|traveling|off)|will\s+(?:go|fly|travel|be\s+going)|(?:plan|plans|want|hope)\s+to\s+(?:go|fly|travel)|(?:am|are|is)\s+planning\s+to\s+(?:go|fly|travel))\s+to\s+(?P<val>{_PROPER})(?=[^.!?]*\b(?:in|next|this|on|for|over|at|from|trip|vacation|holiday|week|month|summer|winter|spring|fall|autumn)\b)", "place")
_rule("plan:trip", rf"{_SUBJ}{_ADV}\s+(?:will\s+(?:be\s+)?visit(?:ing)?|(?:am|are|is)\s+visiting|(?:plan|plans|want|hope)\s+to\s+visit|(?:am|are|is)\s+planning\s+to\s+visit)\s+(?P<val>{_PROPER})", "place")
_rule("plan:trip", rf"{_SUBJ}\s+(?:am|are|is)\s+(?:not|no longer)\s+(?:(?:going|flying|travelling|traveling)\s+to|doing|visiting)\s+(?P<val>{_PROPER})", "place_negated")
_rule("plan:trip", rf"{_SUBJ}{_ADV}\s+(?:will\s+|(?:have|has)\s+to\s+|(?:have|has)\s+)?(?:cancel|cancelled|canceled|called\s+off|call\s+off|scrapped|scrap|shelved|shelve|ditched|ditch)\s+(?:the\s+|our\s+|my\s+)?(?P<val>{_PROPER})(?:\s+(?:trip|vacation|holiday|visit|getaway|break)\b|(?=[^.!?]{{0,40}}\b(?:trip|vacation|holiday|visit|flights?|hotel|getaway|break)\b))", "place_negated")
_rule("plan:{pkind}", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:planning|throwing|hosting|organi[sz]ing|having)|(?:have|has)\s+planned|planned|will\s+(?:throw|host|have))\s+(?:(?:[{_UP}][{_LOW}]+|him|her|them|us|me)\s+)?(?:a|an|our|my|the|his|her)\s+(?:\w+\s+){{0,2}}?(?P<pkind>{_PLAN_KINDS})\b(?P<val>)", "plan")
_rule("plan:{pkind}", rf"{_SUBJ}{_ADV}\s+(?:(?:have|has)\s+)?(?:cancell?ed|called\s+off|scrapped|(?:had|have|has)\s+to\s+cancel|(?:am|are|is)\s+cancell?ing|(?:decided|had)\s+to\s+(?:cancel|call\s+off|skip))\s+(?:the|our|my|his|her|this|that)\s+(?:\w+\s+){{0,2}}?(?P<pkind>{_PLAN_KINDS})\b(?P<val>)", "plan_cancel")
_rule("plan:{pkind}", rf"\b(?P<subj>[Tt]he|[Oo]ur|[Mm]y)\s+(?:\w+\s+){{0,2}}?(?P<pkind>{_PLAN_KINDS})\s+(?:is|was|has been|got)\s+(?:off\b(?!\s+(?:to|on|at|the|work|early|late)\b)|cancell?ed\b|called off\b)(?P<val>)", "plan_cancel")

_rule("pet_name:{pet}", rf"\b(?P<subj>[Hh]er|[Hh]is|[Ii]ts)\s+name\s+is\s+(?P<val>[{_UP}][{_LOW}]+)\b", "pet_pronoun")

# ---- forms written to generalise beyond the first labelled set: where one lives (with whom, based
# out of), origins, leaving a job ("no longer at", "stopped working for"), an employer that acts
# ("X promoted me to"), an occupation with its ward or team, a title said through a possessive
# ("Osei is my tutor"), hobbies and memberships given up, plans named by their trip or flight,
# plans moved, and "switching from X to Y".
_GROUP_NOUN = r"(?:club|band|choir|orchestra|league|society|circle|team|squad|crew|group)"
_OCC = "|".join(sorted(OCCUPATIONS, key=len, reverse=True))
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+(?:now\s+)?(?:living|staying)|live|lives)\s+(?:at|with)\s+[^.!?,;]{{1,30}}?\s+in\s+(?P<val>{_PROPER})")
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+(?:now\s+)?based\s+out\s+of\s+(?P<val>{_PROPER})")
_rule("lives_in", rf"{_SUBJ}\s+(?:am|are|is)\s+(?:visiting|over|down|up)\s+from\s+(?P<val>{_PROPER})")
_rule("from", rf"{_SUBJ}{_ADV}\s+(?:moved|came|emigrated|immigrated|relocated)\s+(?:here\s+|over\s+|to\s+{_PROPER}\s+)?from\s+(?P<val>{_PROPER})(?![\w'’&\.\-])(?!\s+to\b)")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+no\s+longer\s+(?:at|with|working\s+(?:at|for|with))|(?:have\s+|has\s+)?stopped\s+(?:working|doing\s+(?:any\s+)?work)\s+(?:at|for|with))\s+(?:the\s+)?(?P<val>{_PROPER})", "negated")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:was|were|got|(?:have|has)\s+been)\s+(?:made\s+redundant|laid\s+off|let\s+go|fired|sacked|dismissed)\s+(?:from|at|by)\s+(?:the\s+)?(?P<val>{_PROPER})", "negated")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:start|starts|started|(?:am|is|are)\s+starting|will\s+start)\s+(?:work\s+|working\s+)?at\s+the\s+(?P<val>{_PROPER})(?![\w'’&\.\-])(?!\s+(?:course|class|tutorial|program|programme|app|website|site|book|module)\b)")
_rule("job_title", rf"(?<![\w'’])(?P<subj>)(?P<org>{_PROPER})\s+(?:has\s+|have\s+)?(?:just\s+|finally\s+)?promoted\s+me\s+to\s+(?:a\s+|an\s+)?(?P<val>[A-Za-z\-]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("works_at", rf"{_SUBJ}(?:\s+(?:am|is|was)|\s+(?:have|has)\s+been){_ADV}\s+(?:a|an|the|their|our)\s+(?:[\w\-]+\s+){{0,2}}?(?:{_OCC})\s+(?:on|in)\s+the\s+[\w\- ]{{1,30}}?\s+(?:at|for|with)\s+(?P<val>{_PROPER})")
_rule("works_in", rf"{_SUBJ}(?:\s+(?:am|is|was)|\s+(?:have|has)\s+been){_ADV}\s+(?:a|an|the|their|our)\s+(?:[\w\-]+\s+){{0,2}}?(?:{_OCC})\s+(?:on|in)\s+the\s+(?P<val>(?:[\w\-]+\s+){{0,2}}(?:department|dept|team|ward|unit|division|desk|squad)\b)", "team")
_rule("job_title", rf"(?<![\w'’])(?P<subj>[{_UP}][{_LOW}]{{2,}})\s+is\s+(?:my|our|his|her|their)\s+(?:[\w\-]+\s+)?(?P<val>{_OCC})\b", "occupation")
_rule("hobby", rf"{_SUBJ}{_ADV}\s+(?:quit|gave\s+up|given\s+up|stopped|dropped)\s+(?:playing\s+|doing\s+|the\s+)?(?P<val>{ACTIVITIES})\b(?!\s+{_GROUP_NOUN})", "hobby_negated")
_rule("member_of", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+(?:back\s+|now\s+|still\s+|also\s+)*(?:on|in)\s+(?:the|a|an|our|my)\s+(?P<val>(?:{ACTIVITIES})\s+{_GROUP_NOUN})\b", "common")
_rule("member_of", rf"{_SUBJ}{_ADV}\s+(?:left|quit|dropped\s+out\s+of)\s+(?:the|my|our)\s+(?P<val>(?:[\w'\-]+\s+){{0,2}}?(?:club|band|choir|orchestra|league|society|circle|gym))\b", "common_negated")
_rule("plan:trip", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+(?:also\s+|still\s+)?(?:saving|budgeting|saving\s+up)\s+for\s+(?:a|an|our|my|the)\s+(?:\w+\s+)?(?:trip|vacation|holiday|getaway|visit)\s+to\s+(?P<val>{_PROPER})", "place")
_rule("plan:trip", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:return\s+|outbound\s+|next\s+)?(?:flight|trip|holiday|vacation)\s+to\s+(?P<val>{_PROPER})(?![\w'’&\.\-])(?!\s+(?:is|was|has\s+been|got|have\s+been)\s+(?:now\s+)?(?:off|cancell?ed|called\s+off|scrapped)\b)", "place")
_rule("plan:{pkind}", rf"\b(?P<subj>[Tt]he|[Oo]ur|[Mm]y)\s+(?P<pkind>{_PLAN_KINDS})(?:\s+is|'s|\s+has)?\s+(?:been\s+)?(?:moved|changed|switched|relocated)\s+to\s+(?P<val>{_PROPER})", "plan_place")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:did\s+)?(?:(?:end|ended)\s+up\s+)?(?:switch|switched|switching|move|moved|moving|migrate|migrated|migrating|change|changed|changing|port|ported|porting)\s+(?:(?:the|our|my|everything|it|us)\b(?:\s+[\w\-]+){{0,3}}?\s+)?(?:over\s+)?from\s+(?:the\s+)?{_PROPER}\s+to\s+(?P<val>{_PROPER})", "tool")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:(?:ended|end)\s+up\s+(?:going|sticking|staying)\s+with|(?:have\s+)?decided\s+to\s+(?:stay|stick|go)\s+with)\s+(?P<val>{_PROPER})", "tool")
_rule("moving_to", rf"{_SUBJ}{_ADV}\s+(?:found|got|signed\s+for|rented)\s+(?:a|an|our|my)\s+(?:new\s+)?(?:place|flat|apartment|house|home|room)\s+in\s+(?P<val>{_PROPER})")
_rule("from", rf"(?<![\w'’])(?P<val>{_PROPER}),?\s+where\s+(?P<subj>I|[Ww]e|[{_UP}][{_LOW}]{{2,}}|[Mm]y\s+(?:{RELATION_NOUNS}))\s+(?:grew\s+up|was\s+born|were\s+born)\b")
_rule("plan:trip", rf"{_SUBJ}{_ADV}\s+(?:(?:need|have|want|are\s+going|am\s+going|is\s+going)\s+to|still\s+(?:need|have)\s+to)\s+book\s+(?P<val>{_PROPER})(?=[^.!?]*\b(?:in|next|this|for|over|trip|holiday|vacation|flights?)\b)", "place")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+(?:now\s+)?(?:freelancing|self-employed|freelance)\b(?P<val>)", "freelance")
# a self-introduction: "Rui Tavares here from Quayside", "hi, this is Sam from Acme", "it's Priya from 14 Elm Row"
_rule("works_at", rf"(?:^|[.!?,]\s*|\b(?:[Hh]i|[Hh]ello|[Hh]ey)\s+)(?:(?:[Tt]his\s+is|[Ii]t\s+is|[Ii]t's|I\s+am|[Mm]y\s+name\s+is)\s+)?(?P<subj>[{_UP}][{_LOW}]{{2,}}(?:\s+[{_UP}][{_LOW}]{{2,}})?)\s+(?:here\s+)?from\s+(?:the\s+)?(?P<val>\d{{1,4}}\s+{_PROPER}|{_PROPER})", "introduction")
# an occupation in apposition: "our new CFO, Daniel Okoro", "my manager, Tom Reyes", "our office manager, Funmi
# Adeyemi", "my ward manager, Precious", "their events manager, Mr Oduya" (not "my old boss, Tom": a job gone)
_rule("job_title", rf"\b(?:[Mm]y|[Oo]ur|[Tt]heir|[Hh]is|[Hh]er)\s+(?:new\s+)?(?P<val>(?:(?!(?:old|former|ex|best|dear|late)\b)[a-z\-]+\s+){{0,2}}?(?i:{_OCC}))\s*,\s*(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+)?(?P<subj>[{_UP}][{_LOW}]{{2,}}(?:\s+[{_UP}][{_LOW}]{{2,}})?)\b", "occupation")
# teaching and retiring: "I teach at Ashgrove Primary", "she teaches year 4", "I retired in May"
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:teach|teaches|taught|(?:am|are|is)\s+teaching)\b[^.!?,;]{{0,30}}?\s+at\s+(?:the\s+)?(?P<val>{_PROPER})")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:teach|teaches|(?:am|are|is)\s+(?:now\s+)?teaching)\s+(?:[\w\-]+\s+){{0,3}}?(?:at\s+(?:a|an|the)?\s*[\w\-]*\s*(?:school|college|university|academy|primary|secondary|high|nursery)|(?:year|grade|form|class)\s+\d+|(?:at|in)\s+[{_UP}][\w\-]*\s+(?:School|College|University|Academy|Primary|High))(?P<val>)", "teacher")
# retiring ends the job that stands (retired is no occupation); "retired from X" names it (below)
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:retired|(?:am|are|is)\s+(?:now\s+|finally\s+)?retired|(?:have|has)\s+(?:just\s+)?retired)\b(?!\s+(?:early\s+)?from\b)(?P<val>)", "job_ended")
# negations that name what they end: "I'm not at Brackwater any more", "we no longer use Jira"
_rule("works_at", rf"{_SUBJ}\s+(?:am|are|is)\s+not\s+(?:at|with|working\s+(?:at|for))\s+(?P<val>{_PROPER})(?=[^.!?]*\bany\s?more\b)", "negated")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:no\s+longer\s+(?:use|uses|using)|(?:am|are|is)\s+(?:no\s+longer|not)\s+using|(?:do|does)\s+not\s+use)\s+(?P<val>{_PROPER})(?:(?=[^.!?]*\bany\s?more\b)|(?<=\S)(?=\s*[,.!?;]|\s+(?:now|these\s+days)\b))", "tool_negated")
# a job lost or left without naming it ends whatever job stands: "I quit my job", "I got laid off"
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:(?:quit|left|lost)\s+(?:my|her|his|their|our)\s+job|resigned(?=\s*[.!,;]|\s*$|\s+(?:today|yesterday|last|this|on|in|after|from\s+(?:my|the)\s+job))|handed\s+in\s+(?:my|her|his|their|our)\s+resignation|(?:was|were|got|have\s+been|has\s+been)\s+(?:made\s+redundant|laid\s+off|let\s+go|fired|sacked))(?!\s+(?:from|at|by|as)\b)(?P<val>)", "job_ended")

# ---- forms of stop 23: a title given with the employer ("joined Stripe as a data engineer"), a job
# started at a place named in lower case ("a new job at the bakery"), staying after all, a relative's
# place ("my brother's in Gdansk", "Sana's parents live in Ipoh"), where the speaker is ("come stay with
# me in Leeds"), an employer implied by looking elsewhere ("a job that isn't at Corvid"), "still at X"
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:joined|(?:start|starts|started|am\s+starting|will\s+start)\s+at|(?:was|were|got)\s+hired\s+(?:at|by)|signed\s+(?:on\s+)?with|(?:am|is|are)\s+going\s+back\s+to)\s+(?:the\s+)?{_PROPER}\s+as\s+(?:a|an|the|their|its|our)\s+(?:(?:new|senior|junior|lead|head|only)\s+)?(?P<val>[A-Za-z\-]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:(?:was|were|got|have\s+been|has\s+been)\s+(?:hired|taken\s+on|brought\s+on|brought\s+in|appointed)|joined|(?:came|come)\s+on(?:\s+board)?)\s+as\s+(?:a|an|the|their|its|our)\s+(?:(?:new|senior|junior|lead|head|only)\s+)?(?P<val>[A-Za-z\-]+(?:\s+[A-Za-z]+){{0,2}})", "occupation")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:got|landed|accepted|started|took|began|found)\s+(?:a\s+|an\s+|my\s+|the\s+)?(?:new\s+|part-time\s+|full-time\s+)?(?:job|position|role|gig)\s+at\s+(?:a|an|the)\s+(?P<val>[a-z]+(?:\s+[a-z]+)?)", "common")
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:(?:have\s+|has\s+)?decided\s+to|chose\s+to|will|(?:am|are|is)\s+going\s+to|(?:am|are|is)\s+(?:going\s+to\s+)?(?=stay(?:ing)?\s+in\s+{_PROPER}\s+(?:after\s+all|for\s+good|instead|permanently)\b))\s*stay(?:ing)?\s+in\s+(?P<val>{_PROPER})", "stay")
_rule("moving_to", rf"{_SUBJ}{_ADV}\s+(?:(?:have\s+|has\s+)?decided\s+(?:not\s+to\s+move|against\s+(?:moving|the\s+move))|(?:am|are|is)\s+not\s+(?:moving|relocating)\s+after\s+all|will\s+not\s+(?:be\s+)?(?:move|moving|relocate|relocating)|(?:am|are|is)\s+staying\s+put)\b(?P<val>)", "move_ended")
_REL = rf"(?:(?:new|older|younger|little|big|best|oldest|youngest)\s+)?(?:{RELATION_NOUNS})"
_rule("lives_in", rf"\b(?P<subj>[Mm]y\s+{_REL})(?:'s|\s+is)\s+(?:still\s+|now\s+)?(?:based\s+|living\s+)?in\s+(?P<val>{_PROPER})(?![\w'’&\.\-])(?!\s+(?:for\s+(?!now\b)|until|till|on|this|next|at)\b)")
_rule("lives_in", rf"(?<![\w'’])(?P<subj>[{_UP}][{_LOW}]{{2,}}'s\s+{_REL})\s+(?:now\s+|still\s+)?(?:live|lives|(?:is|are)\s+living|(?:is|are)\s+based|moved|(?:have|has)\s+moved)\s+(?:to|in)\s+(?P<val>{_PROPER})")
_rule("lives_in", rf"(?:^|(?<=[.!?,;]\s)|(?<=\bto\s)|(?<=\band\s)|(?<=\byou\s)|(?<=\bcould\s)|(?<=\bcan\s))(?P<subj>)(?:[Cc]ome\s+(?:and\s+)?)?(?:[Ss]tay|[Vv]isit|see|crash)\s+(?:with\s+)?me\s+(?:here\s+|up\s+|down\s+|over\s+)?in\s+(?P<val>{_PROPER})", "invited")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:[a-z]+\s+){{0,3}}?(?:a|an|another|some)\s+(?:new\s+|different\s+|other\s+)?(?:job|role|position|work|something)\s+(?:that|which)\s+(?:is\s+not|isn't)\s+(?:at|with|for)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}\s+(?:am|are|is)\s+still\s+(?:at|with|working\s+(?:at|for))\s+(?P<val>{_PROPER})(?![\w'’&\.\-])(?!\s+(?:for|until|till|on|this|next|at|in)\b)", "employer")
_rule("works_at", rf"(?:^|[.!?,;]\s*)(?P<subj>)not\s+(?:at|with|working\s+(?:at|for))\s+(?P<val>{_PROPER})(?=[^.!?]*\bany\s?more\b)", "negated")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+(?:(?:still|now|fully|completely|entirely|finally|all)\s+)*(?:on|with)\s+(?P<val>{_PROPER})(?![\w'’&\.\-])", "tool")
_rule("uses:tier", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+(?:now\s+)?(?:a|an)\s+(?P<val>{_PROPER})\s+(?:member|subscriber|customer|tier\s+member|cardholder)\b")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:got|landed|accepted|started|took|was\s+offered)\s+(?:a|an|the|her|his|my|their)\s+(?:new\s+)?teaching\s+(?:post|job|position|role)\b(?P<val>)", "teacher")
_rule("uses:bank", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:salary|wages|pay|paycheck|pension|income)\s+(?:now\s+)?(?:goes|has\s+gone|is\s+paid|gets\s+paid|is\s+going|lands|will\s+go)\s+(?:in)?to\s+(?P<val>{_PROPER})")
_rule("job_title", rf"(?:^|[.!?]\s+|\b(?:and|but|so)\s+)(?P<subj>)(?:a\s+)?(?:full[- ]time\s+|part[- ]time\s+)(?P<val>(?:[a-z\-]+\s+)?(?:{_OCC}))\s+now\b", "occupation")
_rule("lives_in", rf"\b(?P<subj>[Mm]y|[Oo]ur)\s+(?:new\s+)?(?:home\s+|postal\s+|mailing\s+)?address\s+is\s+(?:now\s+)?(?P<val>\d{{1,4}}[A-Za-z]?,?\s+{_PROPER}|{_PROPER})")
_rule("lives_in", rf"{_SUBJ}\s+(?:have|has)\s+(?:now\s+)?been\s+(?:living\s+|based\s+)?in\s+(?P<val>{_PROPER})(?![\w'’&\.\-])(?=\s+(?:for|since)\b)")
_rule("works_at", rf"{_SUBJ}\s+(?:have|has)\s+(?:now\s+)?been\s+(?:at|with)\s+(?P<val>{_PROPER})(?![\w'’&\.\-])(?=\s+(?:for|since)\b)", "employer")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:(?:do|does)\s+not|no\s+longer|(?:am|is|are)\s+not)\s+(?:work|works|working)\s+(?:there|here)\b(?P<val>)", "job_ended")
# a tool named with what it is: "we switched the optimizer to AdamW", "our tracker is Linear now"
TOOL_NOUNS = ("database|db|editor|ide|framework|language|host|hosting|provider|bank|phone|laptop|car|crm|tracker|optimizer|"
              "optimiser|model|base model|backbone|backend|frontend|cloud|os|browser|carrier|network|broker|gpu|gpus|"
              "scheduler|orchestrator|queue|cache|tokenizer|router|vendor|supplier|insurer|energy supplier|isp|plan|tier|"
              "subscription|package|membership|tariff|broadband|internet provider|internet|mobile provider|"
              "phone provider|energy provider|electricity supplier|gas supplier|mortgage|insurance|vpn|"
              "password manager|email provider|messenger|chat app|streaming service")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:switched|changed|moved|swapped|migrated|upgraded|downgraded)\s+(?:the|our|my)\s+(?P<noun>{TOOL_NOUNS})\s+(?:over\s+)?(?:from\s+{_TOOL}\s+)?to\s+(?:the\s+)?(?P<val>{_TOOL})", "tool_noun")
_rule("uses:{what}", rf"\b(?P<subj>[Oo]ur|[Mm]y|[Tt]he)\s+(?:new\s+|main\s+)?(?P<noun>{TOOL_NOUNS})\s+is\s+(?:now\s+|still\s+)?(?:(?:a|an|the)\s+)?(?P<val>{_TOOL})(?=\s+(?:now|these\s+days)\b|\s*[.!,;]|\s*$)", "tool_noun")
_rule("lives_in", rf"{_SUBJ}\s+(?:am|are|is)\s+(?:living\s+|based\s+)?in\s+(?P<val>{_PROPER})(?![\w'’&\.\-])(?=\s+(?:now|these\s+days|nowadays)\b)")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:got|landed|accepted|started|took|found|(?:am|is|are)\s+starting|will\s+start|start)\s+(?:a|an|the|my|her|his)\s+(?:new\s+)?(?:job|position|role|post)\s+(?:as\s+(?:a|an)\s+[a-z\- ]{{2,30}}?\s+)?(?:at|with)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:resigned|(?:have|has)\s+resigned|stepped\s+down)\s+(?:from|at)\s+(?:the\s+)?(?P<val>{_PROPER})", "negated")
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+moved\s+in\s+with\s+[^.!?,;]{{1,30}}?\s+in\s+(?P<val>{_PROPER})")
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:switched|changed|swapped)\s+(?P<noun>{TOOL_NOUNS})s\s+(?:over\s+)?to\s+(?:the\s+)?(?P<val>{_TOOL})", "tool_noun")
_rule("moving_to", rf"{_SUBJ}{_ADV}\s+(?:got|accepted|landed|took|(?:was|have\s+been|has\s+been)\s+offered)\s+(?:a|the)\s+(?:new\s+)?(?:job|position|role|post)\s+in\s+(?P<val>{_PROPER})(?![\w'’&\.\-])")
# what a question takes for granted about the one asked: "How was your first week at Northfield High?",
# "how's the new job at Kessler going?", "is your new flat in Ghent warm?"
_SCHOOLISH = r"(?=[^.!?]*\b(?:University|College|School|Academy|Institute|High|Primary|Elementary|Nursery|Kindergarten|Preschool)\b)"
_PRESUPPOSED = r"\b(?P<subj>[Yy]our|[Tt]he)\s+(?:first\s+(?:week|day|month|term|semester|year)|new\s+(?:job|role|position|post|school|course))\s+at\s+(?:the\s+)?"
_rule("school", rf"{_PRESUPPOSED}(?P<val>{_SCHOOLISH}{_PROPER})", "presupposed")
_rule("works_at", rf"{_PRESUPPOSED}(?![^.!?]*\b(?:University|College|School|Academy|Institute|High|Primary|Elementary)\b)(?P<val>{_PROPER})", "presupposed")
_rule("lives_in", rf"\b(?P<subj>[Yy]our|[Tt]he)\s+new\s+(?:place|flat|apartment|house|home)\s+in\s+(?P<val>{_PROPER})", "presupposed")

# ---- forms of stop 24 (general English forms, added after scoring six new conversations unseen): an age
# said bare or to come ("I'm 44, ...", "she's turning 30"), a membership by name ("a member of X"), a
# job ended by retiring, a wedding still to come ("getting married in X" is engaged, and a wedding
# plan), a title in apposition to the employer ("a dispatcher at X", "at X as a dispatcher"), a job
# named by its title ("the project manager job"), a team one is moved to ("they moved me to the X
# team"), a numbered address moved to, part-time work, a school named with the subject, a hire.
_WORK_TIME = r"(?:part[- ]time|full[- ]time|shifts|nights|weekends|evenings|days|remotely|freelance|(?:two|three|four)\s+days\s+a\s+week)"
_OCC_FRAMED = r"[a-z]+(?:er|or|ist|ian|ant|eer|man|woman|ess|ive|ent)"  # a title's shape, in a work frame only
_rule("age", rf"{_SUBJ}{_ADV}\s+(?:am|is)\s+(?:(?:now|only|just|nearly|almost)\s+)?(?P<val>\d{{1,3}}|{_NUMW})(?=\s*[,;.!]|\s*$|\s+(?:and|but|now|so|this|next|today)\b)", "number")
_rule("age", rf"{_SUBJ}{_ADV}\s+(?:am|is|are|will\s+be)\s+turning\s+(?P<val>\d{{1,3}}|{_NUMW})\b(?!\s+(?:of|to|around|down|up|out|into|off|over|away|back|left|right)\b)", "number")
_rule("member_of", rf"{_SUBJ}{_ADV}\s+(?:am|are|is|have\s+been|has\s+been)\s+(?:still\s+|now\s+|also\s+)?(?:a\s+)?members?\s+(?:of|at)\s+(?:the\s+)?(?P<val>[{_UP}][\w'’&\.\-]*(?:\s+(?:of\s+|&\s+)?[{_UP}][\w'’&\.\-]*){{0,4}})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:retired|(?:have|has)\s+(?:just\s+)?retired)\s+(?:early\s+)?from\s+(?:the\s+)?(?P<val>{_PROPER})", "negated")
_rule("plan:wedding", rf"{_SUBJ}{_ADV}\s+(?:am|are|is)\s+getting\s+married(?:\s+[^.!?,;]{{0,30}}?)?\s+in\s+(?!{_CAL})(?P<val>{_PROPER})", "place")
_ELIDED = r"(?:^|[.!?,;]\s*)(?:(?:[Yy]es|[Yy]eah|[Yy]ep|[Nn]o|[Ss]till|[Nn]ow)\b\s*,?\s*)+"  # "Yes, still a ..."
_FRAME = rf"(?:{_SUBJ}\s+(?:am|is|was)\s+|{_ELIDED})(?:(?:still|now|currently)\s+)*(?:a|an)\s+"
_rule("job_title", rf"{_FRAME}(?P<val>(?:[a-z\-]+\s+){{0,2}}{_OCC_FRAMED})\s+(?:at|for|with)\s+(?=[{_UP}])", "occupation_framed")
_rule("works_at", rf"{_FRAME}(?:[a-z\-]+\s+){{0,2}}{_OCC_FRAMED}\s+(?:at|for|with)\s+(?P<val>{_PROPER})", "employer")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:am|are|is|was|work|works)\s+(?:still\s+|now\s+)?(?:at|for|with)\s+{_PROPER}\s+as\s+(?:a|an|the|their|its)\s+(?P<val>(?:[a-z\-]+\s+){{0,2}}{_OCC_FRAMED})\b", "occupation_framed")
_rule("job_title", rf"(?P<subj>)(?:\b(?:offered|gave)\s+me|(?:(?<=\b[Ii]\s)|(?<=\bhave\s)|(?<=\b[Ww]e\s)|(?<=\bjust\s))(?:got|accepted|took|landed|started))\s+(?:the|a|an|my)\s+(?:new\s+)?(?P<val>(?:[a-z\-]+\s+){{0,2}}{_OCC_FRAMED})\s+(?:job|role|position|post)\b", "occupation_framed")
_rule("works_in", rf"(?<![\w'’])(?P<subj>)(?:[\w\-]+\s+)?(?:moved|transferred|put|assigned|reassigned|switched|rotated)\s+me\s+(?:over\s+)?(?:to|into|onto|on)\s+the\s+(?P<val>(?:[\w\-]+\s+){{0,2}}{_TEAM_NOUN})\b", "team")
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:moved|relocated)\s+(?:in\s*)?to\s+(?P<val>\d{{1,4}}[A-Za-z]?\s+{_PROPER})", "address")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|are|is)\s+working)\s+{_WORK_TIME}\s+(?:at|for)\s+(?:the\s+)?(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:work|works|(?:am|are|is)\s+working)\s+{_WORK_TIME}\s+at\s+(?:a|an|the)\s+(?P<val>[a-z]+(?:\s+[a-z]+)?)", "common")
_rule("school", rf"{_SUBJ}{_ADV}\s+(?:study|studies|(?:am|is|are)\s+studying|major\s+in|(?:am|is|are)\s+majoring\s+in)\s+[a-z]+(?:\s+[a-z]+){{0,2}}\s+at\s+(?:the\s+)?(?P<val>{_SCHOOLISH}{_PROPER})")
_HIRER = rf"\b(?:I|[Ww]e|[{_UP}][{_LOW}]{{2,}})(?:\s+(?:have|has|just|finally))*\s+hired\s+(?P<subj>[{_UP}][{_LOW}]{{2,}})\s+as\s+"
_rule("job_title", rf"{_HIRER}(?:a|an|the|our|their|{_PROPER}'s)\s+(?:(?:first|new|only|lead|senior|junior|head)\s+)?(?P<val>[a-z\-]+(?:\s+[a-z]+){{0,2}})", "occupation")
_rule("works_at", rf"{_HIRER}(?P<val>{_PROPER})'s\s")
# an activity done as a habit, in the present tense: "I swim on Saturdays", "I run along the beach"
HABIT = {"swim": "swimming", "run": "running", "cycle": "cycling", "climb": "climbing", "hike": "hiking", "surf": "surfing",
          "ski": "skiing", "skate": "skating", "row": "rowing", "dance": "dancing", "box": "boxing", "paint": "painting"}
_HABITS = "|".join(HABIT)
_rule("hobby", rf"\b(?P<subj>I|[Ww]e)\s+(?:(?:also|still|usually|often|sometimes|regularly|mostly)\s+)?(?P<val>{_HABITS})\b(?!\s+(?:a|an|the|my|our|his|her|their|it|to|into|out|late|away|over|off|up|down|for|by|of|through|across|around\s+(?:the\s+)?(?:office|house))\b)", "habit")
# a tool one builds or trains with: "we train the model with PyTorch", "I wrote the API in Go" (the kind from
# the tool's name or the nouns around it: assertion_derived.kind_near)
_rule("uses:{what}", rf"{_SUBJ}{_ADV}\s+(?:train|trains|trained|(?:am|are|is)\s+training|build|builds|built|(?:am|are|is)\s+building|"
      rf"wrote|write|(?:am|are|is)\s+writing|rewrote|rewritten|rewrite|(?:am|are|is)\s+rewriting|rebuilt|rebuild|(?:am|are|is)\s+rebuilding|"
      rf"ported|port|(?:am|are|is)\s+porting|deploy|deployed|host|hosted|ship|shipped)\s+(?:(?:the|our|my|a|an|it|everything)\b(?:\s+[\w\-]+){{0,3}}?\s+)?"
      rf"(?:with|in|using|on)\s+(?P<val>{_TOOL})", "tool")
# a home bought or rented is where one lives; teaching started; a "head of X" title with its employer
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:bought|buy|rented|rent|(?:am|are|is)\s+renting|(?:have|has)\s+bought)\s+(?:a|an|our|the|my|their)\s+(?:new\s+|first\s+|little\s+)?(?:house|flat|home|apartment|place|condo|cottage|bungalow)\s+(?:in|on)\s+(?P<val>{_PROPER})")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:started|began|begun|(?:have|has)\s+been)\s+teaching\b[^.!?,;]{{0,30}}?\s+at\s+(?:the\s+)?(?P<val>{_PROPER})")
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:started|began|begun|(?:have|has)\s+been)\s+teaching\s+(?:[\w\-]+\s+){{0,3}}?(?:at|in)\s+(?:the\s+)?[{_UP}](?P<val>)", "teacher")
_HEAD_OF = r"(?:(?:deputy|assistant|acting)\s+)?(?:head|director|chief|manager|lead)\s+of\s+[a-z]+"
_rule("job_title", rf"{_SUBJ}{_ADV}\s+(?:am|are|is|was|became|(?:have|has)\s+become)\s+(?:now\s+|also\s+)?(?:the\s+)?(?P<val>{_HEAD_OF})\s+(?:at|for|with)\s+[{_UP}]", "common")
_rule("works_at", rf"{_SUBJ}{_ADV}\s+(?:am|are|is|was|became|(?:have|has)\s+become)\s+(?:now\s+|also\s+)?(?:the\s+)?{_HEAD_OF}\s+(?:at|for|with)\s+(?:the\s+)?(?P<val>{_PROPER})", "employer")
_rule("school", rf"{_SUBJ}{_ADV}\s+(?:got\s+into|(?:got|was|were|(?:have|has)\s+been)\s+accepted\s+(?:to|at|into|by))\s+(?:the\s+)?(?P<val>{_SCHOOLISH}{_PROPER})")
_rule("uses:car", rf"{_SUBJ}{_ADV}\s+(?:drive|drives|(?:am|are|is)\s+driving)\s+(?:a|an|the|our|my)\s+(?:(?:new|old|used|second-hand)\s+)?(?P<val>{_TOOL})")
_rule("lives_in", rf"{_SUBJ}{_ADV}\s+(?:(?:am|are|is)\s+renting|(?:have|has)\s+been\s+renting|rent)\s+(?:(?:a|an)\s+(?:flat|house|room|place|apartment)\s+)?in\s+(?P<val>{_PROPER})")

# the clause frames of `assertion_lexicon` read the same subjects and names
PROPER = _PROPER
SUBJECT = _SUBJ
TOOL = _TOOL

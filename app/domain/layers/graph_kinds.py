"""What kind of thing a capitalised name in a clause is, for the memory graph's rules
(`graph_extract`): a speaker, an organisation or event or place by its own words ("Denver Health",
"Lake Tahoe", "Pride Parade"), a place it is known to be, else by the words before it ("in X" a place,
"Oksana from X" / "retired from X" an organisation, "with X" a person), else a thing. Pure, no I/O.
"""
from __future__ import annotations

import re
from typing import Collection

from app.domain.layers.text import norm_name

_ORG_RE = re.compile(r"\b(University|College|School|Inc|Corp|Company|Club|Center|Centre|Foundation|Association|Hospital|Church|Institute|Bank|Group|Society|Museum|Library|Academy|Studio|Agency|Team|Network)\b")
_PLACE_RE = re.compile(r"\b(City|Park|Beach|Lake|Mountains?|River|Street|Island|Canyon|County|State|Valley|Falls|Bay|Coast|Village|Town|Forest|Hills?)\b")
_EVENT_RE = re.compile(r"\b(Festival|Parade|Conference|Day|Party|Marathon|Pride|Christmas|Thanksgiving|Halloween|Easter|Olympics|Cup|Fair|Week|Summit)\b")
_PLACE_CUE_RE = re.compile(r"\b(in|to|from|near|visited|visit|visiting|around|across|through)\s+$", re.I)
_FROM_FIRM_RE = re.compile(r"(?:\b(?!(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|Mon|Tue|Wed|Thu|Fri|Sat|Sun|I\b))[A-Z][\w\-]+|\b(?i:retired|resigned|redundant|someone|somebody|rep|agent|engineer|"
                           r"technician|adviser|advisor|handler|manager|colleague))\s+(?i:from)\s+$")
_PERSON_CUE_RE = re.compile(r"\b(with|friend|named|called|met|meet|meeting|told|asked|and|sister|brother|mom|dad|son|daughter)\s+$", re.I)
PLACES = frozenset(
    """america usa us canada mexico brazil argentina uk england scotland ireland france spain portugal italy germany
    netherlands belgium switzerland austria sweden norway denmark finland poland greece turkey russia ukraine
    india china japan korea thailand vietnam indonesia philippines australia zealand egypt kenya nigeria morocco
    israel iceland peru chile colombia cuba jamaica alabama alaska arizona arkansas california colorado
    connecticut delaware florida georgia hawaii idaho illinois indiana iowa kansas kentucky louisiana maine
    maryland massachusetts michigan minnesota mississippi missouri montana nebraska nevada hampshire jersey
    york carolina dakota ohio oklahoma oregon pennsylvania rhode tennessee texas utah vermont virginia
    washington wisconsin wyoming paris london rome tokyo berlin madrid boston chicago seattle denver austin
    miami atlanta dallas houston portland vegas angeles francisco diego phoenix philadelphia toronto
    vancouver sydney melbourne dublin amsterdam barcelona""".split()
)


def name_kind(span: str, left_context: str, speaker_keys: Collection[str]) -> str:
    """person, organization, event, place or thing: by the name itself ("Denver Health", "Lake Tahoe"),
    a place it is known to be, or the words before it ("in X", "Oksana from X", "with X")."""
    key = norm_name(span)
    if key in speaker_keys or any(len(key) >= 3 and sk.split(" ")[0].startswith(key) for sk in speaker_keys if " " not in key):
        return "person"
    if _ORG_RE.search(span):
        return "organization"
    if _EVENT_RE.search(span):
        return "event"
    if _PLACE_RE.search(span) or any(w in PLACES for w in key.split()):
        return "place"
    if _FROM_FIRM_RE.search(left_context):  # "Oksana from Harbourline", "retired from Nordhavn": whom one works for
        return "organization"
    if _PLACE_CUE_RE.search(left_context):
        return "place"
    if _PERSON_CUE_RE.search(left_context) and len(span.split()) <= 2:
        return "person"
    return "thing"

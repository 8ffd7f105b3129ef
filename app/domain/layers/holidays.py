"""Holidays a conversation names without a date, and the day each falls on in a year (`holiday_day`), for the time
resolver (`timecal.calendar_span`; `HOLIDAY_RE` is what its patterns find). Fixed days ("Christmas Eve"), days
counted in a month ("Labor Day": the first Monday of September; "Memorial Day": the last Monday of May) and days
counted from Easter ("Good Friday", "Mothering Sunday"). Where a name means different days in different countries
it is the most common reading or left out: "the August bank holiday" is England's (the last Monday of August);
"Mother's Day" (the UK's in Lent, the US's in May) and "Labour Day" (1 May in most of the world, September in
Canada) are not here. Pure data and date arithmetic, no I/O.
"""
from __future__ import annotations

import re
from datetime import date, timedelta

from app.domain.layers.timeforms import EASTER_DAYS, EASTER_RE, easter_day

# an apostrophe may be left out or curled in the text; names are matched in lower case
FIXED = {"christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25), "new year's eve": (12, 31),
         "hogmanay": (12, 31), "new year's day": (1, 1), "new year": (1, 1), "halloween": (10, 31), "hallowe'en": (10, 31),
         "valentine's day": (2, 14), "valentine's": (2, 14), "independence day": (7, 4), "april fools' day": (4, 1),
         "april fool's day": (4, 1), "the fourth of july": (7, 4), "fourth of july": (7, 4),
         "boxing day": (12, 26), "bonfire night": (11, 5), "guy fawkes night": (11, 5), "st patrick's day": (3, 17),
         "st. patrick's day": (3, 17), "saint patrick's day": (3, 17), "st paddy's day": (3, 17), "paddy's day": (3, 17),
         "xmas": (12, 25), "xmas day": (12, 25), "xmas eve": (12, 24), "burns night": (1, 25), "juneteenth": (6, 19),
         "veterans day": (11, 11), "veterans' day": (11, 11), "remembrance day": (11, 11)}
# (month, weekday with Monday 0, which one: 1 the first ... -1 the last) and days after it
COUNTED = {"thanksgiving": (11, 3, 4, 0), "black friday": (11, 3, 4, 1), "labor day": (9, 0, 1, 0),
           "memorial day": (5, 0, -1, 0), "mlk day": (1, 0, 3, 0),
           "martin luther king day": (1, 0, 3, 0), "martin luther king jr. day": (1, 0, 3, 0),
           "martin luther king jr day": (1, 0, 3, 0), "presidents' day": (2, 0, 3, 0), "president's day": (2, 0, 3, 0),
           "presidents day": (2, 0, 3, 0), "father's day": (6, 6, 3, 0), "fathers' day": (6, 6, 3, 0),
           "columbus day": (10, 0, 2, 0), "remembrance sunday": (11, 6, 2, 0),
           "early may bank holiday": (5, 0, 1, 0), "spring bank holiday": (5, 0, -1, 0), "late may bank holiday": (5, 0, -1, 0),
           "august bank holiday": (8, 0, -1, 0)}
FROM_EASTER = {**EASTER_DAYS, "mothering sunday": -21, "shrove tuesday": -47, "pancake day": -47,
               "ash wednesday": -46, "palm sunday": -7, "maundy thursday": -3, "whit sunday": 49, "pentecost": 49,
               "whit monday": 50}

_NAMES = {*FIXED, *COUNTED, *FROM_EASTER}
# "New Year" alone is the holiday only after a preposition ("since New Year"), not "Happy new year" (timewords);
# Easter's own days are EASTER_RE's
HOLIDAY_RE = "|".join(re.escape(h).replace("'", "['’]?") for h in sorted(_NAMES - {"new year"} - set(EASTER_DAYS),
                                                                      key=len, reverse=True)) + "|" + EASTER_RE


def holiday_key(text: str) -> str | None:
    """The table's name for a holiday as written ("Valentines Day" -> "valentine's day"), None if it is none."""
    low = re.sub(r"\s+", " ", text.lower().replace("’", "'")).strip()
    if low in _NAMES:
        return low
    return next((k for k in _NAMES if re.fullmatch(re.escape(k).replace("'", "'?"), low)), None)


def holiday_day(key: str, year: int) -> date:
    """The day `key` (a `holiday_key`) falls on in `year`."""
    if key in FIXED:
        mo, d = FIXED[key]
        return date(year, mo, d)
    if key in FROM_EASTER:
        return easter_day("easter", year) + timedelta(days=FROM_EASTER[key])
    if key in COUNTED:
        mo, wd, n, after = COUNTED[key]
        first = date(year, mo, 1)
        if n > 0:
            day = first + timedelta(days=(wd - first.weekday()) % 7 + 7 * (n - 1))
        else:
            last = date(year + (mo == 12), mo % 12 + 1, 1) - timedelta(days=1)
            day = last - timedelta(days=(last.weekday() - wd) % 7)
        return day + timedelta(days=after)
    raise KeyError(key)

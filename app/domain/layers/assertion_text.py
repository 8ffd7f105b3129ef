"""Text helpers of the assertion rules (`app.domain.layers.assertions`): the contractions and elided
subjects the rules read past ("i'm", "Moved to Ghent!"), who "he"/"she" stands for, and what kind
of thing a named tool or product is (`uses:<kind>`). Pure functions, no I/O.
"""
from __future__ import annotations

import re

from app.domain.layers.text import CALENDAR_WORDS, NOT_NAMES, STOPWORDS

_UP = "A-ZÀ-ÖØ-Þ"  # capitals, Latin-1 included

# what kind of thing a tool or product is (uses:<kind>)
TOOL_KINDS = {
    "database": "postgres postgresql mysql mariadb sqlite mongodb mongo redis cassandra dynamodb oracle sql server "
                "supabase firebase elasticsearch clickhouse snowflake bigquery cockroachdb",
    "phone": "iphone android pixel galaxy samsung oneplus nokia motorola xiaomi",
    "editor": "vim neovim emacs vs code vscode intellij pycharm sublime atom cursor zed",
    "language": "rust golang java kotlin swift typescript javascript ruby php elixir scala haskell",
    "framework": "django flask fastapi rails react vue angular svelte next.js spring laravel express",
    "os": "linux ubuntu debian fedora windows macos arch",
    "hosting": "aws azure gcp heroku vercel netlify digitalocean fly.io render railway cloudflare",
    "laptop": "macbook thinkpad chromebook surface",
    "bank": "chase monzo revolut wells fargo",
    "car": "tesla prius civic corolla",
}
_TOOL_OF = {w: kind for kind, ws in TOOL_KINDS.items() for w in ws.split()}


def tool_kind(value: str) -> str | None:
    """The kind of a named tool or product ("Postgres" -> "database"), from its first matching word."""
    low = value.lower()
    for w in [low, *low.split()]:
        if w in _TOOL_OF:
            return _TOOL_OF[w]
    return None


_ANTECEDENT_RE = re.compile(rf"(?<![\w'’])([{_UP}][a-zß-öø-ÿ]{{2,}})\b")
_PLACE_PREP = re.compile(r"\b(?:to|in|at|from|for|of|near|on|into|via|by)\s+$", re.I)


def antecedent(text: str, pos: int) -> str | None:
    """Whom "he"/"she" at `pos` stands for: the last capitalised name before it in the same event that
    is not a common word or a calendar word and does not follow a preposition (that is a place)."""
    for m in reversed(list(_ANTECEDENT_RE.finditer(text, 0, pos))):
        w = m.group(1)
        if w.lower() in NOT_NAMES or w.lower() in CALENDAR_WORDS or w.lower() in STOPWORDS:
            continue
        if _PLACE_PREP.search(text[max(0, m.start() - 8):m.start()]):
            continue
        return w
    return None


_CO_SUBJECT = re.compile(rf"\b([{_UP}][a-zß-öø-ÿ]{{2,}})\s+and\s+$")


_CONTRACTIONS = [
    (re.compile(r"\b(I)'m\b"), r"\1 am"),
    (re.compile(r"\b([Ww]e|[Yy]ou|[Tt]hey)'re\b"), r"\1 are"),
    (re.compile(r"\b(I|[Ww]e|[Yy]ou|[Tt]hey)'ve\b"), r"\1 have"),
    (re.compile(r"\b(I|[Ww]e|[Yy]ou|[Tt]hey|[Ss]he|[Hh]e)'ll\b"), r"\1 will"),
    (re.compile(r"\b([Dd]o|[Dd]oes|[Dd]id|[Ii]s|[Aa]re|[Ww]as|[Ww]ere|[Hh]ave|[Hh]as)n't\b"), r"\1 not"),
    (re.compile(r"\b([Cc]a)n't\b"), r"\1nnot"),
]


_ELIDED_I = re.compile(
    r"(^|[.!?]\s+|[-–—]\s*)((?:Just|Recently|Finally|Also|just|recently|finally|also)\s+)?((?i:lost|started|got|joined|moved|quit|graduated|landed|became|adopted|took up|picked up|began))\b(?!\s+(?:it|that|this|me|you)\b)"
)


_LOWER_I = re.compile(r"(?<![\w'])i(?=\s|'m\b|'ve\b|'ll\b|'d\b)")


def expand(text: str) -> str:
    text = text.replace("’", "'")
    text = _LOWER_I.sub("I", text)  # chat register: "i moved", "i'm"
    text = _ELIDED_I.sub(lambda m: f"{m.group(1)}I {(m.group(2) or '').lower()}{m.group(3).lower()}", text)
    for rx, rep in _CONTRACTIONS:
        text = rx.sub(rep, text)
    return text

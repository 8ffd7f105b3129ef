"""A lower bound of a text's WordPiece token count, read off the text without a vocabulary.

Context assembly asks "does this line fit in what is left of the budget?" for every candidate until
the budget is nearly full. With long turns (a BEAM-size conversation's are ~2,000 characters) most
candidates cannot fit, and rendering each one (its relative dates resolved) and tokenizing it, only
to learn that, was most of the assembly's time. When a cheap lower bound of the count already
exceeds the room left, the exact count cannot fit either, so the answer is the same without it.

The bound holds for a BERT tokenizer (BertNormalizer, BertPreTokenizer, WordPiece; the embedder's
all-MiniLM-L6-v2 is one): the pre-tokenizer splits on whitespace and makes every punctuation
character a word of its own, the normaliser never removes an ASCII letter, digit or punctuation
mark (it lower-cases, strips accents, drops control characters), and WordPiece gives every word at
least one token ([UNK] included). So each ASCII punctuation mark is at least one token, and so is
each stretch between spaces, tabs, line breaks and ASCII punctuation that holds an ASCII letter or
digit; other characters are not counted (a control character between two letters is dropped and
joins them). Inserting text that starts with a space (a resolved date, a superseded note) never
lowers the bound, so the bound of a line before those are added is a bound of the line after.
In printable ASCII, which most turns are, the count is simply the whitespace-separated words.
"""
from __future__ import annotations

import re

_PUNCT = re.compile(r"[!-/:-@\[-`{-~]")  # what BERT's pre-tokenizer calls punctuation, in ASCII
_SEPARATORS = re.compile(r"[ \t\n\r!-/:-@\[-`{-~]+")
_ALNUM = re.compile(r"[A-Za-z0-9]")


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# ^ ASCII controls but tab and line breaks: the normaliser drops them (str.split would split at some)


def wordpiece_floor(text: str) -> int:
    """At most the number of tokens a BERT WordPiece tokenizer gives `text` (no special tokens). In
    printable ASCII (tabs and line breaks allowed) every stretch between whitespace keeps a character,
    so is at least a token: the words `str.split` finds, counted in C."""
    if text.isascii() and not _CONTROL.search(text):
        return len(text.split())
    return len(_PUNCT.findall(text)) + sum(1 for part in _SEPARATORS.split(text) if _ALNUM.search(part))

"""`safe_normalize_v1`: the only transformation evidence text may undergo (R2).

It removes what can corrupt a prompt without changing what the text says:
null bytes, control characters, invisible bidi/zero-width characters, and whitespace noise.
Words, digits, punctuation and line structure (single newlines, paragraph breaks) are kept.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Bidi overrides/isolates and zero-width characters that hide text from a reader but not from
# a model. ZWJ/ZWNJ (U+200C/U+200D) are kept: some scripts and emoji need them.
_INVISIBLE = dict.fromkeys(
    [0x200B, 0x2060, 0xFEFF, *range(0x202A, 0x202F), *range(0x2066, 0x206A)], None
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_HSPACE = re.compile(r"[^\S\n]+")
_MANY_NEWLINES = re.compile(r"\n{3,}")


# The audit keeps a question exactly as asked, and PostgreSQL stores no U+0000 in text or
# jsonb: a question holding one would reach the model and then fail its audit (AUDIT_FAILED).
# Every entry point (API, `citebound ask`, batch question tables) refuses it up front instead,
# for every store alike, so a question behaves the same wherever it is asked.
NUL_REFUSAL = "contains U+0000 (a NUL character), which the audit cannot store: remove it"


# A lone surrogate (U+D800-U+DFFF) is no character: it is what Python makes of bytes that are
# not UTF-8 on a command line ('\udcff') or of a JSON escape without its pair ("\ud800"). No
# UTF-8 text can hold it, so the tokenizer, the audit hash and every store would fail on it.
SURROGATE_REFUSAL = (
    "is not valid Unicode (it holds a lone surrogate, U+D800-U+DFFF, such as bytes that are "
    "not UTF-8), which the audit cannot store: re-encode it as UTF-8"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def storage_problem(text: str) -> str | None:
    """Why caller text cannot be kept by the audit (`NUL_REFUSAL`, `SURROGATE_REFUSAL`), or
    None; such text is refused before any work at every entry point."""
    if "\x00" in text:
        return NUL_REFUSAL
    if _SURROGATE.search(text) is not None:
        return SURROGATE_REFUSAL
    return None


# Pure function of the text, called on the same chunks request after request.
@lru_cache(maxsize=16_384)
def safe_normalize_v1(text: str) -> str:
    """Sanitize evidence text deterministically; never rewrites content.

    >>> safe_normalize_v1("Torque\\x00 to  40\\tNm.\\r\\n\\r\\n\\r\\nThen stop.")
    'Torque to 40 Nm.\\n\\nThen stop.'
    """
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.translate(_INVISIBLE)
    # Vertical tab / form feed / NEL / line & paragraph separators become line breaks.
    text = text.replace("\x0b", "\n").replace("\x0c", "\n").replace("\x85", "\n")
    text = text.replace("\u2028", "\n").replace("\u2029", "\n\n")
    # Tabs become spaces before control stripping so words are not glued together.
    text = _CONTROL.sub("", text.replace("\t", " "))
    text = _HSPACE.sub(" ", text)
    text = "\n".join(line.strip() for line in text.split("\n"))
    text = _MANY_NEWLINES.sub("\n\n", text)
    return text.strip()


_ANY_WS = re.compile(r"\s+")


def normalize_question(text: str) -> str:
    """Whitespace-only normalization of the user question: nothing else is changed.

    Control characters are removed too (they are not content); nothing else changes.
    """
    text = unicodedata.normalize("NFC", text).translate(_INVISIBLE)
    text = _CONTROL.sub(" ", text)
    return _ANY_WS.sub(" ", text).strip()

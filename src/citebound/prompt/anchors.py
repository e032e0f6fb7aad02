"""Citation styles: anchor labels, markers, and the regex the validator uses for each.

One object per style drives the evidence headers, the prompt's marker list and R5 extraction,
so the prompt and the validator can never disagree about what a citation looks like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citebound.contracts.enums import CitationStyle

SUPERSCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_SUPERSCRIPT = str.maketrans("0123456789", SUPERSCRIPT_DIGITS)
_FROM_SUPERSCRIPT = str.maketrans(SUPERSCRIPT_DIGITS, "0123456789")


@dataclass(frozen=True)
class CitationFormat:
    """Anchor labels and markers for one `CitationStyle`."""

    style: CitationStyle
    first_index: int
    label_pattern: str  # regex for a label, without brackets

    def label(self, position: int) -> str:
        """Label of the evidence at 0-based `position` in the final ordered list."""
        n = position + self.first_index
        if self.style is CitationStyle.C:
            return f"C{n}"
        if self.style is CitationStyle.S:
            return f"S{n}"
        if self.style is CitationStyle.SUPERSCRIPT:
            return str(n).translate(_SUPERSCRIPT)
        if self.style is CitationStyle.FOOTNOTE:
            return f"^{n}"
        return str(n)

    def position(self, label: str) -> int | None:
        """Inverse of `label`; None when `label` is not a well-formed label of this style."""
        if not re.fullmatch(self.label_pattern, label):
            return None
        digits = label.lstrip("CS^").translate(_FROM_SUPERSCRIPT)
        if len(digits) > 1 and digits.startswith("0"):
            return None
        return int(digits) - self.first_index

    @staticmethod
    def marker(label: str) -> str:
        return f"[{label}]"

    @property
    def marker_pattern(self) -> str:
        """Regex matching one well-formed marker, without groups (for split_sentences)."""
        return r"\[" + self.label_pattern + r"\]"

    @property
    def marker_regex(self) -> str:
        """Regex matching one well-formed marker; group 1 is the label."""
        return r"\[(" + self.label_pattern + r")\]"


_FORMATS = {
    CitationStyle.C: CitationFormat(CitationStyle.C, 0, r"C\d+"),
    CitationStyle.S: CitationFormat(CitationStyle.S, 1, r"S\d+"),
    CitationStyle.DECIMAL: CitationFormat(CitationStyle.DECIMAL, 1, r"\d+"),
    CitationStyle.FOOTNOTE: CitationFormat(CitationStyle.FOOTNOTE, 1, r"\^\d+"),
    CitationStyle.SUPERSCRIPT: CitationFormat(
        CitationStyle.SUPERSCRIPT, 1, "[" + SUPERSCRIPT_DIGITS + "]+"
    ),
}


def citation_format(style: CitationStyle | str) -> CitationFormat:
    """The `CitationFormat` of a style (`C`, `S`, `decimal`, `superscript`, `footnote`)."""
    return _FORMATS[CitationStyle(style)]

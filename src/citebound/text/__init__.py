"""Text primitives shared by every stage: sanitization, token counting, sentence splitting."""

from citebound.text.sanitize import normalize_question, safe_normalize_v1
from citebound.text.sentences import split_sentences
from citebound.text.tokens import CharTokenizer, QuicktokTokenizer, Tokenizer, get_tokenizer

__all__ = [
    "CharTokenizer",
    "QuicktokTokenizer",
    "Tokenizer",
    "get_tokenizer",
    "normalize_question",
    "safe_normalize_v1",
    "split_sentences",
]

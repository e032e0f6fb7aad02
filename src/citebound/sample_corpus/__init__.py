"""The bundled sample corpus for `citebound demo`: fictional plant documents we wrote ourselves.

Sixteen short Markdown files (manuals, procedures, maintenance and incident reports, a
specification and an engineering document) for five fictional machines: the HP-220 centrifugal
pump, the CX-9 air compressor, the VT-40 cooling tower fan, the GB-7 gearbox and the ESD-3
emergency shutdown panel. Each starts with `title`, `knowledge_type`, `equipment_id` and
`event_date` front matter. One file, the HP-220 service report WO-58113, carries a planted
prompt-injection comment on purpose. A two-page PDF is generated on demand by
`write_sample_pdf`, so no binary lives in the repository.

Example:
    >>> from citebound.sample_corpus import DEMO_QUESTIONS, corpus_dir
    >>> len(list(corpus_dir().glob("*.md"))) >= 15 and DEMO_QUESTIONS[0].expect == "45 Nm"
    True
"""

from __future__ import annotations

from citebound.sample_corpus.locate import copy_sample_corpus, corpus_dir, markdown_paths
from citebound.sample_corpus.pdf import PDF_FILENAME, PDF_TITLE, write_sample_pdf
from citebound.sample_corpus.questions import DEMO_QUESTIONS, DemoQuestion

__all__ = [
    "DEMO_QUESTIONS",
    "PDF_FILENAME",
    "PDF_TITLE",
    "DemoQuestion",
    "copy_sample_corpus",
    "corpus_dir",
    "markdown_paths",
    "write_sample_pdf",
]

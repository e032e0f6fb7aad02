"""OCR of PDF pages that have no text layer (extra `ocr`: rapidocr-onnxruntime).

rapidocr-onnxruntime ships its PP-OCRv4 detection and recognition models and the angle
classifier inside its wheel (`rapidocr_onnxruntime/models/*.onnx`) and runs them on
onnxruntime, which citebound already uses: nothing is downloaded at run time. The engine is
loaded once per process, on the first page that needs it.

A scanned page is read from the images it draws (`pypdf` `page.images`, largest first: a
scan is one page-sized image), and the recognised lines are put back in reading order: boxes
sorted top to bottom, boxes whose vertical centres are within half a line height joined left
to right with a space, lines joined with a newline.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from typing import Any

ENGINE = "rapidocr-onnxruntime"
ENABLE_HINT = "pip install 'citebound[ocr]'"
MIN_SCORE = 0.5  # rapidocr's own text_score default


def available() -> bool:
    """True when the OCR engine (and Pillow, which pypdf needs to decode images) is installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("rapidocr_onnxruntime", "PIL"))


@lru_cache(maxsize=1)
def _engine() -> Any:
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR()


def _lines(results: list[Any]) -> list[str]:
    boxes = []
    for box, text, score in results:
        if float(score) < MIN_SCORE or not str(text).strip():
            continue
        ys = [p[1] for p in box]
        xs = [p[0] for p in box]
        boxes.append(((min(ys) + max(ys)) / 2, max(ys) - min(ys), min(xs), str(text).strip()))
    boxes.sort()
    lines: list[list[tuple[float, str]]] = []
    centre = height = 0.0
    for y, h, x, text in boxes:
        if lines and abs(y - centre) <= max(h, height) / 2:
            lines[-1].append((x, text))
        else:
            lines.append([(x, text)])
            centre, height = y, h
    return [" ".join(t for _, t in sorted(line)) for line in lines]


def page_text(page: Any) -> str:
    """The text OCR reads from the images of one pypdf page ("" when it draws none)."""
    images = sorted(page.images, key=lambda im: -len(im.data))
    out: list[str] = []
    for image in images:
        results, _ = _engine()(image.data)
        out.extend(_lines(results or []))
    return "\n".join(out)

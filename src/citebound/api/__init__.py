"""HTTP API: REST under /v1, an OpenAI-compatible chat endpoint, and the web page at /.

>>> from citebound.api import create_app, check_bind, KeyRing
"""

from citebound.api.app import create_app
from citebound.api.runtime import ApiRuntime
from citebound.api.security import KeyRing, Principal, check_bind, hash_key, is_loopback, new_key
from citebound.contracts.api import (
    AnswerView,
    DocumentView,
    FeedbackRequest,
    Problem,
    SourceView,
    StageView,
    StepRequest,
    StepResponse,
)
from citebound.contracts.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionRequest

__all__ = [
    "AnswerView",
    "ApiRuntime",
    "ChatCompletion",
    "ChatCompletionChunk",
    "ChatCompletionRequest",
    "DocumentView",
    "FeedbackRequest",
    "KeyRing",
    "Principal",
    "Problem",
    "SourceView",
    "StageView",
    "StepRequest",
    "StepResponse",
    "check_bind",
    "create_app",
    "hash_key",
    "is_loopback",
    "new_key",
]

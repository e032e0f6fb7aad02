"""The one onnxruntime session set-up of every model citebound loads.

Every `InferenceSession` of the package is made by `open_session` (a test greps src/ for it):
the embedder (`index/embedder.py`, through the optimised-graph cache `models/onnx_cache.py`),
the int8 pre-scan (`index/quantized.py`), the ONNX reranker (`rerank/onnx_cross_encoder.py`)
and the verifier's NLI model (`validate/nli.py`). Loaders call `citebound.models.session`;
they choose only a `SessionSettings` (thread counts) and whether to use the cache. The rest is
the same for every model and its reasons are in `SessionSettings.options`: CPU provider only,
no spinning threads, errors-only logging, ORT_ENABLE_ALL. A missing or unreadable model file
is a `ConfigError` that names the file and the setting.

onnxruntime is imported on first use only: `citebound ask --help` and the CLI's first screen
never import it (tests/core/test_core_cli_startup.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citebound.errors import ConfigError

if TYPE_CHECKING:
    import onnxruntime as ort

# CPU only: answers must not depend on which accelerator a machine has, and the kernels the
# tests pin (bit-exact vectors, the int8 scan's exact integer dot products) are the CPU ones.
PROVIDERS = ["CPUExecutionProvider"]
# Errors only: onnxruntime's warnings would print on stderr, under the CLI's output.
LOG_ERRORS_ONLY = 3
# The saved optimised graph's weights (`SessionSettings.options(save_optimized=...)`).
SAVED_WEIGHTS = "weights.bin"
# Weights of at least this many bytes go to SAVED_WEIGHTS (memory-mapped on load).
EXTERNAL_MIN_BYTES = 1024


@dataclass(frozen=True)
class SessionSettings:
    """What a loader chooses about its session; everything else is the package's.

    `threads` (intra-op): each output row of every model here is computed by one pass, so
    results do not depend on it (0 = onnxruntime's default, one per core). `inter_op_threads`:
    each loader keeps the value it had before this module, 1 or 0 (onnxruntime's default). It
    sizes the thread pool of ORT_PARALLEL execution only; every session here runs
    ORT_SEQUENTIAL, which starts no inter-op threads, so both values start the same threads.
    """

    threads: int = 1
    inter_op_threads: int = 1

    def options(
        self, *, optimize: bool = True, save_optimized: Path | None = None
    ) -> ort.SessionOptions:
        """Fresh SessionOptions with these settings.

        Args:
            optimize: ORT_ENABLE_ALL (onnxruntime's default); False loads a graph as it is
                (ORT_DISABLE_ALL: a graph `save_optimized` wrote, already optimised).
            save_optimized: write the optimised graph there, its weights of 1 KiB or more as
                external data in `weights.bin` beside it (memory-mapped when loaded back).
        """
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = self.inter_op_threads
        opts.log_severity_level = LOG_ERRORS_ONLY
        # No busy-waiting threads after a run: they would steal the cores that numpy's mat-vec,
        # tantivy and the next model need right after (on a 2-core host, most of the machine),
        # and other processes' cores.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # ORT_ENABLE_ALL is onnxruntime's default, written out because the optimised-graph cache
        # departs from it: it saves the optimised graph once and loads that back with
        # optimisation off (same outputs bit for bit, checked by its probe).
        level = ort.GraphOptimizationLevel
        opts.graph_optimization_level = level.ORT_ENABLE_ALL if optimize else level.ORT_DISABLE_ALL
        if save_optimized is not None:
            opts.optimized_model_filepath = str(save_optimized)
            opts.add_session_config_entry(
                "session.optimized_model_external_initializers_file_name", SAVED_WEIGHTS
            )
            opts.add_session_config_entry(
                "session.optimized_model_external_initializers_min_size_in_bytes",
                str(EXTERNAL_MIN_BYTES),
            )
        return opts

    def cache_identity(self) -> dict[str, str]:
        """These settings as part of the optimised-graph cache's entry key.

        The same dict as before this module existed (inter_op_threads joins only when not 0,
        the embedder's value), so entries already on disk stay valid: a changed key would cost
        every machine one slow start and ~90 MB more until pruned.
        """
        key = {"intra_op_num_threads": str(self.threads), "spinning": "0"}
        if self.inter_op_threads:
            key["inter_op_num_threads"] = str(self.inter_op_threads)
        return key


def open_session(model: Path | bytes, options: ort.SessionOptions) -> ort.InferenceSession:
    """The package's only `InferenceSession` construction: `model` on the CPU provider.

    Errors are onnxruntime's own (`session` maps them for a model file the user named).
    """
    import onnxruntime as ort

    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, options, providers=PROVIDERS)


def session(
    model: Path | bytes,
    *,
    threads: int = 1,
    inter_op_threads: int = 1,
    optimized_cache: bool = False,
    field: str | None = None,
    source: str | None = None,
) -> ort.InferenceSession:
    """An onnxruntime session of `model` (a file, or the bytes of one the package generates).

    Args:
        model: `model.onnx` path, or serialized ONNX bytes.
        threads: intra-op threads (0 = onnxruntime's default).
        inter_op_threads: see the module docstring (no effect on ORT_SEQUENTIAL sessions).
        optimized_cache: load the optimised graph from the per-machine cache
            (`models/onnx_cache.py`) and write it there on a miss. Only for a BERT-style text
            encoder (inputs input_ids, attention_mask[, token_type_ids]): the cached graph is
            used only when its output on a fixed token probe equals the original's bit for bit.
        field: the configuration field that named the file, for the error.
        source: what the error names as its source (default: the model file).

    Raises:
        ConfigError: the file is missing, or onnxruntime cannot load it (damaged, truncated,
            not ONNX, or an opset this onnxruntime lacks).

    Example:
        >>> from citebound.models import session
        >>> s = session(Path("model.onnx"), threads=1)  # doctest: +SKIP
    """
    settings = SessionSettings(threads=threads, inter_op_threads=inter_op_threads)
    if isinstance(model, bytes):  # generated by the package: a failure is a bug, not config
        return open_session(model, settings.options())
    path = Path(model)
    where = f" (set by `{field}`)" if field else ""
    if not path.is_file():
        raise ConfigError(
            f"ONNX model file not found: {path}{where}; point the setting at an existing "
            "model.onnx, or export the model again",
            field=field,
            source=source or str(path),
        )
    try:
        if optimized_cache:
            # Lazy: onnx_cache imports this module (open_session, SessionSettings).
            from citebound.models.onnx_cache import load_session

            return load_session(path, settings)
        return open_session(path, settings.options())
    except Exception as err:  # onnxruntime raises its own Fail/InvalidGraph/InvalidProtobuf types
        raise ConfigError(
            f"cannot load ONNX model {path}{where}: {err}. The file is damaged or not an ONNX "
            "model onnxruntime can read: export it again (or reinstall the package that "
            "ships it)",
            field=field,
            source=source or str(path),
        ) from None


__all__ = ["SessionSettings", "open_session", "session"]

"""The dense model run by onnxruntime with int8 weights instead of torch (issues 24 and 28: "the encoder is the floor").

Importing sentence-transformers (transformers, torch, scikit-learn) takes about 9 s on two cores, most of a
one-shot ``minerva ask``; torch then embeds a question in ~10-21 ms. The same weights exported once to ONNX,
their projections quantized to 8-bit integers (`QUANTIZATION`), and run by onnxruntime with the model's own
tokenizer (the ``tokenizers`` library) load in under a second, embed a question in ~1-2 ms and chunks
several times faster than torch, with vectors at a cosine of ~0.99 to torch's (benchmarks/onnx_int8.py).

The export needs torch and the ``onnx`` package; it runs once per machine, at the first use of the model
(`load` with ``export``, from `knowledge.embedding.load_embedder`: ~10 s to import torch, ~5 s to export), and
from then on torch is never imported; ``MINERVA_ONNX=0`` keeps torch (the fallback). It covers sentence-transformers models made of a Transformer, mean pooling and (optionally)
normalisation, the layout of the packaged all-MiniLM-L6-v2; any other model keeps running on torch. The file
(about 59 MB, most of it the embedding tables, which stay float; never in the repository) is a cache shared
by every home on the machine, like the model hubs' caches: ``$MINERVA_MODEL_CACHE``, else
``$XDG_CACHE_HOME/minerva/models``, else ``~/.cache/minerva/models``; its name changes with the weights,
Minerva's version and `EXPORT_FORMAT`, so a new model, release or format is exported again rather than read
stale (an older release's file is left in place for that release).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import structlog

from config import EmbeddingConfig

log = structlog.get_logger(__name__)

#: ONNX operator set of the export: 17 is read by every onnxruntime release since 1.13 (2022).
OPSET = 17

#: What the cached file holds, part of its name: a change here (another quantization) names a new file, so
#: a cache written by an older release is exported again, never read as the new format.
EXPORT_FORMAT = "int8mm1"

#: `onnxruntime.quantization.quantize_dynamic` arguments of the shipped export: the weights of the
#: projections (MatMul with a constant weight) as signed 8-bit integers with one scale per output channel;
#: the embedding tables (Gather) stay float. Chosen in `benchmarks/onnx_int8.py` (issue 24 item 3) among
#: per-tensor / per-channel, QInt8 / QUInt8, with and without the embeddings and the FFN output projections:
#: the cheapest variant whose SciFact nDCG@10 stays within 0.005 of torch (results/onnx_int8.json).
QUANTIZATION = {"per_channel": True, "op_types_to_quantize": ["MatMul"]}


def model_cache() -> Path:
    """The folder of exported models (module docstring)."""
    if os.environ.get("MINERVA_MODEL_CACHE"):
        return Path(os.environ["MINERVA_MODEL_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "minerva" / "models"


def exported_path(cfg: EmbeddingConfig) -> Path | None:
    """Where the ONNX export of ``cfg.model`` lives (`model_cache`), or None for a model this module does not
    run (not a local sentence-transformers folder of Transformer + mean pooling). Cheap: reads two small
    JSON files and the weights' size and time, never the weights."""
    folder = _model_folder(cfg.model)
    if folder is None or not _mean_pooled(folder):
        return None
    weights = folder / "model.safetensors"
    if not weights.exists():
        return None
    stat = weights.stat()
    key = hashlib.sha256(f"{folder}|{stat.st_size}|{stat.st_mtime_ns}|{OPSET}|{_package_version()}".encode())
    name = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in cfg.model)[-60:]
    return model_cache() / f"{name}-{key.hexdigest()[:16]}-{EXPORT_FORMAT}.onnx"


def _package_version() -> str:
    """Minerva's installed version ("dev" when run from a checkout that is not installed): part of the cache
    key, so an upgrade exports again rather than trusting a file an older exporter wrote."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("minerva")
    except PackageNotFoundError:
        return "dev"


def export_for(cfg: EmbeddingConfig) -> Path | None:
    """Export ``cfg.model`` to ONNX (`exported_path`) unless it is there already; returns the
    file, or None when the model cannot be exported here (another layout, or torch / ``onnx`` missing: a
    warning is logged and everything keeps running on torch; or ``MINERVA_ONNX=0`` is set). The float export is then quantized
    (`QUANTIZATION`). Takes ~5 s; written to temporary names and renamed, so a crash never leaves half a model
    where `load` would read it."""
    if os.environ.get("MINERVA_ONNX") == "0":  # torch asked for: nothing to export for
        return None
    target = exported_path(cfg)
    if target is None or target.exists():
        return target
    try:
        import onnx  # noqa: F401  (torch's exporter needs it; checked here for a clear message)
        import torch
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from transformers import AutoModel
    except ImportError as exc:
        log.warning("onnx.export_skipped", model=cfg.model, reason=f"{exc.name} is not installed")
        return None
    folder = _model_folder(cfg.model)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    floats = target.with_suffix(f".{os.getpid()}.float.part")
    try:
        # eager attention: one plain graph, no branch on the mask's values for the tracer to freeze
        _export(AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval(), torch, floats)
        quantize_dynamic(str(floats), str(partial), weight_type=QuantType.QInt8, **QUANTIZATION)
        partial.replace(target)
    except Exception as exc:  # an exporter failure must not fail the ingest that asked for it
        partial.unlink(missing_ok=True)
        log.warning("onnx.export_failed", model=cfg.model, error=repr(exc))
        return None
    finally:
        floats.unlink(missing_ok=True)
    log.info("onnx.exported", model=cfg.model, bytes=target.stat().st_size)
    return target


def _export(bert, torch, path: Path) -> None:
    """Write ``bert``'s last hidden state as a function of (input_ids, attention_mask, token_type_ids)."""

    class LastHidden(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    # traced on a padded batch, so the graph keeps the masking a padded batch needs (a trace of an all-ones
    # mask may drop it as a constant)
    ids = torch.ones(2, 8, dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]}
    # the tracer warns that data-dependent branches of the transformer code are frozen for this shape ("might
    # cause the trace to be incorrect"): true of a trace, harmless here (the exported vectors equal torch's,
    # tests/knowledge/test_onnx_encoder.py), and alarming to a user reading the first ingest's output
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", UserWarning)
        torch.onnx.export(LastHidden(bert), (ids, mask, torch.zeros_like(ids)), str(path),
                          input_names=names, output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=OPSET, dynamo=False)


class OnnxEmbedder:
    """`knowledge.embedding.Embedder` over an exported model: the same name, dimension and vectors as the
    sentence-transformers model it was exported from, so an index built by either reads with the other."""

    def __init__(self, cfg: EmbeddingConfig, path: Path, *, one_by_one: bool = True, workers: int | None = None):
        """``one_by_one``: run each text alone. The int8 export scales its activations per run (dynamic
        quantization), so a text batched with others gets a slightly different vector (cosine ~0.99) than
        alone: one by one, a text's vector never depends on its neighbours (a re-sync equals a sync from
        nothing), and no run holds padding.

        ``workers``: runs at a time (default `default_workers`), each on one thread. A run of one text is too
        small to share between threads (onnxruntime's two threads meet at every operator, and spin while they
        wait, which a busy machine punishes), so the texts of one call are shared out between workers instead:
        the same vectors, and every core busy."""
        import onnxruntime as ort
        from tokenizers import Tokenizer

        folder = _model_folder(cfg.model)
        self.name = cfg.model
        self._cfg = cfg
        self._one_by_one = one_by_one
        self._workers = max(1, workers or default_workers())
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(_max_tokens(folder))
        self._tokenizer.no_padding()  # each batch is padded to its own longest text (`_embed_batch`)
        options = ort.SessionOptions()
        options.log_severity_level = 3  # its warnings about unused initializers are noise to a user
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.dim = int(self._session.get_outputs()[0].shape[-1])
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="onnx") if self._workers > 1 else None

    def embed(self, texts: list[str], *, kind: str = "passage") -> np.ndarray:
        """See `knowledge.embedding.Embedder.embed`: float32 (len(texts), dim), unit norm; config prefixes
        added as for torch. Each text is run alone (``one_by_one``, the default), else in batches of
        ``embedding.batch_size`` texts of similar length; the batches are shared out between the workers
        (`OnnxEmbedder`); the rows come back in the order of ``texts``."""
        prefix = self._cfg.query_prefix if kind == "query" else self._cfg.passage_prefix
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        step = 1 if self._one_by_one else max(1, self._cfg.batch_size)
        with self._lock:
            encoded = self._tokenizer.encode_batch([prefix + t for t in texts])
            order = np.argsort([len(e.ids) for e in encoded], kind="stable")
            batches = [order[start:start + step] for start in range(0, len(texts), step)]
            if self._pool is None or len(batches) == 1:
                for rows in batches:
                    out[rows] = self._embed_batch([encoded[i] for i in rows])
                return out
            # worker k takes batches k, k + workers, ...: long and short texts alike for each
            shares = [batches[k::self._workers] for k in range(self._workers)]
            for share, vectors in zip(shares, self._pool.map(lambda part: [self._embed_batch(
                    [encoded[i] for i in rows]) for rows in part], shares)):
                for rows, rows_vectors in zip(share, vectors):
                    out[rows] = rows_vectors
        return out

    def _embed_batch(self, encoded: list) -> np.ndarray:
        """Mean of the token states under the attention mask, L2-normalised (sentence-transformers' Pooling
        with ``pooling_mode_mean_tokens`` and Normalize). ``encoded``: the tokenizer's encodings, unpadded."""
        width = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)  # padding positions are masked out: any id does
        mask = np.zeros_like(ids)
        for row, e in enumerate(encoded):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        states = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                          "token_type_ids": np.zeros_like(ids)})[0]
        summed = (states * mask[..., None]).sum(axis=1)
        vectors = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return (vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def default_workers() -> int:
    """Texts embedded at a time by `OnnxEmbedder`: the machine's cores (``os.cpu_count``), at most 4."""
    return max(1, min(os.cpu_count() or 1, 4))


def load(cfg: EmbeddingConfig, *, export: bool = False) -> OnnxEmbedder | None:
    """The exported model for ``cfg`` (`exported_path`) when there is one and onnxruntime is installed; else
    None (the caller loads torch). With ``export``, a model not exported yet is exported first (`export_for`).
    ``MINERVA_ONNX=0`` in the environment always gives None: torch runs."""
    if os.environ.get("MINERVA_ONNX") == "0":  # the operator's switch back to torch (docs/install.md)
        return None
    path = exported_path(cfg)
    if path is not None and not path.exists() and export:
        path = export_for(cfg) or path
    if path is None or not path.exists():
        return None
    try:
        return OnnxEmbedder(cfg, path)
    except ImportError as exc:
        log.warning("onnx.unavailable", reason=f"{exc.name} is not installed")
    except Exception as exc:  # a damaged file: torch still answers
        log.warning("onnx.load_failed", path=path.name, error=repr(exc))
    return None


def _model_folder(model: str) -> Path | None:
    """The local folder of a sentence-transformers model (packaged name or path), or None."""
    from knowledge.embedding import PACKAGED_MODELS, resolve_model_path

    if model not in PACKAGED_MODELS and not Path(model).is_dir():
        return None
    try:
        folder = Path(resolve_model_path(model))
    except Exception:
        return None
    return folder if (folder / "tokenizer.json").exists() else None


def _mean_pooled(folder: Path) -> bool:
    """Whether the model is Transformer → mean pooling (→ Normalize), read from its sentence-transformers files."""
    try:
        modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((folder / "modules.json").read_text())]
        pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return False
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
    return modules[:2] == ["Transformer", "Pooling"] and set(modules[2:]) <= {"Normalize"} \
        and modes == ["pooling_mode_mean_tokens"]


def _max_tokens(folder: Path) -> int:
    """The model's ``max_seq_length`` (sentence_bert_config.json), else 512."""
    try:
        return int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return 512

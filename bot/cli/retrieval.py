"""Retrieval evaluation commands: `minerva eval` on BEIR folders (called from bot.cli) and `minerva fit-fusion`.

Each is a thin layer over `knowledge.beir`: parse flags, call, print a table (or JSON).
"""

from __future__ import annotations

import json
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import click

#: Rows of the metrics table: (label, key in BeirReport.to_json()).
TABLE_ROWS = (("nDCG@10", "ndcg@10"), ("recall@10", "recall@10"), ("recall@100", "recall@100"),
              ("MRR@10", "mrr@10"), ("queries/s", "queries_per_second"))


def is_beir_dataset(folder: str) -> bool:
    """Whether ``minerva eval`` should treat ``folder`` as BEIR (files present, or a to_beir.py converter)."""
    from knowledge.beir import is_beir_folder

    return is_beir_folder(Path(folder)) or (Path(folder) / "to_beir.py").is_file()


def eval_beir(obj, dataset: str, *, mode: str, subset: int | None, split: str, distractors: int | None,
              cache_dir: str | None, convert: bool, as_json: bool) -> None:
    """`minerva eval` for a BEIR folder: index (cached), search every judged query, print the metrics."""
    from knowledge.beir import evaluate_beir, load_beir
    from knowledge.beir import subset as take_subset

    cache = Path(cache_dir) if cache_dir else obj.home / "eval-cache"
    with _beir_folder(Path(dataset), convert) as folder:
        data = load_beir(folder, split, name=Path(dataset).resolve().name)
    data = take_subset(data, subset, distractors=distractors)
    bars = _Bars(len(data.qrels))
    try:
        report = evaluate_beir(data, obj.settings, cache, mode=mode,
                               embed_progress=bars.embedded, query_progress=bars.searched)
    finally:
        bars.close()
    out = report.to_json()
    if as_json:
        click.echo(json.dumps(out))
        return
    fusion = f" ({out['fusion']})" if out["fusion"] else ""
    click.echo(f"{out['dataset']} [{out['split']}]: {out['queries']:,} queries, {out['documents']:,} documents; "
               f"mode {out['mode']}{fusion}, model {out['model']}")
    click.echo(f"{'metric':<12}{'value':>10}")
    for label, key in TABLE_ROWS:
        value = out[key]
        click.echo(f"{label:<12}{value:>10.1f}" if key == "queries_per_second" else f"{label:<12}{value:>10.4f}")


@contextmanager
def _beir_folder(folder: Path, convert: bool):
    """The folder itself, or (``convert``) a scratch folder its to_beir.py wrote, removed afterwards."""
    from knowledge import KnowledgeError
    from knowledge.beir import convert_with_script, is_beir_folder

    if is_beir_folder(folder) or not (folder / "to_beir.py").is_file():
        yield folder
        return
    if not convert:
        raise KnowledgeError(f"{folder} holds a converter, not BEIR files: add --convert to build them in a "
                             f"temporary folder (or run `python3 {folder / 'to_beir.py'} OUT_DIR` and evaluate OUT_DIR)")
    with tempfile.TemporaryDirectory(prefix="minerva-beir-") as tmp:
        yield convert_with_script(folder, Path(tmp) / "beir")


class _Bars:
    """tqdm bars on stderr, opened on first progress: corpus embedding, then queries."""

    def __init__(self, n_queries: int):
        self.n_queries = n_queries
        self._embedding = self._queries = None

    def embedded(self, done: int, total: int) -> None:
        from tqdm import tqdm

        if self._embedding is None:
            self._embedding = tqdm(total=total, desc="embedding corpus", unit="doc", file=sys.stderr)
        self._embedding.update(done - self._embedding.n)

    def searched(self, n: int) -> None:
        from tqdm import tqdm

        if self._queries is None:
            self._queries = tqdm(total=self.n_queries, desc="queries", unit="q", file=sys.stderr)
        self._queries.update(n)

    def close(self) -> None:
        for bar in (self._embedding, self._queries):
            if bar is not None:
                bar.close()


def register(cli: click.Group) -> None:
    """Add `minerva fit-fusion` to ``cli`` (`minerva eval` lives in bot.cli and calls `eval_beir`)."""

    @cli.command("fit-fusion")
    @click.argument("dataset", type=click.Path(exists=True, file_okay=False))
    @click.option("--split", default="train", show_default=True,
                  help="qrels split to fit on; never the split you report (SciFact: train).")
    @click.option("--subset", type=click.IntRange(1), help="Fit on this many judged queries (seeded sample).")
    @click.option("--cache-dir", type=click.Path(file_okay=False), help="Index and embedding cache (default: HOME/eval-cache).")
    @click.option("--json", "as_json", is_flag=True)
    @click.pass_obj
    def fit_fusion(obj, dataset: str, split: str, subset: int | None, cache_dir: str | None, as_json: bool) -> None:
        """Fit the dense weight of convex fusion on a BEIR split and compare it with RRF; prints the YAML.

        Paste the printed block under `retrieval:` in your config.
        """
        from tqdm import tqdm

        from knowledge.beir import DENSE_WEIGHTS, fit_dense_weight, load_beir
        from knowledge.beir import subset as take_subset

        cache = Path(cache_dir) if cache_dir else obj.home / "eval-cache"
        data = take_subset(load_beir(Path(dataset), split), subset)
        with tqdm(total=len(DENSE_WEIGHTS) + 1, desc="fusion runs", file=sys.stderr) as bar:
            fit = fit_dense_weight(data, obj.settings, cache, progress=bar.update)
        if as_json:
            click.echo(json.dumps({**fit, "convex": {str(w): v for w, v in fit["convex"].items()}}))
            return
        click.echo(f"nDCG@10 on {data.name} [{split}], {fit['queries']} queries:")
        click.echo(f"  rrf (k={obj.settings.retrieval.rrf_k}): {fit['rrf']:.4f}")
        for w, value in fit["convex"].items():
            click.echo(f"  convex w={w:<4} {value:.4f}{'  <- best' if w == fit['best_weight'] else ''}")
        fusion = "convex" if fit["best_ndcg@10"] > fit["rrf"] else "rrf"
        click.echo("  retrieval:")
        click.echo(f"    fusion: {fusion}")
        click.echo(f"    dense_weight: {fit['best_weight']}")

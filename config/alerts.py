"""Typed alerting settings from ``config/alerts.yaml``: rules, routing, digests and job schedules.

Loaded once by the entry point (`bot.cli`, `bot.slack.server`) and passed down; unknown keys are rejected with
the list of known ones, as in `config.settings`. Example::

    cfg = load_alerts_config()                      # the bundled config/alerts.yaml
    cfg.rule("stale_document").muted_during_reindex # True (matched by the "stale_*" pattern)
    cfg.schedule.jobs["daily_digest"].cron          # "0 9 * * *"

Rule names are exact alert names or shell-style patterns (``stale_*``); an exact name wins, then the first
matching pattern in file order, then ``defaults``. A rule lists only the keys it changes.
"""

from __future__ import annotations

import fnmatch
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path


from config.settings import ConfigError, Settings, _build, read_yaml_mapping

#: The finding and alert severities, most urgent first (routing: now / daily digest / weekly digest).
#: Defined here, in config, so the alerting config can check them without importing `jobs`;
#: `jobs.findings` re-exports it.
SEVERITIES = ("critical", "warning", "info")

#: The bundled alerting config, used when no ``alerts.yaml`` sits beside the main config file.
DEFAULT_ALERTS_CONFIG = Path(__file__).with_name("alerts.yaml")


@dataclass
class RuleConfig:
    """How the alert layer treats one alert name.

    Attributes:
        severity: overrides the finding's severity ("critical", "warning", "info"); None keeps it.
        fire_after: N bad evaluations in a row before pending becomes firing (hysteresis), >= 1.
        resolve_after: M good evaluations in a row before firing becomes resolved, >= 1.
        repeat_interval_hours: a still-firing alert is notified again after this long; 4 h is
            Alertmanager's default (notes/monitoring.md).
        cooldown_minutes: no two notifications of one alert closer than this, even when it resolved and
            fired again in between (flapping).
        kill_switch: a critical alert of this name takes content out of search when it starts firing
            (jobs.killswitch); what, is ``kill_switch_scope``.
        kill_switch_scope: "documents" (default): quarantine the documents the finding names (its
            ``documents`` annotation, else its ``doc_id`` label) — for signals users can cause (wrong-answer
            reports); "collection": disable the whole collection — only for signals users cannot cause (a
            permission leak). Issue 11 item 3.
        muted_during_reindex: not notified while its collection is being re-indexed (inhibition).
    """

    severity: str | None = None
    fire_after: int = 1
    resolve_after: int = 2
    repeat_interval_hours: float = 4.0
    cooldown_minutes: float = 30.0
    kill_switch: bool = False
    kill_switch_scope: str = "documents"
    muted_during_reindex: bool = False

    def __post_init__(self) -> None:
        if self.severity is not None and self.severity not in SEVERITIES:
            raise ConfigError(f"severity must be one of {SEVERITIES}, not {self.severity!r}")
        if self.fire_after < 1 or self.resolve_after < 1:
            raise ConfigError("fire_after and resolve_after must be >= 1")
        if self.kill_switch_scope not in ("documents", "collection"):
            raise ConfigError(f"kill_switch_scope must be 'documents' or 'collection', not {self.kill_switch_scope!r}")
        if self.repeat_interval_hours <= 0 or self.cooldown_minutes < 0:
            raise ConfigError("repeat_interval_hours must be > 0 and cooldown_minutes >= 0")


@dataclass
class RoutingConfig:
    """Slack channel ids by route: critical → ``alert_channel`` at once, warning → daily, info → weekly.

    An empty value falls back to ``slack.alert_channel`` / ``slack.digest_channel`` of the main config
    (see `alerts_config_for`); still empty means that route is not posted (logged).
    """

    alert_channel: str = ""
    daily_digest_channel: str = ""
    weekly_digest_channel: str = ""


@dataclass
class DigestConfig:
    """Digest layout and pacing.

    Attributes:
        top_items: items per alert type in the main message; the rest go to a thread reply.
        seconds_between_posts: pause between two messages to one channel (Slack allows about 1 message
            per second per channel, notes/slack.md).
        report_window_days: the weekly report's window.
    """

    top_items: int = 3
    seconds_between_posts: float = 1.0
    report_window_days: int = 7

    def __post_init__(self) -> None:
        if self.top_items < 1 or self.seconds_between_posts < 0 or self.report_window_days < 1:
            raise ConfigError("digest: top_items and report_window_days must be >= 1, seconds_between_posts >= 0")


@dataclass
class ScheduleEntry:
    """When a job runs: exactly one of ``cron`` (5 fields; weekdays by name, since APScheduler 3.x counts
    0 = Monday, not Sunday) or ``interval_minutes``."""

    cron: str = ""
    interval_minutes: float = 0.0

    def __post_init__(self) -> None:
        if bool(self.cron) == bool(self.interval_minutes):
            raise ConfigError("a schedule entry needs exactly one of cron or interval_minutes")
        if self.interval_minutes < 0:
            raise ConfigError("interval_minutes must be > 0")
        if self.cron:
            from apscheduler.triggers.cron import CronTrigger

            try:
                CronTrigger.from_crontab(self.cron, timezone="UTC")
            except ValueError as exc:
                raise ConfigError(f"cron {self.cron!r}: {exc}") from None

    def describe(self) -> str:
        """Human form, e.g. ``"cron 0 9 * * *"`` or ``"every 5 min"``."""
        return f"cron {self.cron}" if self.cron else f"every {self.interval_minutes:g} min"


@dataclass
class ScheduleConfig:
    """The scheduler inside ``minerva serve``.

    Attributes:
        timezone: IANA zone for every trigger (cron times are read in it), e.g. "Asia/Seoul".
        job_timeout_minutes: a run taking longer is recorded as failed (the thread cannot be killed).
        misfire_grace_seconds: a run delayed up to this long still runs (APScheduler's 1 s default drops
            runs, notes/monitoring.md).
        jobs: job name → entry; signal jobs not listed use ``default_signal``.
        default_signal: schedule of a signal job without its own entry.
    """

    timezone: str = "UTC"
    job_timeout_minutes: float = 15.0
    misfire_grace_seconds: int = 300
    jobs: dict[str, ScheduleEntry] = field(default_factory=dict)
    default_signal: ScheduleEntry = field(default_factory=lambda: ScheduleEntry(cron="0 * * * *"))

    def __post_init__(self) -> None:
        try:
            zoneinfo.ZoneInfo(self.timezone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"schedule.timezone: unknown time zone {self.timezone!r}") from None

    def entry(self, job: str) -> ScheduleEntry:
        """The schedule of ``job`` (its own entry, else ``default_signal``)."""
        return self.jobs.get(job) or self.default_signal


@dataclass
class AlertsConfig:
    """Everything the alert layer and the scheduler read from ``alerts.yaml``.

    Attributes:
        defaults: the rule every alert starts from.
        rules: alert name or pattern → rule (already merged over ``defaults``).
        routing: channels per route.
        digest: digest layout.
        schedule: job schedules.
        reindex_mark_max_hours: a re-index still marked running after this long is treated as crashed,
            and no longer mutes alerts.
    """

    defaults: RuleConfig = field(default_factory=RuleConfig)
    rules: dict[str, RuleConfig] = field(default_factory=dict)
    routing: RoutingConfig = field(default_factory=RoutingConfig)
    digest: DigestConfig = field(default_factory=DigestConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    reindex_mark_max_hours: float = 6.0
    path: Path | None = None

    def rule(self, alert: str) -> RuleConfig:
        """The rule for alert name ``alert``: exact name, else the first matching pattern, else defaults."""
        if alert in self.rules:
            return self.rules[alert]
        for pattern, rule in self.rules.items():
            if fnmatch.fnmatchcase(alert, pattern):
                return rule
        return self.defaults


_TOP_KEYS = ("defaults", "rules", "routing", "digest", "schedule", "reindex_mark_max_hours")


def load_alerts_config(path: str | Path | None = None) -> AlertsConfig:
    """Load and validate an alerting config file.

    Args:
        path: YAML file; None means the bundled ``config/alerts.yaml``.

    Returns:
        AlertsConfig with every rule merged over ``defaults``.

    Raises:
        ConfigError: missing or unreadable file, invalid YAML, an unknown key, a wrong type, a bad severity,
            time zone or cron expression. The message names the file and the key.
    """
    path = Path(path) if path else DEFAULT_ALERTS_CONFIG
    raw = read_yaml_mapping(path, "alerts config")
    try:
        cfg = _from_mapping(raw)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    cfg.path = path.resolve()
    return cfg


def alerts_config_for(settings: Settings) -> AlertsConfig:
    """The alerting config that goes with ``settings``: ``alerts.yaml`` beside its file, else the bundled one.

    Empty routing channels are filled from ``settings.slack`` (``alert_channel``, ``digest_channel``).
    """
    beside = settings.path.parent / "alerts.yaml" if settings.path else None
    cfg = load_alerts_config(beside if beside and beside.is_file() else None)
    routing = cfg.routing
    routing.alert_channel = routing.alert_channel or settings.slack.alert_channel
    routing.daily_digest_channel = routing.daily_digest_channel or settings.slack.digest_channel
    routing.weekly_digest_channel = routing.weekly_digest_channel or settings.slack.digest_channel
    return cfg


def _from_mapping(raw) -> AlertsConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"top level must be a mapping, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(_TOP_KEYS))
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} (known keys: {', '.join(_TOP_KEYS)})")
    defaults_raw = _mapping(raw.get("defaults") or {}, "defaults")
    defaults = _build(RuleConfig, defaults_raw, where="defaults.")
    rules = {
        str(name): _build(RuleConfig, {**defaults_raw, **_mapping(rule or {}, f"rules.{name}")}, where=f"rules.{name}.")
        for name, rule in _mapping(raw.get("rules") or {}, "rules").items()
    }
    schedule_raw = dict(_mapping(raw.get("schedule") or {}, "schedule"))
    jobs = {
        str(name): _build(ScheduleEntry, entry, where=f"schedule.jobs.{name}.")
        for name, entry in _mapping(schedule_raw.pop("jobs", None) or {}, "schedule.jobs").items()
    }
    schedule = _build(ScheduleConfig, schedule_raw, where="schedule.")
    schedule.jobs = jobs
    max_hours = raw.get("reindex_mark_max_hours", 6.0)
    if isinstance(max_hours, bool) or not isinstance(max_hours, (int, float)) or max_hours <= 0:
        raise ConfigError(f"reindex_mark_max_hours must be a number > 0, got {max_hours!r}")
    return AlertsConfig(
        defaults=defaults,
        rules=rules,
        routing=_build(RoutingConfig, raw.get("routing") or {}, where="routing."),
        digest=_build(DigestConfig, raw.get("digest") or {}, where="digest."),
        schedule=schedule,
        reindex_mark_max_hours=float(max_hours),
    )


def _mapping(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a mapping, got {type(value).__name__}")
    return value

"""What monitoring jobs produce and alerting consumes: `Finding`s, and the `JobContext` jobs run with.

A signal job (coverage, freshness, bad documents, citation health, drift, …) is a function
``run(ctx: JobContext) -> list[Finding]``; the alert layer turns findings into deduplicated alerts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from config.alerts import SEVERITIES  # defined in config (config must not import jobs); re-exported here


@dataclass(frozen=True)
class Finding:
    """One problem a job found.

    Attributes:
        alert: alert name, e.g. "bad_document", "coverage_gap", "stale_document", "drift".
        severity: "critical", "warning" or "info" (routing: now / daily digest / weekly digest).
        labels: identity of the problem (fingerprinted), e.g. {"doc_id": "handbook:tools/tock.md"};
            never volatile values.
        value: the measured value (e.g. thumbs-up rate 0.21).
        threshold: the rule's threshold (e.g. 0.3), with its source in the job's docstring.
        n: how many observations the value rests on.
        summary: one human sentence.
        link: URL or path to look at, or "".
        annotations: volatile extras (intervals, top items), shown but not fingerprinted.
    """

    alert: str
    severity: str
    labels: dict[str, str]
    value: float
    threshold: float
    n: int
    summary: str
    link: str = ""
    annotations: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, not {self.severity!r}")


@dataclass
class JobContext:
    """Everything a job may use. ``kb`` is None when no index is needed or none exists."""

    settings: Any
    home: Path
    store: Any
    now: datetime
    kb: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

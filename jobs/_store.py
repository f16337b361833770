"""Names the alerting modules used to share, now owned by `feedback` (issue 13: one owner for every table).

The alert tables' queries live in `feedback.alerting`, `feedback.switches`, `feedback.job_runs` and
`feedback.review_queue`; the jobs call them with a connection from ``store.transaction()`` or
``store.snapshot()``. The one timestamp formatter and parser are `feedback.utc_iso` / `feedback.parse_utc`.
This module only re-exports them under their old names for callers not yet moved; it defines nothing.
"""

from __future__ import annotations

from feedback import parse_utc as parse_iso
from feedback import utc_iso as iso
from feedback import utcnow
from feedback.alerting import AlertingError, AmbiguousFingerprint, UnknownAlert
from feedback.alerting import json_text as dumps

__all__ = ["AlertingError", "AmbiguousFingerprint", "UnknownAlert", "dumps", "iso", "parse_iso", "utcnow"]

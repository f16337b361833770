"""The feedback store's schema, written once as SQLAlchemy Core tables, for SQLite and PostgreSQL alike.

A new store (a new SQLite file or an empty PostgreSQL database) is created from `METADATA` in one
transaction and stamped with the newest schema version (`feedback.migrations`). SQLite files made by
older Minervas reach the same schema through their append-only migrations; `tests/feedback/
test_schema.py` checks that both routes give the same tables, columns and indexes.

Conventions (kept from the SQLite-only schema, so existing files need no data rewrite):

- times are ISO-8601 UTC text of one fixed width (`feedback._time.utc_iso`), so they sort as text;
- booleans are INTEGER 0/1 with a CHECK where the column is a flag the jobs filter on;
- JSON is TEXT (``json.dumps``), parsed in Python, never in SQL, so no JSON dialect is needed;
- "AUTOINCREMENT" ids (``sqlite_autoincrement``) are never reused after a delete, on SQLite as on
  PostgreSQL's sequences.

Column comments in the table definitions say what each holds; the writer of each table is named on it.
"""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    text,
)

METADATA = MetaData()


def _answer_ref() -> ForeignKey:
    return ForeignKey("answers.answer_id", ondelete="CASCADE")


#: One row per question (answered or refused); written by `feedback.answers`.
answers = Table(
    "answers", METADATA,
    Column("answer_id", Text, primary_key=True),
    Column("question", Text, nullable=False),
    Column("channel", Text),
    Column("thread_ts", Text),
    Column("user_id", Text),
    Column("source", Text, nullable=False),            # "slack" | "cli"
    Column("language", Text, nullable=False),
    Column("retrieved", Text, nullable=False),         # JSON list of {chunk_id, doc_id, score, ...}
    Column("cited_doc_ids", Text, nullable=False),     # JSON list of doc ids, citation order
    Column("visibility", Text),                        # JSON list of visibility labels, or NULL
    Column("refused", Integer, nullable=False),
    Column("low_confidence", Integer, nullable=False),
    Column("top_score", Float, nullable=False),
    Column("latency_ms", Float, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("hallucination_flag", Integer, nullable=False, server_default=text("0")),
    Column("generated", Integer, nullable=False, server_default=text("0")),
    Column("follow_up_of", Text),
    Column("redacted_at", Text),                       # set when retention removed the question text
    Column("delivered", Integer, nullable=False, server_default=text("1")),  # 0: the Slack reply never got through
    Index("idx_answers_created_at", "created_at"),
    # Covering index for the monitoring jobs' window aggregates (issue 4).
    Index("idx_answers_window", "created_at", "answer_id", "refused", "top_score", "language"),
    Index("idx_answers_thread", "channel", "thread_ts", "created_at"),
    Index("idx_answers_user", "user_id", "created_at"),  # a person's latest questions (App Home's language)
    Index("idx_answers_hallucinated", "created_at",
          sqlite_where=text("hallucination_flag = 1"), postgresql_where=text("hallucination_flag = 1")),
)

#: One row per cited document of an answer; written with the answer.
citations = Table(
    "citations", METADATA,
    Column("answer_id", Text, _answer_ref(), nullable=False),
    Column("doc_id", Text, nullable=False),
    Column("rank", Integer, nullable=False),           # 1 = first citation shown
    # 1: the direct answer came from it, so the answer's votes and reports judge it; 0: cited beside (issue 26)
    Column("answering", Integer, nullable=False, server_default="1"),
    PrimaryKeyConstraint("answer_id", "doc_id"),
    Index("idx_citations_doc_id", "doc_id"),
)

#: Slack replies that could not be posted, kept to post again (`feedback.replies`); gone once posted or given up.
reply_retries = Table(
    "reply_retries", METADATA,
    Column("answer_id", Text, _answer_ref(), primary_key=True),
    Column("channel", Text, nullable=False),
    Column("thread_ts", Text),
    Column("text", Text, nullable=False),              # the reply's fallback text
    Column("blocks", Text, nullable=False),            # JSON list of Block Kit blocks
    Column("attempts", Integer, nullable=False),       # failed posts so far
    Column("next_try_at", Text, nullable=False),
    Column("last_error", Text, nullable=False),
    Index("idx_reply_retries_due", "next_try_at"),
)

#: The retrieved passages of an answer as rows (so jobs join instead of parsing JSON); written with it.
answer_passages = Table(
    "answer_passages", METADATA,
    Column("answer_id", Text, _answer_ref(), nullable=False),
    Column("rank", Integer, nullable=False),           # 0 = best, the position in answers.retrieved
    Column("doc_id", Text, nullable=False),
    Column("chunk_id", Text, nullable=False),
    Column("score", Float, nullable=False),            # calibrated relevance in [0, 1]
    PrimaryKeyConstraint("answer_id", "rank"),
    sqlite_with_rowid=False,
)

#: 👍/👎 per answer and user, last write wins; written by `feedback.votes`.
votes = Table(
    "votes", METADATA,
    Column("answer_id", Text, _answer_ref(), nullable=False),
    Column("user_id", Text, nullable=False),
    Column("value", Text, CheckConstraint("value IN ('up', 'down')"), nullable=False),
    Column("voted_at", Text, nullable=False),          # first vote by this user on this answer
    Column("updated_at", Text, nullable=False),        # when `value` was last set
    Column("reason", Text, CheckConstraint(
        "reason IS NULL OR reason IN ('outdated', 'wrong', 'incomplete', 'not_what_i_asked')")),
    PrimaryKeyConstraint("answer_id", "user_id"),
    Index("idx_votes_answer_id", "answer_id"),
    Index("idx_votes_answer_value", "answer_id", "value"),
)

#: Slack event ids (and other idempotency keys) already handled; written by `feedback.events`.
slack_events = Table(
    "slack_events", METADATA,
    Column("key", Text, primary_key=True),
    Column("seen_at", Text, nullable=False),
)

#: "Report a wrong answer", one per answer and user; written by `feedback.flags`.
flags = Table(
    "flags", METADATA,
    Column("answer_id", Text, _answer_ref(), nullable=False),
    Column("user_id", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    PrimaryKeyConstraint("answer_id", "user_id"),
    Index("idx_flags_created_at", "created_at"),
)

#: Alerts by fingerprint, their current state; written by the alert layer (`feedback.alerting`).
alerts = Table(
    "alerts", METADATA,
    Column("fingerprint", Text, primary_key=True),
    Column("alert", Text, nullable=False),
    Column("severity", Text, CheckConstraint("severity IN ('critical', 'warning', 'info')"), nullable=False),
    Column("labels", Text, nullable=False),            # JSON object, the identity
    Column("source", Text, nullable=False),
    Column("state", Text, CheckConstraint("state IN ('pending', 'firing', 'resolved')"), nullable=False),
    Column("bad_streak", Integer, nullable=False),
    Column("good_streak", Integer, nullable=False),
    Column("value", Float),
    Column("threshold", Float),
    Column("n", Integer),
    Column("summary", Text, nullable=False),
    Column("link", Text, nullable=False),
    Column("annotations", Text, nullable=False),       # JSON object
    Column("first_seen_at", Text, nullable=False),
    Column("started_at", Text),
    Column("resolved_at", Text),
    Column("last_evaluated_at", Text, nullable=False),
    Column("last_notified_at", Text),
    Column("notified_severity", Text),
    Column("notify_count", Integer, nullable=False),
    Column("acked_at", Text),
    Column("acked_by", Text),
    Index("idx_alerts_state", "state", "severity"),
    Index("idx_alerts_source", "source"),
)

#: Each alert's event log (state changes, acks, silences, kill-switch actions); `feedback.alerting`.
alert_events = Table(
    "alert_events", METADATA,
    Column("event_id", Integer, primary_key=True, autoincrement=True),
    Column("fingerprint", Text, nullable=False),
    Column("at", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("detail", Text, nullable=False),            # JSON object
    Index("idx_alert_events_fingerprint", "fingerprint", "at"),
    sqlite_autoincrement=True,
)

#: One row per Slack post of an alert (failed ones with their error); `feedback.alerting`.
alert_notifications = Table(
    "alert_notifications", METADATA,
    Column("notification_id", Integer, primary_key=True, autoincrement=True),
    Column("fingerprint", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("route", Text, nullable=False),
    Column("channel", Text, nullable=False),
    Column("ts", Text),
    Column("sent_at", Text, nullable=False),
    Column("error", Text),
    Index("idx_alert_notifications_fingerprint", "fingerprint", "sent_at"),
    sqlite_autoincrement=True,
)

#: Silences of one alert until an expiry; `feedback.alerting`.
silences = Table(
    "silences", METADATA,
    Column("silence_id", Integer, primary_key=True, autoincrement=True),
    Column("fingerprint", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("expires_at", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("comment", Text, nullable=False),
    Index("idx_silences_fingerprint", "fingerprint", "expires_at"),
    sqlite_autoincrement=True,
)

#: One row per job run and per re-index mark (trigger "mark"); `feedback.job_runs`.
job_runs = Table(
    "job_runs", METADATA,
    Column("run_id", Integer, primary_key=True, autoincrement=True),
    Column("job", Text, nullable=False),
    Column("target", Text, nullable=False),
    Column("trigger", Text, nullable=False),
    Column("started_at", Text, nullable=False),
    Column("ended_at", Text),
    Column("outcome", Text, CheckConstraint("outcome IN ('running', 'ok', 'failed')"), nullable=False),
    Column("error", Text),
    Column("findings", Integer),
    Column("pid", Integer, nullable=False),
    Index("idx_job_runs_job", "job", "started_at"),
    sqlite_autoincrement=True,
)

def _change_log(name: str, key: str, flag: str, index: str) -> Table:
    """A switch kept as a log of changes: the latest row per ``key`` is the current state (``flag`` 0/1),
    with why, which alert (if any) and who flipped it; written by `feedback.switches`."""
    return Table(
        name, METADATA,
        Column("change_id", Integer, primary_key=True, autoincrement=True),
        Column(key, Text, nullable=False),
        Column(flag, Integer, CheckConstraint(f"{flag} IN (0, 1)"), nullable=False),
        Column("reason", Text, nullable=False),
        Column("fingerprint", Text),                   # the alert that flipped it; NULL for a manual change
        Column("changed_by", Text, nullable=False),    # "alert", "cli", or a Slack user id
        Column("changed_at", Text, nullable=False),
        Index(index, key, "change_id"),
        sqlite_autoincrement=True,
    )


#: Collection kill switch: a disabled collection is never used to answer.
kill_switch = _change_log("kill_switch", "collection", "disabled", "idx_kill_switch_collection")
#: Document quarantine: a quarantined document is never cited.
quarantine = _change_log("quarantine", "doc_id", "quarantined", "idx_quarantine_doc")

topics = Table(
    "topics", METADATA,
    Column("topic_id", Integer, primary_key=True, autoincrement=False),  # never reused or renumbered
    Column("label", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("centroid", LargeBinary, nullable=False),   # float32 mean of member question vectors
    Column("n", Integer, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
)

answer_labels = Table(
    "answer_labels", METADATA,
    Column("answer_id", Text, _answer_ref(), primary_key=True),
    Column("intent", Text, nullable=False),
    Column("topic_id", Integer, ForeignKey("topics.topic_id"), nullable=False),
    Column("created_at", Text, nullable=False),        # the answer's created_at, copied for window queries
    Column("labelled_at", Text, nullable=False),
    Index("idx_answer_labels_window", "created_at", "intent", "topic_id"),
)

#: Treatment candidates, one row per (problem, subject); `feedback.review_queue`.
review_queue = Table(
    "review_queue", METADATA,
    Column("item_id", Integer, primary_key=True, autoincrement=True),
    Column("problem", Text, nullable=False),
    Column("subject", Text, nullable=False),
    Column("signal", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("priority", Integer, nullable=False),
    Column("weight", Float, nullable=False),
    Column("reason", Text, nullable=False),
    Column("details", Text, nullable=False),           # JSON object
    Column("auto_deprecate", Integer, nullable=False),
    Column("status", Text, CheckConstraint("status IN ('open', 'done', 'dismissed')"), nullable=False),
    Column("first_seen_at", Text, nullable=False),
    Column("last_seen_at", Text, nullable=False),
    Column("closed_at", Text),
    UniqueConstraint("problem", "subject"),
    Index("idx_review_queue_status", "status", "priority"),
    sqlite_autoincrement=True,
)

gap_scores = Table(
    "gap_scores", METADATA,
    Column("run_id", Text, nullable=False),
    Column("query", Text, nullable=False),
    Column("score", Float, nullable=False),
    Column("expected", Float, nullable=False),
    Column("top_doc_id", Text, nullable=False),
    Column("generation", Text, nullable=False),
    Column("measured_at", Text, nullable=False),
    PrimaryKeyConstraint("run_id", "query"),
    Index("idx_gap_scores_query_time", "query", "measured_at"),
)

store_meta = Table(
    "store_meta", METADATA,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

#: Scheduled-job leases: one row per job slot, taken by one conditional UPDATE (`feedback.leases`), so a
#: job runs once per slot however many replicas schedule it.
job_leases = Table(
    "job_leases", METADATA,
    Column("job", Text, primary_key=True),
    Column("slot", Text, nullable=False),              # ISO-8601 UTC start of the slot last taken
    Column("holder", Text, nullable=False),            # "<host>:<pid>" of the replica that took it
    Column("taken_at", Text, nullable=False),
    Column("expires_at", Text, nullable=False),
)

#: "Ask an expert" requests, one per escalated answer (the key: a double click, a Slack retry or a second
#: replica claims the same row); written by `feedback.experts` (issue 25 item 1).
expert_requests = Table(
    "expert_requests", METADATA,
    Column("request_id", Text, primary_key=True),      # the escalated answer's id
    Column("question", Text, nullable=False),
    Column("attempt", Text, nullable=False),           # the bot's direct answer (or refusal), cut short
    Column("asker", Text, nullable=False),             # Slack user id of who clicked
    Column("channel", Text),                           # where the asker's thread is
    Column("thread_ts", Text),
    Column("whom", Text, nullable=False),              # the experts asked: U…/W…, S… or C…/G…
    Column("doc_ids", Text, nullable=False),           # JSON list: the pages the bot cited
    Column("language", Text, nullable=False),
    Column("status", Text, CheckConstraint("status IN ('open', 'resolved')"), nullable=False),
    Column("requested_at", Text, nullable=False),
    Column("posted", Text, nullable=False),            # JSON list of [channel, ts] of the experts' messages
    Column("reminded_at", Text),
    Column("answered_by", Text),
    Column("answer", Text),
    Column("answered_at", Text),
    Index("idx_expert_requests_status", "status", "requested_at"),
)

#: Expert answers kept as knowledge, shown before the pages for a matching later question until
#: ``expires_at`` or two distinct 👎 (`feedback.experts`, issue 25 item 2).
expert_answers = Table(
    "expert_answers", METADATA,
    Column("expert_answer_id", Text, primary_key=True),
    Column("request_id", Text, unique=True),           # the escalation it answered; "gap:<fingerprint>" for a gap
    Column("question", Text, nullable=False),
    Column("answer", Text, nullable=False),
    Column("expert", Text, nullable=False),
    Column("answered_at", Text, nullable=False),
    Column("expires_at", Text, nullable=False),
    Column("doc_ids", Text, nullable=False),           # JSON list: the pages the bot had cited
    Column("page_wrong", Integer, nullable=False),     # 1: the expert ticked "the page cited is wrong"
    Column("language", Text, nullable=False),
    Column("also_asked", Text, nullable=False, server_default="[]"),  # JSON list: wordings a 👍 confirmed
    Index("idx_expert_answers_expiry", "expires_at"),
)

#: 👍/👎 on an expert answer, one per (answer, user), last click wins.
expert_answer_votes = Table(
    "expert_answer_votes", METADATA,
    Column("expert_answer_id", Text, ForeignKey("expert_answers.expert_answer_id", ondelete="CASCADE"),
           nullable=False),
    Column("user_id", Text, nullable=False),
    Column("value", Text, CheckConstraint("value IN ('up', 'down')"), nullable=False),
    Column("voted_at", Text, nullable=False),
    PrimaryKeyConstraint("expert_answer_id", "user_id"),
)

schema_migrations = Table(
    "schema_migrations", METADATA,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("name", Text, nullable=False),
    Column("applied_at", Text, nullable=False),
)

#: Owners verifying their pages (issue 25 item 3): one row per page once it was first asked; written by
#: `feedback.verifications`. A page without a row was never asked.
page_verifications = Table(
    "page_verifications", METADATA,
    Column("doc_id", Text, primary_key=True),
    Column("owner", Text, nullable=False),             # the user or user group id asked (U…/W…/S…)
    Column("state", Text, CheckConstraint("state IN ('due', 'verified', 'needs_update', 'handed_over')"),
           nullable=False),
    Column("asked_at", Text, nullable=False),          # ISO-8601 UTC of the last ask; a button carries it
    Column("reminded_at", Text),                       # the one reminder of this ask, or NULL
    Column("verified_by", Text),                       # user id of the last "Still correct"
    Column("verified_at", Text),
    Column("verified_until", Text),                    # when the page falls due again
    Column("answered_by", Text),                       # who gave the last answer of any kind
    Column("answered_at", Text),
    Column("posted", Text),                            # JSON [[channel, ts]] of this ask's DMs, or NULL
    Index("idx_page_verifications_state", "state"),
)

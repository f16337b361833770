"""Long fuzz run of the Slack edge (issue 10 item 7): the CI property tests' invariants with 100,000 inputs each.

Usage:
    python benchmarks/fuzz_slack.py [--examples 100000] [--only split blocks http] [--out result.json]

The invariants and input strategies are those of ``tests/bot/test_slack_fuzz.py`` (defined in
``tests/bot/slack_properties.py``): the section splitter cuts only between grapheme clusters and outside
entities and links; every text of a rendered answer is <= 3,000 characters of valid UTF-8 with no broken
entity or link and no live ``<!channel>``/``<!here>``/``<@U…>``; every signed request body gets an answer
other than 5xx from the real app over HTTP, and one naming another workspace or app is refused and logged
(``http``); every Socket Mode envelope is acked, whatever its payload (``socket``, issue 27). Prints JSON: per invariant, the inputs tried, the failures (the
first falsifying input, shrunk), and the time taken. Exit status 1 when any invariant failed.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import structlog  # noqa: E402
import structlog.testing  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from _output import emit  # noqa: E402
from bot.slack.blocks import answer_blocks, split_graphemes  # noqa: E402
from config import load_settings  # noqa: E402
from tests.bot.slack_properties import (  # noqa: E402
    LiveApp,
    answers,
    as_mrkdwn,
    bodies,
    check_ack,
    check_blocks,
    check_refused,
    check_split,
    check_status,
    document_text,
    envelopes,
)

INVARIANTS = ("split", "blocks", "http", "socket")


@contextlib.contextmanager
def _all_logs():
    """Capture every structlog event at any level, whatever filter `main` configured."""
    previous = structlog.get_config()["wrapper_class"]
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    try:
        with structlog.testing.capture_logs() as logs:
            yield logs
    finally:
        structlog.configure(wrapper_class=previous)


def run(name: str, examples: int) -> dict:
    """Run invariant ``name`` on ``examples`` generated inputs; returns tried, failure and seconds."""
    tried = [0]
    started = time.perf_counter()
    app = LiveApp(load_settings(), socket=True) if name in ("http", "socket") else None
    # Generation only, no shrinking until a failure, no example database: every input is a new one.
    config = settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
                      suppress_health_check=list(HealthCheck))

    def counted(check):
        def test(example):
            tried[0] += 1
            if tried[0] % 10_000 == 0:  # a long run says how far it got
                print(f"{name}: {tried[0]} inputs, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
            check(*example)
        return test

    if name == "split":
        def split(text, quoted, limit):
            mrkdwn = as_mrkdwn(text, quoted)
            check_split(mrkdwn, limit, split_graphemes(mrkdwn, limit))
        prop = given(st.tuples(document_text, st.booleans(), st.one_of(st.just(3000), st.integers(8, 400))))(
            counted(split))
    elif name == "blocks":
        prop = given(st.tuples(answers))(counted(lambda answer: check_blocks(answer_blocks(answer))))
    elif name == "http":
        def http(body):
            with _all_logs() as logs:
                status = app.post(body)
            check_status(body, status)
            check_refused(body, logs)
        prop = given(st.tuples(bodies))(counted(http))
    else:
        def socket(envelope_type, payload):
            with _all_logs() as logs:
                ack = app.envelope(envelope_type, payload)
            check_ack(payload, ack, logs)
        prop = given(envelopes)(counted(socket))
    failure = None
    try:
        config(prop)()
    except Exception as exc:  # a falsified invariant: report it, run the others
        failure = f"{type(exc).__name__}: {str(exc)[:2000]}"
    finally:
        if app is not None:
            app.close()
    return {"invariant": name, "inputs_tried": tried[0], "failure": failure,
            "seconds": round(time.perf_counter() - started, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=100_000, help="generated inputs per invariant")
    parser.add_argument("--only", nargs="+", choices=INVARIANTS, default=list(INVARIANTS))
    parser.add_argument("--out", help="also write the JSON result here")
    args = parser.parse_args()
    # The app logs every malformed request it answers; at this volume only errors are worth printing.
    # (The http and socket invariants read the warnings they expect through structlog.testing.capture_logs,
    # which keeps its own unfiltered logger.)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    logging.disable(logging.WARNING)
    results = []
    for name in args.only:
        results.append(run(name, args.examples))
        print(f"{name}: {results[-1]['inputs_tried']} inputs, {results[-1]['seconds']} s, "
              f"{'FAILED' if results[-1]['failure'] else 'ok'}", file=sys.stderr)
    emit({"examples_per_invariant": args.examples, "results": results}, args.out)
    return 1 if any(r["failure"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

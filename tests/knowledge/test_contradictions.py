"""Contradiction finder (knowledge.contradictions) and the value extraction under it (knowledge.values).

Real pairs: the sample KB's webhook timeout (api/webhooks.md 30 s vs runbooks/webhook-failures.md 60 s) and
the two TTS handbook snapshots ingested as two separate, unversioned collections. Checked by hand in the
snapshots: tools/tock.md raised nothing and lowered the billable expectation from 36 hours (90 %) to 32
hours (80 %) a week, with the matching table rows; moving.md's "30-60 days" (FTTA approval time, 2021) and
"120 days" (short relocation, 2025) measure different things and must not be flagged.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from config import Settings, SourceConfig
from knowledge import KnowledgeBase
from knowledge.contradictions import changed_values, find_contradictions, passage_conflicts
from knowledge.values import comparable, extract_values
from tests.conftest import CORPUS, SAMPLE_KB, copy_pages, needs_shared

HANDBOOK = CORPUS / "tts-handbook"
PAGES = ("tools/tock.md", "travel-and-leave/travel-and-leave-policies/moving.md")


# --- values ----------------------------------------------------------------------------------------------


def _values(text: str) -> list[tuple[str, str, tuple[float, float], str]]:
    return [(v.unit, v.text, v.magnitude, v.bound) for v in extract_values(text)]


def test_values_are_normalised_to_base_units():
    assert _values("Deliveries time out after 30 seconds.") == [("duration", "30 seconds", (30.0, 30.0), "")]
    assert _values("Keys rotate within 2 weeks.") == [("duration", "2 weeks", (1209600.0, 1209600.0), "max")]
    assert _values("Uploads up to 1.5 GB and at least 99.9% uptime.") == [
        ("size", "1.5 GB", (1.5e9, 1.5e9), "max"), ("percent", "99.9%", (99.9, 99.9), "min")]
    assert _values("Pro costs $1,200 per user per year.") == [("money/user/year", "$1,200", (1200.0, 1200.0), "")]
    assert _values("The limit is 600 requests per minute.")[0][:3] == ("rate", "600 requests per minute", (10.0, 10.0))
    assert _values("Refunds take 3-5 business days.") == [("business_days", "3-5 business days", (3.0, 5.0), "")]


def test_things_that_are_not_stated_amounts_are_not_values():
    assert _values("In the 1990s, GS-13 staff called 877-472-6716 in 2021.") == []
    assert _values("A 5 h drive.") == []  # a spaced "h" is too ambiguous
    # "a 40-hour week" describes the week: it is only comparable with other "-hour week"s
    assert [v.unit for v in extract_values("In a 40-hour week, bill at least 32 hours.")] == ["duration:week", "duration"]


def test_table_cells_keep_their_row_and_column():
    table = "| Work week | Billable time |\n| --- | --- |\n| 5 days | 32 hours |\n| 4 days | 25.5 hours |\n"
    cells = [(v.text, v.row, v.sentence) for v in extract_values(table) if v.text.endswith("hours")]
    assert cells == [("32 hours", "5 days", "5 days, Billable time: 32 hours"),
                     ("25.5 hours", "4 days", "4 days, Billable time: 25.5 hours")]


def test_prices_in_other_currencies_are_values_of_their_own_currency():
    assert _values("The Pro plan costs €45 per user per month.") == [("money:eur/user/month", "€45", (45.0, 45.0), "")]
    assert [(u, t) for u, t, _m, _b in _values("Fees: 45 € a month, EUR 500 a year, £3k, USD 20 and 60 EUR.")] == [
        ("money:eur/month", "45 €"), ("money:eur/year", "EUR 500"), ("money:gbp", "£3k"), ("money", "USD 20"),
        ("money:eur", "60 EUR")]
    (dollars,), (euros,) = extract_values("Pro costs $45."), extract_values("Pro costs €50.")
    assert not dollars.conflicts_with(euros)  # no exchange rates: two currencies never compare


def test_a_cell_takes_the_per_of_its_column_and_compares_with_a_sentence_that_adds_the_period():
    table = "| Plan | Price per user | Storage |\n| --- | --- | --- |\n| Pro | €60 | 100 GB |\n"
    price, storage = extract_values(table)
    assert (price.unit, price.row, price.period_open, price.with_unit) == ("money:eur/user", "pro", True, "€60 per user")
    assert price.statement == "Plan: Pro, Price per user: €N"  # the row's header says what "Pro" is
    assert (storage.unit, storage.period_open) == ("size", False)
    (monthly,), (yearly,), (seat,) = (extract_values(t) for t in (
        "The Pro plan costs €45 per user per month.", "Pro costs €500 per user per year.", "Pro costs €5 per seat."))
    assert comparable(price, monthly) and price.conflicts_with(monthly) and monthly.with_unit == "€45 per user per month"
    assert comparable(price, yearly)  # the table names no period: either may be meant, the sentence decides
    assert not comparable(price, seat) and not comparable(monthly, yearly)
    (annual,) = extract_values("| Plan | Annual price per user |\n|---|---|\n| Pro | €540 |")
    assert annual.unit == "money:eur/user/year" and not comparable(annual, monthly)


def test_a_table_row_rendered_for_slack_reads_like_the_markdown_row():
    rendered = extract_values("• Plan: Pro · Price per user: €60 · Storage: 100 GB")
    markdown = extract_values("| Plan | Price per user | Storage |\n|---|---|---|\n| Pro | €60 | 100 GB |")
    assert [(v.text, v.unit, v.row, v.statement) for v in rendered] == [
        (v.text, v.unit, v.row, v.statement) for v in markdown]
    assert [v.text for v in extract_values("Home · Docs · Pricing: €60 or more")] == ["€60"]  # not a row


def test_a_rendered_row_of_a_table_whose_first_header_is_empty_is_a_row():
    """The sample's plans table has the plans as columns and no header over its first column: rendered as "API
    rate limit · Starter: 60 requests/minute · …" it was read as a sentence, and its 60 disagreed with the Team
    page's "raised from 240 to 300 requests per minute" in a reply about the Pro plan's price."""
    rendered = "API rate limit · Starter: 60 requests/minute · Team: 300 requests/minute"
    markdown = "| | Starter | Team |\n|---|---|---|\n| API rate limit | 60 requests/minute | 300 requests/minute |"

    assert [(v.text, v.row) for v in extract_values(rendered)] == [(v.text, v.row) for v in extract_values(markdown)] \
        == [("60 requests/minute", "api rate limit"), ("300 requests/minute", "api rate limit")]
    assert passage_conflicts(rendered, "API rate limit raised from 240 to 300 requests per minute.") == []


def test_passage_conflicts_pairs_a_table_row_with_the_sentence_naming_that_row_and_column():
    rows = "Plan: Starter · Price per user: €20 · Storage: 10 GB\n\nPlan: Pro · Price per user: €60 · Storage: 100 GB"
    pairs = {(a.text, b.text) for a, b in passage_conflicts(rows, "The Pro plan costs €45 per user per month.")}
    assert pairs == {("€60", "€45")}  # the Starter row says nothing about Pro
    assert {(a.text, b.text) for a, b in passage_conflicts(rows, "The Pro plan includes 50 GB of storage.")} == {
        ("100 GB", "50 GB")}  # the row and a word of the column
    assert passage_conflicts(rows, "The Starter plan costs €20 per user per month.") == []  # they agree
    assert passage_conflicts("Plan: Pro · Uptime SLA: 99.9%", "Pro customers get a 20% discount.") == []


def test_conflicts_need_the_same_unit_compatible_bounds_and_an_amount_outside_a_range():
    (a,), (b,), (c,), (d,) = (extract_values(t) for t in (
        "The timeout is 30 seconds.", "The timeout is 1 minute.", "The timeout is up to 60 seconds.",
        "The timeout is 20-40 seconds."))
    assert a.conflicts_with(b) and b.conflicts_with(c) is False  # 1 minute == 60 seconds
    assert a.conflicts_with(d) is False and b.conflicts_with(d)  # 30 s lies inside 20-40 s, 60 s does not
    (low,), (high,) = extract_values("at least 2 days off"), extract_values("up to 5 days off")
    assert low.conflicts_with(high) is False


def test_a_bound_admits_an_exact_amount_of_its_unit_on_its_side():
    (two_days,), (two_months,), (three_k,) = (extract_values(t) for t in (
        "flight is in 2 days", "working from there for ~2 months", "a conference of like $3k"))
    (soon,), (short,), (long,), (costly,) = (extract_values(t) for t in (
        "your estimated departure is less than 72 hours away", "relocating for 120 days or less",
        "relocate for longer than 120 days", "Conference events that costs more than $2,500"))
    assert soon.admits(two_days) and not soon.admits(two_months)
    assert short.admits(two_months) and not long.admits(two_months)
    assert costly.admits(three_k) and not costly.admits(two_days)  # another unit
    assert not two_days.admits(soon)  # an exact amount is no rule
    assert _values("Below 95.0%, above 2 GB") == [("percent", "95.0%", (95.0, 95.0), "max"),
                                                 ("size", "2 GB", (2e9, 2e9), "min")]


def test_korean_and_japanese_durations_and_their_bounds_are_values_but_dates_are_not():
    assert _values("결제일로부터 **14일 이내**에 해지하면 전액 환불됩니다.") == [
        ("duration", "14일", (14 * 86400.0,) * 2, "max")]
    assert [v[3] for v in _values("15일째부터 30일 이내에 해지하면")] == ["min", "max"]
    assert _values("결제일로부터 30일이 지나면 환불되지 않으며") == [("duration", "30일", (30 * 86400.0,) * 2, "min")]
    assert _values("20일 지났는데 환불 되나요?")[0][3] == ""  # the asker's own case, no rule
    assert _values("アクセストークンの有効期限は **1時間（3600秒）** です。") == [
        ("duration", "1時間", (3600.0, 3600.0), ""), ("duration", "3600秒", (3600.0, 3600.0), "")]
    assert _values("30日以内に解約すると")[0][3] == "max" and _values("遅延が10秒未満なら")[0][3] == "max"
    assert _values("지연이 **100MB를 초과**하면") == [("size", "100MB", (1e8, 1e8), "min")]
    assert _values("승인된 환불은 영업일 기준 7일 이내에") == [("business_days", "7일", (7.0, 7.0), "max")]
    assert _values("추가로 3~5일이 걸릴 수 있습니다.")[0][2] == (3 * 86400.0, 5 * 86400.0)
    assert _values("年末年始（12月29日〜1月3日）、2026년 4월 22일, 매월 1일, 1분기, 1주년, 日本") == []


def test_changed_values_tells_an_update_from_a_reworded_copy():
    disk = (SAMPLE_KB / "runbooks" / "disk-full.md").read_text(encoding="utf-8")
    copy = (SAMPLE_KB / "runbooks" / "disk-full-copy.md").read_text(encoding="utf-8")
    assert changed_values(disk, copy) == []  # reworded, same numbers: a true duplicate


@needs_shared
def test_changed_values_finds_the_handbook_update():
    old, new = ((HANDBOOK / s / "tools/tock.md").read_text(encoding="utf-8") for s in ("2021-12", "2025-02"))
    changes = {(a.text, b.text, a.row) for a, b in changed_values(old, new)}
    assert {("36 hours", "32 hours", ""), ("90%", "80%", ""), ("10%", "20%", ""), ("36 hours", "32 hours", "5 days"),
            ("1 hours", "1.5 hours", "1 days"), ("36 billable hours", "32 billable hours", "")} <= changes
    assert all(a != b for a, b, _ in changes) and len(changes) == 14


# --- finder ----------------------------------------------------------------------------------------------


def test_sample_webhook_timeout_contradiction_is_found(sample_kb, embedder):
    found = find_contradictions(sample_kb.index(), embedder)
    pair = [c for c in found if {c.doc_a, c.doc_b} == {"api:webhooks.md", "runbooks:webhook-failures.md"}]
    assert pair, [c.to_json() for c in found]
    assert {pair[0].value_a, pair[0].value_b} == {"30 seconds", "60 seconds"}
    assert pair[0].kind == "duration" and "webhook" in pair[0].sentence_a.lower()
    assert len(found) <= 3, "a report full of noise is useless"


EXPENSES = """# Expense Policy

## Meals

While travelling you can spend up to $75 per day on meals, including tips.
Alcohol is not reimbursed, except at client dinners approved by a VP.
"""
TRAVEL = """# Booking Business Travel

## Trips that need approval

A trip abroad needs your manager's approval in Navan before booking, whatever the cost.
A domestic trip needs approval only when the total is over $1,500.

## Per diem

While travelling you can spend up to $60 per day on meals, including tips.
"""


def test_a_sentence_restated_with_another_value_in_a_chunk_of_another_topic_is_found(tmp_path, embedder):
    from tests.bot.test_cli_ingest import write_pages

    docs = write_pages(tmp_path / "docs", {"expense-policy.md": EXPENSES, "travel-booking.md": TRAVEL})
    kb = KnowledgeBase(Settings(sources=[SourceConfig(name="docs", path=str(docs))]), tmp_path / "home",
                       embedder=embedder)
    kb.sync()
    index = kb.index()
    rows = [r for r, c in enumerate(index.chunks) if "$60" in c["text"] or "$75" in c["text"]]
    assert len(rows) == 2 and float(index.vectors[rows[0]] @ index.vectors[rows[1]]) < 0.7  # below the topic gate

    found = find_contradictions(index, embedder)

    assert [(c.value_a, c.value_b) for c in found] in ([("$75", "$60")], [("$60", "$75")])


#: Issue 28: a price in a pricing table, and other pages stating it in prose and in a list item.
PRICING = {
    "pricing/plans.md": """---
title: Plans and pricing
---
# Plans and pricing

Nimbus offers three plans. Prices are billed monthly.

| Plan | Price per user | Storage |
| --- | --- | --- |
| Starter | €20 | 10 GB |
| Pro | €60 | 100 GB |
| Enterprise | €120 | 1 TB |
""",
    "sales/faq.md": """---
title: Sales FAQ
---
# Sales FAQ

## How much does Pro cost?

The Pro plan costs €45 per user per month. Customers can upgrade at any time from the billing page.
""",
    "sales/onboarding.md": """---
title: Customer onboarding checklist
---
# Customer onboarding checklist

What to tell a new customer:

- Pro plan price: €45 per user per month
- Pro storage: 100 GB per workspace
- Support replies within 1 business day
""",
}
PLANS, FAQ, ONBOARDING = (f"docs:{page}" for page in PRICING)


@pytest.fixture(scope="module")
def pricing(tmp_path_factory, embedder) -> KnowledgeBase:
    """The three pricing pages of issue 28 in one collection."""
    from tests.bot.test_cli_ingest import write_pages

    docs = write_pages(tmp_path_factory.mktemp("docs"), PRICING)
    kb = KnowledgeBase(Settings(sources=[SourceConfig(name="docs", path=str(docs))]), tmp_path_factory.mktemp("home"),
                       embedder=embedder)
    kb.sync()
    return kb


def test_a_table_cell_contradicted_by_prose_and_by_a_list_item_on_other_pages_is_found(pricing, embedder):
    index = pricing.index()
    found = find_contradictions(index, embedder)
    stated = {(c.doc_a, c.doc_b, c.kind, c.value_a, c.value_b, c.stated_a, c.stated_b) for c in found}
    assert stated == {(PLANS, FAQ, "money", "€60", "€45", "€60 per user", "€45 per user per month"),
                      (PLANS, ONBOARDING, "money", "€60", "€45", "€60 per user", "€45 per user per month")}, \
        [c.to_json() for c in found]
    assert all(c.sentence_a == "Pro, Price per user: €60" for c in found)
    # the table's chunk and the FAQ's are two topics to the chunk model: the row and column pair them
    rows = {c["doc_id"]: r for r, c in enumerate(index.chunks)}
    assert float(index.vectors[rows[PLANS]] @ index.vectors[rows[FAQ]]) < 0.7


def test_ask_warns_when_it_quotes_a_table_row_and_a_sentence_that_disagree(pricing):
    answer = pricing.ask("What is the price per user of the Pro plan?")
    quoted = {p.doc_id for p in answer.passages}
    assert PLANS in quoted and quoted & {FAQ, ONBOARDING}, answer.text
    assert answer.warnings, answer.text
    assert all("€60 per user" in w and "€45 per user per month" in w and "Plans and pricing" in w
               for w in answer.warnings), answer.warnings
    assert not [w for w in answer.warnings if "€20" in w or "€120" in w]  # other rows are other plans


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory, embedder) -> KnowledgeBase:
    """tock.md and moving.md of both handbook snapshots, as two unversioned collections."""
    root = tmp_path_factory.mktemp("handbook")
    sources = []
    for snapshot in ("2021-12", "2025-02"):
        copy_pages(root / snapshot, {page: HANDBOOK / snapshot / page for page in PAGES})
        sources.append(SourceConfig(name=f"handbook-{snapshot}", path=str(root / snapshot)))
    settings = Settings(sources=sources)
    settings.hygiene.gate = False  # the gate would drop the 2025 chunks that differ only in their numbers
    kb = KnowledgeBase(settings, tmp_path_factory.mktemp("home"), embedder=embedder)
    kb.sync()
    return kb


@needs_shared
def test_handbook_snapshots_contradict_each_other_on_billable_hours(snapshots, embedder):
    found = find_contradictions(snapshots.index(), embedder, across_collections=True)
    stated = {(c.value_a, c.value_b, c.sentence_a.split(":")[0]) for c in found}
    tock = ("handbook-2021-12:tools/tock.md", "handbook-2025-02:tools/tock.md")
    assert all((c.doc_a, c.doc_b) == tock for c in found), [c.to_json() for c in found]
    assert ("36 hours", "32 hours", "So for most people in a given 40-hour week, the expectation is to bill at "
            "least 36 hours to project work.") in stated
    assert ("90%", "80%", "Then you’ll need to spend 90% of the time you’re working that week on billable work.") in stated
    assert ("10%", "20%", "That leaves up to 10% of your time to be spent on non-billable work.") in stated
    rows = {(c.value_a, c.value_b, c.sentence_a.split(",")[0]) for c in found if c.sentence_a[0].isdigit()}
    assert {("36 hours", "32 hours", "5 days"), ("4 hours", "8 hours", "5 days"), ("7 hours", "6.5 hours", "1 days")} <= rows
    assert not [c for c in found if "moving" in c.doc_a]  # 30-60 days (approval) vs 120 days (relocation)


def test_cli_contradictions_prints_json(sample_kb, sample_home, embedder, monkeypatch, tmp_path):
    import knowledge.service
    from bot.cli.main import cli

    monkeypatch.setattr(knowledge.service, "load_embedder", lambda cfg: embedder)  # reuse the session model
    result = CliRunner().invoke(cli, ["--home", str(sample_home), "contradictions", "--json", "--limit", "1"])
    assert result.exit_code == 0, result.output
    (line,) = result.stdout.splitlines()
    assert {json.loads(line)["value_a"], json.loads(line)["value_b"]} == {"30 seconds", "60 seconds"}


#: A newcomer's two pages: one states the sick days with words between the number and "days" and no period, the
#: other per year. The value reader took no amount with words between the number and its unit, so no warning.
SICK_DAYS = {
    "leave.md": """---
title: Leave policy
---
# Leave policy

## Sick leave

Every full-time employee gets 10 paid sick days. Tell your manager the same morning if you are ill.
""",
    "benefits.md": """---
title: Benefits overview
---
# Benefits overview

## Time off

Full-time employees accrue 12 paid sick days per year. Unused sick days do not roll over.
""",
}


def test_a_named_allowance_stated_with_and_without_its_period_is_found(tmp_path, embedder):
    from tests.bot.test_cli_ingest import write_pages

    docs = write_pages(tmp_path / "docs", SICK_DAYS)
    kb = KnowledgeBase(Settings(sources=[SourceConfig(name="docs", path=str(docs))]), tmp_path / "home",
                       embedder=embedder)
    kb.sync()

    found = find_contradictions(kb.index(), embedder)

    assert {(c.value_a, c.value_b) for c in found} & {("10 paid sick days", "12 paid sick days"),
                                                      ("12 paid sick days", "10 paid sick days")}


def test_words_between_a_number_and_its_unit_name_an_allowance_never_a_relative_amount():
    stated = {text: [(v.text, v.unit, v.period_open) for v in extract_values(text)] for text in (
        "Every employee gets 10 paid sick days.", "Approval takes 3 business days.", "It took 2 more days.",
        "Of the 5 days, 2 of the days are remote.")}

    assert stated == {
        "Every employee gets 10 paid sick days.": [("10 paid sick days", "duration", True)],
        "Approval takes 3 business days.": [("3 business days", "business_days", False)],
        "It took 2 more days.": [],
        "Of the 5 days, 2 of the days are remote.": [("5 days", "duration", False)],
    }


def test_two_pages_counting_one_thing_differently_disagree_whatever_the_noun():
    """A newcomer's IT FAQ said "up to 3 devices", their device policy "a maximum of 5 devices": `ask` quoted both
    without a warning, since only a fixed list of nouns ("seats", "users", …) made a number a count."""
    pairs = passage_conflicts("Each employee can register up to 3 devices for single sign-on.",
                              "Employees may register a maximum of 5 devices with Okta single sign-on.")

    assert [(a.text, b.text, a.unit) for a, b in pairs] == [("3 devices", "5 devices", "count:devices")]
    assert [v.text for v in extract_values("Run the job 3 times, then wait.")] == []
    assert passage_conflicts("We have 3 offices in Europe.", "Each office seats 5 people.") == []


DEVICES = {
    "faq.md": """---
title: IT FAQ
---
# IT FAQ

## How many devices can I register?

Each employee can register up to 3 devices for single sign-on. Passwords must be at least 14 characters.
""",
    "devices.md": """---
title: Device Policy
---
# Device Policy

Employees may register a maximum of 5 devices with Okta single sign-on. Lost devices must be reported to
#it-help within 24 hours.
""",
}


def test_the_job_finds_two_pages_counting_one_thing_differently(tmp_path, embedder):
    """A newcomer's FAQ and device policy: `ask` warned "3 devices" against "5 devices", the daily job found nothing
    (the chunks sit under the topic threshold; the statements at 0.76 under the model's 0.80)."""
    from tests.bot.test_cli_ingest import write_pages

    docs = write_pages(tmp_path / "docs", DEVICES)
    kb = KnowledgeBase(Settings(sources=[SourceConfig(name="docs", path=str(docs))]), tmp_path / "home",
                       embedder=embedder)
    kb.sync()

    found = find_contradictions(kb.index(), embedder)

    assert {frozenset((c.value_a, c.value_b)) for c in found} == {frozenset(("3 devices", "5 devices"))}


VACATION = {
    "benefits.md": """---
title: Benefits
---
# Benefits
- **Health insurance**: Acme pays the whole premium for employees.
- **Vacation**: full-time employees get 20 days of paid vacation per year, plus public holidays.
- **Learning budget**: $1,000 per year for courses and books.
""",
    "leave-policy.md": """---
title: Leave Policy
updated: 2026-01-15
---
# Leave Policy
Acme Corp gives every full-time employee **25 days of paid vacation per year**. Part-time employees get a
pro-rated amount.
""",
}


def test_the_job_finds_two_pages_naming_one_allowance_differently(tmp_path, embedder):
    """A newcomer's benefits list and leave policy: `ask` warned "20 days" against "25 days", the job found nothing
    (chunk cosine 0.58, statements at 0.74); five shared words that are no period (full, time, employee, paid,
    vacation) now say it is one thing. A heading with no blank line after it is no part of the sentence below it."""
    from tests.bot.test_cli_ingest import write_pages

    docs = write_pages(tmp_path / "docs", VACATION)
    kb = KnowledgeBase(Settings(sources=[SourceConfig(name="docs", path=str(docs))]), tmp_path / "home",
                       embedder=embedder)
    kb.sync()

    (found,) = find_contradictions(kb.index(), embedder)

    assert {found.value_a, found.value_b} == {"20 days", "25 days"}
    assert {found.sentence_a, found.sentence_b} >= {"Acme Corp gives every full-time employee 25 days of paid "
                                                    "vacation per year."}
    assert [v.sentence for v in extract_values("# Webhooks\nDelivery times out after 30 seconds.")] == [
        "Delivery times out after 30 seconds."]


def test_a_statement_keeps_the_underscores_of_its_names():
    """An owner's contradiction message read "@rootvalidator … skiponfailure=True" (every "_" was taken for
    emphasis); emphasis around words still goes."""
    from knowledge.identifiers import extract_identifiers

    text = "If you use `@root_validator` you MUST specify `skip_on_failure=True`. _Each_ retry waits **30 seconds**."
    assert {v.sentence for v in extract_identifiers(text)} == {
        "If you use @root_validator you MUST specify skip_on_failure=True."}
    assert [v.sentence for v in extract_values(text)] == ["Each retry waits 30 seconds."]

"""Parsing real pages: front matter, Liquid/Jinja stripping, HTML and plain text, invalid front matter."""

from __future__ import annotations

import pytest

from knowledge import DocumentInvalid
from knowledge.parsing import parse_document, strip_template_tags
from tests.conftest import CORPUS, SAMPLE_KB, copy_pages, needs_shared

HANDBOOK = CORPUS / "tts-handbook" / "2025-02"
HANDBOOK_2021 = CORPUS / "tts-handbook" / "2021-12"


def _parse_copy(tmp_path, src, name=None):
    """Copy one real page into tmp_path and parse it (the corpus stays read-only)."""
    name = name or src.name
    copy_pages(tmp_path, {name: src})
    return parse_document((tmp_path / name).read_text(encoding="utf-8"), name)


@needs_shared
def test_handbook_front_matter_gives_title_and_metadata(tmp_path):
    doc = _parse_copy(tmp_path, HANDBOOK / "tools" / "docker-hub.md")

    assert doc.title == "Docker Hub"
    assert doc.metadata["questions"] == ["admins-docker"]
    assert doc.metadata["redirect_from"] == ["/docker-hub/"]
    assert not doc.body.startswith("---")
    assert "redirect_from" not in doc.body


@needs_shared
def test_a_title_written_with_an_html_entity_is_plain_text(tmp_path):
    doc = _parse_copy(tmp_path, HANDBOOK / "getting-started" / "how-to-log-in.md")

    assert doc.title == "Logging in & Networks"  # front matter "title: Logging in &amp; Networks"
    travel = _parse_copy(tmp_path, HANDBOOK / "travel-and-leave" / "travel-and-leave-policies" /
                         "first-time-travel-get-in-concur-pre-olu.md")
    assert travel.title.startswith("Get set up to travel for TTS before GSA onboarding")  # "<em>before</em>"


@needs_shared
def test_slack_channel_tag_becomes_channel_name(tmp_path):
    doc = _parse_copy(tmp_path, HANDBOOK / "about-us" / "tts-consulting" / "operations" / "tock.md")

    assert "in #tock if you are on an AWS" in doc.body
    assert "ping the Tock team in the #tock Slack channel" in doc.body
    assert "slack_channel" not in doc.body
    assert "{%" not in doc.body


@needs_shared
def test_docker_hub_channel_only_named_by_tag_survives(tmp_path):
    doc = _parse_copy(tmp_path, HANDBOOK / "tools" / "docker-hub.md")

    assert "Ask\n#admins-docker for access" in doc.body


@needs_shared
def test_site_baseurl_and_include_tags_are_removed(tmp_path):
    """The 2021 handbook still has ``{{site.baseurl}}`` links and ``{% include %}`` lines."""
    src = HANDBOOK_2021 / "tools" / "mural.md"
    raw = src.read_text(encoding="utf-8")
    assert "{{site.baseurl}}" in raw and "{% include low-system.html %}" in raw  # the page still has them

    doc = _parse_copy(tmp_path, src)

    assert "{{" not in doc.body and "}}" not in doc.body
    assert "{%" not in doc.body and "%}" not in doc.body
    assert "low-system.html" not in doc.body
    assert "[leaves TTS](/leaving-tts/)" in doc.body  # link text and path kept, template prefix gone
    assert doc.title == "Mural"


@needs_shared
def test_page_and_alert_tags_are_removed_but_their_text_kept(tmp_path):
    doc = _parse_copy(tmp_path, HANDBOOK / "travel-and-leave" / "travel-guide-table-of-contents.md")

    assert "{%" not in doc.body
    assert "On July 13, 2021, GSA published" in doc.body  # text inside {% alert %} … {% endalert %}


@needs_shared
def test_redirect_stub_is_invalid_with_reason(tmp_path):
    with pytest.raises(DocumentInvalid, match="redirect stub"):
        _parse_copy(tmp_path, HANDBOOK / "general-information-and-resources" / "business-and-ops-policies"
                    / "billing_policy.md")


@needs_shared
def test_runbook_hugo_shortcode_is_removed(tmp_path):
    doc = _parse_copy(tmp_path, CORPUS / "prometheus-runbooks" / "runbooks" / "node" / "NodeFilesystemFilesFillingUp.md")

    assert doc.title == "Node Filesystem Files Filling Up"
    assert "{{<" not in doc.body and "ref " not in doc.body
    assert "See [Node Filesystem FilesFilling Up]() for additional mitigation steps." in doc.body


def test_html_page_gives_title_and_atx_headings(tmp_path):
    doc = _parse_copy(tmp_path, SAMPLE_KB / "api" / "changelog.html")

    assert doc.title == "Nimbus Cloud API changelog"
    assert doc.body.startswith("# Nimbus Cloud API changelog")  # <title> text does not leak into the body
    assert "\n## v2.4.0 — 2026-10-14\n" in doc.body
    assert "<li>" not in doc.body and "<code>" not in doc.body


def test_html_script_and_style_content_is_dropped():
    html = (
        "<html><head><title>Status</title><style>p { color: red }</style></head>"
        "<body><script>var tracking = 1;</script><h1>Status page</h1><p>All systems are running normally.</p></body></html>"
    )

    doc = parse_document(html, "status.html")

    assert doc.title == "Status"
    assert doc.body == "# Status page\n\nAll systems are running normally."


def test_txt_page_keeps_text_and_takes_title_from_file_name(tmp_path):
    doc = _parse_copy(tmp_path, SAMPLE_KB / "runbooks" / "escalation-contacts.txt")

    assert doc.title == "Escalation contacts"
    assert doc.body.startswith("NIMBUS CLOUD ON-CALL ESCALATION CONTACTS")
    assert "#ops-oncall" in doc.body
    assert doc.metadata == {}


def test_front_matter_dates_are_utc_datetimes(tmp_path):
    doc = _parse_copy(tmp_path, SAMPLE_KB / "plans" / "summer-2025-sale.md")

    assert doc.title == "Summer 2025 sale: 30% off Team"
    assert doc.updated.isoformat() == "2025-06-20T00:00:00+00:00"
    # a bare expiry date means "valid through that day": it expires at the next midnight UTC
    assert doc.expires_at.isoformat() == "2025-10-01T00:00:00+00:00"


def test_title_fallback_skips_comment_lines_in_code_blocks():
    body = "Run this first:\n\n```sh\n# sysctl -a | grep 'fs.file-'\n```\n\n# File descriptors\n\nText."

    assert parse_document(body, "fd.md").title == "File descriptors"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\ntitle: x\n\towner: y\n---\n# Body\n\ntext\n", "front matter is not valid YAML near line 3: found a tab"),
        ("---\ntitle: \"Parking at HQ\nowner: facilities\n---\n# Body\n\ntext\n",  # the quote opened on line 2
         "front matter is not valid YAML near line 4 (while scanning a quoted scalar on line 2)"),
        ("---\n- a\n- b\n---\n# Body\n\ntext\n", "front matter must be a mapping of keys (e.g. `title: ...`), not a list"),
        ("---\njust words\n---\n# Body\n\ntext\n", "front matter must be a mapping of keys (e.g. `title: ...`), not a str"),
        ("---\nupdated: someday\n---\nbody\n", "front matter 'updated' is not a date (YYYY-MM-DD): 'someday'"),
        ("---\ntitle: Only front matter\n---\n", "no text after front matter"),
        ("", "no text after front matter"),
    ],
    ids=["invalid-yaml", "unclosed-quote", "yaml-list", "yaml-scalar", "bad-date", "no-body", "empty"],
)
def test_invalid_documents_say_why(text, reason):
    with pytest.raises(DocumentInvalid) as excinfo:
        parse_document(text, "page.md")

    assert str(excinfo.value).startswith(reason)


def test_strip_template_tags_handles_comment_blocks_and_jinja():
    text = 'A {% comment %}hidden {{ x }}{% endcomment %}B {# note #}C {{ site.baseurl }}D {%- slack_channel "x-y" -%}'

    assert strip_template_tags(text) == "A B C D #x-y"


def test_pymdown_block_fences_are_dropped_and_what_they_hold_is_kept():
    """Pydantic's pages wrap notes in ``/// version-added | v2.12`` … ``///``: a Japanese reply showed the
    slashes and the block's type. A Rust doc comment in a code block keeps its ``///``."""
    from knowledge.parsing import strip_template_tags

    text = ("The `exclude` parameter controls it.\n\n/// version-added | v2.12\nThe `exclude_if` parameter.\n///\n\n"
            "```rust\n/// Returns the width.\nfn width() -> f64 { 1.0 }\n```\n")

    cleaned = strip_template_tags(text)

    assert "version-added" not in cleaned and "\n///\n" not in cleaned
    assert "The `exclude_if` parameter." in cleaned and "/// Returns the width." in cleaned


@needs_shared
def test_what_liquid_raw_holds_is_kept_as_written(tmp_path):
    """The handbook shows its own shortcodes inside ``{% raw %}`` … ``{% endraw %}`` in code blocks: stripped as
    template tags, they had left empty code blocks in replies."""
    doc = _parse_copy(tmp_path, HANDBOOK / "updating-the-handbook" / "shortcodes.md")

    assert '{% image_with_class\n  "_img/ocelot.png"' in doc.body
    assert '"an ocelot" %}' not in doc.body  # the page's own use of the shortcode still goes

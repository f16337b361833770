"""Question and document language by script, with Latin letters weighed in."""

from __future__ import annotations

import pytest

from knowledge.language import detect_language
from tests.conftest import SAMPLE_KB


@pytest.mark.parametrize(("text", "language"), [
    ("How much does the Team plan cost?", "en"),
    ("환불은 며칠 안에 요청해야 하나요?", "ko"),
    ("サポートの営業時間は？", "ja"),
    ("東京都", "ja"),  # kanji only
    ("etcdNoLeaderアラートが出ました。クラスタにどんな影響がありますか？", "ja"),  # a long Latin name inside
    ("KubeHpaMaxedOut 알림이 떴는데 무슨 뜻이고 어떻게 대응해야 하나요?", "ko"),
    ("API 키", "ko"),
    ("", "en"),
])
def test_language_of_questions(text, language):
    assert detect_language(text) == language


def test_an_english_page_naming_a_japanese_link_stays_english():
    page = (SAMPLE_KB / "plans" / "team_plan_v3.md").read_text(encoding="utf-8")
    assert "サポ" in page and detect_language(page) == "en"

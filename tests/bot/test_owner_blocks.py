"""An owner's direct message quotes page titles and summaries as text: nothing in them can ping anyone."""

from __future__ import annotations

from bot.owner_blocks import owner_message
from jobs.owners import OwnerReport, PageFinding


def test_titles_summaries_and_evidence_are_escaped_and_links_stay_whole():
    finding = PageFinding("ops:x.md", "Deploys <!channel> & rollbacks", "https://wiki.example/ops/x y.md",
                          "bad_document", "warning", "<@U123> said it is wrong", {"note": "<!here>"})
    message = owner_message(OwnerReport("U999", [finding]))
    texts = [b["text"]["text"] for b in message.blocks if b["type"] == "section"] + [message.text]
    assert all("<!channel>" not in t and "<!here>" not in t and "<@U123>" not in t for t in texts)
    assert any("<https://wiki.example/ops/x%20y.md|Deploys &lt;!channel&gt; &amp; rollbacks>" in t for t in texts)

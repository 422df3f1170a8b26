"""Page and record text for the overlap audit: record texts remembered only while unchanged."""

from __future__ import annotations

from conftest import seed_root

from site_builder.assemble import assemble
from site_builder.config import BuildConfig
from site_builder.load import load_inputs
from site_builder.normalize import normalize
from site_builder.words import evidence_text, evidence_texts


def test_record_texts_follow_every_edit_and_reuse_unchanged_records() -> None:
    site = assemble(normalize(load_inputs(BuildConfig.for_root(seed_root()))))
    evidences = [guide.evidence for guide in site.guides]
    first = evidence_texts(evidences)
    assert first == [evidence_text(evidence) for evidence in evidences]
    # An edited record is a new object (the preview validates it again): its new text.
    edited = evidences[0].model_copy(update={"verdict": "quokka-verdict"})
    again = evidence_texts([edited, *evidences[1:]])
    assert "quokka-verdict" in again[0] and "quokka-verdict" not in first[0]
    assert again[0] == evidence_text(edited)
    # Unchanged records are the same objects: their texts are remembered, not made again.
    assert all(new is old for new, old in zip(again[1:], first[1:], strict=True))
    # One record listed twice gets its text twice, in order.
    assert evidence_texts([evidences[1], evidences[2], evidences[1]]) == [
        first[1],
        first[2],
        first[1],
    ]

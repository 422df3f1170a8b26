"""Headings humanised from camelCase keys, with acronyms and units spelled as readers expect."""

from __future__ import annotations

import pytest

from site_builder.model.humanize import anchor_for, humanize_key, humanize_slug


@pytest.mark.parametrize(
    ("key", "heading"),
    [
        ("fusionOnTokensPerSecond", "Fusion on tokens/s"),
        ("calculatedKvCapacityChangePercent", "Calculated KV capacity change %"),
        ("glm52PureDcpCorrectnessFix", "GLM-5.2 pure DCP correctness fix"),
        ("prMeasurementsAreGlm52aiBenchmarks", "PR measurements are GLM-5.2 AI benchmarks"),
        ("h200Sm90", "H200 SM90"),
        ("tp8Pp2HasSixteenSockets", "TP8 PP2 has sixteen sockets"),
        ("memoryGiBBefore", "Memory GiB before"),
        ("deltaMiB", "Delta MiB"),
        ("fusionOffTargetMemoryGb", "Fusion off target memory GB"),
        ("loraSourceAudit", "LoRA source audit"),
        ("ropeStyle", "RoPE style"),
        ("qkRopeHeadDim", "QK RoPE head dim"),
        ("mtpEnabled", "MTP enabled"),
        ("reportedBf16Parameters", "Reported BF16 parameters"),
        ("fp8DsMla", "FP8 DS MLA"),
        ("nvfp4Checkpoint", "NVFP4 checkpoint"),
        ("hbmBudget", "HBM budget"),
        ("sglangReleasePublishedAt", "SGLang release published at"),
        ("vllmStableTag", "vLLM stable tag"),
        ("deepSeekNeoXRegression", "DeepSeek NeoX regression"),
        (
            "theoreticalDuplicationReductionPercentVsDcp1",
            "Theoretical duplication reduction % vs DCP1",
        ),
        ("backendPr46514", "Backend PR 46514"),
        ("dcpC512TokensPerSecondPerGpu", "DCP C512 tokens/s per GPU"),
        ("instanceA", "Instance A"),
        ("cudaGraphHistory", "CUDA graph history"),
        ("lseMerge", "LSE merge"),
        ("epRanks", "EP ranks"),
        ("sha256", "SHA256"),
        ("model_path", "Model path"),
    ],
)
def test_keys_become_readable_headings(key: str, heading: str) -> None:
    assert humanize_key(key) == heading


@pytest.mark.parametrize(
    ("slug", "words"),
    [
        (
            "cuda-default-with-a-b-canary-and-one-env-rollback",
            "CUDA default with A/B canary and one env rollback",
        ),
        (
            "fail-closed-low-load-canary-before-tp-dp-ep-promotion",
            "Fail closed low load canary before TP DP EP promotion",
        ),
        ("narrow-lab-pilot-only", "Narrow lab pilot only"),
        (
            "pinned-source-zero-runtime-vllm-dcp-version-and-correctness-gate",
            "Pinned source zero runtime vLLM DCP version and correctness gate",
        ),
    ],
)
def test_slugs_become_words(slug: str, words: str) -> None:
    assert humanize_slug(slug) == words


def test_anchors_are_kebab_case_and_stable() -> None:
    assert anchor_for("shapeRows") == "shape-rows"
    assert anchor_for("glm52Control") == "glm52-control"
    assert anchor_for("!!!") == "section"

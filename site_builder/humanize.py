"""Turn camelCase keys and slug-like values into headings a reader can scan.

>>> humanize_key("fusionOnTokensPerSecond")
'Fusion on tokens/s'
>>> humanize_key("glm52PureDcpCorrectnessFix")
'GLM-5.2 pure DCP correctness fix'
>>> humanize_slug("cuda-default-with-a-b-canary")
'CUDA default with A/B canary'
"""

from __future__ import annotations

import re

# Words whose spelling is not plain lower case, keyed by their lower-case form.
SPELLINGS: dict[str, str] = {
    word.lower(): word
    for word in [
        "TP",
        "DP",
        "EP",
        "PP",
        "DCP",
        "KV",
        "HBM",
        "MTP",
        "FP8",
        "FP4",
        "NVFP4",
        "MXFP4",
        "BF16",
        "F32",
        "GPU",
        "GPUs",
        "CPU",
        "CUDA",
        "LoRA",
        "RoPE",
        "SM90",
        "SM100",
        "SM120",
        "LSE",
        "MiB",
        "GiB",
        "KiB",
        "TiB",
        "GB",
        "MB",
        "KB",
        "TB",
        "ms",
        "URL",
        "URLs",
        "ID",
        "IDs",
        "PR",
        "PRs",
        "API",
        "CI",
        "MoE",
        "MLA",
        "DSA",
        "EPLB",
        "TTFT",
        "TPOT",
        "ROCm",
        "NPU",
        "NeoX",
        "EAGLE",
        "DS",
        "QK",
        "AG",
        "RS",
        "GSM8K",
        "JSON",
        "YAML",
        "HTML",
        "SHA256",
        "HTTP",
        "HTTPS",
        "SGLang",
        "vLLM",
        "DeepSeek",
        "DeepEP",
        "FlashMLA",
        "FlashInfer",
        "NVIDIA",
        "AI",
        "PD",
        "HF",
        "OOM",
        "NCCL",
        "RDMA",
        "NVLink",
        "Qwen",
        "Kimi",
        "Nemotron",
        "MiniMax",
        "B200",
        "B300",
        "GB200",
        "GB300",
        "H100",
        "H200",
        "H20",
        "A100",
        "UUID",
    ]
}
SPELLINGS |= {"glm": "GLM", "glm52": "GLM-5.2", "glm5": "GLM-5", "vs": "vs", "percent": "%"}

# Prefixes that stay upper case when a number follows them: tp8 -> TP8, dcp1 -> DCP1.
NUMBERED_PREFIXES = frozenset(
    ["tp", "dp", "ep", "pp", "dcp", "sm", "fp", "bf", "gb", "mtp", "eagle", "gsm"]
)

# Words that name a numbered thing: pr46514 -> PR 46514.
NUMBERED_WORDS = {"pr": "PR", "issue": "issue", "commit": "commit"}

# Word sequences read better as one unit.
PHRASES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("per", "second"), "/s"),
    (("deep", "seek"), "DeepSeek"),
    (("neo", "x"), "NeoX"),
    (("a", "b"), "A/B"),
)

_TOKEN = re.compile(
    r"(?i:glm52|gib|mib|kib|tib|nvfp4|mxfp4|fp8|bf16|gsm8k|lora|rope|sglang|vllm|deepseek|deepep|flashmla|neox)(?=[A-Z0-9_\-\s]|$)"
    r"|[A-Z]?[a-z]+\d*|[A-Z]+\d*(?![a-z])|\d+(?:\.\d+)?"
)


def _spell(token: str) -> str:
    """Return the display spelling of one word; a lone capital (instanceA) stays a capital."""
    if len(token) == 1 and token.isupper():
        return token
    word = token.lower()
    if word in SPELLINGS:
        return SPELLINGS[word]
    numbered = re.fullmatch(r"([a-z]+)(\d+)", word)
    if numbered:
        prefix, number = numbered.groups()
        if prefix in NUMBERED_PREFIXES or len(prefix) == 1:
            return prefix.upper() + number
        if prefix in NUMBERED_WORDS:
            return f"{NUMBERED_WORDS[prefix]} {number}"
    return word


def _join(words: list[str]) -> str:
    """Spell, merge phrases, and join words into sentence case."""
    out: list[str] = []
    i = 0
    while i < len(words):
        for phrase, replacement in PHRASES:
            if tuple(word.lower() for word in words[i : i + len(phrase)]) == phrase:
                if replacement.startswith("/") and out:
                    out[-1] += replacement
                else:
                    out.append(replacement)
                i += len(phrase)
                break
        else:
            out.append(_spell(words[i]))
            i += 1
    if out and out[0] == out[0].lower():
        out[0] = out[0][:1].upper() + out[0][1:]
    return " ".join(out)


def split_words(key: str) -> list[str]:
    """Split a camelCase, snake_case or kebab-case key into words."""
    return _TOKEN.findall(key)


def humanize_key(key: str) -> str:
    """Return a heading for a record key: camelCase split, acronyms spelled right."""
    words = split_words(key)
    return _join(words) if words else key


def humanize_slug(slug: str) -> str:
    """Return a slug-like value (`narrow-lab-pilot-only`) as words (`Narrow lab pilot only`)."""
    words = [word for word in re.split(r"[-_\s]+", slug.lower()) if word]
    return _join(words) if words else slug


def anchor_for(key: str) -> str:
    """Return a stable HTML id for a key: `shapeRows` -> `shape-rows`."""
    words = [re.sub(r"[^a-z0-9]", "", word.lower()) for word in split_words(key)]
    return "-".join(word for word in words if word) or "section"

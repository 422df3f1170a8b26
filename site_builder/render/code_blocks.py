"""Draw the editor's code blocks: highlighted at build time, labelled, ready for a copy button.

A fence's info string is typed by the editor, so only a first word that looks like a language
name (`[A-Za-z0-9_+#.-]{1,32}`) is shown as a label and reaches a class name; anything else
is dropped and the code is shown plain. Pygments writes class-named spans only (the site's
Content-Security-Policy allows no inline style); the colours are in style.css. A block whose
lines carry shell or Python prompts says so in `data-prompts`, for templates/assets/copy.js,
which copies the commands without prompts or output. The only module that imports pygments.
"""

from __future__ import annotations

import re
from functools import cache
from html import escape
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,32}")
"""What a language name may be: the only part of an info string that reaches the page."""
SHELLS = frozenset({"bash", "sh", "shell", "zsh", "ksh"})
"""Script languages where `$ ` opens a command line (`# ` is a comment there, never a prompt)."""
CONSOLES = frozenset({"console", "shell-session", "sh-session", "shellsession", "terminal"})
"""Terminal sessions: `$ ` and the root prompt `# ` open command lines."""
PYTHONS = frozenset({"python", "python3", "py", "py3", "pycon", "pyrepl"})
"""Python, where `>>> ` and `... ` open the lines of an interactive session."""
_PROMPTS = {
    "shell": re.compile(r"^\$ ", re.MULTILINE),
    "console": re.compile(r"^[$#] ", re.MULTILINE),
    "python": re.compile(r"^>>>(?: |$)", re.MULTILINE),
}
_FAMILIES = ((SHELLS, "shell"), (CONSOLES, "console"), (PYTHONS, "python"))
_SESSION_LEXERS = {"shell": "console", "console": "console", "python": "pycon"}
"""The lexer that tells prompts and output apart, for a block that has prompts."""
_FORMATTER = HtmlFormatter(nowrap=True)


def language_of(info: str) -> str:
    """Return the info string's first word if it may name a language, else ""."""
    words = info.split(maxsplit=1)
    return words[0] if words and LANGUAGE.fullmatch(words[0]) else ""


def prompts_of(language: str, code: str) -> str:
    """Return which prompts `code` carries ("shell", "console", "python"), or "" for none."""
    name = language.lower()
    kind = next((kind for names, kind in _FAMILIES if name in names), "")
    return kind if kind and _PROMPTS[kind].search(code) else ""


@cache
def _lexer(name: str) -> Lexer | None:
    """Return the Pygments lexer called `name` (leading and trailing newlines kept), or None."""
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def render_code(code: str, info: str = "") -> str:
    """Return the HTML of one code block: a language label, then highlighted or plain code.

    The text of the `<code>` element is `code` exactly; an unknown or missing language is
    shown plain, never refused.
    """
    language = language_of(info)
    prompts = prompts_of(language, code)
    lexer = _lexer(_SESSION_LEXERS.get(prompts, language.lower())) if language else None
    # Pygments drops a leading byte-order mark; plain text keeps the code as written.
    if lexer is None or not code or code.startswith("\ufeff"):
        body = escape(code, quote=False)
    else:
        body = highlight(code, lexer, _FORMATTER)
    label = ""
    code_class = ""
    if language:
        label = (
            '<div class="code-head"><span class="code-lang" data-pagefind-ignore>'
            f"{escape(language)}</span></div>"
        )
        code_class = f' class="language-{escape(language.lower())}"'
    data = f' data-prompts="{prompts}"' if prompts else ""
    return (
        f'<div class="code-block"{data}>{label}'
        f'<pre tabindex="0"><code{code_class}>{body}</code></pre></div>\n'
    )


def _fence(renderer: Any, tokens: list[Any], index: int, options: Any, env: Any) -> str:
    """Render a fenced code block (a markdown-it render rule)."""
    token = tokens[index]
    return render_code(token.content, token.info)


def _indented(renderer: Any, tokens: list[Any], index: int, options: Any, env: Any) -> str:
    """Render an indented code block, which has no language (a markdown-it render rule)."""
    return render_code(tokens[index].content)


def install_code_blocks(md: Any) -> None:
    """Make the markdown-it parser `md` draw its code blocks with `render_code`."""
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _indented)

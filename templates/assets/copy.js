// A "Copy" button on each code block of a guide (site_builder/code_blocks.py draws the blocks).
// Without this script, or without a clipboard, the code is simply shown: nothing is broken.
// A block with prompts (data-prompts) copies only its command lines, prompts removed: console
// output, the lines without a prompt, is left out.
(function () {
  'use strict';
  if (!navigator.clipboard || !navigator.clipboard.writeText) return;

  const PROMPTS = {
    shell: /^\$ /,
    console: /^[$#] /,
    python: /^(?:>>>|\.\.\.)(?: |$)/,
  };

  // The text to copy: every line, or the command lines of a block with prompts.
  function textToCopy(code, kind) {
    const lines = code.replace(/\n$/, '').split('\n');
    const prompt = PROMPTS[kind];
    if (!prompt) return lines.join('\n');
    const kept = [];
    let continued = false; // the previous shell command ended with a backslash
    for (const line of lines) {
      const match = prompt.exec(line);
      if (match || continued) {
        const command = match ? line.slice(match[0].length) : line;
        kept.push(command);
        continued = kind !== 'python' && command.endsWith('\\');
      }
    }
    return kept.join('\n');
  }

  function addButton(block) {
    const code = block.querySelector('pre > code');
    if (!code) return;
    let head = block.querySelector('.code-head');
    if (!head) {
      head = document.createElement('div');
      head.className = 'code-head';
      block.insertBefore(head, block.firstChild);
    }
    const language = head.querySelector('.code-lang');
    const name = language ? 'Copy ' + language.textContent + ' code' : 'Copy code';
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'code-copy';
    button.textContent = 'Copy';
    button.setAttribute('aria-label', name);
    const status = document.createElement('span');
    status.className = 'visually-hidden';
    status.setAttribute('role', 'status');
    head.append(button, status);
    let timer = 0;
    function show(text, spoken) {
      button.textContent = text;
      status.textContent = spoken;
      clearTimeout(timer);
      timer = setTimeout(function () {
        button.textContent = 'Copy';
        status.textContent = '';
      }, 2000);
    }
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(textToCopy(code.textContent, block.dataset.prompts)).then(
        function () { show('Copied', 'Copied to the clipboard'); },
        function () { show('Copy failed', 'Copy failed: select the code and copy it'); }
      );
    });
  }

  document.querySelectorAll('.code-block').forEach(addButton);
})();

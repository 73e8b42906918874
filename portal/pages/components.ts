import { html, type SafeHtml } from '../html';

/** A code sample with a copy button. `id` must be unique on the page. */
export function codeBlock(id: string, label: string, code: string): SafeHtml {
  return html`<figure class="code-block">
  <figcaption class="code-head"><span id="${id}-label">${label}</span><button type="button" class="copy-button" data-copy="${id}" aria-describedby="${id}-label">Copy</button></figcaption>
  <pre id="${id}" tabindex="0" aria-labelledby="${id}-label"><code>${code}</code></pre>
</figure>`;
}

/** A one-line notice; `tone` picks the colour, the text always says what it is. */
export function callout(tone: 'info' | 'warning', title: string, body: SafeHtml): SafeHtml {
  return html`<div class="callout callout-${tone}"><p class="callout-title">${title}</p>${body}</div>`;
}

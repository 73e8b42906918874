import { html, type SafeHtml } from '../html';

/** A code sample with a copy button. `id` must be unique on the page. */
export function codeBlock(id: string, label: string, code: string): SafeHtml {
  return html`<figure class="code-block">
  <figcaption class="code-head"><span id="${id}-label">${label}</span><button type="button" class="copy-button" data-copy="${id}" aria-describedby="${id}-label">Copy</button></figcaption>
  <pre id="${id}" tabindex="0" aria-labelledby="${id}-label"><code>${code}</code></pre>
</figure>`;
}

export interface SampleCall {
  id: string;
  label: string;
  method: 'GET' | 'POST';
  /** Below the environment's base URL, with the query. */
  path: string;
  body?: unknown;
  bases: { production: string; staging: string };
}

/**
 * One call as curl, JavaScript and Python tabs (code-samples.js draws them, with the tab's key
 * when it has one). Without JavaScript, the curl sample reading ASG_KEY stands alone.
 */
export function codeSamples(call: SampleCall): SafeHtml {
  const body = call.body === undefined ? undefined : JSON.stringify(call.body);
  const lines = [`curl${call.method === 'GET' ? '' : ` -X ${call.method}`} '${call.bases.production}${call.path}'`, `-H "Authorization: Bearer $ASG_KEY"`];
  if (body !== undefined) lines.push(`-H 'Content-Type: application/json'`, `-d '${body}'`);
  return html`<figure class="code-samples" data-code-samples data-method="${call.method}" data-path="${call.path}"
    data-base-production="${call.bases.production}" data-base-staging="${call.bases.staging}" data-label="${call.label}"${body === undefined ? html`` : html` data-body="${body}"`}>
  <figcaption class="code-head"><span id="${call.id}-label">${call.label}</span></figcaption>
  <div data-samples-body>${codeBlock(call.id, 'curl', lines.join(' \\\n     '))}</div>
</figure>`;
}

/** A one-line notice; `tone` picks the colour, the text always says what it is. */
export function callout(tone: 'info' | 'warning', title: string, body: SafeHtml): SafeHtml {
  return html`<div class="callout callout-${tone}"><p class="callout-title">${title}</p>${body}</div>`;
}

import { html, type SafeHtml } from '../html';

/** The outcomes the log can be filtered by, as `GET /portal/api/keys/{id}/requests?status=` takes them. */
const OUTCOME_CHOICES: ReadonlyArray<{ value: string; label: string }> = [
  { value: '', label: 'All' },
  { value: '2xx', label: '2xx success (3xx included)' },
  { value: '4xx', label: '4xx client error (except 429)' },
  { value: '429', label: '429 rate limited' },
  { value: '5xx', label: '5xx server error' },
];

/**
 * The keys page's "Recent requests" panel: a key's request log with an outcome filter, a search
 * by request id and "Load more". key-requests.js fills it from the portal API and opens it from
 * the "Requests" button keys.js puts in each key's row. It takes no input, so it is rendered once.
 */
export const KEY_REQUESTS_SECTION: SafeHtml = html`<section class="panel" id="requests-panel" aria-labelledby="requests-title" data-request-log>
  <div class="panel-head">
    <h2 id="requests-title" tabindex="-1">Recent requests</h2>
  </div>
  <p class="field-hint">A key's requests of the last 24 hours (its last 1,000 at most), newest first.
    Keys, headers and bodies are never recorded.</p>
  <p class="status-line" data-requests-empty>Create a key to see its requests here.</p>
  <form id="requests-form" class="requests-form" novalidate hidden>
    <div class="field">
      <label for="requests-key">Key</label>
      <select id="requests-key" name="key"></select>
    </div>
    <div class="field">
      <label for="requests-status">Outcome</label>
      <select id="requests-status" name="status">
        ${OUTCOME_CHOICES.map((c) => html`<option value="${c.value}">${c.label}</option>`)}
      </select>
    </div>
    <div class="field">
      <label for="requests-id">Find by request id <span class="optional">(optional)</span></label>
      <input id="requests-id" name="requestId" type="text" maxlength="128" spellcheck="false" autocomplete="off" aria-describedby="requests-id-hint requests-id-error">
      <p class="field-hint" id="requests-id-hint">The <code>X-Request-Id</code> a response carried.</p>
      <p class="field-error" id="requests-id-error" hidden></p>
    </div>
    <div class="form-actions">
      <button type="submit" class="button button-primary" data-busy-label="Loading…">Show requests</button>
    </div>
  </form>
  <div class="form-error" id="requests-error" role="alert" tabindex="-1" hidden></div>
  <p class="status-line" data-requests-status role="status"></p>
  <div class="table-wrap" data-requests-wrap hidden>
    <table class="data-table requests-table">
      <caption class="visually-hidden" data-requests-caption>Recent requests</caption>
      <thead>
        <tr>
          <th scope="col">Time</th><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Status</th>
          <th scope="col">Code</th><th scope="col">Latency</th><th scope="col">Cache</th><th scope="col">Request id</th>
        </tr>
      </thead>
      <tbody data-requests-body></tbody>
    </table>
  </div>
  <div class="requests-more" hidden>
    <button type="button" class="button" data-requests-more data-busy-label="Loading…">Load more</button>
  </div>
</section>`;

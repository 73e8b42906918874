import type { EnvironmentPrefixes } from '../../openapi/environments';
import type { DeprecationNotice } from '../deprecation-notice';
import { html, type SafeHtml } from '../html';
import { KEY_REQUESTS_SECTION } from './key-requests-section';

export const EXPIRY_CHOICES: ReadonlyArray<{ value: string; label: string }> = [
  { value: '', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In 1 year' },
];

/** How long a rolled key keeps working beside its successor: the portal API's `overlap` values. */
const ROLL_CHOICES: ReadonlyArray<{ value: string; label: string }> = [
  { value: 'none', label: 'No overlap: stop it now' },
  { value: '1h', label: 'For 1 hour' },
  { value: '24h', label: 'For 24 hours' },
  { value: '7d', label: 'For 7 days' },
];

/**
 * `/portal/keys`: the account's plan and this month's usage (plan-usage.js), create a key (the
 * secret is shown once), list keys, roll or revoke with confirmation. The list and all changes go through
 * the portal JSON API from keys.js; this is the frame, and its data attributes hand keys.js the
 * contract's prefixes and deprecation schedule.
 */
export function keysPage(o: { email: string; publicUrl: string; prefixes: EnvironmentPrefixes; deprecated: DeprecationNotice; usage: SafeHtml }): SafeHtml {
  const { prefixes, deprecated } = o;
  return html`<div class="page-head">
  <h1>API keys</h1>
  <p class="muted">Signed in as <strong>${o.email}</strong>. Send a key as <code>Authorization: Bearer &lt;key&gt;</code>.
    Production keys work under <code>${o.publicUrl}${prefixes.production}</code>, staging keys under <code>${o.publicUrl}${prefixes.staging}</code>.</p>
</div>
<noscript><p class="callout callout-warning">This page needs JavaScript to create and revoke keys.</p></noscript>

<section class="panel" id="plan-panel" aria-labelledby="plan-title">
  <h2 id="plan-title">Your plan</h2>
  <div class="form-error" id="plan-error" role="alert" tabindex="-1" hidden></div>
  <p class="status-line" data-plan-status role="status">Loading your plan…</p>
  <div data-plan hidden>
    <p data-plan-summary></p>
    <div class="usage-meter" data-usage-meter>
      <p class="usage-text" id="usage-text" data-usage-text></p>
      <progress class="usage-bar" data-usage-bar aria-labelledby="usage-text" hidden></progress>
      <p class="field-hint" data-usage-renewal></p>
      <p class="callout callout-warning usage-warning" id="usage-warning" data-usage-warning hidden></p>
    </div>
  </div>
</section>

<section class="panel" id="create-panel" aria-labelledby="create-title">
  <h2 id="create-title">Create a key</h2>
  <div class="form-error" id="create-error" role="alert" tabindex="-1" hidden></div>
  <form id="create-key" class="key-form" novalidate>
    <div class="field">
      <label for="key-name">Name</label>
      <p class="field-hint" id="key-name-hint">So you can recognise it later, for example “Laptop” or “CI pipeline”.</p>
      <p class="field-error" id="key-name-error" hidden></p>
      <input id="key-name" name="name" type="text" required maxlength="100" autocomplete="off" aria-describedby="key-name-hint key-name-error">
    </div>
    <fieldset class="field">
      <legend>Environment</legend>
      <div class="choices">
        <label class="choice"><input type="radio" name="environment" value="production" checked>
          <span><strong>Production</strong><span class="choice-note">Live data, under <code>${prefixes.production}</code></span></span></label>
        <label class="choice"><input type="radio" name="environment" value="staging">
          <span><strong>Staging</strong><span class="choice-note">Sandbox data, under <code>${prefixes.staging}</code></span></span></label>
      </div>
    </fieldset>
    <div class="field">
      <label for="key-expiry">Expires <span class="optional">(optional)</span></label>
      <select id="key-expiry" name="expiresInDays">
        ${EXPIRY_CHOICES.map((c) => html`<option value="${c.value}">${c.label}</option>`)}
      </select>
    </div>
    <div class="form-actions">
      <button type="submit" class="button button-primary" data-busy-label="Creating key…">Create key</button>
    </div>
  </form>
</section>

<section class="panel panel-secret" id="secret-panel" aria-labelledby="secret-title" hidden>
  <h2 id="secret-title" tabindex="-1">Your new key</h2>
  <p class="callout callout-warning"><strong>Copy it now. It is shown only this once.</strong> We store only a hash of
    it, so nobody can show it to you again. If you lose it, revoke it and create another.</p>
  <div class="field">
    <label for="secret-value">API key <span class="muted" data-secret-meta></span></label>
    <div class="secret-row">
      <input id="secret-value" type="text" readonly spellcheck="false" autocomplete="off" class="secret-input">
      <button type="button" class="button" data-action="copy-secret">Copy</button>
    </div>
    <p class="field-hint" data-copy-status role="status"></p>
  </div>
  <div class="secret-actions">
    <button type="button" class="button button-primary" data-action="explore">Use in API explorer</button>
    <button type="button" class="button" data-action="saved">I have saved it</button>
  </div>
  <p class="field-hint"><em>Use in API explorer</em> opens the API reference in this tab, already authorized with this key.
    The key is handed over in this tab's session storage and stays in this tab only, so the code samples can use it,
    until you close the tab or press <em>Forget it</em> on the home page.</p>
</section>

<section class="panel" aria-labelledby="list-title">
  <div class="panel-head">
    <h2 id="list-title" tabindex="-1">Your keys</h2>
  </div>
  <div class="form-error" id="list-error" role="alert" tabindex="-1" hidden></div>
  <p class="status-line" data-list-status role="status">Loading your keys…</p>
  <div class="table-wrap">
    <table class="data-table keys-table" data-keys-table hidden
      data-prefix-production="${prefixes.production}" data-prefix-staging="${prefixes.staging}"
      data-deprecated-method="${deprecated.method}" data-deprecated-path="${deprecated.path}"
      data-sunset="${deprecated.sunset.iso}" data-sunset-text="${deprecated.sunset.text}">
      <caption class="visually-hidden">Your API keys</caption>
      <thead>
        <tr>
          <th scope="col">Name</th><th scope="col">Environment</th><th scope="col">Key</th><th scope="col">Created</th>
          <th scope="col">Last used</th><th scope="col">Requests</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody data-keys-body></tbody>
    </table>
  </div>
</section>

${KEY_REQUESTS_SECTION}

${o.usage}

<dialog class="dialog" id="roll-dialog" aria-labelledby="roll-title" aria-describedby="roll-body">
  <form method="dialog">
    <h2 id="roll-title">Roll <span data-key-name></span>?</h2>
    <p id="roll-body">A new secret replaces <code data-key-prefix></code>…, shown once. Keep the old one working while your
      clients move to the new one:</p>
    <fieldset class="field">
      <legend>The old secret keeps working</legend>
      <div class="choices">
        ${ROLL_CHOICES.map((c) => html`<label class="choice"><input type="radio" name="overlap" value="${c.value}"${c.value === '24h' ? html` checked` : html``}><span>${c.label}</span></label>`)}
      </div>
    </fieldset>
    <div class="dialog-actions">
      <button type="submit" value="cancel" class="button" autofocus>Cancel</button>
      <button type="submit" value="roll" class="button button-primary">Roll key</button>
    </div>
  </form>
</dialog>

<dialog class="dialog" id="revoke-dialog" aria-labelledby="revoke-title" aria-describedby="revoke-body">
  <form method="dialog">
    <h2 id="revoke-title">Revoke <span data-key-name></span>?</h2>
    <p id="revoke-body">Requests with <code data-key-prefix></code>… will be refused with <code>401</code> within a second.
      This cannot be undone.</p>
    <div class="dialog-actions">
      <button type="submit" value="cancel" class="button" autofocus>Cancel</button>
      <button type="submit" value="revoke" class="button button-danger">Revoke key</button>
    </div>
  </form>
</dialog>
`;
}

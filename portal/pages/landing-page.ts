import type { EnvironmentPrefixes } from '../../openapi/environments';
import type { DeprecationNotice } from '../deprecation-notice';
import { html, type SafeHtml } from '../html';
import { callout, codeBlock, codeSamples } from './components';
import type { Viewer } from './layout';

export interface LandingOptions {
  publicUrl: string;
  viewer: Viewer;
  prefixes: EnvironmentPrefixes;
  deprecated: DeprecationNotice;
}

/** `/portal/`: what the API is, a quickstart to the first call, environments, where to go next. */
export function landingPage({ publicUrl, viewer, prefixes, deprecated }: LandingOptions): SafeHtml {
  const signedIn = typeof viewer === 'object';
  const production = `${publicUrl}${prefixes.production}`;
  const staging = `${publicUrl}${prefixes.staging}`;
  const getKey = signedIn ? '/portal/keys' : '/portal/signup';
  const bases = { production, staging };

  return html`<section class="hero" aria-labelledby="hero-title">
  <p class="eyebrow">Animal Store API · v1</p>
  <h1 id="hero-title">List and add animals with one HTTP call</h1>
  <p class="lead">A small JSON API over HTTPS for the animals in the Animal Store. Every request carries a bearer
    key; every error has the same <code>{"code", "message", "status"}</code> shape; a sandbox environment lets you try
    everything without touching production data.</p>
  <div class="actions">
    <a class="button button-primary button-large" href="${getKey}">${signedIn ? 'Go to your API keys' : 'Get an API key'}</a>
    <a class="button button-large" href="/docs/">Explore the API reference</a>
  </div>
  <p class="hint">Sign up, create a key and make your first call in under a minute.</p>
</section>

<section class="section" aria-labelledby="quickstart">
  <h2 id="quickstart">Quickstart</h2>
  <ol class="steps">
    <li class="step">
      <h3>Create a key</h3>
      <p>${signedIn ? html`Open <a href="/portal/keys">your API keys</a>` : html`<a href="/portal/signup">Sign up</a> (or <a href="/portal/login">log in</a>)`}
        and create a key. Production keys start with <code>asg_prod_</code>, staging keys with <code>asg_stag_</code>.
        The key is shown <strong>once</strong>: copy it, or press <em>Use in API explorer</em> to try it straight away
        in the <a href="/docs/">API reference</a>.</p>
      ${codeBlock('qs-key', 'Shell: keep the key in a variable', 'export ASG_KEY="asg_prod_…"   # paste your key')}
      <p class="callout callout-info tab-key-note" data-tab-key-note hidden>The samples below use <span data-tab-key-name></span>,
        handed to this tab by <em>Use in API explorer</em>. It stays in this tab only.
        <button type="button" class="button button-small" data-forget-key>Forget it</button></p>
    </li>
    <li class="step">
      <h3>List the animals</h3>
      <p>Send the key as a bearer token. The answer is a JSON array, in ascending <code>id</code> order, at most
        <code>limit</code> (default 20) per page; a <code>Link: &lt;…&gt;; rel="next"</code> header points to the next page.</p>
      ${codeSamples({ id: 'qs-list', label: 'Request: list the available animals', method: 'GET', path: '/pets?status=available&limit=20', bases })}
      ${codeBlock('qs-list-response', 'Response: 200 OK', '[\n  { "id": 1, "name": "Rex", "categoryId": 2, "status": "available" }\n]')}
    </li>
    <li class="step">
      <h3>Send a message <span class="badge badge-beta">Beta</span></h3>
      <p><code>POST /messages</code> is the hello-world of the API: it accepts a short message and answers at once.</p>
      ${codeSamples({ id: 'qs-message', label: 'Request: send a message', method: 'POST', path: '/messages', body: { message: 'Hello, Animal Store' }, bases })}
      ${codeBlock(
        'qs-message-response',
        'Response: 202 Accepted',
        '{\n  "id": "msg_6f1c0c2e9b4d4b7e8a1f0e5d2c3b4a59",\n  "message": "Hello, Animal Store",\n  "status": "queued",\n  "createdAt": "2026-11-22T09:30:00.000Z"\n}',
      )}
      ${callout(
        'info',
        'What "queued" means',
        html`<p><code>202 Accepted</code> with <code>"status": "queued"</code> means the store has accepted and stored
          your message, but has <strong>not processed it yet</strong>. It is a receipt, not a result: do not treat the
          message as delivered. Keep the <code>id</code> to refer to it later. As a beta operation its shape may still change.</p>`,
      )}
    </li>
  </ol>
</section>

<section class="section" aria-labelledby="environments">
  <h2 id="environments">Environments</h2>
  <p>Both environments have the same operations. Staging has its own data, so nothing you create there appears in
    production, and the reverse. A key works only in the environment it was created for.</p>
  <div class="table-wrap">
    <table class="data-table">
      <caption class="visually-hidden">Environments and their base URLs</caption>
      <thead><tr><th scope="col">Environment</th><th scope="col">Base URL</th><th scope="col">Keys start with</th><th scope="col">Use it for</th></tr></thead>
      <tbody>
        <tr><th scope="row" data-label="Environment">Production</th><td data-label="Base URL"><code class="url">${production}</code></td><td data-label="Keys start with"><code>asg_prod_</code></td><td data-label="Use it for">Your live application</td></tr>
        <tr><th scope="row" data-label="Environment">Staging</th><td data-label="Base URL"><code class="url">${staging}</code></td><td data-label="Keys start with"><code>asg_stag_</code></td><td data-label="Use it for">Development, CI and experiments (sandbox data)</td></tr>
      </tbody>
    </table>
  </div>
</section>

<section class="section" aria-labelledby="next">
  <h2 id="next">Next steps</h2>
  <ul class="cards" role="list">
    <li class="card"><h3><a href="/docs/">API reference</a></h3><p>Every operation, with <em>Try it out</em> against production or staging.</p></li>
    <li class="card"><h3><a href="${getKey}">${signedIn ? 'Your API keys' : 'Create an account'}</a></h3><p>Create, list and revoke keys. Give each application its own key.</p></li>
    <li class="card"><h3><a href="/portal/deprecations">Deprecations</a></h3><p><code>${deprecated.method} ${deprecated.path}</code> is removed on ${deprecated.sunset.text}. See how to migrate.</p></li>
    <li class="card"><h3><a href="/docs/portal/">Portal API</a></h3><p>Manage accounts and keys from scripts: the JSON API behind this portal.</p></li>
  </ul>
  <h3 class="small-heading">Good to know</h3>
  <ul class="facts">
    <li><strong>Errors</strong> are always JSON <code>{"code", "message", "status"}</code>; <code>code</code> is a stable value such as <code>unauthorized</code> or <code>invalid_request</code>.</li>
    <li><strong>Rate limits</strong> come with your account's plan: a budget per minute shared by all your keys in each environment, and perhaps a monthly quota (see <a href="/portal/keys">your keys page</a>). Responses carry <code>RateLimit</code> and <code>RateLimit-Policy</code> headers, and a request over a limit gets <code>429</code> with <code>Retry-After</code>.</li>
    <li><strong>OpenAPI</strong> documents: <a href="/openapi.json">openapi.json</a>, <a href="/openapi.yaml">openapi.yaml</a>.</li>
  </ul>
</section>
`;
}

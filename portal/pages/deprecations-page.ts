import type { EnvironmentPrefixes } from '../../openapi/environments';
import type { DeprecationNotice } from '../deprecation-notice';
import { html, type SafeHtml } from '../html';
import { codeBlock } from './components';

/** `/portal/deprecations`: the target of `Link: <…>; rel="deprecation"` on deprecated operations. */
export function deprecationsPage(o: { publicUrl: string; prefixes: EnvironmentPrefixes; deprecated: DeprecationNotice }): SafeHtml {
  const base = `${o.publicUrl}${o.prefixes.production}`;
  const { deprecatedOn, sunset, headers } = o.deprecated;
  const operation = `${o.deprecated.method} ${o.deprecated.path}`;
  return html`<div class="page-head">
  <h1>Deprecations</h1>
  <p class="lead">Operations we plan to remove, when, and what to use instead. Deprecated operations keep working
    until their sunset date, and every response they send says so in its headers.</p>
</div>

<div class="table-wrap">
  <table class="data-table">
    <caption class="visually-hidden">Deprecated operations</caption>
    <thead><tr><th scope="col">Operation</th><th scope="col">Deprecated since</th><th scope="col">Removed on</th><th scope="col">Use instead</th></tr></thead>
    <tbody>
      <tr>
        <th scope="row" data-label="Operation"><a href="#get-pet"><code>${operation}</code></a></th>
        <td data-label="Deprecated since"><time datetime="${deprecatedOn.iso}">${deprecatedOn.text}</time></td>
        <td data-label="Removed on"><time datetime="${sunset.iso}">${sunset.text}</time></td>
        <td data-label="Use instead"><code>GET /pets?status=…</code></td>
      </tr>
    </tbody>
  </table>
</div>

<section class="section" aria-labelledby="get-pet">
  <h2 id="get-pet"><code>${operation}</code> — removed on ${sunset.text}</h2>
  <p>Fetching one animal by its identifier is deprecated since ${deprecatedOn.text} and will be removed on
    <strong>${sunset.text} at ${sunset.time}</strong>. From then on it answers <code>410 gone</code> with an Error body.</p>

  <h3>How your client can tell</h3>
  <p>Every response of this operation already carries these headers, errors included:</p>
  ${codeBlock(
    'dep-headers',
    'Response headers',
    `Deprecation: ${headers.deprecation}\nSunset: ${headers.sunset}\nLink: <${o.publicUrl}/portal/deprecations>; rel="deprecation"; type="text/html"`,
  )}
  <p>Log or alert on a <code>Deprecation</code> header in your HTTP client to find the remaining callers.</p>

  <h3>How to migrate</h3>
  <p>Use <code>GET /pets</code> with a <code>status</code> filter and page through the results
    with the <code>Link: &lt;…&gt;; rel="next"</code> header:</p>
  <div class="compare">
    ${codeBlock('dep-before', 'Before (deprecated)', `curl -H "Authorization: Bearer $ASG_KEY" \\\n     "${base}/pets/42"`)}
    ${codeBlock('dep-after', 'After', `curl -H "Authorization: Bearer $ASG_KEY" \\\n     "${base}/pets?status=available&limit=100"`)}
  </div>
  <ol class="plain-steps">
    <li>Choose the <code>status</code> you need: <code>available</code>, <code>pending</code> or <code>sold</code>.</li>
    <li>Read the animals from the response body, a JSON array in ascending <code>id</code> order.</li>
    <li>While the response has a <code>Link</code> header with <code>rel="next"</code>, request that URL as it is
      (it carries the <code>after</code> cursor) to get the next page.</li>
    <li>Keep the animals you were looking for, by <code>id</code>, in your own code.</li>
  </ol>
  <p>Try both in the <a href="/docs/#/Pets/listPets">API reference</a> before you switch. The staging environment
    (<code>${o.publicUrl}${o.prefixes.staging}</code>) follows the same schedule.</p>
</section>
`;
}

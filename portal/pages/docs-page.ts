import { html, type SafeHtml } from '../html';

export interface DocsTab {
  href: string;
  label: string;
  current: boolean;
}

/** The frame around a Swagger UI instance: heading, API switcher and how to try a call. */
export function docsPage(o: { title: string; specUrl: string; intro: SafeHtml; tabs: readonly DocsTab[] }): SafeHtml {
  return html`<section class="docs-head" aria-labelledby="docs-title">
  <div class="container">
    <h1 id="docs-title">${o.title}</h1>
    <nav aria-label="API documents" class="docs-tabs">
      <ul role="list">
        ${o.tabs.map((t) => html`<li><a href="${t.href}"${t.current ? html` aria-current="page"` : ''}>${t.label}</a></li>`)}
      </ul>
    </nav>
    ${o.intro}
    <p class="explorer-status" data-explorer-status role="status"></p>
  </div>
</section>
<div class="container docs-body">
  <div id="swagger-ui"><p class="muted">Loading the API reference…</p></div>
  <noscript><p class="callout callout-warning">The interactive reference needs JavaScript. The OpenAPI document is at
    <a href="${o.specUrl}">${o.specUrl}</a>.</p></noscript>
</div>
`;
}

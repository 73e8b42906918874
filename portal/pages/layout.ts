import { html, type SafeHtml } from '../html';
import type { Assets } from '../assets';

export type Section = 'home' | 'docs' | 'portal-docs' | 'deprecations' | 'keys' | 'login' | 'signup';

/**
 * Who is looking: a signed-in account, nobody, or unknown — the session cookie is scoped to
 * `/portal`, so pages outside it (the docs) cannot tell and link to the keys page instead.
 */
export type Viewer = { email: string } | 'anonymous' | 'unknown';

export interface PageOptions {
  title: string;
  description: string;
  section: Section | null;
  viewer: Viewer;
  assets: Assets;
  main: SafeHtml;
  /** Extra stylesheets (absolute URLs), after the portal's own. */
  styles?: readonly string[];
  /** Scripts (absolute URLs), loaded at the end of the body in this order. */
  scripts?: readonly string[];
  mainClass?: string;
  /**
   * `div` when the page embeds a widget that renders its own `<main>` (Swagger UI does), so
   * the page keeps exactly one main landmark.
   */
  mainElement?: 'main' | 'div';
}

const SITE = 'Animal Store Developers';

function navLink(href: string, label: string, current: boolean): SafeHtml {
  return html`<li><a href="${href}"${current ? html` aria-current="page"` : ''}>${label}</a></li>`;
}

function accountNav(viewer: Viewer, section: Section | null): SafeHtml {
  if (viewer === 'unknown') {
    return html`<ul class="nav-account" role="list">${navLink('/portal/keys', 'Your API keys', section === 'keys')}</ul>`;
  }
  if (viewer === 'anonymous') {
    return html`<ul class="nav-account" role="list">
        ${navLink('/portal/login', 'Log in', section === 'login')}
        <li><a class="button button-small" href="/portal/signup"${section === 'signup' ? html` aria-current="page"` : ''}>Sign up</a></li>
      </ul>`;
  }
  return html`<ul class="nav-account" role="list">
      ${navLink('/portal/keys', 'API keys', section === 'keys')}
      <li class="nav-email" title="${viewer.email}">${viewer.email}</li>
      <li><button type="button" class="link-button" data-action="logout">Log out</button></li>
    </ul>`;
}

const LOGO = html`<svg class="logo" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false">
  <rect width="32" height="32" rx="8" fill="#1d4ed8"/>
  <ellipse cx="16" cy="20.5" rx="6" ry="5" fill="#fff"/>
  <ellipse cx="8.5" cy="13" rx="2.6" ry="3.2" fill="#fff"/>
  <ellipse cx="13.2" cy="8.8" rx="2.6" ry="3.2" fill="#fff"/>
  <ellipse cx="18.8" cy="8.8" rx="2.6" ry="3.2" fill="#fff"/>
  <ellipse cx="23.5" cy="13" rx="2.6" ry="3.2" fill="#fff"/>
</svg>`;

/** The page frame shared by every portal and docs page: skip link, header, main, footer. */
export function layout(o: PageOptions): SafeHtml {
  const styles = [o.assets.url('portal.css'), ...(o.styles ?? [])];
  const scripts = [o.assets.url('portal.js'), ...(o.scripts ?? [])];
  return html`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${o.title} · ${SITE}</title>
  <meta name="description" content="${o.description}">
  <link rel="icon" href="${o.assets.url('favicon.svg')}" type="image/svg+xml">
  ${styles.map((href) => html`<link rel="stylesheet" href="${href}">\n  `)}
</head>
<body>
  <a class="skip-link" href="#main">Skip to main content</a>
  <header class="site-header">
    <div class="container header-inner">
      <a class="brand" href="/portal/">${LOGO}<span>Animal Store <span class="brand-sub">Developers</span></span></a>
      <nav class="site-nav" aria-label="Main">
        <ul role="list">
          ${navLink('/docs/', 'API reference', o.section === 'docs')}
          ${navLink('/docs/portal/', 'Portal API', o.section === 'portal-docs')}
          ${navLink('/portal/deprecations', 'Deprecations', o.section === 'deprecations')}
        </ul>
        ${accountNav(o.viewer, o.section)}
      </nav>
    </div>
  </header>
  ${o.mainElement === 'div' ? html`<div id="main" tabindex="-1" class="${o.mainClass ?? 'container'}">` : html`<main id="main" tabindex="-1" class="${o.mainClass ?? 'container'}">`}
${o.main}
  ${o.mainElement === 'div' ? html`</div>` : html`</main>`}
  <footer class="site-footer">
    <div class="container footer-inner">
      <p>Animal Store API · <a href="/openapi.json">openapi.json</a> · <a href="/openapi.yaml">openapi.yaml</a> · <a href="/portal/openapi.json">Portal API openapi.json</a></p>
      <p><a href="/portal/deprecations">Deprecation schedule</a></p>
    </div>
  </footer>
  ${scripts.map((src) => html`<script src="${src}" defer></script>\n  `)}
</body>
</html>
`;
}

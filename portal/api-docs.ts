import { Router, type RequestHandler } from 'express';
import swaggerUiDist from 'swagger-ui-dist/package.json';
import swaggerUi from 'swagger-ui-express';
import type { OpenApiDocument } from '../openapi/document';
import { documentRoutes } from '../openapi/document-routes';
import { environmentPrefixes } from '../openapi/environments';
import type { Assets } from './assets';
import { operationBadgesCss } from './docs-badges';
import { html, type SafeHtml } from './html';
import { docsPage, type DocsTab } from './pages/docs-page';
import { layout, type Section } from './pages/layout';

/**
 * Options of every Swagger UI instance. Try-it-out is on from the start, authorization lives
 * only as long as the page (never in localStorage), and no document is sent to an outside
 * validator. `BaseLayout` drops Swagger's own top bar: the portal header takes its place.
 */
export const SWAGGER_OPTIONS = Object.freeze({
  tryItOutEnabled: true,
  displayRequestDuration: true,
  deepLinking: true,
  requestSnippetsEnabled: true,
  persistAuthorization: false,
  validatorUrl: null,
  layout: 'BaseLayout',
  showExtensions: true,
  showCommonExtensions: true,
  defaultModelsExpandDepth: -1,
  syntaxHighlight: { activate: true, theme: 'agate' },
});

/** The files of swagger-ui-dist a page needs; nothing else (its demo index.html, package.json) is served. */
const SWAGGER_FILES = new Set([
  '/swagger-ui.css',
  '/swagger-ui.css.map',
  '/swagger-ui-bundle.js',
  '/swagger-ui-bundle.js.map',
  '/swagger-ui-standalone-preset.js',
  '/swagger-ui-standalone-preset.js.map',
  '/swagger-ui-init.js',
]);

/** swagger-ui-dist files are versioned by the package: a page links `?v=<version>`, cached for a year. */
const SWAGGER_VERSION = swaggerUiDist.version;
const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface ApiDocsDeps {
  /** The public API document, served at /openapi.json by the composition root (openapi/document-routes.ts). */
  apiDocument: OpenApiDocument;
  /** The portal API document, served here at /portal/openapi.json and /portal/openapi.yaml. */
  portalDocument: OpenApiDocument;
  assets: Assets;
  /** The deployment's public base URL: the served portal document's contact URL points at it. */
  publicUrl?: string;
}

interface Instance {
  base: '/docs' | '/docs/portal';
  specUrl: string;
  section: Section;
  title: string;
  description: string;
  intro: SafeHtml;
  badgesAsset: string;
  scripts: string[];
}

const TABS: ReadonlyArray<Omit<DocsTab, 'current'>> = [
  { href: '/docs/', label: 'Animal Store API' },
  { href: '/docs/portal/', label: 'Portal API' },
];

/**
 * Swagger UI for the public API at `/docs/` and for the portal JSON API at `/docs/portal/`.
 * Each instance is its own router with its own `swagger-ui-init.js` (swagger-ui-express
 * `serveFiles`), so the two never share a spec. The page around Swagger UI is the portal's
 * own template: swagger-ui-express's template has inline styles, which the CSP refuses.
 */
export function createApiDocs(deps: ApiDocsDeps): Router {
  const { assets } = deps;
  const prefixes = environmentPrefixes(deps.apiDocument);
  assets.add('docs-api-badges.css', operationBadgesCss(deps.apiDocument));
  assets.add('docs-portal-badges.css', operationBadgesCss(deps.portalDocument));

  const router = Router({ strict: true, caseSensitive: true });
  router.use(documentRoutes(deps.portalDocument, { at: '/portal', publicUrl: deps.publicUrl }));

  // The portal instance first: its paths lie below /docs.
  router.use(
    swaggerInstance(assets, {
      base: '/docs/portal',
      specUrl: '/portal/openapi.json',
      section: 'portal-docs',
      title: 'Portal API reference',
      description: 'The JSON API behind the developer portal: accounts, sessions and API keys.',
      intro: html`<p class="docs-intro">The JSON API behind this portal, for scripts that manage accounts and keys. It
        uses the portal's session cookie: <a href="/portal/login?next=%2Fdocs%2Fportal%2F">log in</a> in this browser and
        <em>Try it out</em> works here too.</p>`,
      badgesAsset: 'docs-portal-badges.css',
      scripts: [],
    }),
  );
  router.use(
    swaggerInstance(assets, {
      base: '/docs',
      specUrl: '/openapi.json',
      section: 'docs',
      title: 'API reference',
      description: 'Interactive reference of the Animal Store API, with Try it out against production and staging.',
      intro: html`<ol class="docs-steps">
        <li><strong>Authorize</strong> with an API key (<a href="/portal/keys">get one</a>).</li>
        <li>Pick the <strong>server</strong>: Production (<code>${prefixes.production}</code>) or Staging (<code>${prefixes.staging}</code>), matching your key.</li>
        <li>Open an operation and press <strong>Execute</strong>.</li>
      </ol>`,
      badgesAsset: 'docs-api-badges.css',
      // code-samples.js first: the explorer hands it the key, the plugin draws each operation's samples with it.
      scripts: [assets.url('code-samples.js'), assets.url('docs-explorer.js')],
    }),
  );
  return router;
}

function swaggerInstance(assets: Assets, o: Instance): Router {
  const [initScript, swaggerStatic] = swaggerUi.serveFiles(undefined, {
    swaggerOptions: { ...SWAGGER_OPTIONS, url: o.specUrl },
  }) as [RequestHandler, RequestHandler];
  const page = layout({
    title: o.title,
    description: o.description,
    section: o.section,
    viewer: 'unknown',
    assets,
    mainClass: 'docs-main',
    mainElement: 'div',
    styles: [`${o.base}/swagger-ui.css?v=${SWAGGER_VERSION}`, assets.url('docs.css'), assets.url(o.badgesAsset)],
    scripts: [
      `${o.base}/swagger-ui-bundle.js?v=${SWAGGER_VERSION}`,
      `${o.base}/swagger-ui-standalone-preset.js?v=${SWAGGER_VERSION}`,
      // Between the bundle and swagger-ui-init.js: adds the portal's Swagger UI plugin.
      assets.url('docs-swagger-plugin.js'),
      `${o.base}/swagger-ui-init.js`,
      ...o.scripts,
    ],
    main: docsPage({ title: o.title, specUrl: o.specUrl, intro: o.intro, tabs: TABS.map((t) => ({ ...t, current: t.href === `${o.base}/` })) }),
  }).value;

  const router = Router({ strict: true, caseSensitive: true });
  router.get(o.base, function docsRedirect(_req, res) {
    res.redirect(301, `${o.base}/`);
  });
  router.get(`${o.base}/`, function docsPage(_req, res) {
    res.status(200).type('html').set('Cache-Control', 'public, no-cache').send(page);
  });
  router.use(o.base, function swaggerFiles(req, res, next) {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !SWAGGER_FILES.has(req.path)) return next('router');
    if (req.path === '/swagger-ui-init.js') return initScript(req, res, next);
    if (req.query.v === SWAGGER_VERSION) res.setHeader('Cache-Control', IMMUTABLE);
    swaggerStatic(req, res, next);
  });
  return router;
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router } from 'express';

/** Static portal pages, read once at start-up. */
export function portalPages(): Router {
  const deprecations = readFileSync(join(__dirname, 'pages', 'deprecations.html'));
  const router = Router();
  router.get('/portal/deprecations', (_req, res) => {
    res.type('html').set('Cache-Control', 'public, max-age=300').send(deprecations);
  });
  return router;
}

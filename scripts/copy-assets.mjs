// `npm run build`, after tsc: the files the compiled code reads beside itself (the OpenAPI
// documents, the portal's static assets) go where dist/ expects them.
import { cpSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const name of readdirSync(join(root, 'openapi')).filter((f) => f.endsWith('.yaml'))) {
  cpSync(join(root, 'openapi', name), join(root, 'dist', 'openapi', name));
}
cpSync(join(root, 'portal', 'public'), join(root, 'dist', 'portal', 'public'), { recursive: true });

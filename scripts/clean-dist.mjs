// `npm run build`, before tsc: dist/ starts empty, so a module deleted from the source does not
// live on in the build (and in the Docker image) as a stale .js nothing tests.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

rmSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist'), { recursive: true, force: true });

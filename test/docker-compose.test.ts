import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseConfig } from '../gateway/config';

/** docker-compose.yml cannot be run here (no engine); check what it promises instead. */
describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(join(__dirname, '..', 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { environment?: Record<string, string>; depends_on?: Record<string, unknown>; build?: string; image?: string }>;
  };

  test('when read, then it runs the gateway with PostgreSQL and Redis', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['gateway', 'postgres', 'redis']);
    expect(compose.services.gateway!.build).toBe('.');
    expect(Object.keys(compose.services.gateway!.depends_on!).sort()).toEqual(['postgres', 'redis']);
  });

  test("when the gateway's environment is parsed with the defaults compose substitutes, then it is a valid production config", () => {
    const env = Object.fromEntries(
      Object.entries(compose.services.gateway!.environment!).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]),
    );
    const config = parseConfig(env);
    expect(config).toMatchObject({ env: 'production', port: 8080, databaseUrl: expect.stringMatching(/@postgres:5432\//), redisUrl: 'redis://redis:6379/0' });
  });
});

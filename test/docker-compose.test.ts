import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseConfig } from '../gateway/config';

/** docker-compose.yml cannot be run here (no engine); check what it promises instead. */
describe('docker-compose.yml', () => {
  type Service = { environment?: Record<string, string>; depends_on?: Record<string, unknown> | string[]; build?: string; image?: string; volumes?: string[] };
  const compose = parse(readFileSync(join(__dirname, '..', 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
  const nginxConf = readFileSync(join(__dirname, '..', 'deploy', 'nginx.conf'), 'utf8');

  test('when read, then two gateway replicas run behind an nginx load balancer with PostgreSQL and Redis', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['gateway-a', 'gateway-b', 'loadbalancer', 'postgres', 'redis']);
    for (const name of ['gateway-a', 'gateway-b']) {
      expect(compose.services[name]!.build).toBe('.');
      expect(Object.keys(compose.services[name]!.depends_on as Record<string, unknown>).sort()).toEqual(['postgres', 'redis']);
      expect(nginxConf).toContain(`server ${name}:8080`);
    }
    expect(compose.services.loadbalancer!.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
  });

  test("when a replica's environment is parsed with the defaults compose substitutes, then it is a valid production config that shares state", () => {
    const env = Object.fromEntries(
      Object.entries(compose.services['gateway-a']!.environment!).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]),
    );
    const config = parseConfig(env);
    expect(config).toMatchObject({ env: 'production', host: '0.0.0.0', port: 8080, trustProxy: true, databaseUrl: expect.stringMatching(/@postgres:5432\//), redisUrl: 'redis://redis:6379/0' });
    expect(compose.services['gateway-b']!.environment).toEqual(compose.services['gateway-a']!.environment);
  });
});

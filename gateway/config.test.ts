import { ConfigError, parseConfig } from './config';

describe('parseConfig', () => {
  test('when nothing is set, then the documented defaults apply', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      env: 'development',
      port: 8080,
      host: '0.0.0.0',
      cacheTtlSeconds: 30,
      rateLimitPerMinute: 600,
      upstreamTimeoutMs: 10_000,
      upstreams: { production: undefined, staging: undefined },
      databaseUrl: undefined,
      redisUrl: undefined,
    });
    expect(config.dataDir).toMatch(/\/data$/);
    expect(Object.isFrozen(config)).toBe(true);
  });

  test('when several variables are bad, then one error names every one of them', () => {
    let error: ConfigError | undefined;
    try {
      parseConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', PRODUCTION_UPSTREAM: 'not a url', SESSION_SECRET: 'short', RATE_LIMIT_PER_MINUTE: '0' });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const named = error!.problems.map((p) => p.split(':')[0]).sort();
    expect(named).toEqual(['DATABASE_URL', 'PORT', 'PRODUCTION_UPSTREAM', 'RATE_LIMIT_PER_MINUTE', 'SESSION_SECRET']);
  });

  test('when NODE_ENV=production, then both secrets are required', () => {
    expect(() => parseConfig({ NODE_ENV: 'production' })).toThrow(/SESSION_SECRET: required when NODE_ENV=production[\s\S]*KEY_HASH_SECRET: required/);
    const secret = 'x'.repeat(32);
    expect(parseConfig({ NODE_ENV: 'production', SESSION_SECRET: secret, KEY_HASH_SECRET: secret }).sessionSecret).toBe(secret);
  });

  test('when PUBLIC_URL has a trailing slash, then it is dropped so links join cleanly', () => {
    expect(parseConfig({ PUBLIC_URL: 'https://api.example.com/' }).publicUrl).toBe('https://api.example.com');
  });
});

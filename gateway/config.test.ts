import { ConfigError, parseConfig } from './config';

describe('parseConfig', () => {
  test('when nothing is set, then the documented defaults apply', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      env: 'development',
      port: 8080,
      host: '127.0.0.1',
      cacheTtlSeconds: 30,
      cacheMaxBytes: 32 * 1024 * 1024,
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

  test('when DATABASE_URL is set without the secrets, then both are required: processes sharing a database must share them', () => {
    const databaseUrl = 'postgres://postgres@127.0.0.1:5432/test';
    expect(() => parseConfig({ DATABASE_URL: databaseUrl })).toThrow(/SESSION_SECRET: required with DATABASE_URL[\s\S]*KEY_HASH_SECRET: required with DATABASE_URL/);
    const secret = 'x'.repeat(32);
    expect(parseConfig({ DATABASE_URL: databaseUrl, SESSION_SECRET: secret, KEY_HASH_SECRET: secret }).databaseUrl).toBe(databaseUrl);
  });

  test('when NODE_ENV=production, then both secrets are required', () => {
    expect(() => parseConfig({ NODE_ENV: 'production' })).toThrow(/SESSION_SECRET: required when NODE_ENV=production[\s\S]*KEY_HASH_SECRET: required/);
    const secret = 'x'.repeat(32);
    expect(parseConfig({ NODE_ENV: 'production', SESSION_SECRET: secret, KEY_HASH_SECRET: secret }).sessionSecret).toBe(secret);
  });

  test('when an upstream token is set with its upstream, then it is parsed for that environment only', () => {
    const token = 't'.repeat(32);
    const config = parseConfig({ PRODUCTION_UPSTREAM: 'https://pets.example.com', PRODUCTION_UPSTREAM_TOKEN: token });
    expect(config.upstreamTokens).toEqual({ production: token, staging: undefined });
    expect(parseConfig({}).upstreamTokens).toEqual({ production: undefined, staging: undefined });
  });

  test('when an upstream token is set without its upstream, or is shorter than 32 characters, then each is named', () => {
    expect(() => parseConfig({ STAGING_UPSTREAM_TOKEN: 't'.repeat(32) })).toThrow(
      new ConfigError(['STAGING_UPSTREAM_TOKEN: set only with STAGING_UPSTREAM (an embedded store gets a token drawn at start)']),
    );
    expect(() => parseConfig({ PRODUCTION_UPSTREAM: 'https://pets.example.com', PRODUCTION_UPSTREAM_TOKEN: 'short' })).toThrow(
      new ConfigError(['PRODUCTION_UPSTREAM_TOKEN: must be at least 32 characters']),
    );
  });

  test('when UPSTREAM_MAX_SOCKETS and UPSTREAM_MAX_QUEUE are unset, then 256 and 1024; when set, parsed; a queue of 0 is allowed, 0 sockets is named', () => {
    expect(parseConfig({})).toMatchObject({ upstreamMaxSockets: 256, upstreamMaxQueue: 1024 });
    expect(parseConfig({ UPSTREAM_MAX_SOCKETS: '16', UPSTREAM_MAX_QUEUE: '0' })).toMatchObject({ upstreamMaxSockets: 16, upstreamMaxQueue: 0 });
    expect(() => parseConfig({ UPSTREAM_MAX_SOCKETS: '0' })).toThrow(/UPSTREAM_MAX_SOCKETS:/);
  });

  test('when PUBLIC_URL has a trailing slash, then it is dropped so links join cleanly', () => {
    expect(parseConfig({ PUBLIC_URL: 'https://api.example.com/' }).publicUrl).toBe('https://api.example.com');
  });

  test('when no METRICS_* is set, then metrics are not exposed and the listener would bind loopback', () => {
    expect(parseConfig({})).toMatchObject({ metricsPort: undefined, metricsHost: '127.0.0.1', metricsToken: undefined });
    expect(parseConfig({ METRICS_PORT: '', METRICS_TOKEN: '' })).toMatchObject({ metricsPort: undefined, metricsToken: undefined });
  });

  test('when METRICS_PORT, METRICS_HOST and METRICS_TOKEN are set, then they are parsed', () => {
    const token = 'scrape-token-0123';
    expect(parseConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0', METRICS_TOKEN: token })).toMatchObject({ metricsPort: 9464, metricsHost: '0.0.0.0', metricsToken: token });
    expect(parseConfig({ METRICS_PORT: '0' }).metricsPort).toBe(0);
  });

  test('when METRICS_PORT is not a port or METRICS_TOKEN is shorter than 16 characters, then both are named', () => {
    for (const port of ['abc', '70000', '-1', '1.5']) {
      expect(() => parseConfig({ METRICS_PORT: port })).toThrow(/METRICS_PORT:/);
    }
    expect(() => parseConfig({ METRICS_PORT: 'x', METRICS_TOKEN: 'x'.repeat(15) })).toThrow(/METRICS_PORT:[\s\S]*METRICS_TOKEN: must be at least 16 characters/);
  });

  test('when SHUTDOWN_TIMEOUT_MS is unset, then a stop waits 10 s for in-flight requests; when set, it is parsed; 0 is allowed, negatives and fractions are named', () => {
    expect(parseConfig({}).shutdownTimeoutMs).toBe(10_000);
    expect(parseConfig({ SHUTDOWN_TIMEOUT_MS: '2500' }).shutdownTimeoutMs).toBe(2500);
    expect(parseConfig({ SHUTDOWN_TIMEOUT_MS: '0' }).shutdownTimeoutMs).toBe(0);
    for (const bad of ['-1', '1.5', 'soon', '600001']) expect(() => parseConfig({ SHUTDOWN_TIMEOUT_MS: bad })).toThrow(/SHUTDOWN_TIMEOUT_MS:/);
  });

  test('when CACHE_MAX_BYTES is set, then it is parsed; under 64 KiB, fractions and words are named', () => {
    expect(parseConfig({ CACHE_MAX_BYTES: '8388608' }).cacheMaxBytes).toBe(8_388_608);
    for (const bad of ['65535', '1.5', 'lots']) expect(() => parseConfig({ CACHE_MAX_BYTES: bad })).toThrow(/CACHE_MAX_BYTES:/);
  });

  test('when no connection setting is set, then 8192 connections, 512 per client, 5 s idle keep-alive and 10 s for headers; set ones are parsed and bad ones named', () => {
    expect(parseConfig({})).toMatchObject({ maxConnections: 8192, maxConnectionsPerClient: 512, keepAliveTimeoutMs: 5000, headersTimeoutMs: 10_000 });
    const set = { MAX_CONNECTIONS: '50', MAX_CONNECTIONS_PER_CLIENT: '20', KEEP_ALIVE_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1500' };
    expect(parseConfig(set)).toMatchObject({ maxConnections: 50, maxConnectionsPerClient: 20, keepAliveTimeoutMs: 1000, headersTimeoutMs: 1500 });
    const bad = { MAX_CONNECTIONS: '0', MAX_CONNECTIONS_PER_CLIENT: '1.5', KEEP_ALIVE_TIMEOUT_MS: 'soon', HEADERS_TIMEOUT_MS: '120001' };
    expect(() => parseConfig(bad)).toThrow(/MAX_CONNECTIONS:[\s\S]*MAX_CONNECTIONS_PER_CLIENT:[\s\S]*KEEP_ALIVE_TIMEOUT_MS:[\s\S]*HEADERS_TIMEOUT_MS:/);
  });

  test('when no REQUEST_TIMEOUT_MS or SOCKET_TIMEOUT_MS is set, then a request has 30 s to arrive and a connection on which nothing moves lives 30 s; bad ones are named', () => {
    expect(parseConfig({})).toMatchObject({ requestTimeoutMs: 30_000, socketTimeoutMs: 30_000 });
    expect(parseConfig({ REQUEST_TIMEOUT_MS: '5000', SOCKET_TIMEOUT_MS: '2000' })).toMatchObject({ requestTimeoutMs: 5000, socketTimeoutMs: 2000 });
    expect(() => parseConfig({ REQUEST_TIMEOUT_MS: '99', SOCKET_TIMEOUT_MS: '999' })).toThrow(/REQUEST_TIMEOUT_MS:[\s\S]*SOCKET_TIMEOUT_MS:/);
  });

  test('when no CIRCUIT_* is set, then an upstream circuit opens after 5 consecutive failures for 5 s', () => {
    expect(parseConfig({})).toMatchObject({ circuitFailureThreshold: 5, circuitOpenMs: 5000 });
  });

  test('when CIRCUIT_FAILURE_THRESHOLD and CIRCUIT_OPEN_MS are set, then they are parsed, and values below 1 or not integers are named', () => {
    expect(parseConfig({ CIRCUIT_FAILURE_THRESHOLD: '3', CIRCUIT_OPEN_MS: '500' })).toMatchObject({ circuitFailureThreshold: 3, circuitOpenMs: 500 });
    for (const bad of ['0', '-1', '1.5', 'abc']) {
      expect(() => parseConfig({ CIRCUIT_FAILURE_THRESHOLD: bad, CIRCUIT_OPEN_MS: bad })).toThrow(/CIRCUIT_FAILURE_THRESHOLD:[\s\S]*CIRCUIT_OPEN_MS:/);
    }
  });

  test('when no PASSWORD_* is set, then an address has 2 password checks in flight and 8 hashes may wait; when set, they are parsed, and bad values are named', () => {
    expect(parseConfig({})).toMatchObject({ passwordAttemptsInFlightPerIp: 2, passwordHashQueue: 8 });
    expect(parseConfig({ PASSWORD_ATTEMPTS_IN_FLIGHT_PER_IP: '4', PASSWORD_HASH_QUEUE: '0' })).toMatchObject({ passwordAttemptsInFlightPerIp: 4, passwordHashQueue: 0 });
    expect(() => parseConfig({ PASSWORD_ATTEMPTS_IN_FLIGHT_PER_IP: '0', PASSWORD_HASH_QUEUE: '-1' })).toThrow(/PASSWORD_ATTEMPTS_IN_FLIGHT_PER_IP:[\s\S]*PASSWORD_HASH_QUEUE:/);
  });

  test('when MAX_KEYS_PER_ACCOUNT is unset, then an account may hold 20 active keys; when set, its value, and below 1 or not an integer is named', () => {
    expect(parseConfig({}).maxKeysPerAccount).toBe(20);
    expect(parseConfig({ MAX_KEYS_PER_ACCOUNT: '3' }).maxKeysPerAccount).toBe(3);
    for (const bad of ['0', '-1', '2.5', 'many', '10001']) expect(() => parseConfig({ MAX_KEYS_PER_ACCOUNT: bad })).toThrow(/MAX_KEYS_PER_ACCOUNT:/);
  });

  test('when MAX_NEW_KEYS_PER_DAY is unset, then an account may create or roll 50 keys a day; when set, its value, and below 1 or not an integer is named', () => {
    expect(parseConfig({}).maxNewKeysPerDay).toBe(50);
    expect(parseConfig({ MAX_NEW_KEYS_PER_DAY: '4' }).maxNewKeysPerDay).toBe(4);
    for (const bad of ['0', '-1', '2.5', 'many', '1000001']) expect(() => parseConfig({ MAX_NEW_KEYS_PER_DAY: bad })).toThrow(/MAX_NEW_KEYS_PER_DAY:/);
  });
  test('when ADMIN_* is unset, then there are no admin tokens and the listener would bind 127.0.0.1:8081', () => {
    expect(parseConfig({})).toMatchObject({ adminTokens: [], adminHost: '127.0.0.1', adminPort: 8081 });
    expect(parseConfig({ ADMIN_TOKEN: '', ADMIN_PORT: '0', ADMIN_HOST: '0.0.0.0' })).toMatchObject({ adminTokens: [], adminHost: '0.0.0.0', adminPort: 0 });
  });

  test('when ADMIN_TOKEN is one token, then it is labelled admin; when a list of label:token, then each keeps its label', () => {
    const one = 'a'.repeat(32);
    const two = 'B+/='.repeat(10);
    expect(parseConfig({ ADMIN_TOKEN: one }).adminTokens).toEqual([{ label: 'admin', token: one }]);
    expect(parseConfig({ ADMIN_TOKEN: ` ops-1:${one} , ci_bot:${two} ` }).adminTokens).toEqual([
      { label: 'ops-1', token: one },
      { label: 'ci_bot', token: two },
    ]);
  });

  test('when an ADMIN_TOKEN entry is short, unlabelled, badly labelled or repeated, then each problem names the variable and the entry, never the token', () => {
    const short = 'short-secret-value';
    const long = 'c'.repeat(32);
    const problemsOf = (value: string) => {
      try {
        parseConfig({ ADMIN_TOKEN: value });
      } catch (err) {
        return (err as ConfigError).problems;
      }
      throw new Error('accepted');
    };
    expect(problemsOf(short)).toEqual(['ADMIN_TOKEN: the token: the token must be at least 32 characters']);
    const problems = problemsOf(`ops:${short},Ops:${long},${long}x,ok:${long}`);
    expect(problems).toEqual([
      'ADMIN_TOKEN: entry 1: the token must be at least 32 characters',
      'ADMIN_TOKEN: entry 2 must be "label:token", the label 1 to 32 of a-z, 0-9, "_" and "-"',
      'ADMIN_TOKEN: entry 3 must be "label:token", the label 1 to 32 of a-z, 0-9, "_" and "-"',
      'ADMIN_TOKEN: each token may appear once (one holder per token)',
    ]);
    expect(problems.join('\n')).not.toContain(short);
    expect(problems.join('\n')).not.toContain(long);
    expect(problemsOf(`a:${long},a:${long}y`)).toEqual(['ADMIN_TOKEN: each label may appear once']);
    expect(problemsOf(`a:${'d'.repeat(31)} d`)).toEqual(['ADMIN_TOKEN: entry 1: the token must be printable ASCII without spaces, "," or ":"']);
  });

  test('when ADMIN_PORT is not a port, then it is named', () => {
    for (const bad of ['-1', '65536', '1.5', 'admin']) expect(() => parseConfig({ ADMIN_PORT: bad })).toThrow(/ADMIN_PORT:/);
  });
});

import type { OpenApiDocument } from './document';
import { environmentPrefixes } from './environments';

const withServers = (servers: unknown[]): OpenApiDocument => ({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {}, servers });

describe('environment prefixes from the document servers', () => {
  test('when every environment names one server, then its url is the prefix', () => {
    const doc = withServers([
      { url: '/api/v2', 'x-environment': 'production' },
      { url: 'https://other.example/v9' },
      { url: '/sandbox/v2', 'x-environment': 'staging' },
    ]);
    expect(environmentPrefixes(doc)).toEqual({ production: '/api/v2', staging: '/sandbox/v2' });
  });

  test('when an environment is missing, named twice or unknown, or its url is not a path, then reading fails at start-up', () => {
    expect(() => environmentPrefixes(withServers([{ url: '/v1', 'x-environment': 'production' }]))).toThrow('no x-environment "staging"');
    expect(() =>
      environmentPrefixes(withServers([{ url: '/v1', 'x-environment': 'production' }, { url: '/v2', 'x-environment': 'production' }, { url: '/s', 'x-environment': 'staging' }])),
    ).toThrow('"production" twice');
    expect(() => environmentPrefixes(withServers([{ url: '/q', 'x-environment': 'qa' }]))).toThrow('unknown x-environment "qa"');
    expect(() => environmentPrefixes(withServers([{ url: '/v1/', 'x-environment': 'production' }]))).toThrow('path url without a trailing slash');
  });
});

import { unshareableReason } from './shareable-response';

const json = { 'content-type': 'application/json' };

describe('what the list cache may share between keys', () => {
  test.each([
    ['no caching headers at all', {}],
    ['identity coding', { 'content-encoding': 'identity' }],
    ['Vary on the Accept-Encoding the gateway pins', { vary: 'Accept-Encoding' }],
    ['public with a lifetime', { 'cache-control': 'public, max-age=60' }],
    ['a shared lifetime that outranks max-age=0', { 'cache-control': 'max-age=0, s-maxage=30' }],
    ['must-revalidate with a lifetime', { 'cache-control': 'max-age=10, must-revalidate' }],
  ])('when the upstream sends %s, then the answer is shared', (_name, headers) => {
    expect(unshareableReason({ ...json, ...headers })).toBeUndefined();
  });

  test.each([
    ['gzip', { 'content-encoding': 'gzip' }, 'Content-Encoding: gzip'],
    ['codings stacked', { 'content-encoding': 'identity, br' }, 'Content-Encoding: identity, br'],
    ['private', { 'cache-control': 'max-age=60, Private' }, 'Cache-Control: private'],
    ['private naming fields', { 'cache-control': 'private="x-account, set-cookie", max-age=60' }, 'Cache-Control: private'],
    ['no-store', { 'cache-control': 'no-store' }, 'Cache-Control: no-store'],
    ['no-cache', { 'cache-control': 'no-cache' }, 'Cache-Control: no-cache'],
    ['Cache-Control sent twice', { 'cache-control': ['public', 'private'] }, 'Cache-Control: private'],
    ['max-age=0', { 'cache-control': 'max-age=0' }, 'Cache-Control: no shared lifetime'],
    ['s-maxage=0', { 'cache-control': 'public, s-maxage=0' }, 'Cache-Control: no shared lifetime'],
    ['a cookie', { 'set-cookie': ['session=abc; HttpOnly'] }, 'Set-Cookie'],
    ['Vary on an account header', { vary: 'X-Account' }, 'Vary: x-account'],
    ['Vary on a cookie beside Accept-Encoding', { vary: 'Accept-Encoding, Cookie' }, 'Vary: cookie'],
    ['Vary sent twice', { vary: ['accept-encoding', 'Accept'] }, 'Vary: accept'],
    ['Vary: *', { vary: '*' }, 'Vary: *'],
  ])('when the upstream sends %s, then the answer is not shared', (_name, headers, reason) => {
    expect(unshareableReason({ ...json, ...headers })).toBe(reason);
  });
});

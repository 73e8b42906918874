import { nextLink } from './link-header';

const base = new URL('http://127.0.0.1:8081/admin/v1/accounts?limit=2');

describe('nextLink', () => {
  test('when the header holds a next link with an absolute target, then that URL', () => {
    expect(nextLink('<http://127.0.0.1:8081/admin/v1/accounts?limit=2&after=7>; rel="next"', base)?.href).toBe(
      'http://127.0.0.1:8081/admin/v1/accounts?limit=2&after=7',
    );
  });

  test('when the target is relative, then it is resolved against the URL the page came from', () => {
    expect(nextLink('</admin/v1/accounts?limit=2&after=7>; rel="next"', base)?.href).toBe('http://127.0.0.1:8081/admin/v1/accounts?limit=2&after=7');
    expect(nextLink('<?limit=2&after=9>; rel=next', base)?.href).toBe('http://127.0.0.1:8081/admin/v1/accounts?limit=2&after=9');
  });

  test('when several links are given, then the one whose rel names "next" (in any case, among others) is chosen', () => {
    const header = '<http://x.example/portal/deprecations>; rel="deprecation"; type="text/html", </admin/v1/audit?after=3>; title="a; b, c"; rel="prefetch NEXT"';
    expect(nextLink(header, base)?.href).toBe('http://127.0.0.1:8081/admin/v1/audit?after=3');
  });

  test.each([
    ['no header', null],
    ['an empty header', ''],
    ['only other relations', '</a>; rel="prev", </b>; rel="nextish"'],
    ['a next link without angle brackets', 'http://127.0.0.1:8081/x; rel="next"'],
    ['a target that is no URL', '<http://[::1>; rel="next"'],
  ])('when there is %s, then null', (_, header) => {
    expect(nextLink(header, base)).toBeNull();
  });
});

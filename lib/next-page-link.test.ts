import { nextPageLink } from './next-page-link';

describe('nextPageLink', () => {
  test('when a page has filters, then the next link keeps them, with limit and after last, encoded', () => {
    expect(nextPageLink('http://127.0.0.1:8081/admin/v1/accounts', { email: 'ada+1@example.com', accountId: undefined }, 2, 17)).toBe(
      '<http://127.0.0.1:8081/admin/v1/accounts?email=ada%2B1%40example.com&limit=2&after=17>; rel="next"',
    );
  });

  test('when a page has no filters, then the next link has only limit and after', () => {
    expect(nextPageLink('http://127.0.0.1:8081/admin/v1/keys', {}, 50, 'key_AAAAAAAAAAAAAAA-')).toBe(
      '<http://127.0.0.1:8081/admin/v1/keys?limit=50&after=key_AAAAAAAAAAAAAAA->; rel="next"',
    );
  });
});

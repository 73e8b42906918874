import { CliError } from './errors';
import { parseCliSettings } from './settings';

describe('parseCliSettings', () => {
  test('when ADMIN_URL is not set, then the admin listener\'s default address', () => {
    const settings = parseCliSettings({ ADMIN_TOKEN: 'secret-token' });
    expect(settings.adminUrl.href).toBe('http://127.0.0.1:8081/');
    expect(settings.token).toBe('secret-token');
  });

  test('when ADMIN_URL has a path, then it ends with "/" so API paths resolve below it', () => {
    expect(parseCliSettings({ ADMIN_URL: 'https://ops.example/gateway', ADMIN_TOKEN: 't' }).adminUrl.href).toBe('https://ops.example/gateway/');
  });

  test.each([
    ['one bare token', 'abc:def', 'def'],
    ['a label:token list', 'alice:first-token, bob:second-token', 'first-token'],
    ['a bare token', 'plain-token', 'plain-token'],
    ['spaces around the first entry', '  ops : tok  ,x:y', 'tok'],
  ])('when ADMIN_TOKEN is %s, then the first entry\'s token is used', (_, value, token) => {
    expect(parseCliSettings({ ADMIN_TOKEN: value }).token).toBe(token);
  });

  test.each([undefined, '', '  ', 'label:', ',a:b'])('when ADMIN_TOKEN is %p, then a CliError says to export it', (value) => {
    expect(() => parseCliSettings({ ADMIN_TOKEN: value })).toThrow(new CliError('ADMIN_TOKEN is not set: export the token the gateway was started with (ADMIN_TOKEN="label:token,…" works as is).'));
  });

  test.each(['ftp://127.0.0.1:8081', 'not a url', '127.0.0.1:8081'])('when ADMIN_URL is %p, then it is refused as not http(s)', (url) => {
    expect(() => parseCliSettings({ ADMIN_URL: url, ADMIN_TOKEN: 't' })).toThrow(`ADMIN_URL must be an http or https URL; got ${JSON.stringify(url)}.`);
  });

  test('when ADMIN_URL carries credentials or a query, then it is refused', () => {
    expect(() => parseCliSettings({ ADMIN_URL: 'http://u:p@127.0.0.1:8081', ADMIN_TOKEN: 't' })).toThrow(/no user, password, query or fragment/);
    expect(() => parseCliSettings({ ADMIN_URL: 'http://127.0.0.1:8081/?token=t', ADMIN_TOKEN: 't' })).toThrow(/no user, password, query or fragment/);
  });
});

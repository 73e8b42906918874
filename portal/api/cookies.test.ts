import { parseCookies, serializeCookie } from './cookies';

describe('cookie parsing', () => {
  test('when several cookies are sent, then each is read by name and the first of a repeated name wins', () => {
    const cookies = parseCookies('a=1; asg_session=x.y.z;b="quoted"; asg_session=second; broken; =novalue');
    expect([...cookies]).toEqual([
      ['a', '1'],
      ['asg_session', 'x.y.z'],
      ['b', 'quoted'],
    ]);
  });

  test('when there is no Cookie header, then there are no cookies', () => {
    expect(parseCookies(undefined).size).toBe(0);
    expect(parseCookies('').size).toBe(0);
  });
});

describe('cookie serialization', () => {
  const attributes = { path: '/portal', httpOnly: true, sameSite: 'lax' as const, secure: true, expires: new Date(0), maxAgeSeconds: 0 };

  test('when a cookie is serialized, then the attributes come in a fixed order', () => {
    expect(serializeCookie('asg_session', 'v.w.x', attributes)).toBe(
      'asg_session=v.w.x; Path=/portal; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; Secure; SameSite=Lax',
    );
  });

  test('when a name or value could inject attributes, then serialization refuses', () => {
    expect(() => serializeCookie('a;b', 'v', attributes)).toThrow('Invalid cookie name');
    expect(() => serializeCookie('a', 'v; Domain=evil.example', attributes)).toThrow('Invalid cookie value');
  });
});

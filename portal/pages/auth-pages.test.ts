import { loginPage, safeNext, signupPage } from './auth-pages';

describe('safeNext: where to go after signing in', () => {
  test.each(['/portal/keys', '/portal/', '/docs/', '/docs/portal/', '/docs/#/Pets/listPets', '/portal/keys?x=1'])('when next is %s, then it is kept', (next) => {
    expect(safeNext(next)).toBe(next);
  });

  test.each([
    ['another site', 'https://evil.example/'],
    ['a protocol-relative URL', '//evil.example/x'],
    ['a path outside the portal', '/v1/pets'],
    ['a backslash trick', '/portal/\\evil.example'],
    ['a dot-dot escape', '/portal/../v1/pets'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['no value', undefined],
    ['a repeated parameter', ['/portal/keys', '/docs/']],
    ['an overlong value', '/portal/' + 'a'.repeat(300)],
  ])('when next is %s, then the keys page is used instead', (_label, next) => {
    expect(safeNext(next)).toBe('/portal/keys');
  });
});

describe('sign-up and log-in forms', () => {
  test('when rendered, then every input has a label, an autocomplete hint and an error slot it is described by', () => {
    for (const page of [signupPage({ next: '/portal/keys' }).value, loginPage({ next: '/portal/keys', signedOut: false }).value]) {
      for (const id of ['email', 'password']) {
        expect(page).toContain(`<label for="${id}">`);
        expect(page).toMatch(new RegExp(`<input id="${id}"[^>]*autocomplete="[a-z-]+"[^>]*aria-describedby="[^"]*${id}-error"`));
      }
    }
  });

  test('when next is not the default, then the link to the other form carries it along, encoded', () => {
    expect(loginPage({ next: '/docs/portal/', signedOut: false }).value).toContain('href="/portal/signup?next=%2Fdocs%2Fportal%2F"');
    expect(signupPage({ next: '/portal/keys' }).value).toContain('href="/portal/login"');
  });
});

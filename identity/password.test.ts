import { ApiError } from '../lib/api-error';
import { createPasswordHasher, OWASP_SCRYPT_COST, passwordPolicyViolation } from './password';

describe('password hashing', () => {
  const hasher = createPasswordHasher();

  test('when a password is hashed, then the encoding carries OWASP parameters, a 16-byte salt and a 32-byte key', async () => {
    const encoded = await hasher.hash('correct horse battery staple');
    const [scheme, n, r, p, salt, key] = encoded.split('$');
    expect({ scheme, n: Number(n), r: Number(r), p: Number(p) }).toEqual({ scheme: 'scrypt', n: 2 ** 17, r: 8, p: 1 });
    expect(Buffer.from(salt!, 'base64url')).toHaveLength(16);
    expect(Buffer.from(key!, 'base64url')).toHaveLength(32);
    expect(encoded).not.toContain('correct horse');
  });

  test('when the same password is hashed twice, then the salts differ and both verify', async () => {
    const [a, b] = await Promise.all([hasher.hash('same password here'), hasher.hash('same password here')]);
    expect(a).not.toBe(b);
    await expect(hasher.verify('same password here', a)).resolves.toBe(true);
    await expect(hasher.verify('same password here', b)).resolves.toBe(true);
  });

  test('when a different password is verified, then the answer is false', async () => {
    const encoded = await hasher.hash('the real password');
    await expect(hasher.verify('the real passworD', encoded)).resolves.toBe(false);
    await expect(hasher.verify('', encoded)).resolves.toBe(false);
  });

  test('when a password is typed in another Unicode normal form, then it still verifies', async () => {
    const composed = 'caf\u00e9 au lait 2024';
    const decomposed = 'cafe\u0301 au lait 2024';
    await expect(hasher.verify(decomposed, await hasher.hash(composed))).resolves.toBe(true);
  });

  test('when verifying against the dummy hash, then it takes about as long as a real verify and is false', async () => {
    const encoded = await hasher.hash('some real password');
    await hasher.verifyAgainstDummy('warm up the dummy');
    const time = async (fn: () => Promise<unknown>) => {
      const start = process.hrtime.bigint();
      await fn();
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    const real = await time(() => hasher.verify('wrong password!!', encoded));
    const dummy = await time(() => hasher.verifyAgainstDummy('wrong password!!'));
    await expect(hasher.verifyAgainstDummy('some real password')).resolves.toBe(false);
    // Loose bounds (other test workers share the CPU); an early return would take ~0 ms.
    expect(dummy).toBeGreaterThan(real / 3);
    expect(dummy).toBeLessThan(real * 3);
  });

  test('when a stored hash used weaker parameters, then it verifies and needs a rehash', async () => {
    const weak = createPasswordHasher({ cost: { N: 2 ** 10, r: 8, p: 1 } });
    const encoded = await weak.hash('an old password');
    await expect(hasher.verify('an old password', encoded)).resolves.toBe(true);
    expect(hasher.needsRehash(encoded)).toBe(true);
    expect(hasher.needsRehash(await hasher.hash('a new password'))).toBe(false);
  });

  test('when a stored hash is not a scrypt hash or asks for excessive memory, then verify throws', async () => {
    await expect(hasher.verify('x', 'bcrypt$2b$10$abc')).rejects.toThrow('not a valid scrypt hash');
    const salt = Buffer.alloc(16).toString('base64url');
    const key = Buffer.alloc(32).toString('base64url');
    await expect(hasher.verify('x', `scrypt$${2 ** 24}$8$1$${salt}$${key}`)).rejects.toThrow('not a valid scrypt hash');
    await expect(hasher.verify('x', `scrypt$1000$8$1$${salt}$${key}`)).rejects.toThrow('not a valid scrypt hash');
  });

  test('when more hashes wait than the queue holds, then the extra ones are refused at once with 503 and Retry-After, and the queue works on', async () => {
    const cheap = { N: 2 ** 10, r: 8, p: 1 };
    const bounded = createPasswordHasher({ cost: cheap, maxConcurrent: 1, maxQueued: 2 });
    const encoded = await bounded.hash('a password to check');
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => bounded.verify('a password to check', encoded)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
    const refused = (outcomes[3] as PromiseRejectedResult).reason;
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused.toBody()).toEqual({ code: 'service_unavailable', status: 503, message: 'Too many passwords are being checked right now. Try again in 1 second.' });
    expect(refused.headers).toEqual({ 'Retry-After': '1' });
    await expect(bounded.verify('a password to check', encoded)).resolves.toBe(true);
  });

  test('when the first unknown-email check is refused by a full queue, then a later one still works', async () => {
    const bounded = createPasswordHasher({ cost: { N: 2 ** 10, r: 8, p: 1 }, maxConcurrent: 1, maxQueued: 0 });
    const busy = bounded.hash('holds the only slot');
    await expect(bounded.verifyAgainstDummy('first guess!')).rejects.toMatchObject({ code: 'service_unavailable' });
    await busy;
    await expect(bounded.verifyAgainstDummy('second guess')).resolves.toBe(false);
  });

  test('when options are invalid, then the hasher refuses to be built', () => {
    expect(() => createPasswordHasher({ cost: { ...OWASP_SCRYPT_COST, N: 1000 } })).toThrow('Invalid scrypt cost');
    expect(() => createPasswordHasher({ maxConcurrent: 0 })).toThrow('maxConcurrent');
    expect(() => createPasswordHasher({ maxQueued: -1 })).toThrow('maxQueued');
  });
});

describe('password policy', () => {
  const common = 'Password is too common or too easy to guess; choose a longer, less predictable one.';
  test.each([
    ['9 characters', 'short1234', 'Password must be at least 10 characters long.'],
    ['201 characters', 'x'.repeat(200) + 'y', 'Password must be at most 200 characters long.'],
    ['a common password in another case', 'Password123', common],
    ['a keyboard walk', 'qwertyuiop', common],
    ['one repeated character', 'zzzzzzzzzzzz', common],
  ])('when the password is %s, then it is refused with a clear reason', (_label, password, reason) => {
    expect(passwordPolicyViolation(password, 'ada@example.com')).toBe(reason);
  });

  test('when the password equals the email (ignoring case and spaces), then it is refused', () => {
    expect(passwordPolicyViolation('Ada@Example.com', ' ada@example.com ')).toBe('Password must not be the same as the email address.');
  });

  test('when the password has 10 to 200 characters and is not common, then it is accepted', () => {
    expect(passwordPolicyViolation('correct horse battery staple', 'ada@example.com')).toBeNull();
    expect(passwordPolicyViolation('a'.repeat(199) + 'b')).toBeNull();
    expect(passwordPolicyViolation('ten chars!')).toBeNull();
  });

  test('when length is counted, then characters are counted, not UTF-16 units', () => {
    expect(passwordPolicyViolation('🐶🐱🐭🐹🐰🦊🐻🐼🐨')).toBe('Password must be at least 10 characters long.');
    expect(passwordPolicyViolation('🐶🐱🐭🐹🐰🦊🐻🐼🐨🐯')).toBeNull();
  });
});

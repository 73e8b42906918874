import { createHmac, randomBytes } from 'node:crypto';
import { createKeyHasher } from './key-hash';

const reference = (secret: string, message: string) => createHmac('sha256', secret).update(message, 'utf8').digest('hex');

describe('the keyed hash of API keys', () => {
  test('when it hashes the RFC 4231 test case 2, then it gives the published HMAC-SHA-256', () => {
    expect(createKeyHasher('Jefe')('what do ya want for nothing?')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });

  test.each([
    ['a 32-character secret', 'k'.repeat(32)],
    ['a secret of exactly one block', 's'.repeat(64)],
    ['a secret longer than a block (hashed first)', 'long secret '.repeat(20)],
    ['a non-ASCII secret', 'clé secrète – 秘密 – '.repeat(3)],
  ])('when the server secret is %s, then every message hashes as createHmac does', (_name, secret) => {
    const keyedHash = createKeyHasher(secret);
    const messages = [
      '',
      `asg_prod_${randomBytes(32).toString('base64url')}`,
      `asg_stag_${randomBytes(32).toString('base64url')}`,
      'ünïcødé 🔑',
      'x'.repeat(256), // fills the reusable buffer exactly
      'y'.repeat(1000), // longer than it
    ];
    for (const message of messages) expect(keyedHash(message)).toBe(reference(secret, message));
  });

  test('when a short message follows a long one, then no bytes of the earlier one leak into its hash', () => {
    const keyedHash = createKeyHasher('k'.repeat(40));
    keyedHash('z'.repeat(200));
    expect(keyedHash('short')).toBe(reference('k'.repeat(40), 'short'));
  });
});

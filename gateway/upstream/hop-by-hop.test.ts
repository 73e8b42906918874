import { connectionTokens } from './hop-by-hop';

describe('connectionTokens', () => {
  it('is undefined without a Connection header', () => {
    expect(connectionTokens(undefined)).toBeUndefined();
  });

  it('names the option itself for the common values, each parsed once', () => {
    expect([...connectionTokens('keep-alive')!]).toEqual(['keep-alive']);
    expect([...connectionTokens('close')!]).toEqual(['close']);
    expect(connectionTokens('keep-alive')).toBe(connectionTokens('keep-alive'));
  });

  it('lower-cases and trims every listed name, across repeated headers', () => {
    expect([...connectionTokens('Keep-Alive, X-Hop-Secret ,upgrade')!]).toEqual(['keep-alive', 'x-hop-secret', 'upgrade']);
    expect([...connectionTokens(['close', 'X-Trace'])!]).toEqual(['close', 'x-trace']);
  });
});

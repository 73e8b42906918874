import { parsePetStoreConfig } from './config';

describe('parsePetStoreConfig', () => {
  test('when PETSTORE_GATEWAY_TOKEN is unset or empty, then the store is open to any caller (a development upstream)', () => {
    expect(parsePetStoreConfig({}).gatewayToken).toBeUndefined();
    expect(parsePetStoreConfig({ PETSTORE_GATEWAY_TOKEN: '' }).gatewayToken).toBeUndefined();
  });

  test('when PETSTORE_GATEWAY_TOKEN is set, then it is parsed', () => {
    const token = 'g'.repeat(32);
    expect(parsePetStoreConfig({ PETSTORE_GATEWAY_TOKEN: token }).gatewayToken).toBe(token);
  });

  test('when PETSTORE_GATEWAY_TOKEN is shorter than 32 characters, then it is named', () => {
    expect(() => parsePetStoreConfig({ PETSTORE_GATEWAY_TOKEN: 'short' })).toThrow('PETSTORE_GATEWAY_TOKEN: must be at least 32 characters');
  });

  test('when LOG_LEVEL is unset, then it is info; when it is no pino level, then it is named', () => {
    expect(parsePetStoreConfig({}).logLevel).toBe('info');
    expect(parsePetStoreConfig({ LOG_LEVEL: 'warn' }).logLevel).toBe('warn');
    expect(() => parsePetStoreConfig({ LOG_LEVEL: 'verbose' })).toThrow('LOG_LEVEL: ');
  });
});

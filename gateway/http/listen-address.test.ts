import { describeListenAddress } from './listen-address';

describe('describeListenAddress', () => {
  test('when bound to 0.0.0.0, then it says all interfaces and gives a loopback URL to call', () => {
    expect(describeListenAddress({ address: '0.0.0.0', family: 'IPv4', port: 8080 }, '0.0.0.0')).toEqual({
      port: 8080,
      url: 'http://127.0.0.1:8080',
      bound: '0.0.0.0:8080 (all interfaces)',
    });
  });

  test('when bound to ::, then it says all interfaces with the address in brackets', () => {
    expect(describeListenAddress({ address: '::', family: 'IPv6', port: 8080 }, '::')).toEqual({ port: 8080, url: 'http://127.0.0.1:8080', bound: '[::]:8080 (all interfaces)' });
  });

  test('when bound to a loopback address, then the URL is that address', () => {
    expect(describeListenAddress({ address: '127.0.0.1', family: 'IPv4', port: 41234 }, '127.0.0.1')).toEqual({ port: 41234, url: 'http://127.0.0.1:41234', bound: '127.0.0.1:41234' });
    expect(describeListenAddress({ address: '::1', family: 'IPv6', port: 41234 }, '::1')).toEqual({ port: 41234, url: 'http://[::1]:41234', bound: '[::1]:41234' });
  });

  test('when HOST is a name, then the URL keeps the name and the bound address is the one it resolved to', () => {
    expect(describeListenAddress({ address: '127.0.0.1', family: 'IPv4', port: 8080 }, 'localhost')).toEqual({ port: 8080, url: 'http://localhost:8080', bound: '127.0.0.1:8080' });
  });
});

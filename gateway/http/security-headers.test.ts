import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { contentSecurityPolicy, securityHeaders } from './security-headers';

async function headersFor(publicUrl: string): Promise<Headers> {
  const app = express();
  app.use(securityHeaders({ publicUrl }));
  app.get('/', (_req, res) => void res.send('ok'));
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return res.headers;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('security headers of the portal and docs', () => {
  test('when the portal is served over http, then the CSP allows only this origin, no inline code, and no HSTS is sent', async () => {
    const headers = await headersFor('http://localhost:8080');
    expect(headers.get('content-security-policy')).toBe(
      "default-src 'self';base-uri 'self';connect-src 'self';font-src 'self' data:;form-action 'self';frame-ancestors 'none';" +
        "img-src 'self' data:;manifest-src 'self';object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self';worker-src 'self'",
    );
    expect(headers.get('strict-transport-security')).toBeNull();
    expect(headers.get('x-frame-options')).toBe('DENY');
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
    expect(headers.get('cross-origin-opener-policy')).toBe('same-origin');
  });

  test('when PUBLIC_URL is https, then HSTS is sent and the CSP upgrades insecure requests', async () => {
    const headers = await headersFor('https://developers.example.test');
    expect(headers.get('strict-transport-security')).toBe('max-age=31536000');
    expect(headers.get('content-security-policy')).toMatch(/;upgrade-insecure-requests$/);
  });

  test('the CSP never allows inline or evaluated scripts', () => {
    for (const url of ['http://localhost', 'https://x.example']) {
      const directives = contentSecurityPolicy(url);
      expect(directives['script-src']).toEqual(["'self'"]);
      expect(JSON.stringify(directives)).not.toMatch(/unsafe-(inline|eval|hashes)/);
    }
  });
});

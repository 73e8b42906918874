export const BENCH_PASSWORD = 'benchmark passphrase';

/** Signs up through the portal API and returns the session cookie. */
export async function signUp(gatewayUrl: string, email: string): Promise<string> {
  return sessionCookie(gatewayUrl, '/portal/api/signup', email);
}

/** Logs in to an account that exists (with BENCH_PASSWORD) and returns the session cookie. */
export async function logIn(gatewayUrl: string, email: string): Promise<string> {
  return sessionCookie(gatewayUrl, '/portal/api/login', email);
}

async function sessionCookie(gatewayUrl: string, path: string, email: string): Promise<string> {
  const res = await fetch(`${gatewayUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: BENCH_PASSWORD }),
  });
  if (res.status !== 201 && res.status !== 200) throw new Error(`${path} → ${res.status} ${await res.text()}`);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

/** Issues an API key through the portal API, as a developer would. */
export async function issueKey(gatewayUrl: string, cookie: string, name: string, environment: 'production' | 'staging' = 'production'): Promise<string> {
  const res = await fetch(`${gatewayUrl}/portal/api/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name, environment }),
  });
  if (res.status !== 201) throw new Error(`issue key → ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}

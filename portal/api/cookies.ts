/**
 * Just enough cookie handling for the session cookie (RFC 6265), instead of a dependency.
 */

/** Parses a Cookie header; the first occurrence of a name wins, malformed pairs are skipped. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const name = pair.slice(0, eq).trim();
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

export interface CookieAttributes {
  path: string;
  httpOnly: boolean;
  sameSite: 'lax' | 'strict' | 'none';
  secure: boolean;
  expires: Date;
  maxAgeSeconds: number;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const COOKIE_VALUE = /^[!#-+\--:<-[\]-~]*$/; // cookie-octet: no controls, space, DQUOTE, comma, semicolon, backslash

/** Serializes one Set-Cookie header value. Names and values are checked, never escaped. */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes): string {
  if (!TOKEN.test(name)) throw new TypeError(`Invalid cookie name: ${name}`);
  if (!COOKIE_VALUE.test(value)) throw new TypeError('Invalid cookie value');
  const parts = [
    `${name}=${value}`,
    `Path=${attributes.path}`,
    `Expires=${attributes.expires.toUTCString()}`,
    `Max-Age=${Math.max(0, Math.floor(attributes.maxAgeSeconds))}`,
  ];
  if (attributes.httpOnly) parts.push('HttpOnly');
  if (attributes.secure) parts.push('Secure');
  parts.push(`SameSite=${attributes.sameSite[0]!.toUpperCase()}${attributes.sameSite.slice(1)}`);
  return parts.join('; ');
}

import { CliError } from './errors';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8081';

export interface CliSettings {
  /** Where the admin API listens; always ends with "/", so paths resolve below it. */
  adminUrl: URL;
  token: string;
}

/**
 * ADMIN_URL and ADMIN_TOKEN, as the gateway's operator has them. ADMIN_TOKEN may be the gateway's
 * own `label:token,…` list; the CLI then speaks with the first entry's token.
 */
export function parseCliSettings(env: Readonly<Record<string, string | undefined>>): CliSettings {
  const rawUrl = env.ADMIN_URL?.trim() || DEFAULT_ADMIN_URL;
  const adminUrl = URL.parse(rawUrl);
  if (adminUrl === null || (adminUrl.protocol !== 'http:' && adminUrl.protocol !== 'https:')) {
    throw new CliError(`ADMIN_URL must be an http or https URL; got ${JSON.stringify(rawUrl)}.`);
  }
  if (adminUrl.username || adminUrl.password || adminUrl.search || adminUrl.hash) {
    throw new CliError('ADMIN_URL must hold no user, password, query or fragment: the token goes in ADMIN_TOKEN.');
  }
  if (!adminUrl.pathname.endsWith('/')) adminUrl.pathname += '/';
  return { adminUrl, token: firstToken(env.ADMIN_TOKEN) };
}

function firstToken(value: string | undefined): string {
  const first = value?.split(',')[0]?.trim() ?? '';
  const colon = first.indexOf(':');
  const token = colon === -1 ? first : first.slice(colon + 1).trim();
  if (!token) {
    throw new CliError('ADMIN_TOKEN is not set: export the token the gateway was started with (ADMIN_TOKEN="label:token,…" works as is).');
  }
  return token;
}

import type { OpenApiDocument } from './document';

/** The API's environments; each is one of the public document's `servers`, named by `x-environment`. */
export const ENVIRONMENTS = ['production', 'staging'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];
export type EnvironmentPrefixes = Readonly<Record<Environment, string>>;

/**
 * Each environment's public path prefix (`/v1`, `/staging/v1`), read from the document's
 * `servers`; a document that misses an environment or names one twice fails at start-up.
 */
export function environmentPrefixes(doc: OpenApiDocument): EnvironmentPrefixes {
  const servers = (doc.servers ?? []) as Array<{ url?: unknown; 'x-environment'?: unknown }>;
  const prefixes: Partial<Record<Environment, string>> = {};
  for (const server of servers) {
    const name = server['x-environment'];
    if (name === undefined) continue;
    if (!(ENVIRONMENTS as readonly unknown[]).includes(name)) throw new Error(`OpenAPI server ${String(server.url)} names an unknown x-environment "${String(name)}"`);
    if (prefixes[name as Environment] !== undefined) throw new Error(`OpenAPI servers name x-environment "${String(name)}" twice`);
    if (typeof server.url !== 'string' || !/^\/[^?#]*[^/]$/.test(server.url)) throw new Error(`OpenAPI server for "${String(name)}" needs a path url without a trailing slash`);
    prefixes[name as Environment] = server.url;
  }
  for (const environment of ENVIRONMENTS) {
    if (prefixes[environment] === undefined) throw new Error(`OpenAPI servers have no x-environment "${environment}"`);
  }
  return Object.freeze(prefixes as Record<Environment, string>);
}

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { RequestHandler } from 'express';

const CONTENT_TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'public, no-cache';

interface Asset {
  body: Buffer;
  type: string;
  hash: string;
}

export interface Assets {
  /** The URL of an asset, versioned by its content hash so it can be cached for a year. */
  url(name: string): string;
  /** Adds an asset built at start-up (e.g. CSS generated from an OpenAPI document). */
  add(name: string, body: string | Buffer): void;
  /** Serves `GET <mountPath>/<name>`; anything else falls through. */
  handler: RequestHandler;
}

/**
 * The portal's static files (CSS, JS, icons), read once at start-up and served from memory.
 * URLs carry `?v=<content hash>`: a matching version is cached for a year, anything else is
 * revalidated, so a deploy never pairs new HTML with stale scripts.
 */
export function createAssets(options: { dir: string; mountPath: string }): Assets {
  const { dir, mountPath } = options;
  const table = new Map<string, Asset>();

  const add = (name: string, body: string | Buffer) => {
    const type = CONTENT_TYPES[extname(name)];
    if (!type) throw new Error(`createAssets: no content type for ${name}`);
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    table.set(name, { body: bytes, type, hash: createHash('sha256').update(bytes).digest('hex').slice(0, 12) });
  };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile() && CONTENT_TYPES[extname(entry.name)]) add(entry.name, readFileSync(join(dir, entry.name)));
  }

  const prefix = `${mountPath}/`;
  return {
    url(name) {
      const asset = table.get(name);
      if (!asset) throw new Error(`Unknown portal asset: ${name}`);
      return `${prefix}${name}?v=${asset.hash}`;
    },
    add,
    handler: function portalAssets(req, res, next) {
      if ((req.method !== 'GET' && req.method !== 'HEAD') || !req.path.startsWith(prefix)) return next();
      const asset = table.get(req.path.slice(prefix.length));
      if (!asset) return next();
      const etag = `"${asset.hash}"`;
      res.setHeader('Content-Type', asset.type);
      res.setHeader('Cache-Control', req.query.v === asset.hash ? IMMUTABLE : REVALIDATE);
      res.setHeader('ETag', etag);
      if (req.headers['if-none-match'] === etag) {
        res.status(304).end();
        return;
      }
      res.setHeader('Content-Length', asset.body.length);
      res.status(200).end(req.method === 'HEAD' ? undefined : asset.body);
    },
  };
}

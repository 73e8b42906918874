import { Router } from 'express';
import { renderDocument, type OpenApiDocument } from './document';

export interface DocumentRoutesOptions {
  /** The path the documents are served below, e.g. `/portal`; none by default. */
  at?: string;
  /** With it, `info.contact.url` is moved onto it: the file names the default deployment, and clients must reach this one's portal. */
  publicUrl?: string;
  /** The public documents may be cached a while; the admin listener's answers never are. */
  cacheControl?: string;
}

/** Serves an OpenAPI document, rendered once, at `{at}/openapi.json` and `{at}/openapi.yaml`. */
export function documentRoutes(document: OpenApiDocument, { at = '', publicUrl, cacheControl = 'public, max-age=300' }: DocumentRoutesOptions = {}): Router {
  const { json, yaml } = renderDocument(publicUrl === undefined ? document : withContactAt(document, publicUrl));
  const router = Router();
  router.get(`${at}/openapi.json`, function openApiJson(_req, res) {
    res.type('application/json').set('Cache-Control', cacheControl).send(json);
  });
  router.get(`${at}/openapi.yaml`, function openApiYaml(_req, res) {
    res.type('application/yaml').set('Cache-Control', cacheControl).send(yaml);
  });
  return router;
}

/** The document with its contact URL's path, query and fragment kept, under `publicUrl` (which may have a path of its own). */
export function withContactAt(document: OpenApiDocument, publicUrl: string): OpenApiDocument {
  const info = document.info as OpenApiDocument['info'] & { contact?: { url?: string } };
  if (!info.contact?.url) return document;
  // A relative URL (`/portal/`) is read against any origin: only its path, query and fragment are kept.
  const { pathname, search, hash } = new URL(info.contact.url, 'http://localhost');
  const url = `${publicUrl.replace(/\/+$/, '')}${pathname}${search}${hash}`;
  return { ...document, info: { ...info, contact: { ...info.contact, url } } as OpenApiDocument['info'] };
}

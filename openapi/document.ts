import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { describeDeprecations } from './describe-deprecations';

export type OpenApiDocument = {
  openapi: string;
  info: { version: string; title: string; description?: string };
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown>; parameters?: Record<string, unknown> };
} & Record<string, unknown>;

export const API_DOCUMENT_PATH = join(__dirname, 'animal-store.yaml');
export const PORTAL_DOCUMENT_PATH = join(__dirname, 'portal.yaml');
export const ADMIN_DOCUMENT_PATH = join(__dirname, 'admin.yaml');

/**
 * Reads an OpenAPI document once, at start-up, writes its deprecation schedule into its prose,
 * and freezes it: it is shared by docs, validation and tests.
 */
export function loadOpenApiDocument(path: string = API_DOCUMENT_PATH): OpenApiDocument {
  const doc = parse(readFileSync(path, 'utf8')) as OpenApiDocument;
  describeDeprecations(doc);
  return deepFreeze(doc);
}

/** The bytes served at /openapi.json and /openapi.yaml, rendered once. */
export function renderDocument(doc: OpenApiDocument): { json: string; yaml: string } {
  return { json: JSON.stringify(doc), yaml: stringify(doc) };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

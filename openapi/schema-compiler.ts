import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from './document';

/**
 * One Ajv instance per document, holding its component schemas, so `$ref`s resolve and
 * every schema is compiled once at start-up.
 */
export function createSchemaCompiler(doc: OpenApiDocument) {
  const ajv = new Ajv({ allErrors: false, strict: false, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addSchema({ components: doc.components ?? {} }, 'doc');
  return {
    compile(schema: unknown): ValidateFunction {
      return ajv.compile(rewriteRefs(schema) as object);
    },
  };
}

/** `#/components/...` inside an operation becomes `doc#/components/...` for Ajv's registry. */
function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (node && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `doc${v}` : rewriteRefs(v);
    }
    return out;
  }
  return node;
}

/** A readable sentence for the first validation error, naming the field or parameter. */
export function describeSchemaError(subject: string, error: ErrorObject | undefined): string {
  if (!error) return `${subject} is invalid`;
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const where = (extra?: string) => {
    const parts = extra ? [...path, extra] : path;
    return parts.length ? `${subject} "${parts.join('.')}"` : subject;
  };
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${where(String(p.missingProperty))} is required`;
    case 'additionalProperties':
      return `${where(String(p.additionalProperty))} is not allowed`;
    case 'enum':
      return `${where()} must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return p.pattern === '\\S' ? `${where()} must not be blank` : `${where()} must match ${String(p.pattern)}`;
    case 'format':
      return p.format === 'int64' ? `${where()} must be an integer no larger than 9007199254740991` : `${where()} must be a valid ${String(p.format)}`;
    default:
      return `${where()} ${error.message ?? 'is invalid'}`;
  }
}

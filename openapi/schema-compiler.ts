import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { oneLineTextProblem, textProblem, textProblemSentence, type TextProblem } from '../lib/plain-text';
import type { OpenApiDocument } from './document';

/** The document's own string formats: what is wrong with a value, and whether the format spans lines (for the sentence a client reads). */
const TEXT_FORMATS: Record<string, { problem: (value: string) => TextProblem | undefined; multiline: boolean }> = {
  'one-line-text': { problem: oneLineTextProblem, multiline: false },
  text: { problem: textProblem, multiline: true },
};

/**
 * One Ajv instance per document, holding its component schemas, so `$ref`s resolve and
 * every schema is compiled once at start-up.
 */
export function createSchemaCompiler(doc: OpenApiDocument) {
  // `verbose` puts the refused value in the error, so a text format's message can say what is wrong with it.
  const ajv = new Ajv({ allErrors: false, strict: false, validateFormats: true, verbose: true });
  addFormats(ajv);
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  for (const [name, format] of Object.entries(TEXT_FORMATS)) ajv.addFormat(name, { type: 'string', validate: (value: string) => format.problem(value) === undefined });
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
    case 'type':
      // Ajv writes a type list as "integer,null".
      return `${where()} must be ${String(p.type).split(',').join(' or ')}`;
    case 'enum':
      return `${where()} must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return p.pattern === '\\S' ? `${where()} must not be blank` : `${where()} must match ${String(p.pattern)}`;
    case 'format': {
      const format = String(p.format);
      if (format === 'int64') return `${where()} must be an integer no larger than 9007199254740991`;
      const text = TEXT_FORMATS[format];
      const problem = text && typeof error.data === 'string' ? text.problem(error.data) : undefined;
      if (text && problem) return `${where()} ${textProblemSentence(problem, text.multiline)}`;
      return `${where()} must be a valid ${format}`;
    }
    default:
      return `${where()} ${error.message ?? 'is invalid'}`;
  }
}

import { loadOpenApiDocument } from '../../openapi/document';
import { createSchemaCompiler } from '../../openapi/schema-compiler';

const doc = loadOpenApiDocument();
const compiler = createSchemaCompiler(doc);
const responses = (doc.components as { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }).responses ?? {};

/**
 * Asserts that a body matches what the OpenAPI document promises for this operation and status.
 * The document is the contract; tests read it rather than restating it.
 */
export function expectMatchesContract(operationId: string, status: number, body: unknown): void {
  for (const [, item] of Object.entries(doc.paths)) {
    for (const op of Object.values(item) as Array<{ operationId?: string; responses?: Record<string, { $ref?: string; content?: Record<string, { schema?: unknown }> }> }>) {
      if (op?.operationId !== operationId) continue;
      let response = op.responses?.[String(status)];
      if (!response) throw new Error(`${operationId} documents no ${status} response`);
      if (response.$ref) response = responses[response.$ref.split('/').pop()!]!;
      const schema = response.content?.['application/json']?.schema;
      if (!schema) throw new Error(`${operationId} ${status} documents no JSON body`);
      const validate = compiler.compile(schema);
      if (!validate(body)) throw new Error(`${operationId} ${status} body breaks the contract: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`);
      return;
    }
  }
  throw new Error(`unknown operation ${operationId}`);
}

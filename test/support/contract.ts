import type { ValidateFunction } from 'ajv';
import { loadOpenApiDocument, PORTAL_DOCUMENT_PATH, type OpenApiDocument } from '../../openapi/document';
import { createSchemaCompiler } from '../../openapi/schema-compiler';

type BodySpec = { $ref?: string; content?: Record<string, { schema?: unknown }> };

/**
 * The validator of the JSON body a document promises for an operation and status, each one
 * compiled the first time it is asked for.
 */
function bodyValidators(doc: OpenApiDocument): (operationId: string, status: number) => ValidateFunction {
  const compiler = createSchemaCompiler(doc);
  const responses = (doc.components as { responses?: Record<string, BodySpec> }).responses ?? {};
  const compiled = new Map<string, ValidateFunction>();
  return (operationId, status) => {
    const known = compiled.get(`${operationId} ${status}`);
    if (known) return known;
    for (const [, item] of Object.entries(doc.paths)) {
      for (const op of Object.values(item) as Array<{ operationId?: string; responses?: Record<string, BodySpec> }>) {
        if (op?.operationId !== operationId) continue;
        let response = op.responses?.[String(status)];
        if (!response) throw new Error(`${operationId} documents no ${status} response`);
        if (response.$ref) response = responses[response.$ref.split('/').pop()!]!;
        const schema = response.content?.['application/json']?.schema;
        if (!schema) throw new Error(`${operationId} ${status} documents no JSON body`);
        const validate = compiler.compile(schema);
        compiled.set(`${operationId} ${status}`, validate);
        return validate;
      }
    }
    throw new Error(`unknown operation ${operationId}`);
  };
}

const apiBody = bodyValidators(loadOpenApiDocument());
const portalBody = bodyValidators(loadOpenApiDocument(PORTAL_DOCUMENT_PATH));

/**
 * Asserts that a body matches what the OpenAPI document promises for this operation and status.
 * The document is the contract; tests read it rather than restating it.
 */
export function expectMatchesContract(operationId: string, status: number, body: unknown): void {
  const validate = apiBody(operationId, status);
  if (!validate(body)) throw new Error(`${operationId} ${status} body breaks the contract: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`);
}

/** Asserts that a portal API body matches what portal.yaml promises for this operation and status. */
export function expectMatchesPortalContract(operationId: string, status: number, body: unknown): void {
  const validate = portalBody(operationId, status);
  if (!validate(body)) throw new Error(`${operationId} ${status} breaks portal.yaml: ${JSON.stringify(validate.errors)}`);
}

type HeaderSpec = { $ref?: string; required?: boolean; schema?: { type?: string } & Record<string, unknown> };
type ResponseSpec = { $ref?: string; headers?: Record<string, HeaderSpec>; content?: Record<string, { schema?: unknown }> };
type OperationSpec = { operationId: string; deprecated?: boolean; responses: Record<string, ResponseSpec> };

/** The headers the gateway itself gives API answers: each one it sends must be declared where it is sent. */
const CONTRACT_HEADERS = ['x-request-id', 'ratelimit', 'ratelimit-policy', 'retry-after', 'deprecation', 'sunset', 'link', 'allow', 'www-authenticate', 'location'];

export interface Answer {
  status: number;
  /** Lower-cased names, as Node and sendRaw give them. */
  headers: Record<string, string>;
  body: string;
}

/**
 * The contract as a client tool reads it from a document a gateway serves (GET /openapi.json):
 * which operation answers a method and path, and whether an answer is one it declares.
 */
export function servedContract(served: OpenApiDocument) {
  const compiler = createSchemaCompiler(served);
  const components = served.components as { responses: Record<string, ResponseSpec>; headers: Record<string, HeaderSpec> };
  const deref = <T extends { $ref?: string }>(value: T, from: Record<string, T>): T => (value.$ref ? from[value.$ref.split('/').pop()!]! : value);
  const operations = new Map<string, { path: string; method: string; op: OperationSpec }>();
  for (const [path, item] of Object.entries(served.paths)) {
    for (const [method, op] of Object.entries(item)) operations.set((op as OperationSpec).operationId, { path, method, op: op as OperationSpec });
  }

  /** The operation ids of a path template, e.g. `/pets` → listPets, createPet. */
  const operationsOf = (path: string) => Object.values(served.paths[path] ?? {}).map((op) => (op as OperationSpec).operationId);

  /** Throws, naming what breaks it, unless `answer` is a response the operation declares: status, headers and body. */
  function check(operationId: string, answer: Answer): void {
    const found = operations.get(operationId);
    if (!found) throw new Error(`the served document has no operation ${operationId}`);
    const where = `${operationId} (${found.method.toUpperCase()} ${found.path}) ${answer.status}`;
    const declared = found.op.responses[String(answer.status)];
    if (!declared) throw new Error(`${where}: the status is not declared; declared: ${Object.keys(found.op.responses).join(', ')}`);
    const response = deref(declared, components.responses);
    checkResponse(where, response, answer);
    // Optional in a shared response, since other operations share it; a deprecated operation's answers all have them.
    if (found.op.deprecated && response.headers?.Deprecation) {
      for (const name of ['deprecation', 'sunset', 'link']) if (answer.headers[name] === undefined) throw new Error(`${where}: a deprecated operation's answer lacks ${name}`);
    }
  }

  /** An answer that belongs to no operation (an unknown path) checked against a shared response. */
  function checkShared(responseName: string, answer: Answer): void {
    const response = components.responses[responseName];
    if (!response) throw new Error(`the served document has no shared response ${responseName}`);
    checkResponse(`${responseName} ${answer.status}`, response, answer);
  }

  function checkResponse(where: string, response: ResponseSpec, answer: Answer): void {
    const headers = Object.fromEntries(Object.entries(response.headers ?? {}).map(([name, spec]) => [name.toLowerCase(), deref(spec, components.headers)]));
    for (const [name, spec] of Object.entries(headers)) {
      const value = answer.headers[name];
      if (value === undefined) {
        if (spec.required) throw new Error(`${where}: the required header ${name} is missing`);
        continue;
      }
      const typed = spec.schema?.type === 'integer' && /^\d+$/.test(value) ? Number(value) : value;
      const validate = compiler.compile(spec.schema ?? {});
      if (!validate(typed)) throw new Error(`${where}: header ${name}: ${JSON.stringify(value)} breaks its schema: ${JSON.stringify(validate.errors)}`);
    }
    for (const name of CONTRACT_HEADERS) {
      if (answer.headers[name] !== undefined && !headers[name]) throw new Error(`${where}: sends ${name}, which the response does not declare`);
    }
    const schema = response.content?.['application/json']?.schema;
    if (!schema) {
      if (answer.body !== '') throw new Error(`${where}: a body where the document declares none`);
      return;
    }
    if (!/^application\/json\b/.test(answer.headers['content-type'] ?? '')) throw new Error(`${where}: Content-Type ${answer.headers['content-type']} is not JSON`);
    const validate = compiler.compile(schema);
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      throw new Error(`${where}: the body is not JSON: ${answer.body.slice(0, 200)}`);
    }
    if (!validate(body)) throw new Error(`${where}: the body breaks its schema: ${JSON.stringify(validate.errors)}\n${answer.body.slice(0, 500)}`);
  }

  return { check, checkShared, operationsOf, operationIds: [...operations.keys()] };
}

/** A fetch Response as an Answer. */
export async function answerOf(res: Response): Promise<Answer> {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => (headers[name] = value));
  return { status: res.status, headers, body: await res.text() };
}

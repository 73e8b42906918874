import type { ValidateFunction } from 'ajv';
import { ApiError } from '../lib/api-error';
import type { OpenApiDocument } from './document';
import { createSchemaCompiler, describeSchemaError } from './schema-compiler';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** Distinct valid query strings an operation remembers parsed; past this the memory starts afresh. */
const MAX_REMEMBERED_SEARCHES = 1000;
/** A longer query string is parsed every time, so the memory stays small whatever clients send. */
const MAX_REMEMBERED_SEARCH_LENGTH = 256;

/** A parameter as compiling accepts it (resolveParameter): only the places the gateway validates, always with a schema. */
interface ParameterSpec {
  name: string;
  in: 'query' | 'path';
  required?: boolean;
  schema: { type?: string; default?: unknown; $ref?: string };
}

export interface ApiOperation {
  readonly operationId: string;
  readonly method: string;
  readonly pathTemplate: string;
  readonly deprecated: boolean;
  /** From `x-sunset`: the instant the operation is removed. */
  readonly sunset?: Date;
  /** From `x-deprecated-at`: when the deprecation was announced. */
  readonly deprecatedAt?: Date;
  /** RFC 9745 `Deprecation` value (`@<unix seconds>`) of a deprecated operation with `x-deprecated-at`. */
  readonly deprecationHeader?: string;
  /** RFC 8594 `Sunset` value (an HTTP date) of a deprecated operation with `x-sunset`. */
  readonly sunsetHeader?: string;
  /** From `x-cache`: `list` when the list cache serves this operation's GET. */
  readonly cache?: 'list';
  /** From `x-cache-invalidates`: the cached operations a successful call makes stale. */
  readonly invalidatesCache: readonly string[];
  /** From `x-stability`: beta, experimental. */
  readonly stability?: string;
  readonly acceptsBody: boolean;
  /** From `requestBody.required`: the body may not be left out (an optional one may). */
  readonly requiresBody: boolean;
  /** Parses and validates the query string; returns typed values with defaults applied. */
  parseQuery(search: URLSearchParams): Record<string, unknown>;
  /**
   * parseQuery for a request's query string (`''` or `?…`), frozen: a string parsed before is
   * answered from memory, since clients repeat the same few queries. An invalid one throws every time.
   */
  parseSearch(search: string): Readonly<Record<string, unknown>>;
  /** Validates the raw path segments; returns typed values. */
  parsePathParams(raw: readonly string[]): Record<string, unknown>;
  /** Validates a parsed JSON body. */
  checkBody(body: unknown): void;
}

export type RouteMatch =
  | { kind: 'operation'; operation: ApiOperation; rawParams: string[] }
  | { kind: 'method_not_allowed'; allow: string }
  | { kind: 'not_found' };

export interface OperationTable {
  readonly operations: readonly ApiOperation[];
  match(method: string, path: string): RouteMatch;
}

interface PathEntry {
  template: string;
  regex: RegExp | null;
  byMethod: Map<string, ApiOperation>;
  allow: string;
}

/**
 * Compiles every operation of the document once: route matching, parameter parsing and body
 * validation all come from the OpenAPI document, the single source of the contract.
 */
export function compileOperations(doc: OpenApiDocument): OperationTable {
  const compiler = createSchemaCompiler(doc);
  const staticPaths = new Map<string, PathEntry>();
  const templated: PathEntry[] = [];
  const operations: ApiOperation[] = [];

  for (const [template, item] of Object.entries(doc.paths)) {
    const byMethod = new Map<string, ApiOperation>();
    const shared = item.parameters ?? [];
    for (const method of METHODS) {
      const op = item[method] as Record<string, unknown> | undefined;
      if (!op) continue;
      const parameters = parametersOf(doc, String(op.operationId), template, shared, op.parameters ?? []);
      const operation = compileOperation(compiler, template, method.toUpperCase(), op, parameters);
      byMethod.set(operation.method, operation);
      if (operation.method === 'GET') byMethod.set('HEAD', operation);
      operations.push(operation);
    }
    const allow = [...byMethod.keys()].join(', ');
    const entry: PathEntry = { template, regex: null, byMethod, allow };
    if (template.includes('{')) {
      entry.regex = new RegExp('^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\}/g, '([^/]+)') + '$');
      templated.push(entry);
    } else {
      staticPaths.set(template, entry);
    }
  }

  checkCacheRules(operations);

  const resolve = (entry: PathEntry, method: string, rawParams: string[]): RouteMatch => {
    const operation = entry.byMethod.get(method);
    return operation ? { kind: 'operation', operation, rawParams } : { kind: 'method_not_allowed', allow: entry.allow };
  };

  return {
    operations,
    match(method, path) {
      const normalized = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
      const fixed = staticPaths.get(normalized);
      if (fixed) return resolve(fixed, method, []);
      for (const entry of templated) {
        const m = entry.regex!.exec(normalized);
        if (m) return resolve(entry, method, m.slice(1));
      }
      return { kind: 'not_found' };
    },
  };
}

/** The places the gateway validates: a header or cookie parameter would be documented and not enforced. */
const PARAMETER_PLACES: ReadonlyArray<ParameterSpec['in']> = ['query', 'path'];
const PARAMETERS_POINTER = '#/components/parameters/';

/**
 * An operation's parameters: its path item's, then its own, an own one replacing a shared one of
 * the same name and place (as OpenAPI says), each `$ref` resolved. Anything the gateway could not
 * enforce fails at start-up, since it would leave what a client sends there unvalidated: a
 * reference that resolves to nothing, a parameter without a schema, in a header or cookie, named
 * like an Object property or named twice in one list, and a path parameter the document does not define.
 */
function parametersOf(doc: OpenApiDocument, operationId: string, template: string, shared: unknown, own: unknown): ParameterSpec[] {
  const byPlace = new Map<string, ParameterSpec>();
  for (const list of [shared, own]) {
    if (!Array.isArray(list)) throw new Error(`${operationId}: parameters must be a list`);
    const inList = new Set<string>();
    for (const entry of list) {
      const spec = resolveParameter(doc, operationId, entry);
      const place = `${spec.in}:${spec.name}`;
      if (inList.has(place)) throw new Error(`${operationId}: ${spec.in} parameter "${spec.name}" is named twice in one list`);
      inList.add(place);
      byPlace.set(place, spec);
    }
  }
  for (const name of pathParameterNames(template)) {
    if (!byPlace.has(`path:${name}`)) throw new Error(`${operationId}: path parameter "${name}" is not defined in the document`);
  }
  return [...byPlace.values()];
}

/** `/pets/{petId}` → `['petId']`. */
function pathParameterNames(template: string): string[] {
  return template.match(/\{([^}]+)\}/g)?.map((s) => s.slice(1, -1)) ?? [];
}

function resolveParameter(doc: OpenApiDocument, operationId: string, entry: unknown): ParameterSpec {
  let spec = entry as Partial<ParameterSpec> & { $ref?: unknown };
  if (typeof spec?.$ref === 'string') {
    const ref = spec.$ref;
    // A JSON pointer's last token, its ~1 and ~0 escapes undone.
    const name = ref.startsWith(PARAMETERS_POINTER) ? ref.slice(PARAMETERS_POINTER.length).replace(/~1/g, '/').replace(/~0/g, '~') : undefined;
    const target = name === undefined || !Object.hasOwn(doc.components?.parameters ?? {}, name) ? undefined : doc.components!.parameters![name];
    if (target === undefined) throw new Error(`${operationId}: parameter $ref ${ref} does not name one of ${PARAMETERS_POINTER}`);
    spec = target as typeof spec;
  }
  if (typeof spec?.name !== 'string' || !PARAMETER_PLACES.includes(spec.in as ParameterSpec['in'])) {
    throw new Error(`${operationId}: every parameter needs a name and an "in" of ${PARAMETER_PLACES.join(' or ')} (the places the gateway validates)`);
  }
  // Parsed values are kept in plain objects, where such a name would read the prototype's.
  if (spec.name in Object.prototype) throw new Error(`${operationId}: parameter "${spec.name}" is named like an Object property`);
  if (typeof spec.schema !== 'object' || spec.schema === null) throw new Error(`${operationId}: parameter "${spec.name}" needs a schema (content is not supported)`);
  return spec as ParameterSpec;
}

function compileOperation(
  compiler: ReturnType<typeof createSchemaCompiler>,
  template: string,
  method: string,
  op: Record<string, unknown>,
  parameters: ParameterSpec[],
): ApiOperation {
  const queryParams = parameters.filter((p) => p.in === 'query');
  const pathParams = pathParameterNames(template);
  const pathSpecs = pathParams.map((name) => parameters.find((p) => p.in === 'path' && p.name === name)!);
  // By the spec itself: a path parameter is checked on every request, with no key to build for it.
  const validators = new Map<ParameterSpec, ValidateFunction>(parameters.map((p) => [p, compiler.compile(p.schema)]));

  const requestBody = op.requestBody as { required?: boolean; content?: Record<string, { schema?: unknown }> } | undefined;
  const content = requestBody?.content;
  const bodySchema = content?.['application/json']?.schema;
  const bodyValidator = bodySchema ? compiler.compile(bodySchema) : null;
  const operationId = String(op.operationId);
  const sunset = readInstant(operationId, 'x-sunset', op['x-sunset']);
  const deprecatedAt = readInstant(operationId, 'x-deprecated-at', op['x-deprecated-at']);
  const deprecated = op.deprecated === true;

  const checkValue = (spec: ParameterSpec, raw: string): unknown => {
    const value = coerce(spec, raw);
    const validate = validators.get(spec)!;
    if (!validate(value)) {
      throw new ApiError('invalid_request', describeSchemaError(`${spec.in} parameter "${spec.name}"`, validate.errors?.[0]).replace(`"${spec.name}" "`, '"'));
    }
    return value;
  };

  const parseQuery = (search: URLSearchParams): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const name of new Set(search.keys())) {
      const spec = queryParams.find((p) => p.name === name);
      if (!spec) throw new ApiError('invalid_request', `query parameter "${name}" is not supported`);
      const values = search.getAll(name);
      if (values.length > 1) throw new ApiError('invalid_request', `query parameter "${name}" must not be repeated`);
      out[name] = checkValue(spec, values[0]!);
    }
    for (const spec of queryParams) {
      if (out[spec.name] !== undefined) continue;
      if (spec.required) throw new ApiError('invalid_request', `query parameter "${spec.name}" is required`);
      if (spec.schema.default !== undefined) out[spec.name] = spec.schema.default;
    }
    return out;
  };

  const rememberedSearches = new Map<string, Readonly<Record<string, unknown>>>();
  const parseSearch = (search: string): Readonly<Record<string, unknown>> => {
    let query = rememberedSearches.get(search);
    if (query !== undefined) return query;
    query = Object.freeze(parseQuery(new URLSearchParams(search)));
    if (search.length <= MAX_REMEMBERED_SEARCH_LENGTH) {
      if (rememberedSearches.size >= MAX_REMEMBERED_SEARCHES) rememberedSearches.clear();
      rememberedSearches.set(search, query);
    }
    return query;
  };

  return Object.freeze({
    operationId,
    method,
    pathTemplate: template,
    deprecated,
    sunset,
    deprecatedAt,
    deprecationHeader: deprecated && deprecatedAt ? `@${Math.floor(deprecatedAt.getTime() / 1000)}` : undefined,
    sunsetHeader: deprecated && sunset ? sunset.toUTCString() : undefined,
    cache: readCache(operationId, op['x-cache']),
    invalidatesCache: readInvalidates(operationId, op['x-cache-invalidates']),
    stability: typeof op['x-stability'] === 'string' ? op['x-stability'] : undefined,
    acceptsBody: bodyValidator !== null,
    requiresBody: requestBody?.required === true,
    parseQuery,
    parseSearch,
    parsePathParams(raw: readonly string[]) {
      const out: Record<string, unknown> = {};
      pathParams.forEach((name, i) => {
        const spec = pathSpecs[i]!;
        let decoded: string;
        try {
          decoded = decodeURIComponent(raw[i] ?? '');
        } catch {
          throw new ApiError('invalid_request', `path parameter "${name}" is not valid percent-encoding`);
        }
        out[name] = checkValue(spec, decoded);
      });
      return out;
    },
    checkBody(body: unknown) {
      if (bodyValidator && !bodyValidator(body)) {
        throw new ApiError('invalid_request', describeSchemaError('body field', bodyValidator.errors?.[0]).replace(/^body field (?!")/, 'body '));
      }
    },
  });
}

function readInstant(operationId: string, field: string, value: unknown): Date | undefined {
  if (value === undefined) return undefined;
  const date = typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new Error(`OpenAPI operation ${operationId}: ${field} must be an ISO 8601 instant`);
  return date;
}

function readCache(operationId: string, value: unknown): 'list' | undefined {
  if (value === undefined) return undefined;
  if (value !== 'list') throw new Error(`OpenAPI operation ${operationId}: x-cache must be "list"`);
  return value;
}

function readInvalidates(operationId: string, value: unknown): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new Error(`OpenAPI operation ${operationId}: x-cache-invalidates must be a list of operationIds`);
  return Object.freeze([...(value as string[])]);
}

/** The list cache has one namespace per environment, so one operation fills it and the invalidations must name it. */
function checkCacheRules(operations: readonly ApiOperation[]): void {
  const cached = operations.filter((o) => o.cache === 'list');
  if (cached.length > 1) throw new Error(`OpenAPI: only one operation may have x-cache: list (${cached.map((o) => o.operationId).join(', ')})`);
  for (const o of cached) if (o.method !== 'GET') throw new Error(`OpenAPI operation ${o.operationId}: x-cache needs a GET`);
  for (const o of operations) {
    for (const target of o.invalidatesCache) {
      if (!cached.some((c) => c.operationId === target)) throw new Error(`OpenAPI operation ${o.operationId}: x-cache-invalidates names ${target}, which has no x-cache`);
    }
  }
}

/**
 * Query and path values arrive as text. Only canonical decimal integers become numbers, so
 * `1.5`, `abc`, `1e2` and `` stay strings and fail the schema's integer type with a clear message.
 */
function coerce(spec: ParameterSpec, raw: string): unknown {
  const type = spec.schema.type;
  if ((type === 'integer' || type === 'number') && /^-?\d{1,16}$/.test(raw)) return Number(raw);
  if (type === 'integer' && /^-?\d{17,}$/.test(raw)) return Number.MAX_SAFE_INTEGER + 2; // fails `maximum`/int64 with a clear message
  return raw;
}

import type { OpenApiDocument } from './document';
import { compileOperations } from './operations';

const ok = { '200': { description: 'ok' } };
const doc = (paths: OpenApiDocument['paths']): OpenApiDocument => ({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths });

describe('operations compiled from the document', () => {
  test('when an operation is deprecated with x-deprecated-at and x-sunset, then its Deprecation and Sunset header values are formatted once', () => {
    const [op] = compileOperations(
      doc({ '/a': { get: { operationId: 'a', deprecated: true, 'x-deprecated-at': '2026-01-02T03:04:05Z', 'x-sunset': '2031-06-30T12:00:00Z', responses: ok } } }),
    ).operations;
    expect(op).toMatchObject({ deprecationHeader: '@1767323045', sunsetHeader: 'Mon, 30 Jun 2031 12:00:00 GMT', sunset: new Date('2031-06-30T12:00:00Z') });
  });

  test('when the cache rules do not hold together, then compiling fails at start-up', () => {
    expect(() => compileOperations(doc({ '/a': { get: { operationId: 'a', 'x-cache': 'item', responses: ok } } }))).toThrow('x-cache must be "list"');
    expect(() => compileOperations(doc({ '/a': { post: { operationId: 'a', 'x-cache': 'list', responses: ok } } }))).toThrow('x-cache needs a GET');
    expect(() => compileOperations(doc({ '/a': { get: { operationId: 'a', 'x-cache': 'list', responses: ok } }, '/b': { get: { operationId: 'b', 'x-cache': 'list', responses: ok } } }))).toThrow(
      'only one operation may have x-cache: list',
    );
    expect(() => compileOperations(doc({ '/a': { post: { operationId: 'a', 'x-cache-invalidates': ['b'], responses: ok } } }))).toThrow('names b, which has no x-cache');
    expect(() => compileOperations(doc({ '/a': { post: { operationId: 'a', 'x-cache-invalidates': 'b', responses: ok } } }))).toThrow('must be a list of operationIds');
  });

  test('when x-sunset is not an instant, then compiling fails at start-up', () => {
    expect(() => compileOperations(doc({ '/a': { get: { operationId: 'a', deprecated: true, 'x-sunset': 'soon', responses: ok } } }))).toThrow('a: x-sunset must be an ISO 8601 instant');
  });

  test('when a body field may be of two types and is neither, then the message names both types', () => {
    const body = { content: { 'application/json': { schema: { type: 'object', properties: { n: { type: ['integer', 'null'] } } } } } };
    const [op] = compileOperations(doc({ '/a': { put: { operationId: 'a', requestBody: body, responses: ok } } })).operations;
    expect(() => op!.checkBody({ n: 1.5 })).toThrow('body field "n" must be integer or null');
    expect(() => op!.checkBody({ n: null })).not.toThrow();
  });

  test('when parameters are $refs to components, then they are resolved and validate what a client sends', () => {
    const components = {
      parameters: {
        PetId: { name: 'petId', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
        'days/window': { name: 'days', in: 'query', schema: { type: 'integer', maximum: 90, default: 30 } },
      },
    };
    const [op] = compileOperations({
      ...doc({ '/pets/{petId}': { parameters: [{ $ref: '#/components/parameters/PetId' }], get: { operationId: 'a', parameters: [{ $ref: '#/components/parameters/days~1window' }], responses: ok } } }),
      components,
    }).operations;
    expect(op!.parsePathParams(['7'])).toEqual({ petId: 7 });
    expect(() => op!.parsePathParams(['abc'])).toThrow('path parameter "petId"');
    expect(() => op!.parsePathParams(['0'])).toThrow('path parameter "petId"');
    expect(op!.parseSearch('')).toEqual({ days: 30 });
    expect(op!.parseSearch('?days=3')).toEqual({ days: 3 });
    expect(() => op!.parseSearch('?days=91')).toThrow('query parameter "days"');
  });

  test("when an operation names a parameter its path item names too, then the operation's own applies", () => {
    const shared = { name: 'limit', in: 'query', schema: { type: 'integer', default: 20 } };
    const own = { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 5, default: 5 } };
    const [op] = compileOperations(doc({ '/a': { parameters: [shared], get: { operationId: 'a', parameters: [own], responses: ok } } })).operations;
    expect(op!.parseSearch('')).toEqual({ limit: 5 });
    expect(() => op!.parseSearch('?limit=6')).toThrow('query parameter "limit"');
  });

  test('when a parameter cannot be resolved or a path parameter is not defined, then compiling fails at start-up', () => {
    const get = (parameters: unknown[]) => ({ get: { operationId: 'a', parameters, responses: ok } });
    expect(() => compileOperations(doc({ '/a': get([{ $ref: '#/components/parameters/Missing' }]) }))).toThrow(
      'a: parameter $ref #/components/parameters/Missing does not name one of #/components/parameters/',
    );
    expect(() => compileOperations(doc({ '/a': get([{ $ref: '#/components/schemas/Pet' }]) }))).toThrow('a: parameter $ref #/components/schemas/Pet does not name');
    expect(() => compileOperations({ ...doc({ '/a': get([{ $ref: '#/components/parameters/toString' }]) }), components: { parameters: {} } })).toThrow('does not name');
    expect(() => compileOperations(doc({ '/a/{id}': get([]) }))).toThrow('a: path parameter "id" is not defined in the document');
    expect(() => compileOperations(doc({ '/a': get([{ in: 'query', schema: { type: 'string' } }]) }))).toThrow('a: every parameter needs a name');
    expect(() => compileOperations(doc({ '/a': get([{ name: 'x', in: 'body' }]) }))).toThrow('a: every parameter needs a name');
  });

  test('when a parameter is one the gateway could not enforce, then compiling fails at start-up', () => {
    const get = (parameters: unknown) => ({ get: { operationId: 'a', parameters, responses: ok } });
    const schema = { type: 'string' };
    expect(() => compileOperations(doc({ '/a': get([{ name: 'X-Trace', in: 'header', required: true, schema }]) }))).toThrow('a: every parameter needs a name and an "in" of query or path');
    expect(() => compileOperations(doc({ '/a': get([{ name: 'sid', in: 'cookie', schema }]) }))).toThrow('of query or path');
    expect(() => compileOperations(doc({ '/a/{f}': get([{ name: 'f', in: 'path', required: true, content: { 'application/json': { schema: { type: 'integer' } } } }]) }))).toThrow(
      'a: parameter "f" needs a schema (content is not supported)',
    );
    expect(() => compileOperations(doc({ '/a': get([{ name: 'f', in: 'query' }]) }))).toThrow('a: parameter "f" needs a schema');
    for (const name of ['constructor', 'toString', '__proto__']) {
      expect(() => compileOperations(doc({ '/a': get([{ name, in: 'query', required: true, schema }]) }))).toThrow(`a: parameter "${name}" is named like an Object property`);
    }
    expect(() => compileOperations(doc({ '/a': get([{ name: 'l', in: 'query', schema: { type: 'integer' } }, { name: 'l', in: 'query', schema }]) }))).toThrow(
      'a: query parameter "l" is named twice in one list',
    );
    expect(() => compileOperations(doc({ '/a': get({ name: 'l', in: 'query', schema }) }))).toThrow('a: parameters must be a list');
  });

  test('when a query string comes again, then parseSearch answers with the frozen result of the first parse; an invalid or long one is parsed every time', () => {
    const limit = { name: 'limit', in: 'query' as const, schema: { type: 'integer', default: 20 } };
    const [op] = compileOperations(doc({ '/a': { get: { operationId: 'a', parameters: [limit], responses: ok } } })).operations;
    const first = op!.parseSearch('?limit=5');
    expect(first).toEqual({ limit: 5 });
    expect(Object.isFrozen(first)).toBe(true);
    expect(op!.parseSearch('?limit=5')).toBe(first);
    expect(op!.parseSearch('')).toEqual({ limit: 20 });
    expect(() => op!.parseSearch('?limit=x')).toThrow('query parameter "limit"');
    expect(() => op!.parseSearch('?limit=x')).toThrow('query parameter "limit"');
    const long = `?limit=7${'&'.repeat(300)}`;
    expect(op!.parseSearch(long)).toEqual({ limit: 7 });
    expect(op!.parseSearch(long)).not.toBe(op!.parseSearch(long));
  });
});

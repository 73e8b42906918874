import { API_DOCUMENT_PATH, loadOpenApiDocument, PORTAL_DOCUMENT_PATH } from '../openapi/document';
import { operationBadgesCss } from './docs-badges';

describe('operation badges generated from the OpenAPI document', () => {
  test('when the public document is read, then the beta, experimental and deprecated operations get a badge and the others none', () => {
    const css = operationBadgesCss(loadOpenApiDocument(API_DOCUMENT_PATH));
    expect(css).toContain('#operations-Messages-createMessage .opblock-summary-path::after');
    expect(css).toMatch(/createMessage[^{]*\{\s*content: "Beta";/);
    expect(css).toMatch(/listOrders[^{]*\{\s*content: "Experimental";/);
    expect(css).toMatch(/#operations-Pets-getPet \.opblock-summary-path__deprecated::after \{\s*content: "Deprecated · removed 5 Dec 2030";/);
    expect(css).not.toContain('listPets');
    expect(css).not.toContain('createPet');
  });

  test('when a document has no such operations, then no rules are generated', () => {
    expect(operationBadgesCss(loadOpenApiDocument(PORTAL_DOCUMENT_PATH))).not.toContain('{');
  });

  test('when tags or labels hold CSS syntax, then it is escaped', () => {
    const css = operationBadgesCss({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: { '/x': { get: { operationId: 'op"1', tags: ['A tag}'], 'x-stability': 'new"}' } } },
    });
    expect(css).toContain('#operations-A_tag\\7d -op\\22 1 .opblock-summary-path::after');
    expect(css).toContain('content: "new\\22 }";');
  });
});

import { withContactAt } from './document-routes';
import type { OpenApiDocument } from './document';

const documentWithContact = (url: string) => ({ openapi: '3.1.0', info: { title: 't', version: '1', contact: { name: 'portal', url } }, paths: {} }) as OpenApiDocument;
const contactOf = (doc: OpenApiDocument) => (doc.info as unknown as { contact: { url: string } }).contact.url;

describe('withContactAt', () => {
  test('when PUBLIC_URL is an origin, then the contact URL keeps its path, query and fragment under it', () => {
    expect(contactOf(withContactAt(documentWithContact('http://localhost:8080/portal/?from=docs#top'), 'https://animals.example'))).toBe('https://animals.example/portal/?from=docs#top');
  });

  test('when PUBLIC_URL has a path of its own or a trailing slash, then the contact URL goes below that path', () => {
    expect(contactOf(withContactAt(documentWithContact('http://localhost:8080/portal/'), 'https://example.com/store/'))).toBe('https://example.com/store/portal/');
  });

  test('when the contact URL is relative, then it becomes absolute under PUBLIC_URL, and the document read is left as it was', () => {
    const doc = documentWithContact('/portal/');
    expect(contactOf(withContactAt(doc, 'http://127.0.0.1:9000'))).toBe('http://127.0.0.1:9000/portal/');
    expect(contactOf(doc)).toBe('/portal/');
  });

  test('when the document has no contact URL, then it is served as it is', () => {
    const doc = { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} } as OpenApiDocument;
    expect(withContactAt(doc, 'https://animals.example')).toBe(doc);
  });
});

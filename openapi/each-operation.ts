import type { OpenApiDocument } from './document';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Visits every operation object of a document, in document order, with its method and path template. */
export function eachOperation(doc: OpenApiDocument, visit: (op: Record<string, unknown>, method: (typeof METHODS)[number], path: string) => void): void {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method] as Record<string, unknown> | undefined;
      if (op) visit(op, method, path);
    }
  }
}

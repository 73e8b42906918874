import { longDate } from '../openapi/describe-deprecations';
import type { OperationTable } from '../openapi/operations';

/** A deprecated operation's schedule as the portal shows it: every value from the OpenAPI document. */
export interface DeprecationNotice {
  /** `GET /pets/{petId}`, below the environment's prefix. */
  readonly method: string;
  readonly path: string;
  readonly deprecatedOn: { readonly iso: string; readonly text: string };
  readonly sunset: { readonly iso: string; readonly text: string; readonly time: string };
  /** The values the gateway sends in `Deprecation` and `Sunset`. */
  readonly headers: { readonly deprecation: string; readonly sunset: string };
}

/**
 * The schedule of one deprecated operation, read from the compiled document once at start-up.
 * The portal's migration guide is written for that operation, so a document that no longer
 * deprecates it (or gives it no dates) fails at start-up rather than showing a stale guide.
 */
export function deprecationNotice(operations: OperationTable, operationId: string): DeprecationNotice {
  const op = operations.operations.find((o) => o.operationId === operationId);
  if (!op?.deprecated || !op.sunset || !op.deprecatedAt || !op.deprecationHeader || !op.sunsetHeader) {
    throw new Error(`The portal's deprecation guide needs ${operationId} deprecated, with x-deprecated-at and x-sunset`);
  }
  const iso = op.sunset.toISOString().replace('.000Z', 'Z');
  return Object.freeze({
    method: op.method,
    path: op.pathTemplate,
    deprecatedOn: { iso: op.deprecatedAt.toISOString().slice(0, 10), text: longDate(op.deprecatedAt) },
    sunset: { iso, text: longDate(op.sunset), time: `${iso.slice(11, 16)} UTC` },
    headers: { deprecation: op.deprecationHeader, sunset: op.sunsetHeader },
  });
}

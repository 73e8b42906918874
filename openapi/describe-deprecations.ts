import type { OpenApiDocument } from './document';
import { eachOperation } from './each-operation';

/** `5 December 2030`: how pages and descriptions write an instant of the deprecation schedule (UTC). */
export function longDate(date: Date): string {
  return date.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
}

/**
 * Writes the deprecation schedule into the document's prose from `x-deprecated-at` and
 * `x-sunset`, so the dates are typed once: a line opening each deprecated operation's
 * description, and a **Deprecations** paragraph closing `info.description`.
 * Mutates the freshly parsed document, before it is frozen.
 */
export function describeDeprecations(doc: OpenApiDocument): void {
  const notices: string[] = [];
  eachOperation(doc, (op, method, path) => {
    if (op.deprecated !== true || typeof op['x-sunset'] !== 'string') return;
    const sunset = new Date(op['x-sunset']);
    if (Number.isNaN(sunset.getTime())) return; // compileOperations refuses it with the operation's name
    const since = typeof op['x-deprecated-at'] === 'string' ? new Date(op['x-deprecated-at']) : undefined;
    const sinceText = since && !Number.isNaN(since.getTime()) ? `Deprecated since ${longDate(since)}; removed` : 'Deprecated; removed';
    const lead = `**${sinceText} on ${longDate(sunset)}** (\`Sunset: ${sunset.toUTCString()}\`).`;
    op.description = typeof op.description === 'string' ? `${lead}\n${op.description}` : `${lead}\n`;
    notices.push(`\`${method.toUpperCase()} ${path}\` is deprecated and will be removed on ${longDate(sunset)}`);
  });
  if (!notices.length) return;
  const before = doc.info.description ? `${doc.info.description.trimEnd()}\n\n` : '';
  doc.info.description = `${before}**Deprecations**: ${notices.join('; ')}; see \`/portal/deprecations\`.\n`;
}

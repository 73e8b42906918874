import type { OpenApiDocument } from '../openapi/document';
import { eachOperation } from '../openapi/each-operation';

const STABILITY_LABELS: Record<string, string> = { beta: 'Beta', experimental: 'Experimental' };

/** Text and background colours of each badge; every pair has a contrast ratio above 7:1. */
const BADGE_COLOURS: Record<string, { color: string; background: string }> = {
  beta: { color: '#4c1d95', background: '#ede9fe' },
  experimental: { color: '#0c4a6e', background: '#e0f2fe' },
  sunset: { color: '#7f1d1d', background: '#fee2e2' },
};
const OTHER_COLOURS = { color: '#1f2937', background: '#e5e7eb' };

function cssString(text: string): string {
  return `"${text.replace(/["\\\n\r]/g, (c) => `\\${c.charCodeAt(0).toString(16)} `)}"`;
}

function cssIdent(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, (c) => `\\${c.charCodeAt(0).toString(16)} `);
}

function formatDate(date: Date): string {
  return date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
}

/**
 * CSS that badges operations in Swagger UI from the document's own data: `x-stability`
 * (beta, experimental) and the `x-sunset` of deprecated operations. Swagger UI gives each
 * operation the element id `operations-<tag>-<operationId>`; CSS generated content is part
 * of the summary button's accessible name, so screen readers hear the badge too.
 */
export function operationBadgesCss(document: OpenApiDocument): string {
  const rules: string[] = [];
  eachOperation(document, (op) => {
    if (typeof op.operationId !== 'string') return;
    const tags = Array.isArray(op.tags) && op.tags.length ? (op.tags as string[]) : ['default'];
    const badges: Array<{ kind: string; label: string }> = [];
    const stability = typeof op['x-stability'] === 'string' ? op['x-stability'] : undefined;
    if (stability) badges.push({ kind: stability, label: STABILITY_LABELS[stability] ?? stability });
    if (op.deprecated === true) {
      const sunset = typeof op['x-sunset'] === 'string' ? new Date(op['x-sunset']) : undefined;
      badges.push({ kind: 'sunset', label: sunset && !Number.isNaN(sunset.getTime()) ? `Deprecated · removed ${formatDate(sunset)}` : 'Deprecated' });
    }
    if (!badges.length) return;
    const label = badges.map((b) => b.label).join(' · ');
    const { color, background } = BADGE_COLOURS[badges[0]!.kind] ?? OTHER_COLOURS;
    const selectors = tags.flatMap((tag) =>
      ['.opblock-summary-path', '.opblock-summary-path__deprecated'].map(
        (path) => `#operations-${cssIdent(tag.replace(/\s/g, '_'))}-${cssIdent(op.operationId as string)} ${path}::after`,
      ),
    );
    rules.push(`${selectors.join(',\n')} {\n  content: ${cssString(label)};\n  color: ${color};\n  background: ${background};\n}`);
  });
  return `/* Generated at start-up from the OpenAPI document. */\n${rules.join('\n')}\n`;
}

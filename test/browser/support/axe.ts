import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import type { PageWindow } from './page-globals';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core in the page (WCAG 2.0/2.1 A and AA rules plus best practices), on the whole
 * document or on the part `include` selects, and returns the violations. The script is injected through Playwright, so the page's CSP, which forbids
 * inline scripts, does not block it and needs no exception for tests.
 */
export async function axeViolations(page: Page, options: { include?: string } = {}): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => Boolean((globalThis as unknown as PageWindow).axe)))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async (include) => {
    const { axe, document } = globalThis as unknown as PageWindow;
    const context = include ? { include: [[include]] } : document;
    const result = await axe.run(context, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v: { id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> }) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
    }));
  }, options.include ?? '');
}

/** Only what the issue forbids: serious and critical violations. */
export function seriousOrCritical(violations: AxeViolation[]): AxeViolation[] {
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

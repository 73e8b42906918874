import { totalOf, type OutcomeCounts, type UsageDay } from '../../identity/daily-usage';
import { html, type SafeHtml } from '../html';

/**
 * The outcome classes bottom to top, in Okabe and Ito's colours, which stay apart for the common
 * colour-vision deficiencies. No meaning rests on colour alone: the legend names each, and the
 * summary and the table twin give every number.
 */
export const OUTCOMES: ReadonlyArray<{ field: keyof OutcomeCounts; label: string; short: string; fill: string }> = [
  { field: 'ok', label: '2xx and 3xx', short: '2xx–3xx', fill: '#0072b2' },
  { field: 'clientErrors', label: '4xx (not 429)', short: '4xx', fill: '#e69f00' },
  { field: 'rateLimited', label: '429 rate limited', short: '429', fill: '#cc79a7' },
  { field: 'serverErrors', label: '5xx', short: '5xx', fill: '#d55e00' },
];

const WIDTH = 720;
const HEIGHT = 240;
const PLOT = { left: 56, right: WIDTH - 8, top: 16, bottom: HEIGHT - 36 };
const TEXT = '#374151';
const GRID = '#d1d5db';

/** Counts as the usage pages write them: `1,180`. */
export const countFormat = new Intl.NumberFormat('en-GB');
const shortDay = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

/** `25 Nov` for `2026-11-25`. */
export function shortDayText(day: string): string {
  return shortDay.format(new Date(`${day}T00:00:00Z`));
}

/** Tops of the y axis within a power of ten: round enough to read, close enough not to waste the plot. */
const STEPS = [1, 2, 3, 4, 5, 6, 8, 10];

/** The smallest round number (STEPS times a power of ten) at or above `max`, at least 1: the y axis's top. */
export function niceCeiling(max: number): number {
  if (max <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of STEPS) if (step * power >= max) return step * power;
  return 10 * power;
}

const round = (n: number) => Math.round(n * 10) / 10;

function dayTooltip(d: UsageDay): string {
  const parts = OUTCOMES.map((o) => `${countFormat.format(d[o.field])} ${o.label}`).join(', ');
  return `${shortDayText(d.day)}: ${countFormat.format(totalOf(d))} requests (${parts})`;
}

/**
 * Requests per day as stacked bars, drawn on the server: no charting library in the browser, and the
 * picture is there without JavaScript. Colours are presentation attributes, not `style`, so the
 * portal's CSP (no inline styles) lets them through. Every text goes through `html`, which escapes it.
 * `id` must be unique on the page: the SVG is named by its `<title>` (the summary sentence).
 */
export function usageChartSvg(o: { id: string; title: string; days: readonly UsageDay[] }): SafeHtml {
  const { days } = o;
  const top = Math.max(0, ...days.map(totalOf));
  const max = niceCeiling(top);
  const plotHeight = PLOT.bottom - PLOT.top;
  const slot = (PLOT.right - PLOT.left) / Math.max(days.length, 1);
  const barWidth = round(Math.max(slot * 0.7, 1));
  const y = (value: number) => round(PLOT.bottom - (value / max) * plotHeight);
  const ticks = Number.isInteger(max / 2) ? [0, max / 2, max] : [0, max];
  // Every 7th day from today backwards is labelled, so today always is.
  const labelled = (i: number) => (days.length - 1 - i) % 7 === 0;
  const empty = top === 0;
  // Centred under its bar; today's ends at its bar's right edge, so a larger phone font never runs off the edge.
  const dayLabel = (d: UsageDay, i: number) => {
    const last = i === days.length - 1;
    const x = round(PLOT.left + i * slot + (last ? (slot + barWidth) / 2 : slot / 2));
    return html`<text x="${x}" y="${HEIGHT - 8}" text-anchor="${last ? 'end' : 'middle'}" fill="${TEXT}">${shortDayText(d.day)}</text>`;
  };

  const bars = days.map((d, i) => {
    const x = round(PLOT.left + i * slot + (slot - barWidth) / 2);
    let base = 0;
    const segments = OUTCOMES.map(({ field, fill }) => {
      const value = d[field];
      if (value === 0) return '';
      // A class present on a day stays visible, however small beside the others.
      const top = Math.min(y(base + value), y(base) - 1);
      const segment = html`<rect x="${x}" y="${top}" width="${barWidth}" height="${round(y(base) - top)}" fill="${fill}" stroke="#ffffff" stroke-width="0.75"/>`;
      base += value;
      return segment;
    });
    return html`<g><title>${dayTooltip(d)}</title>${segments}</g>`;
  });

  return html`<svg xmlns="http://www.w3.org/2000/svg" class="usage-chart-svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${o.id}-title" focusable="false" font-family="system-ui, sans-serif" font-size="13">
<title id="${o.id}-title">${o.title}</title>
${ticks.map(
  (t) => html`<line x1="${PLOT.left}" x2="${PLOT.right}" y1="${y(t)}" y2="${y(t)}" stroke="${GRID}" stroke-width="1"/><text x="${PLOT.left - 8}" y="${y(t) + 4}" text-anchor="end" fill="${TEXT}">${countFormat.format(t)}</text>`,
)}
${bars}
${days.map((d, i) => (labelled(i) ? dayLabel(d, i) : ''))}
${empty ? html`<text x="${(PLOT.left + PLOT.right) / 2}" y="${(PLOT.top + PLOT.bottom) / 2}" text-anchor="middle" fill="${TEXT}">No requests in these ${days.length} days</text>` : ''}
</svg>`;
}

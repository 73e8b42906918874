import { addOutcomes, noOutcomes, totalOf, type UsageDay } from '../../identity/daily-usage';
import { html, type SafeHtml } from '../html';
import { countFormat, OUTCOMES, shortDayText, usageChartSvg } from '../usage/usage-chart';
import { ERRORS_DEFINITION, SUMMARY_DAYS, usageSummary } from '../usage/usage-summary';

/** Whose requests the panel shows: the whole account, or one of its keys. */
export type UsageSubject = { kind: 'account' } | { kind: 'key'; id: string; name: string; prefix: string; environment: string };

export interface UsagePanelView {
  subject: UsageSubject;
  /** Oldest first, today last (the portal API's order). */
  days: readonly UsageDay[];
  /** Said above the chart, e.g. when the key asked for is not the account's. */
  notice?: string;
}

/** The account's usage; a key's is `/portal/keys?usage=<id>#usage` (keys.js links each row there). */
const ACCOUNT_USAGE_URL = '/portal/keys#usage';

const captionDay = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
/** `25 November 2026` for `2026-11-25`. */
const captionDayText = (day: string) => captionDay.format(new Date(`${day}T00:00:00Z`));

/** The chart's twin: the same numbers, a row per day in the chart's order, with the period's totals. */
function usageTable(days: readonly UsageDay[], subjectText: string): SafeHtml {
  const totals: UsageDay = { day: '', ...noOutcomes() };
  for (const d of days) addOutcomes(totals, d);
  const cells = (d: UsageDay) => html`${OUTCOMES.map(({ field }) => html`<td>${countFormat.format(d[field])}</td>`)}<td>${countFormat.format(totalOf(d))}</td>`;
  return html`<details class="usage-details">
    <summary>Daily numbers (table)</summary>
    <div class="usage-table-wrap" tabindex="0" role="region" aria-labelledby="usage-table-caption">
      <table class="usage-table" data-usage-table>
        <caption id="usage-table-caption">Requests per day, ${subjectText}, ${days[0] ? captionDayText(days[0].day) : ''} to ${days.at(-1) ? captionDayText(days.at(-1)!.day) : ''} (UTC); 4xx excludes 429</caption>
        <thead><tr><th scope="col">Day</th>${OUTCOMES.map((o) => html`<th scope="col">${o.short}</th>`)}<th scope="col">Total</th></tr></thead>
        <tbody>
          ${days.map((d) => html`<tr><th scope="row"><time datetime="${d.day}">${shortDayText(d.day)}</time></th>${cells(d)}</tr>\n          `)}
        </tbody>
        <tfoot><tr><th scope="row">${days.length} days</th>${cells(totals)}</tr></tfoot>
      </table>
    </div>
  </details>`;
}

/** The chart's legend: the same on every page, so rendered once. */
const LEGEND: SafeHtml = html`<ul class="usage-legend" role="list">
      ${OUTCOMES.map(
        (o) =>
          html`<li><svg class="usage-swatch" viewBox="0 0 12 12" width="12" height="12" aria-hidden="true" focusable="false"><rect width="12" height="12" rx="2" fill="${o.fill}"/></svg>${o.label}</li>`,
      )}
    </ul>`;

/**
 * The keys page's usage section: summary sentence, chart, legend and table twin, server-rendered
 * so it needs no script. Links marked `data-usage-link` switch the subject; usage-chart.js swaps
 * the section in place when it can, so the rest of the page (a secret being shown) stays.
 */
export function usagePanel(view: UsagePanelView): SafeHtml {
  const { subject, days } = view;
  const summary = usageSummary(days);
  const subjectText = subject.kind === 'account' ? 'all your keys' : `key “${subject.name}”`;
  return html`<section class="panel usage-panel" id="usage" aria-labelledby="usage-title" data-usage-panel>
  <div class="panel-head">
    <h2 id="usage-title" tabindex="-1">${subject.kind === 'account' ? 'Usage of all your keys' : html`Usage of “${subject.name}”`}</h2>
    ${subject.kind === 'key' ? html`<a class="button button-small" href="${ACCOUNT_USAGE_URL}" data-usage-link>Show all keys</a>` : ''}
  </div>
  ${view.notice ? html`<p class="callout callout-warning" role="alert">${view.notice}</p>` : ''}
  ${subject.kind === 'key' ? html`<p class="muted">Key <code>${subject.prefix}…</code> (${subject.environment}).</p>` : ''}
  <p class="usage-summary" data-usage-summary>${summary}</p>
  <p class="field-hint">Requests per day over the last ${days.length} days, in UTC, by response status; the sentence above covers the last ${SUMMARY_DAYS}.
    ${ERRORS_DEFINITION} Requests refused before a key was recognised (401) are not counted. New requests appear within seconds.</p>
  <figure class="usage-figure">
    ${usageChartSvg({ id: 'usage-chart', title: `${summary} Requests per day, ${subjectText}, last ${days.length} days, by status.`, days })}
    <figcaption>${LEGEND}</figcaption>
  </figure>
  ${usageTable(days, subjectText)}
</section>`;
}

import type { UsageDay } from '../../identity/daily-usage';
import { niceCeiling, shortDayText, usageChartSvg } from './usage-chart';

const day = (date: string, counts: Partial<UsageDay> = {}): UsageDay => ({ day: date, ok: 0, clientErrors: 0, rateLimited: 0, serverErrors: 0, ...counts });
/** 30 days up to 2026-11-25, with `counts` on the days given (1 = the oldest, 30 = today). */
const month = (counts: Record<number, Partial<UsageDay>> = {}) =>
  Array.from({ length: 30 }, (_, i) => day(new Date(Date.UTC(2026, 9, 27 + i)).toISOString().slice(0, 10), counts[i + 1]));

const rects = (svg: string) => [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="(#[0-9a-f]{6})"/g)].map((m) => ({ x: Number(m[1]), y: Number(m[2]), width: Number(m[3]), height: Number(m[4]), fill: m[5] }));
const texts = (svg: string) => [...svg.matchAll(/<text [^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);

describe('usage chart SVG', () => {
  test('when drawn, then it is an image named by its title, the summary, with no style attribute or script the CSP would refuse', () => {
    const svg = usageChartSvg({ id: 'usage-chart', title: '3 requests in the last 7 days, no errors.', days: month({ 30: { ok: 3 } }) }).value;
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" class="usage-chart-svg" viewBox="0 0 720 240" role="img" aria-labelledby="usage-chart-title"/);
    expect(svg).toContain('<title id="usage-chart-title">3 requests in the last 7 days, no errors.</title>');
    expect(svg).not.toMatch(/style=|<style|<script|on\w+=|href=/i);
    expect(svg.match(/<svg/g)).toHaveLength(1);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
  });

  test('when the title holds markup (a key name), then every character that could end the text or an attribute is escaped', () => {
    const hostile = `</title><script>alert(1)</script><a href="x" onclick='y'>&amp;`;
    const svg = usageChartSvg({ id: 'chart"><script>', title: hostile, days: month() }).value;
    expect(svg).toContain('<title id="chart&quot;&gt;&lt;script&gt;-title">&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;</title>');
    expect(svg).not.toContain('<script');
    expect(svg).not.toContain('<a ');
  });

  test('when a day has several classes, then its bar stacks them bottom to top in the legend order, heights in proportion', () => {
    const svg = usageChartSvg({ id: 'c', title: 't', days: month({ 30: { ok: 6, clientErrors: 2, rateLimited: 1, serverErrors: 1 } }) }).value;
    const bars = rects(svg);
    expect(bars.map((r) => r.fill)).toEqual(['#0072b2', '#e69f00', '#cc79a7', '#d55e00']);
    // The y axis tops out at 10, over a 188-unit plot: 6, 2, 1 and 1 tenths of it.
    expect(bars.map((r) => r.height)).toEqual([112.8, 37.6, 18.8, 18.8]);
    for (let i = 1; i < bars.length; i++) expect(bars[i]!.y + bars[i]!.height).toBeCloseTo(bars[i - 1]!.y, 5);
    expect(bars[0]!.y + bars[0]!.height).toBe(204);
    expect(new Set(bars.map((r) => r.x)).size).toBe(1);
    expect(texts(svg).slice(0, 3)).toEqual(['0', '5', '10']);
    expect(svg).toContain('<title>25 Nov: 10 requests (6 2xx and 3xx, 2 4xx (not 429), 1 429 rate limited, 1 5xx)</title>');
  });

  test('when one class is a sliver beside thousands, then it is still drawn at least one unit high', () => {
    const bars = rects(usageChartSvg({ id: 'c', title: 't', days: month({ 30: { ok: 5000, serverErrors: 1 } }) }).value);
    expect(bars).toHaveLength(2);
    expect(bars[1]!.height).toBeGreaterThanOrEqual(1);
  });

  test('when days are drawn, then bars go oldest to newest left to right and every 7th day back from today is labelled', () => {
    const svg = usageChartSvg({ id: 'c', title: 't', days: month({ 1: { ok: 1 }, 30: { ok: 1 } }) }).value;
    const [oldest, newest] = rects(svg);
    expect(oldest!.x).toBeLessThan(newest!.x);
    expect(texts(svg).slice(2)).toEqual(['28 Oct', '4 Nov', '11 Nov', '18 Nov', '25 Nov']);
  });

  test('when there are no requests, then the chart says so instead of drawing bars', () => {
    const svg = usageChartSvg({ id: 'c', title: 'No requests in the last 7 days.', days: month() }).value;
    expect(rects(svg)).toEqual([]);
    expect(texts(svg)).toContain('No requests in these 30 days');
    expect(texts(svg).slice(0, 2)).toEqual(['0', '1']);
  });

  test('when the axis top is chosen, then it is the next of 1, 2, 3, 4, 5, 6 or 8 times a power of ten', () => {
    expect([0, 1, 2, 3, 7, 10, 11, 55, 99, 101, 1204, 5001, 9001].map(niceCeiling)).toEqual([1, 1, 2, 3, 8, 10, 20, 60, 100, 200, 2000, 6000, 10000]);
  });

  test('when a day is labelled, then it reads as day and short month, in UTC', () => {
    expect(shortDayText('2026-01-01')).toBe('1 Jan');
    expect(shortDayText('2026-11-25')).toBe('25 Nov');
  });
});

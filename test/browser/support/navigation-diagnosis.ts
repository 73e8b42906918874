import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserContext, Page, Request } from 'playwright-core';

const PROBE_TIMEOUT_MS = 3000;
/**
 * Closing the probe's page under a full test run's load has taken longer than a probe's 3 s, and
 * left the page open after the diagnosis: closing waits longer, bounded only against a hung browser.
 */
const CLOSE_TIMEOUT_MS = 15_000;
/** A probe's bound does not keep the test process alive. */
const UNREF = { ref: false };

/**
 * A `page.goto` that fails says why, in its own error message. A CI run once had every `goto` of
 * one suite time out; Chromium, the gateway and the page all normally answer in well under a second,
 * and the message could not tell them apart. Now it lists what Chromium still had in flight, asks
 * the gateway for the same URL from Node, and tries a fresh page in the same browser. Nothing runs
 * unless a navigation fails.
 */
export function explainFailedNavigations(context: BrowserContext, origin: string): void {
  let probing = false;
  context.on('page', (page) => {
    // The probe's own page is left as it is: its failure is part of the answer, not a new question.
    if (probing) return;
    const seen = trackRequests(page);
    const goto = page.goto.bind(page);
    page.goto = async function gotoExplained(url, options) {
      const startedAt = Date.now();
      seen.clear(); // only this navigation's requests explain its failure
      try {
        return await goto(url, options);
      } catch (err) {
        if (!(err instanceof Error)) throw err;
        probing = true;
        try {
          const found = await diagnose(context, new URL(url, origin).href, seen);
          err.message += `\n\nWhy the navigation failed (${Date.now() - startedAt} ms after it began):\n${found.join('\n')}`;
        } finally {
          probing = false;
        }
        throw err;
      }
    };
  });
}

interface Seen {
  startedAt: number;
  /** The status and when it came, or why the request failed. */
  outcome?: string;
}

/** The page's requests since the last `goto`: still in flight, answered, or failed and why. */
function trackRequests(page: Page): Map<Request, Seen> {
  const seen = new Map<Request, Seen>();
  page.on('request', (request) => seen.set(request, { startedAt: Date.now() }));
  page.on('response', (response) => {
    const entry = seen.get(response.request());
    if (entry) entry.outcome = `${response.status()} after ${Date.now() - entry.startedAt} ms`;
  });
  page.on('requestfailed', (request) => {
    const entry = seen.get(request);
    if (entry) entry.outcome = `failed after ${Date.now() - entry.startedAt} ms (${request.failure()?.errorText ?? 'no reason given'})`;
  });
  return seen;
}

async function diagnose(context: BrowserContext, target: string, seen: Map<Request, Seen>): Promise<string[]> {
  const now = Date.now();
  const requests = [...seen].map(([request, { startedAt, outcome }]) => `  ${request.method()} ${request.url()}: ${outcome ?? `no response yet, ${now - startedAt} ms on`}`);
  return [
    `- Chromium's requests on this page: ${requests.length ? `\n${requests.join('\n')}` : 'none (the navigation never reached the network)'}`,
    `- the same URL fetched from Node: ${await fetchFromNode(target)}`,
    `- the browser: ${context.browser()?.isConnected() === false ? 'disconnected' : 'connected'}; a fresh page in the same context: ${await freshPage(context, target)}`,
  ];
}

async function fetchFromNode(url: string): Promise<string> {
  const startedAt = Date.now();
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await res.arrayBuffer();
    return `${res.status} in ${Date.now() - startedAt} ms`;
  } catch (err) {
    return `failed after ${Date.now() - startedAt} ms (${(err as Error).message})`;
  }
}

async function freshPage(context: BrowserContext, url: string): Promise<string> {
  const startedAt = Date.now();
  const failed = (err: unknown) => `failed after ${Date.now() - startedAt} ms (${(err as Error).message.split('\n')[0]})`;
  // Opening and closing the page are bounded too: a browser that cannot open one is the answer, not a reason to hang.
  const opening = context.newPage();
  let page: Page | undefined;
  try {
    page = await Promise.race([opening, sleep(PROBE_TIMEOUT_MS, undefined, UNREF)]);
  } catch (err) {
    return failed(err);
  }
  if (!page) {
    void opening.then((late) => late.close().catch(() => {}), () => {});
    return `no page opened within ${PROBE_TIMEOUT_MS} ms`;
  }
  try {
    const res = await page.goto(url, { timeout: PROBE_TIMEOUT_MS, waitUntil: 'commit' });
    return `got ${res?.status() ?? 'no response'} in ${Date.now() - startedAt} ms`;
  } catch (err) {
    return failed(err);
  } finally {
    await Promise.race([page.close().catch(() => {}), sleep(CLOSE_TIMEOUT_MS, undefined, UNREF)]);
  }
}

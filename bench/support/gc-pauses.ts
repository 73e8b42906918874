import { get } from 'node:http';

/** A gateway's garbage-collection pauses so far, by kind, from its Prometheus metrics (prom-client's default GC histogram). */
export interface GcPauses {
  /** Scavenges (young generation): count and total pause in ms. */
  minor: { count: number; ms: number };
  /** Mark-compacts and their incremental steps. */
  major: { count: number; ms: number };
}

function series(text: string, name: string, kind: string): number {
  const m = new RegExp(`^asg_nodejs_gc_duration_seconds_${name}\\{kind="${kind}"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** A connection of its own each time: a pooled one left idle through a run is one the gateway may have closed (keep-alive timeout). */
function getText(url: string, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`GET ${url} → ${res.statusCode}`))));
    }).on('error', reject);
  });
}

export async function gcPauses(metricsUrl: string, token: string): Promise<GcPauses> {
  const text = await getText(metricsUrl, token);
  const of = (...kinds: string[]) => ({
    count: kinds.reduce((n, k) => n + series(text, 'count', k), 0),
    ms: kinds.reduce((n, k) => n + series(text, 'sum', k), 0) * 1000,
  });
  return { minor: of('minor'), major: of('major', 'incremental') };
}

/** What a run added: the pauses after minus those before. */
export function pausesBetween(before: GcPauses, after: GcPauses): GcPauses {
  const diff = (k: keyof GcPauses) => ({ count: after[k].count - before[k].count, ms: after[k].ms - before[k].ms });
  return { minor: diff('minor'), major: diff('major') };
}

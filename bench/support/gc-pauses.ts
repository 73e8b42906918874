import { get } from 'node:http';

/** A gateway's garbage-collection pauses so far, from its Prometheus metrics (prom-client's default GC histogram). */
export interface GcPauses {
  /** Scavenges (young generation). */
  scavenges: number;
  scavengeMs: number;
  /** Mark-compacts and their incremental steps. */
  majorMs: number;
}

function series(text: string, name: 'count' | 'sum', kind: string): number {
  const m = new RegExp(`^asg_nodejs_gc_duration_seconds_${name}\\{kind="${kind}"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** A connection of its own each time: a pooled one left idle through a run is one the gateway may have closed (keep-alive timeout). */
function getText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`GET ${url} → ${res.statusCode}`))));
    }).on('error', reject);
  });
}

/** From a gateway's own metrics listener (METRICS_PORT), which needs no token. */
export async function gcPauses(metricsUrl: string): Promise<GcPauses> {
  const text = await getText(metricsUrl);
  return {
    scavenges: series(text, 'count', 'minor'),
    scavengeMs: series(text, 'sum', 'minor') * 1000,
    majorMs: (series(text, 'sum', 'major') + series(text, 'sum', 'incremental')) * 1000,
  };
}

/** What a run added: the pauses after minus those before. */
export function pausesBetween(before: GcPauses, after: GcPauses): GcPauses {
  return { scavenges: after.scavenges - before.scavenges, scavengeMs: after.scavengeMs - before.scavengeMs, majorMs: after.majorMs - before.majorMs };
}

export function meanScavengeMs(gc: GcPauses): number {
  return gc.scavengeMs / Math.max(1, gc.scavenges);
}

import { Agent, request } from 'node:http';

export interface PacedRequest {
  /** Traffic class, for the per-class figures. */
  kind: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Undefined when the response is what this request must get; otherwise why it is not. */
  check(response: { status: number; headers: Record<string, string | string[] | undefined>; body: string }): string | undefined;
}

export interface PacedOutcome {
  kind: string;
  /** From the moment the request was due (not sent), so a stalled server shows up in full. */
  latencyMs: number;
  /** How late the client itself sent it: large values mean the client, not the server, fell behind. */
  sendLagMs: number;
  status?: number;
  /** Socket error or timeout. */
  socketError?: string;
  unexpected?: string;
}

export interface PacedRun {
  sent: number;
  seconds: number;
}

/**
 * Open-loop load at a fixed rate, wrk2-style: request i is due at start + i/rate whatever
 * happened to earlier ones, and its latency counts from that moment, so coordinated omission
 * cannot hide a pause. Keep-alive sockets on loopback; every request bounded by a timeout.
 */
export async function runPaced(o: {
  url: string;
  rate: number;
  seconds: number;
  agent: Agent;
  next: () => PacedRequest;
  record: (outcome: PacedOutcome) => void;
  timeoutMs?: number;
  /** Stops scheduling (requests in flight still finish). */
  signal?: AbortSignal;
}): Promise<PacedRun> {
  const target = new URL(o.url);
  const total = Math.round(o.rate * o.seconds);
  const pending = new Set<Promise<void>>();
  const start = performance.now();
  let sent = 0;

  const fire = (req: PacedRequest, dueAt: number) => {
    const done = new Promise<void>((resolve) => {
      let settled = false;
      const sendLagMs = performance.now() - dueAt;
      const finish = (outcome: Omit<PacedOutcome, 'kind' | 'latencyMs' | 'sendLagMs'>) => {
        if (settled) return;
        settled = true;
        o.record({ kind: req.kind, latencyMs: performance.now() - dueAt, sendLagMs, ...outcome });
        resolve();
      };
      const headers = req.body === undefined ? req.headers : { ...req.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(req.body)) };
      const r = request({ host: target.hostname, port: target.port, method: req.method, path: req.path, headers, agent: o.agent, timeout: o.timeoutMs ?? 10_000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('error', (err) => finish({ socketError: err.message }));
        res.on('end', () => finish({ status: res.statusCode!, unexpected: req.check({ status: res.statusCode!, headers: res.headers, body }) }));
      });
      r.on('timeout', () => r.destroy(new Error('timeout')));
      r.on('error', (err) => finish({ socketError: err.message }));
      r.end(req.body);
    });
    pending.add(done);
    void done.then(() => pending.delete(done));
  };

  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      // Request i is due at start + i / rate: those with i <= elapsed × rate are due now.
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * o.rate) + 1);
      for (; sent < due; sent++) fire(o.next(), start + (sent * 1000) / o.rate);
      if (sent >= total || o.signal?.aborted) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  await Promise.all(pending);
  return { sent, seconds: (performance.now() - start) / 1000 };
}

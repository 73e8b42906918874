import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

/** Long enough for a server under load; a request past it means the server has hung. */
const REQUEST_TIMEOUT_MS = 60_000;
const HEAD_END = Buffer.from('\r\n\r\n');

export interface PairedTarget {
  name: string;
  url: string;
  headers?: Record<string, string>;
}

export interface PairedOptions {
  /** Answers timed per target. */
  requests: number;
  /** Requests a target gets in a row before the next one's turn; one more, untimed, opens each turn. */
  block: number;
}

/**
 * One-connection latency of several servers measured side by side: one keep-alive connection
 * per target, and the targets take turns, `block` timed requests each, every request sent when
 * the last answer has been read (as `wrk -c1` sends them). From wrk runs of one server after the
 * other, the p50 one build added ranged from 0.03 to 0.17 ms between the rounds of one bench
 * run on a 2-core VM; taking turns every few milliseconds, both servers meet the same machine.
 * A turn's first request follows the other servers' requests rather than its own: not timed.
 *
 * Resolves with the milliseconds of each target's timed requests, in the targets' order; rejects
 * at the first answer other than 200, one without a Content-Length, or a connection that fails.
 */
export async function pairedLatency(targets: readonly PairedTarget[], o: PairedOptions): Promise<number[][]> {
  if (!Number.isSafeInteger(o.requests) || o.requests < 1) throw new Error(`requests must be a positive integer; got ${o.requests}`);
  if (!Number.isSafeInteger(o.block) || o.block < 1) throw new Error(`block must be a positive integer; got ${o.block}`);
  const connections = await Promise.all(targets.map(openConnection));
  try {
    const samples = targets.map((): number[] => []);
    while (samples[0]!.length < o.requests) {
      for (let t = 0; t < connections.length; t++) {
        const timed = Math.min(o.block, o.requests - samples[t]!.length);
        await connections[t]!.get();
        for (let i = 0; i < timed; i++) {
          const started = process.hrtime.bigint();
          await connections[t]!.get();
          samples[t]!.push(Number(process.hrtime.bigint() - started) / 1e6);
        }
      }
    }
    return samples;
  } finally {
    for (const c of connections) c.close();
  }
}

interface Connection {
  /** Sends the GET and resolves when its whole answer has been read. */
  get(): Promise<void>;
  close(): void;
}

/**
 * A raw keep-alive connection: node:http's client would add its own parsing and event hops to
 * every figure, tens of µs here, on the client's core but inside the time measured.
 */
async function openConnection(target: PairedTarget): Promise<Connection> {
  const { hostname, port, pathname, search, host } = new URL(target.url);
  const lines = Object.entries(target.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`);
  const request = Buffer.from(`GET ${pathname}${search} HTTP/1.1\r\nHost: ${host}\r\n${lines.join('')}\r\n`, 'latin1');
  const socket: Socket = connect(Number(port), hostname);
  socket.setNoDelay(true);
  await once(socket, 'connect');

  let received: Buffer = Buffer.alloc(0);
  let answerLength = -1;
  let pending: { resolve: () => void; reject: (err: Error) => void } | undefined;
  const settle = (err?: Error) => {
    const p = pending;
    if (!p) return;
    pending = undefined;
    if (err) p.reject(err);
    else p.resolve();
  };
  const fail = (message: string) => {
    settle(new Error(`${target.name} (${target.url}): ${message}`));
    socket.destroy();
  };

  socket.on('data', (chunk: Buffer) => {
    received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
    if (answerLength < 0) {
      const headEnd = received.indexOf(HEAD_END);
      if (headEnd < 0) return;
      const head = received.subarray(0, headEnd).toString('latin1');
      const status = head.slice(9, 12);
      if (status !== '200') return fail(`answered ${status}, not 200`);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (!length) return fail('answered without a Content-Length');
      answerLength = headEnd + HEAD_END.length + Number(length[1]);
    }
    if (received.length < answerLength) return;
    if (received.length > answerLength) return fail('sent more bytes than its answer');
    received = Buffer.alloc(0);
    answerLength = -1;
    settle();
  });
  socket.on('error', (err) => fail(err.message));
  socket.on('close', () => fail('closed the connection'));
  // The socket's own idle timer, which every read and write refreshes: no timer made per request.
  // Idle between turns is no failure; only a request waiting for its answer times out.
  socket.setTimeout(REQUEST_TIMEOUT_MS, () => {
    if (pending) fail(`no answer within ${REQUEST_TIMEOUT_MS} ms`);
  });

  return {
    get: () =>
      new Promise<void>((resolve, reject) => {
        if (socket.destroyed) return reject(new Error(`${target.name} (${target.url}): the connection is closed`));
        pending = { resolve, reject };
        socket.write(request);
      }),
    close: () => {
      pending = undefined;
      socket.destroy();
    },
  };
}

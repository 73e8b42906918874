import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ResponseHeaders } from '../http/response-headers';
import { createTurnEndWriter } from './turn-end-writer';

/** A real server whose handler hands each response to `onRequest`. */
async function serverWith(onRequest: (res: ServerResponse) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((_req, res) => onRequest(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function headers(entries: Array<[string, string | number]>): ResponseHeaders {
  const h = new ResponseHeaders();
  for (const [name, value] of entries) h.set(name, value);
  return h;
}

describe('turn-end writer', () => {
  test('a response is written after the turn that sent it, with its status, headers and body', async () => {
    const failures: unknown[] = [];
    const send = createTurnEndWriter((err) => failures.push(err));
    const seen: Array<{ sentInTurn: boolean; sentAfterTurn?: boolean }> = [];
    const server = await serverWith((res) => {
      send(res, 203, headers([['X-Test', 'yes'], ['Content-Type', 'application/json']]), Buffer.from('[1,2]'));
      const observation: { sentInTurn: boolean; sentAfterTurn?: boolean } = { sentInTurn: res.headersSent };
      seen.push(observation);
      setImmediate(() => setImmediate(() => (observation.sentAfterTurn = res.headersSent)));
    });
    try {
      const res = await fetch(server.url);
      expect(res.status).toBe(203);
      expect(res.headers.get('x-test')).toBe('yes');
      expect(await res.text()).toBe('[1,2]');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(seen).toEqual([{ sentInTurn: false, sentAfterTurn: true }]);
      expect(failures).toEqual([]);
    } finally {
      await server.close();
    }
  });

  test.each([
    [1, 'at once, in the turn that sent it, and only once', { sentInTurn: true, sentAfterTurn: true }, 0],
    [2, 'after the turn, with the others', { sentInTurn: false, sentAfterTurn: true }, 1],
  ])('with %i request(s) in flight, a response is written %s', async (inFlight, _when, expected, turnEnds) => {
    const failures: unknown[] = [];
    let scheduled = 0;
    const atTurnEnd = (task: () => void) => {
      scheduled++;
      setImmediate(task);
    };
    const send = createTurnEndWriter((err) => failures.push(err), atTurnEnd, () => inFlight);
    const seen: Array<{ sentInTurn: boolean; sentAfterTurn?: boolean }> = [];
    const server = await serverWith((res) => {
      send(res, 200, headers([['X-Test', 'yes']]), Buffer.from('ok'));
      const observation: { sentInTurn: boolean; sentAfterTurn?: boolean } = { sentInTurn: res.headersSent };
      seen.push(observation);
      setImmediate(() => setImmediate(() => (observation.sentAfterTurn = res.headersSent)));
    });
    try {
      const res = await fetch(server.url);
      expect([res.status, res.headers.get('x-test'), await res.text()]).toEqual([200, 'yes', 'ok']);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(seen).toEqual([expected]);
      // Written at once, nothing is left for the turn's end: a second write would fail with ERR_HTTP_HEADERS_SENT.
      expect(scheduled).toBe(turnEnds);
      expect(failures).toEqual([]);
    } finally {
      await server.close();
    }
  });

  test('responses sent in one turn all go out; one whose headers are invalid goes to onError and does not hold up the others', async () => {
    const waiting: ServerResponse[] = [];
    const failed: Array<{ err: unknown; res: ServerResponse }> = [];
    const send = createTurnEndWriter((err, _req, res) => {
      failed.push({ err, res });
      res.writeHead(500).end('failed');
    });
    const server = await serverWith((res) => {
      waiting.push(res);
      if (waiting.length < 3) return;
      // All three in one turn: the middle one carries a header value Node refuses.
      send(waiting[0]!, 200, headers([['X-Order', 1]]), Buffer.from('first'));
      send(waiting[1]!, 200, headers([['X-Bad', 'line\nbreak']]), Buffer.from('second'));
      send(waiting[2]!, 200, headers([['X-Order', 3]]), Buffer.from('third'));
    });
    try {
      const answers = await Promise.all([1, 2, 3].map(() => fetch(server.url).then(async (r) => `${r.status} ${await r.text()}`)));
      expect(answers.sort()).toEqual(['200 first', '200 third', '500 failed']);
      expect(failed).toHaveLength(1);
      expect(failed[0]!.res).toBe(waiting[1]);
      expect((failed[0]!.err as NodeJS.ErrnoException).code).toBe('ERR_INVALID_CHAR');
    } finally {
      await server.close();
    }
  });
});

import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { startRecordingUpstream } from '../../test/support/upstream-double';
import { pairedLatency } from './paired-latency';

/** The bench's one-connection client: servers take turns, a block of timed requests each. */
describe('paired latency', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });
  const sockets = new Map<string, Set<Socket>>();
  const upstream = async (name: string, arrivals: string[], status = 200) => {
    sockets.set(name, new Set());
    const server = await startRecordingUpstream((req, res) => {
      arrivals.push(name);
      sockets.get(name)!.add(req.socket);
      res.statusCode = status;
      res.setHeader('content-length', 2);
      res.end('[]');
    });
    closers.push(server.close);
    return server;
  };
  /** A raw TCP server doing `onRequest` with each request's bytes: for answers node:http would not send. */
  const rawServer = async (onRequest: (socket: Socket) => void) => {
    const server: Server = createServer((socket) => socket.on('data', () => onRequest(socket)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/pets`;
  };

  test('when two servers are timed 7 requests each in blocks of 3, then each gets 3 turns of one untimed and up to 3 timed GETs, in turn, over one connection', async () => {
    const arrivals: string[] = [];
    const a = await upstream('a', arrivals);
    const b = await upstream('b', arrivals);
    const [aMs, bMs] = await pairedLatency(
      [
        { name: 'a', url: `${a.url}/pets?limit=5`, headers: { authorization: 'Bearer k' } },
        { name: 'b', url: `${b.url}/pets` },
      ],
      { requests: 7, block: 3 },
    );
    expect(arrivals.join('')).toBe('aaaabbbbaaaabbbbaabb');
    expect(aMs).toHaveLength(7);
    expect(bMs).toHaveLength(7);
    expect([...aMs!, ...bMs!].every((ms) => ms > 0 && ms < 10_000)).toBe(true);
    expect(a.requests.every((r) => r.method === 'GET' && r.url === '/pets?limit=5' && r.headers.authorization === 'Bearer k')).toBe(true);
    expect(b.requests.every((r) => r.url === '/pets' && r.headers.authorization === undefined)).toBe(true);
    expect(sockets.get('a')!.size).toBe(1);
    expect(sockets.get('b')!.size).toBe(1);
  });

  test('when a server answers other than 200, then it rejects with the server and the status', async () => {
    const arrivals: string[] = [];
    const ok = await upstream('ok', arrivals);
    const broken = await upstream('broken', arrivals, 503);
    await expect(pairedLatency([{ name: 'ok', url: ok.url }, { name: 'broken', url: broken.url }], { requests: 5, block: 2 })).rejects.toThrow(
      `broken (${broken.url}): answered 503, not 200`,
    );
    expect(arrivals).toEqual(['ok', 'ok', 'ok', 'broken']);
  });

  test('when an answer has no Content-Length, then it rejects rather than guess where the answer ends', async () => {
    const url = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n'));
    await expect(pairedLatency([{ name: 'chunked', url }], { requests: 1, block: 1 })).rejects.toThrow(`chunked (${url}): answered without a Content-Length`);
  });

  test('when a server closes the connection instead of answering, then it rejects', async () => {
    const url = await rawServer((socket) => socket.destroy());
    await expect(pairedLatency([{ name: 'closing', url }], { requests: 1, block: 1 })).rejects.toThrow(`closing (${url}): closed the connection`);
  });

  test('when asked for no requests or an empty block, then it refuses before connecting', async () => {
    await expect(pairedLatency([{ name: 'x', url: 'http://127.0.0.1:9/' }], { requests: 0, block: 1 })).rejects.toThrow('requests must be a positive integer; got 0');
    await expect(pairedLatency([{ name: 'x', url: 'http://127.0.0.1:9/' }], { requests: 1, block: 0 })).rejects.toThrow('block must be a positive integer; got 0');
  });
});

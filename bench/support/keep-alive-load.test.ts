import type { Socket } from 'node:net';
import { startRecordingUpstream } from '../../test/support/upstream-double';
import { keepAliveLoad as openLoad, type KeepAliveLoad } from './keep-alive-load';

/** The instruction bench's client: an exact number of requests, on connections that stay the same. */
describe('keep-alive load', () => {
  const sockets = new Set<Socket>();
  let resetRequest = -1;
  let status = 200;
  let server: Awaited<ReturnType<typeof startRecordingUpstream>>;
  // Every load a test opens is closed after it, passed or failed.
  const loads: KeepAliveLoad[] = [];
  const keepAliveLoad = (...args: Parameters<typeof openLoad>) => {
    const load = openLoad(...args);
    loads.push(load);
    return load;
  };

  beforeAll(async () => {
    server = await startRecordingUpstream((req, res) => {
      sockets.add(req.socket);
      // The server drops the connection without an answer, as one does at its keep-alive timeout.
      if (server.requests.length === resetRequest) return req.socket.destroy();
      res.statusCode = status;
      res.end('[]');
    });
  });
  afterAll(() => server?.close());
  afterEach(() => {
    for (const load of loads.splice(0)) load.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
    sockets.clear();
    resetRequest = -1;
    status = 200;
  });

  test('when asked for 100 then 50 requests over 8 connections, then the server receives exactly 150 GETs with the headers, over the same 8 connections', async () => {
    const load = keepAliveLoad(`${server.url}/pets?limit=5`, { authorization: 'Bearer k' }, 8);
    await load.send(100);
    expect(server.requests).toHaveLength(100);
    const first = new Set(sockets);
    expect(load.connectionsOpened()).toBe(8);
    await load.send(50);
    expect(server.requests).toHaveLength(150);
    expect(server.requests.every((r) => r.method === 'GET' && r.url === '/pets?limit=5' && r.headers.authorization === 'Bearer k')).toBe(true);
    expect(first.size).toBe(8);
    expect(sockets).toEqual(first);
    expect(load.connectionsOpened()).toBe(8);
  });

  test('when the server answers other than 200, then send rejects with the status and sends nothing more', async () => {
    status = 404;
    const load = keepAliveLoad(server.url, {}, 2);
    await expect(load.send(10)).rejects.toThrow(`${server.url}: answered 404, not 200`);
    // The other connection's request may still be on its way; none is sent after it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.requests.length).toBeLessThanOrEqual(2);
  });

  test('when the server drops a reused connection unanswered, then that GET is sent again and the count still completes', async () => {
    resetRequest = 10;
    const load = keepAliveLoad(server.url, {}, 1);
    await load.send(20);
    expect(server.requests).toHaveLength(21);
    expect(sockets.size).toBe(2);
    expect(load.connectionsOpened()).toBe(2);
  });

  test('when the server drops a new connection unanswered, then send rejects with the reset', async () => {
    resetRequest = 1;
    const load = keepAliveLoad(server.url, {}, 1);
    await expect(load.send(5)).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(server.requests).toHaveLength(1);
  });

  test('when asked for no requests, then send rejects before sending any', async () => {
    const load = keepAliveLoad(server.url, {}, 1);
    await expect(load.send(0)).rejects.toThrow('requests must be a positive integer; got 0');
    expect(server.requests).toHaveLength(0);
  });
});

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { pollFor, until } from '../../test/support/until';
import { trackForDrain, type HttpDrain } from './drain';

/** `count` GETs written at once on one connection, each waiting for the one before it to be answered. */
function pipelined(port: number, count: number): Promise<Socket> {
  const bytes = Array.from({ length: count }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join('');
  return new Promise((resolve) => {
    const client = connect(port, '127.0.0.1', () => {
      client.write(bytes);
      resolve(client);
    });
    client.on('error', () => {}); // destroyed on purpose
  });
}

/** A turn for anything the closes scheduled, so a second 'close' would have come by now. */
const aTurnLater = () => new Promise((resolve) => setImmediate(resolve));

describe('a response queued behind another on a connection that closes', () => {
  let server: Server;
  let drainer: HttpDrain;
  let port: number;
  /** Every response the server was handed, by request path, held until the test answers it. */
  let held: Map<string, ServerResponse>;
  /** How many times each response's 'close' came, by request path. */
  let closes: Map<string, number>;
  let serverSockets: Socket[];

  beforeEach(async () => {
    held = new Map();
    closes = new Map();
    serverSockets = [];
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      held.set(req.url!, res);
      res.on('close', () => closes.set(req.url!, (closes.get(req.url!) ?? 0) + 1));
    });
    server.on('connection', (socket: Socket) => serverSockets.push(socket));
    drainer = trackForDrain(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(() => {
    server.closeAllConnections();
    if (server.listening) server.close();
  });

  const closeCounts = (count: number) => Array.from({ length: count }, (_, i) => closes.get(`/${i}`) ?? 0);

  test('when the client leaves while the first is unanswered, then every response closes once, destroyed, and a drain finds none in flight', async () => {
    const client = await pipelined(port, 20);
    await until('the server has all 20 requests', () => held.size === 20);
    // One listener for the connection, not one per queued response: Node warns past 10.
    expect(serverSockets[0]!.listenerCount('close')).toBeLessThan(10);
    client.destroy();

    const { value } = await pollFor(() => closeCounts(20), (counts) => counts.every((n) => n > 0), { withinMs: 2000 });
    await aTurnLater();
    expect(value).toEqual(Array(20).fill(1));
    expect(closeCounts(20)).toEqual(Array(20).fill(1));
    expect([...held.values()].every((res) => res.destroyed && !res.headersSent)).toBe(true);
    expect(await drainer.drain(1000)).toMatchObject({ inFlight: 0, cut: 0 });
  });

  test('then the requests in flight are those received whose responses have not closed, the one being handled included', async () => {
    const seenByHandler: number[] = [];
    server.on('request', () => seenByHandler.push(drainer.requestsInFlight()));
    const client = await pipelined(port, 3);
    await until('the server has all 3 requests', () => held.size === 3);
    expect(seenByHandler).toEqual([1, 2, 3]);
    expect(drainer.requestsInFlight()).toBe(3);
    held.get('/0')!.end('zero');
    await until('the first closed', () => closes.get('/0') === 1);
    expect(drainer.requestsInFlight()).toBe(2);
    client.destroy();
    await until('every response closed', () => closeCounts(3).every((n) => n > 0), 2000);
    expect(drainer.requestsInFlight()).toBe(0);
  });

  test('when responses answered in their turn precede the one the client leaves, then each closes once, the two answered finished and the two unanswered not', async () => {
    const client = await pipelined(port, 4);
    await until('the server has all 4 requests', () => held.size === 4);
    held.get('/0')!.end('zero');
    held.get('/1')!.end('one'); // answered while queued: sent once /0 is
    await until('the first two closed', () => closes.get('/0') === 1 && closes.get('/1') === 1);
    // /2 has the socket now and /3 waits behind it.
    client.destroy();

    await until('every response closed', () => closeCounts(4).every((n) => n > 0), 2000);
    await aTurnLater();
    expect(closeCounts(4)).toEqual([1, 1, 1, 1]);
    expect(['/0', '/1', '/2', '/3'].map((path) => held.get(path)!.writableFinished)).toEqual([true, true, false, false]);
    expect(await drainer.drain(1000)).toMatchObject({ inFlight: 0, cut: 0 });
  });
});

import { createServer, IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Socket } from 'node:net';
import { sendRaw } from '../../test/support/raw-http';
import { passOnOtherExpectations, unsupportedExpectation } from './expect-continue';

function expecting(expect?: string): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.headers = expect === undefined ? {} : { expect };
  return req;
}

describe('expectations the gateway cannot meet', () => {
  test('when a request expects nothing or 100-continue (in any case), then there is nothing to refuse', () => {
    for (const value of [undefined, '100-continue', '100-Continue']) expect(unsupportedExpectation(expecting(value))).toBeUndefined();
  });

  test('when a request expects anything else, then it is a 417 expectation_failed naming the expectation', () => {
    expect(unsupportedExpectation(expecting('tea'))?.toBody()).toEqual({
      code: 'expectation_failed',
      message: 'Only "Expect: 100-continue" is supported; this request expected "tea".',
      status: 417,
    });
  });

  describe('on a server that passes other expectations on', () => {
    let server: Server;
    let url: string;
    beforeAll(async () => {
      server = createServer((req, res) => res.end(`handled ${req.headers.expect}`));
      passOnOtherExpectations(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    test('when a request expects anything but 100-continue, then the request handler answers it, not Node with a bare 417', async () => {
      const answer = await sendRaw(url, 'GET / HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nConnection: close\r\n\r\n');
      expect(answer.status).toBe(200);
      expect(answer.body).toBe('handled tea');
    });
  });
});

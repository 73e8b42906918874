import { connect } from 'node:net';

export interface RawExchange {
  /** Everything the server sent until it closed the connection. */
  text: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends bytes as they are (no HTTP client would send a malformed request) and reads until the
 * server closes the connection; fails if it has not closed within `timeoutMs`.
 */
export function sendRaw(url: string, bytes: string, timeoutMs = 5000): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open past ${timeoutMs} ms; it sent ${JSON.stringify(text)}`));
    }, timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => {}); // a reset after the answer still ends in 'close'
    socket.on('close', () => {
      clearTimeout(timer);
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ text, status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
  });
}

export interface EndlessBodyExchange {
  /** Everything the server sent. */
  text: string;
  /** Milliseconds from the end of the server's response to its closing the connection; undefined when it never closed. */
  closedAfterResponseMs: number | undefined;
}

/**
 * Sends `head` (ending with `Transfer-Encoding: chunked` and the blank line), then a chunk every
 * `everyMs` for up to `forMs`, as a client with a body that never ends; stops early when the
 * server closes the connection. `halfOpen` keeps sending after the server has ended its side.
 */
export function sendEndlessBody(url: string, head: string, { everyMs = 5, forMs = 10_000, halfOpen = false } = {}): Promise<EndlessBodyExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: halfOpen });
    // Written now, so it goes out before any chunk the ticker queues while the socket still connects.
    socket.write(head);
    let text = '';
    let answeredAt: number | undefined;
    const chunk = '400\r\n' + 'x'.repeat(1024) + '\r\n';
    const ticker = setInterval(() => socket.writable && socket.write(chunk), everyMs);
    const finish = (closedAt: number | undefined) => {
      clearInterval(ticker);
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closedAfterResponseMs: closedAt === undefined || answeredAt === undefined ? undefined : closedAt - answeredAt });
    };
    const timer = setTimeout(() => finish(undefined), forMs);
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      text += data;
      const split = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split));
      if (answeredAt === undefined && split !== -1 && length && text.length >= split + 4 + Number(length[1])) answeredAt = Date.now();
    });
    socket.on('error', () => {}); // writing on after the server closed ends in a reset, then 'close'
    socket.on('close', () => finish(Date.now()));
  });
}

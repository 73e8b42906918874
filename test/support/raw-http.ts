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

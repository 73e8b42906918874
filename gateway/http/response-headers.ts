import type { ServerResponse } from 'node:http';

/**
 * The headers the API steps give a response, kept as a flat name/value list and handed to Node
 * in one `writeHead` call. `setHeader` validates, lower-cases and stores each header on its own:
 * measured on a bare server, eight of them cost a quarter of its throughput, while the same eight
 * in one `writeHead` list cost almost nothing. Names are compared exactly, so steps use one spelling.
 */
export class ResponseHeaders {
  /** name, value, name, value… */
  readonly list: Array<string | number> = [];

  /** Adds a header, or replaces the value of one already set under the same name. */
  set(name: string, value: string | number): void {
    const list = this.list;
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] === name) {
        list[i + 1] = value;
        return;
      }
    }
    list.push(name, value);
  }

  /** Writes the status line and every header in one call; the body follows with `res.end`. */
  writeHead(res: ServerResponse, status: number): void {
    res.writeHead(status, this.list);
  }

  /**
   * Hands the headers to the response one by one, for the paths that write it some other way
   * (Error bodies, preflights, the proxy); headers set there afterwards win over these.
   */
  applyTo(res: ServerResponse): void {
    const list = this.list;
    for (let i = 0; i < list.length; i += 2) res.setHeader(list[i] as string, list[i + 1]!);
    list.length = 0;
  }
}

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
   * `writeHead` with another source's headers (an upstream's, lower-case names as Node parses
   * them) after these, that source winning a name both set: still one list, one call. Vary is
   * the exception, sent from both: what the answer varies by is what either of them varies it
   * by, and the gateway's `Vary: Origin` (cors.ts) must stay beside its CORS headers.
   */
  writeHeadWith(res: ServerResponse, status: number, theirs: Readonly<Record<string, string | string[]>>): void {
    const own = this.list;
    const list: Array<string | number | string[]> = [];
    for (let i = 0; i < own.length; i += 2) {
      const name = own[i] as string;
      const lower = lowerCase(name);
      if (theirs[lower] === undefined || lower === 'vary') list.push(name, own[i + 1]!);
    }
    for (const name in theirs) list.push(name, theirs[name]!);
    res.writeHead(status, list);
  }

  /**
   * Hands the headers to the response one by one, for the paths that write it some other way
   * (Error bodies); headers set there afterwards win over these.
   */
  applyTo(res: ServerResponse): void {
    const list = this.list;
    for (let i = 0; i < list.length; i += 2) res.setHeader(list[i] as string, list[i + 1]!);
    list.length = 0;
  }
}

// Steps set headers under a handful of literal names: each is lower-cased once, not per response.
const LOWER_CASE = new Map<string, string>();
function lowerCase(name: string): string {
  let lower = LOWER_CASE.get(name);
  if (lower === undefined) LOWER_CASE.set(name, (lower = name.toLowerCase()));
  return lower;
}

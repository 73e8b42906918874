import type { RecordColumns } from './request-log';

/** Room per record on average: a UUID request id (36 bytes), a path and a short query. */
const BYTES_PER_RECORD = 96;

/**
 * The request id, path and query of the buffered records, kept as bytes until the next write.
 * Kept as strings, these three (the only strings of a record made for its request) lived the
 * 250 ms to the write and were promoted: at 45k cache hits a second they doubled the bytes each
 * scavenge copied (170 → 335 KB) and its pause (1.2 → 2.1 ms), and more than tripled what reached
 * the old generation (52 → 185 KB per scavenge). As bytes, the request's strings die young; the
 * write turns the bytes back into strings.
 *
 * Latin-1 is exact here: Node's HTTP parser refuses a request line that is not ASCII, and a
 * request id is ASCII by its shape (lib/request-id.ts).
 */
export class RecordText {
  private readonly bytes: Buffer;
  /** Where record i's request id, path and query end: ends[3i], ends[3i + 1], ends[3i + 2]. */
  private readonly ends: Uint32Array;
  private used = 0;

  constructor(capacity: number) {
    this.bytes = Buffer.allocUnsafeSlow(capacity * BYTES_PER_RECORD);
    this.ends = new Uint32Array(capacity * 3);
  }

  /** Keeps record `i`'s strings as bytes, or in its column slots when they do not fit (false). */
  put(columns: RecordColumns, i: number, requestId: string, apiPath: string, search: string): boolean {
    const { bytes, ends } = this;
    let used = this.used;
    if (used + requestId.length + apiPath.length + search.length > bytes.length) {
      this.keepStrings(columns, i, requestId, apiPath, search);
      return false;
    }
    used += bytes.write(requestId, used, 'latin1');
    ends[3 * i] = used;
    used += bytes.write(apiPath, used, 'latin1');
    ends[3 * i + 1] = used;
    if (search !== '') used += bytes.write(search, used, 'latin1');
    ends[3 * i + 2] = this.used = used;
    return true;
  }

  /** Keeps record `i`'s strings in its column slots, as they are (any characters). */
  keepStrings(columns: RecordColumns, i: number, requestId: string, apiPath: string, search: string): void {
    const { ends, used } = this;
    ends[3 * i] = ends[3 * i + 1] = ends[3 * i + 2] = used;
    // A copy of its own: a fresh id is a slice of its batch's 18 KB text (lib/request-id.ts), which
    // an in-memory log keeping the record for a day would keep too. The copy is exact (ASCII).
    columns.requestIds[i] = Buffer.from(requestId, 'latin1').toString('latin1');
    columns.apiPaths[i] = apiPath;
    columns.searches[i] = search;
  }

  /**
   * Record `i`'s request id, path and query as strings, into slot `at` of `into`: from its bytes,
   * or from its slots in `from` when it did not fit.
   */
  restoreInto(i: number, from: RecordColumns, into: RecordColumns, at: number): void {
    if (from.requestIds[i] !== undefined) {
      into.requestIds[at] = from.requestIds[i];
      into.apiPaths[at] = from.apiPaths[i];
      into.searches[at] = from.searches[i];
      return;
    }
    const { bytes, ends } = this;
    const start = i === 0 ? 0 : ends[3 * i - 1]!;
    const idEnd = ends[3 * i]!;
    const pathEnd = ends[3 * i + 1]!;
    const end = ends[3 * i + 2]!;
    into.requestIds[at] = bytes.toString('latin1', start, idEnd);
    into.apiPaths[at] = bytes.toString('latin1', idEnd, pathEnd);
    into.searches[at] = pathEnd === end ? '' : bytes.toString('latin1', pathEnd, end);
  }

  /** Empties the text for the next records, from slot 0. */
  clear(): void {
    this.used = 0;
  }
}

import { KEY_SECRET_CHAR } from '../../identity/api-key-service';
import type { ErrorCode } from '../../lib/api-error';
import { HOLDS_KEY_PREFIX, KEY_PREFIXES } from '../../lib/key-prefixes';
import type { CacheStatus } from '../pipeline/pipeline';

/** A key's log keeps its last this many requests… */
export const MAX_RECORDS_PER_KEY = 1000;
/** …of at most this age; older ones are neither returned nor kept. */
export const MAX_RECORD_AGE_MS = 24 * 60 * 60 * 1000;
/**
 * An erased key's records are refused this long after its erasure, the log's own lifetime: a
 * request admitted before the erasure may end and be written after it, and none lives near a
 * day (its request, upstream and socket timeouts are an hour at most, gateway/config.ts).
 */
export const ERASED_FOR_MS = MAX_RECORD_AGE_MS;
/** The path and query are recorded up to this many characters (a query is the client's to make long). */
export const MAX_RECORDED_PATH = 512;

/** An outcome to filter by: `2xx` counts 3xx too, `4xx` leaves 429 out. */
export type StatusFilter = '2xx' | '4xx' | '429' | '5xx';
export const STATUS_FILTERS: readonly StatusFilter[] = ['2xx', '4xx', '429', '5xx'];

/**
 * Records waiting for a write, one slot per record in each column: recording a request writes
 * the strings its context holds already and a few numbers into slots, and allocates nothing.
 * Its request id, path and query wait as bytes instead while there is room (record-text.ts),
 * and are strings again in the batch a store is given. Never the key, a header or a body.
 */
export interface RecordColumns {
  readonly keyIds: Array<string | undefined>;
  readonly methods: Array<string | undefined>;
  /** The environment's prefix, the path below it and the query (`?…` or ''), as the context has them. */
  readonly prefixes: Array<string | undefined>;
  readonly apiPaths: Array<string | undefined>;
  readonly searches: Array<string | undefined>;
  readonly codes: Array<ErrorCode | undefined>;
  readonly caches: Array<CacheStatus | undefined>;
  readonly requestIds: Array<string | undefined>;
  readonly statuses: Uint16Array;
  /** Latency in tenths of a millisecond. */
  readonly latencyTenths: Uint32Array;
  /** When each response ended: `performance.now()` while buffered, epoch ms (the gateway's clock) in a batch. */
  readonly times: Float64Array;
}

/** Columns of `capacity` empty slots. */
export function newRecordColumns(capacity: number): RecordColumns {
  const strings = <T>() => new Array<T | undefined>(capacity).fill(undefined);
  return {
    keyIds: strings(),
    methods: strings(),
    prefixes: strings(),
    apiPaths: strings(),
    searches: strings(),
    codes: strings(),
    caches: strings(),
    requestIds: strings(),
    statuses: new Uint16Array(capacity),
    latencyTenths: new Uint32Array(capacity),
    times: new Float64Array(capacity),
  };
}

/**
 * Copies record `i` of `from` into slot `at` of `into`: every field but its request id, path and
 * query, which wait as bytes (record-text.ts).
 */
export function copyRecord(from: RecordColumns, i: number, into: RecordColumns, at: number): void {
  into.keyIds[at] = from.keyIds[i];
  into.methods[at] = from.methods[i];
  into.prefixes[at] = from.prefixes[i];
  into.codes[at] = from.codes[i];
  into.caches[at] = from.caches[i];
  into.statuses[at] = from.statuses[i]!;
  into.latencyTenths[at] = from.latencyTenths[i]!;
  into.times[at] = from.times[i]!;
}

/** Lets go of the strings in slots 0 to count - 1, so that none outlives its write. */
export function clearRecordStrings(c: RecordColumns, count: number): void {
  for (const column of [c.keyIds, c.methods, c.prefixes, c.apiPaths, c.searches, c.codes, c.caches, c.requestIds]) column.fill(undefined, 0, count);
}

/** The records of one write: slots 0 to count - 1 of the columns. */
export interface RecordBatch extends RecordColumns {
  readonly count: number;
}

/** A request as its key's owner reads it. */
export interface LoggedRequest {
  /** Its place in the key's log, two numbers `<a>-<b>` that order it (each store numbers its own): the cursor for the page after it. */
  id: string;
  /** When the response ended, epoch ms. */
  time: number;
  method: string;
  path: string;
  status: number;
  code: string | null;
  latencyMs: number;
  cache: CacheStatus | null;
  requestId: string;
}

export interface RequestLogQuery {
  /** 1–100. */
  limit: number;
  /** A `LoggedRequest.id`: only requests older than it. */
  after?: string;
  status?: StatusFilter;
  requestId?: string;
}

export interface RequestLogPage {
  /** Newest first. */
  requests: LoggedRequest[];
  /** The cursor of the next page, when there are more. */
  next?: string;
}

/** Where a key's recent requests are kept: a Redis stream per key, or process memory. */
export interface RequestLogStore {
  /** Stores a batch; takes what it needs from the batch before it returns (the caller reuses it). */
  append(batch: RecordBatch, nowMs: number): Promise<void> | void;
  read(keyId: string, query: RequestLogQuery, nowMs: number): Promise<RequestLogPage>;
  /** Deletes every record of these keys (their account was erased), and refuses theirs for ERASED_FOR_MS from `nowMs`. */
  forget(keyIds: readonly string[], nowMs: number): Promise<void> | void;
}

/** Whether a record is one a read asked for: its outcome, and its request id when one is given. */
export function matchesQuery(record: { status: number; requestId: string }, query: Pick<RequestLogQuery, 'status' | 'requestId'>): boolean {
  return matchesStatus(record.status, query.status) && (query.requestId === undefined || record.requestId === query.requestId);
}

/** Whether a status counts as the outcome asked for. */
function matchesStatus(status: number, filter: StatusFilter | undefined): boolean {
  switch (filter) {
    case undefined:
      return true;
    case '2xx':
      return status < 400;
    case '4xx':
      return status >= 400 && status < 500 && status !== 429;
    case '429':
      return status === 429;
    case '5xx':
      return status >= 500;
  }
}

/** A character among `chars` as a request may send it: itself, or percent-encoded (hex digits in either case under `i`). */
function sentAs(chars: readonly string[]): string {
  const lowDigits = new Map<string, string>();
  for (const c of chars) {
    const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
    lowDigits.set(hex[0]!, (lowDigits.get(hex[0]!) ?? '') + hex[1]!);
  }
  const literal = chars.map((c) => c.replace(/[-\\\]^]/, '\\$&')).join('');
  return `(?:[${literal}]|%(?:${[...lowDigits].map(([high, lows]) => `${high}[${lows}]`).join('|')}))`;
}

const KEY_PREFIX_TEXTS = Object.values(KEY_PREFIXES);
const SECRET_CHARS = Array.from({ length: 0x7f - 0x21 }, (_, i) => String.fromCharCode(0x21 + i)).filter((c) => KEY_SECRET_CHAR.test(c));
/** A prefix in any case and 10 or more secret characters, each as sent or percent-encoded: what is a key once decoded. */
const KEY_SENT = new RegExp(
  `(${KEY_PREFIX_TEXTS.map((prefix) => [...prefix].map((c) => sentAs([...new Set([c.toLowerCase(), c.toUpperCase()])])).join('')).join('|')})${sentAs(SECRET_CHARS)}{10,}`,
  'i',
);
const EVERY_KEY_SENT = new RegExp(KEY_SENT.source, 'gi');

/**
 * The path and query as recorded: at most MAX_RECORDED_PATH characters (cut ones end with `…`),
 * and anything that is an API key once percent-decoded replaced, should a client put its key in
 * the path or query; the rest is kept as sent, never decoded.
 */
export function recordedPath(prefix: string, apiPath: string, search: string): string {
  let path = prefix + apiPath + search;
  // Cheap checks first: a key is sent with a prefix as it is or with an escape, and most paths hold
  // none, for which `test` is cheaper than a global `replace` with a function.
  if ((path.includes('%') || HOLDS_KEY_PREFIX.test(path)) && KEY_SENT.test(path)) {
    // The matched prefix is only characters and well-formed escapes of them, so decoding it cannot throw.
    path = path.replace(EVERY_KEY_SENT, (_key, sentPrefix: string) => `${decodeURIComponent(sentPrefix).toLowerCase()}[redacted]`);
  }
  return path.length > MAX_RECORDED_PATH ? `${path.slice(0, MAX_RECORDED_PATH - 1)}…` : path;
}

const CURSOR = /^(\d{1,15})-(\d{1,15})$/;

/** A cursor as its two numbers, or undefined when it is not one. */
export function parseCursor(cursor: string): { ms: number; seq: number } | undefined {
  const match = CURSOR.exec(cursor);
  return match ? { ms: Number(match[1]), seq: Number(match[2]) } : undefined;
}

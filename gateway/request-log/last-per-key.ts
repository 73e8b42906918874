import type { RecordColumns } from './request-log';

/**
 * Marks in `kept` (1 or 0) which of records 0 to count - 1 are among their key's last `perKey`:
 * a store keeps no more of one key's records from a batch.
 */
export function markLastPerKey(keyIds: ReadonlyArray<string | undefined>, count: number, perKey: number, kept: Uint8Array): void {
  if (count <= perKey) {
    kept.fill(1, 0, count);
    return;
  }
  const left = new Map<string | undefined, number>();
  for (let i = 0; i < count; i++) left.set(keyIds[i], (left.get(keyIds[i]) ?? 0) + 1);
  for (let i = 0; i < count; i++) {
    const after = left.get(keyIds[i])! - 1; // the key's records after this one
    left.set(keyIds[i], after);
    kept[i] = after < perKey ? 1 : 0;
  }
}

/** Moves the kept records of slots 0 to count - 1 to the front of every column, in order; returns how many. */
export function compactRecords(columns: RecordColumns, count: number, kept: Uint8Array): number {
  const { keyIds, methods, prefixes, apiPaths, searches, codes, caches, requestIds, statuses, latencyTenths, times } = columns;
  let to = 0;
  for (let from = 0; from < count; from++) {
    if (kept[from] === 0) continue;
    if (to !== from) {
      keyIds[to] = keyIds[from];
      methods[to] = methods[from];
      prefixes[to] = prefixes[from];
      apiPaths[to] = apiPaths[from];
      searches[to] = searches[from];
      codes[to] = codes[from];
      caches[to] = caches[from];
      requestIds[to] = requestIds[from];
      statuses[to] = statuses[from]!;
      latencyTenths[to] = latencyTenths[from]!;
      times[to] = times[from]!;
    }
    to++;
  }
  return to;
}

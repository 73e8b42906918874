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

/**
 * Moves the kept records of slots 0 to count - 1 to the front of every column, in order; returns
 * how many. Over whatever columns a record has (request-log.ts), one column at a time.
 */
export function compactRecords(columns: RecordColumns, count: number, kept: Uint8Array): number {
  const firstDropped = kept.subarray(0, count).indexOf(0);
  if (firstDropped === -1) return count;
  const moved: number[] = [];
  for (let from = firstDropped; from < count; from++) if (kept[from] === 1) moved.push(from);
  for (const column of Object.values(columns) as Array<{ [slot: number]: unknown }>) {
    for (let n = 0; n < moved.length; n++) column[firstDropped + n] = column[moved[n]!];
  }
  return firstDropped + moved.length;
}

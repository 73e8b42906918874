/**
 * Marks in `kept` (1 or 0) which of records 0 to count - 1 are among their key's last `perKey`:
 * a store keeps no more of one key's records from a batch. One pass from the newest, which
 * looks a key up only where the key changes: a busy key's records come in runs.
 */
export function markLastPerKey(keyIds: ReadonlyArray<string | undefined>, count: number, perKey: number, kept: Uint8Array): void {
  if (count <= perKey) {
    kept.fill(1, 0, count);
    return;
  }
  const seen = new Map<string | undefined, number>();
  let runKey = keyIds[count - 1];
  let runSeen = 0;
  for (let i = count - 1; i >= 0; i--) {
    const key = keyIds[i];
    if (key !== runKey) {
      seen.set(runKey, runSeen);
      runKey = key;
      runSeen = seen.get(key) ?? 0;
    }
    runSeen++; // this key's records from this one on
    kept[i] = runSeen <= perKey ? 1 : 0;
  }
}

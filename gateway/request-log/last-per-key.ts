/**
 * The slots of records 0 to count - 1 that a write sends, grouped by key: a key's last `perKey`
 * (a store keeps no more of one key's records from a batch), in the order they were recorded, the
 * groups in the order of each key's first record. Grouped, a key's records go to its store in as
 * few appends as the write's parts allow, however the keys' requests interleaved. A busy key's
 * records come in runs: the key is looked up only where it changes.
 */
export function lastPerKey(keyIds: ReadonlyArray<string | undefined>, count: number, perKey: number): number[][] {
  const groups = new Map<string | undefined, number[]>();
  let runKey: string | undefined;
  let run: number[] | undefined;
  for (let i = 0; i < count; i++) {
    const key = keyIds[i];
    if (run === undefined || key !== runKey) {
      runKey = key;
      run = groups.get(key);
      if (run === undefined) groups.set(key, (run = []));
    }
    run.push(i);
  }
  const last: number[][] = [];
  for (const slots of groups.values()) last.push(slots.length > perKey ? slots.slice(slots.length - perKey) : slots);
  return last;
}

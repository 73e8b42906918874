/** How values read in tables: times in UTC to the second, absent values as "-". */

export function when(iso: string | null | undefined): string | null {
  if (!iso) return null;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

export function quota(perMonth: number | null): string {
  return perMonth === null ? 'none' : String(perMonth);
}

/** An audit entry's details on one line: `from=default to=pro`. */
export function details(value: Record<string, unknown> | null): string | null {
  if (!value) return null;
  const parts = Object.entries(value).map(([name, v]) => `${name}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return parts.length ? parts.join(' ') : null;
}

/** A date as JSON bodies carry it (ISO 8601, UTC), or null for none. */
export const isoOrNull = (date: Date | null): string | null => (date ? date.toISOString() : null);

import type { AdminClient, ListResult } from './client';

/** What a command needs from the world: the API (built on first use, so `--help` needs no settings) and the streams. */
export interface CliContext {
  client(): AdminClient;
  /** stdout: the result. */
  out(text: string): void;
  /** stderr: notes for the person at the terminal, never part of the result. */
  note(text: string): void;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** The API's JSON as it came, for scripts. */
export function printJson(context: CliContext, value: unknown): void {
  context.out(`${JSON.stringify(value, null, 2)}\n`);
}

export interface ListDisplay<T> {
  /** The items as a table, for a list that is not empty. */
  table: (items: readonly T[]) => string;
  /** What an empty list prints instead, e.g. `No keys.\n`. */
  none: string;
  /** What the items are called in the note about more, e.g. `keys`. */
  what: string;
}

/**
 * A fetched list as the API's JSON or as a table (`none` when empty); then, when it stopped at
 * --limit with more left, a note to the person saying so.
 */
export function printList<T>(context: CliContext, { items, more }: ListResult<T>, json: boolean | undefined, display: ListDisplay<T>): void {
  if (json) printJson(context, items);
  else context.out(items.length ? display.table(items) : display.none);
  if (more) context.note(`(the first ${items.length} ${display.what} shown; there are more: raise --limit)\n`);
}

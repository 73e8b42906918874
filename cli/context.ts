import type { AdminClient } from './client';

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

/** Tells the person that a list stopped at --limit with more left. */
export function noteMore(context: CliContext, more: boolean, shown: number, what: string): void {
  if (more) context.note(`(the first ${shown} ${what} shown; there are more: raise --limit)\n`);
}

import { CommanderError } from 'commander';
import { createAdminClient, type AdminClient } from './client';
import type { CliContext } from './context';
import { formatError } from './errors';
import { buildProgram } from './program';
import { parseCliSettings } from './settings';

export interface AdminIo {
  env: Readonly<Record<string, string | undefined>>;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Runs one command line (without `node` and the script) and answers the exit code: 0 done, 1 failed. */
export async function runAdmin(args: readonly string[], io: AdminIo): Promise<number> {
  let client: AdminClient | undefined;
  const context: CliContext = {
    client: () => (client ??= createAdminClient(parseCliSettings(io.env))),
    out: io.stdout,
    note: io.stderr,
    stdin: io.stdin,
  };
  try {
    await buildProgram(context).parseAsync([...args], { from: 'user' });
    return 0;
  } catch (err) {
    // Commander has already said what was wrong (or printed the help it was asked for).
    if (err instanceof CommanderError) return err.exitCode;
    io.stderr(`${formatError(err)}\n`);
    return 1;
  }
}

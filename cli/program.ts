import { Command } from 'commander';
import { addAccountsCommand } from './commands/accounts';
import { addAuditCommand } from './commands/audit';
import { addKeysCommand } from './commands/keys';
import { addPlansCommand } from './commands/plans';
import type { CliContext } from './context';
import { redactKeys } from './key-text';
import { DEFAULT_ADMIN_URL } from './settings';

/** The whole command tree; it throws instead of exiting, so one caller decides the exit code. */
export function buildProgram(context: CliContext): Command {
  const program = new Command()
    .name('npm run admin --')
    .description('Operate the Animal Store Gateway through its admin API.')
    .exitOverride()
    // Commander repeats a bad option as typed (`unknown option '--key=asg_prod_…'`): never a secret.
    .configureOutput({ writeOut: context.out, writeErr: context.note, outputError: (text, write) => write(redactKeys(text)) })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      `\nEnvironment:\n  ADMIN_URL    the admin API (default ${DEFAULT_ADMIN_URL})\n  ADMIN_TOKEN  the gateway's admin token; a "label:token,…" list uses its first token\n\nEvery command takes --help; lists and results take --json for scripts.`,
    );
  addAccountsCommand(program, context);
  addKeysCommand(program, context);
  addPlansCommand(program, context);
  addAuditCommand(program, context);
  return program;
}

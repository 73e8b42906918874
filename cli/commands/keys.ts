import type { Command } from 'commander';
import type { AdminKey, SecretReport } from '../api-types';
import { DEFAULT_LIST_LIMIT, listLimit, reason, refuseSecret } from '../arguments';
import { printJson, printList, type CliContext } from '../context';
import { when } from '../display';
import { readSecret } from '../secret-source';
import { renderTable } from '../table';
import { terminalSafe } from '../terminal-text';

export function keyTable(keys: readonly AdminKey[]): string {
  return renderTable(
    ['ID', 'ACCOUNT', 'NAME', 'PREFIX', 'ENV', 'STATUS', 'CREATED', 'LAST USED', 'EXPIRES', 'REQUESTS'],
    keys.map((k) => [k.id, k.accountId, k.name, k.prefix, k.environment, k.status, when(k.createdAt), when(k.lastUsedAt), when(k.expiresAt), k.usage.requests]),
  );
}

/** Built with `parent.command()`, so it inherits the program's output and exit settings. */
export function addKeysCommand(parent: Command, context: CliContext): void {
  const keys = parent
    .command('keys').description('find keys by the prefix a user quotes, revoke them');

  keys
    .command('find')
    .description('keys whose visible prefix starts with <prefix> ("asg_prod_" or "asg_stag_" and 1 to 6 more characters)')
    .argument('<prefix>', 'the start of the key as the portal shows it')
    .option('--limit <n>', 'at most this many keys', listLimit, DEFAULT_LIST_LIMIT)
    .option('--json', 'print the API\'s JSON')
    .action(async (prefix: string, options: { limit: number; json?: boolean }) => {
      refuseSecret(prefix, 'the prefix the portal shows ("asg_prod_" and up to 6 more characters)');
      const list = await context.client().list<AdminKey>('admin/v1/keys', { prefix }, options.limit);
      printList(context, list, options.json, { table: keyTable, none: 'No keys.\n', what: 'keys' });
    });

  keys
    .command('revoke')
    .description('revoke a key by its id: it answers 401 everywhere within a second')
    .argument('<key-id>', 'the key\'s id ("key_…", from "keys find" or "accounts show")')
    .requiredOption('--reason <text>', 'why (kept with the key and in the audit trail)', reason)
    .option('--json', 'print the API\'s JSON')
    .action(async (id: string, options: { reason: string; json?: boolean }) => {
      refuseSecret(id, 'a key\'s id');
      const key = await context.client().send<AdminKey>('POST', `admin/v1/keys/${encodeURIComponent(id)}/revoke`, { reason: options.reason });
      if (options.json) return printJson(context, key);
      context.out(`Key ${terminalSafe(key.id)} revoked.\n${keyTable([key])}`);
    });

  keys
    .command('revoke-secret')
    .description('revoke a leaked key given whole, read from stdin ("-") or --key-file; never from the command line')
    .argument('[source]', '"-" to read the key from stdin')
    .option('--key-file <path>', 'read the key from this file')
    .option('--json', 'print the API\'s JSON')
    .addHelpText('after', '\nThe key is never taken as an argument: arguments show in `ps` and stay in shell history.\nExamples:\n  npm run admin -- keys revoke-secret - < leaked-key.txt\n  npm run admin -- keys revoke-secret --key-file leaked-key.txt')
    .action(async (source: string | undefined, options: { keyFile?: string; json?: boolean }) => {
      const secret = await readSecret({ argument: source, keyFile: options.keyFile }, context.stdin, context.note);
      const report = await context.client().send<SecretReport>('POST', 'admin/v1/keys/revoke-by-secret', { key: secret });
      if (options.json) return printJson(context, report);
      const owner = `account ${report.owner.id} (${terminalSafe(report.owner.email)})`;
      const what = report.alreadyRevoked ? 'was already revoked' : 'revoked';
      context.out(`Key ${terminalSafe(report.key.id)} of ${owner} ${what}.\n${keyTable([report.key])}`);
    });
}

import type { Command } from 'commander';
import type { AccountDetail, AccountSummary } from '../api-types';
import { accountId, DEFAULT_LIST_LIMIT, listLimit, reason } from '../arguments';
import { printJson, printList, type CliContext } from '../context';
import { when } from '../display';
import { CliError } from '../errors';
import { renderFields, renderTable } from '../table';
import { terminalSafe } from '../terminal-text';
import { keyTable } from './keys';

const path = (id: number, action = '') => `admin/v1/accounts/${id}${action}`;

export function accountTable(accounts: readonly AccountSummary[]): string {
  return renderTable(
    ['ID', 'EMAIL', 'STATUS', 'PLAN', 'KEYS', 'REQUESTS THIS MONTH', 'CREATED'],
    accounts.map((a) => [a.id, a.email, a.status, a.plan, a.keyCount, a.requestsThisMonth, when(a.createdAt)]),
  );
}

export function accountFields(a: AccountSummary): string {
  return renderFields([
    ['id', a.id],
    ['email', a.email],
    ['status', a.status],
    ...(a.status === 'suspended'
      ? ([
          ['suspended at', when(a.suspendedAt)],
          ['reason', a.suspensionReason],
        ] as const)
      : []),
    ['plan', a.plan],
    ['keys', a.keyCount],
    ['requests this month', a.requestsThisMonth],
    ['created', when(a.createdAt)],
  ]);
}

/** Built with `parent.command()`, so it inherits the program's output and exit settings. */
export function addAccountsCommand(parent: Command, context: CliContext): void {
  const accounts = parent
    .command('accounts').description('find accounts, suspend, reinstate or delete them, change their plan');
  const show = (account: AccountSummary, json: boolean, headline: string) => {
    if (json) return printJson(context, account);
    context.out(`${headline}\n${accountFields(account)}`);
  };

  accounts
    .command('list')
    .description('list accounts by id (all pages, up to --limit)')
    .option('--email <email>', 'only the account with this email')
    .option('--limit <n>', 'at most this many accounts', listLimit, DEFAULT_LIST_LIMIT)
    .option('--json', 'print the API\'s JSON')
    .action(async (options: { email?: string; limit: number; json?: boolean }) => {
      const list = await context.client().list<AccountSummary>('admin/v1/accounts', { email: options.email }, options.limit);
      printList(context, list, options.json, { table: accountTable, none: 'No accounts.\n', what: 'accounts' });
    });

  accounts
    .command('show')
    .description('one account, with its keys and their usage')
    .argument('<id>', 'the account\'s id', accountId)
    .option('--json', 'print the API\'s JSON')
    .action(async (id: number, options: { json?: boolean }) => {
      const account = await context.client().get<AccountDetail>(path(id));
      if (options.json) return printJson(context, account);
      context.out(accountFields(account));
      context.out(account.keys.length ? `\n${keyTable(account.keys)}` : '\nNo keys.\n');
    });

  accounts
    .command('suspend')
    .description('suspend an account: its keys answer 401 everywhere within a second, its sessions end')
    .argument('<id>', 'the account\'s id', accountId)
    .requiredOption('--reason <text>', 'why (kept in the audit trail)', reason)
    .option('--json', 'print the API\'s JSON')
    .action(async (id: number, options: { reason: string; json?: boolean }) => {
      const account = await context.client().send<AccountSummary>('POST', path(id, '/suspend'), { reason: options.reason });
      show(account, options.json === true, `Account ${id} suspended.`);
    });

  accounts
    .command('reinstate')
    .description('lift a suspension: the keys that were active work again')
    .argument('<id>', 'the account\'s id', accountId)
    .option('--reason <text>', 'why (kept in the audit trail)', reason)
    .option('--json', 'print the API\'s JSON')
    .action(async (id: number, options: { reason?: string; json?: boolean }) => {
      const body = options.reason === undefined ? {} : { reason: options.reason };
      const account = await context.client().send<AccountSummary>('POST', path(id, '/reinstate'), body);
      show(account, options.json === true, `Account ${id} reinstated.`);
    });

  accounts
    .command('delete')
    .description('erase an account, its sessions, keys and usage (the audit trail keeps its id); needs --yes')
    .argument('<id>', 'the account\'s id', accountId)
    .option('--reason <text>', 'why (kept in the audit trail)', reason)
    .option('--yes', 'yes, erase it: this cannot be undone')
    .action(async (id: number, options: { reason?: string; yes?: boolean }) => {
      if (!options.yes) throw new CliError(`deleting erases account ${id}, its keys and usage for good; add --yes to do it.`);
      await context.client().send('DELETE', path(id), options.reason === undefined ? undefined : { reason: options.reason });
      context.out(`Account ${id} deleted.\n`);
    });

  accounts
    .command('plan')
    .description('move an account to another plan (see "plans list")')
    .argument('<id>', 'the account\'s id', accountId)
    .argument('<plan>', 'the plan\'s name')
    .option('--json', 'print the API\'s JSON')
    .action(async (id: number, plan: string, options: { json?: boolean }) => {
      const account = await context.client().send<AccountSummary>('PUT', path(id, '/plan'), { plan });
      show(account, options.json === true, `Account ${id} is on plan ${terminalSafe(account.plan)}.`);
    });
}

import type { Command } from 'commander';
import type { AuditEntry } from '../api-types';
import { accountId, listLimit } from '../arguments';
import { printList, type CliContext } from '../context';
import { details, when } from '../display';
import { renderTable } from '../table';

/** The audit command shows the latest entries unless told otherwise: the trail only grows. */
const DEFAULT_AUDIT_LIMIT = 50;

export function auditTable(entries: readonly AuditEntry[]): string {
  return renderTable(
    ['ID', 'AT', 'ACTOR', 'ACTION', 'TARGET', 'ACCOUNT', 'REASON', 'DETAILS'],
    entries.map((e) => [e.id, when(e.at), e.actor, e.action, `${e.targetType} ${e.targetId}`, e.accountId, e.reason, details(e.details)]),
  );
}

/** Built with `parent.command()`, so it inherits the program's output and exit settings. */
export function addAuditCommand(parent: Command, context: CliContext): void {
  parent
    .command('audit')
    .description('the audit trail, newest first: admin changes and key lifecycle events')
    .option('--account <id>', 'only entries about this account', accountId)
    .option('--limit <n>', 'at most this many entries', listLimit, DEFAULT_AUDIT_LIMIT)
    .option('--json', 'print the API\'s JSON')
    .action(async (options: { account?: number; limit: number; json?: boolean }) => {
      const list = await context.client().list<AuditEntry>('admin/v1/audit', { accountId: options.account }, options.limit);
      printList(context, list, options.json, { table: auditTable, none: 'No audit entries.\n', what: 'entries' });
    });
}

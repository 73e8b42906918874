import type { Command } from 'commander';
import type { Plan } from '../api-types';
import { monthlyQuota, perMinute } from '../arguments';
import { printJson, type CliContext } from '../context';
import { quota, when } from '../display';
import { renderTable } from '../table';
import { terminalSafe } from '../terminal-text';

export function planTable(plans: readonly Plan[]): string {
  return renderTable(
    ['NAME', 'PER MINUTE', 'PER MONTH', 'CREATED', 'UPDATED'],
    plans.map((p) => [p.name, p.requestsPerMinute, quota(p.requestsPerMonth), when(p.createdAt), when(p.updatedAt)]),
  );
}

/** Built with `parent.command()`, so it inherits the program's output and exit settings. */
export function addPlansCommand(parent: Command, context: CliContext): void {
  const plans = parent
    .command('plans').description('list plans, create or change one');

  plans
    .command('list')
    .description('every plan with its limits')
    .option('--json', 'print the API\'s JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await context.client().get<Plan[]>('admin/v1/plans');
      if (options.json) return printJson(context, list);
      context.out(list.length ? planTable(list) : 'No plans.\n');
    });

  plans
    .command('set')
    .description('create a plan or change its limits; every account on it has them within a second')
    .argument('<name>', 'the plan\'s name (lower-case letters, digits, "-" and "_")')
    .requiredOption('--per-minute <n>', 'requests per minute, shared by an account\'s keys in each environment', perMinute)
    .requiredOption('--per-month <n|none>', 'requests per calendar month (UTC) in all environments, or "none"', monthlyQuota)
    .option('--json', 'print the API\'s JSON')
    .action(async (name: string, options: { perMinute: number; perMonth: number | 'none'; json?: boolean }) => {
      const limits = { requestsPerMinute: options.perMinute, requestsPerMonth: options.perMonth === 'none' ? null : options.perMonth };
      const plan = await context.client().send<Plan>('PUT', `admin/v1/plans/${encodeURIComponent(name)}`, limits);
      if (options.json) return printJson(context, plan);
      context.out(`Plan ${terminalSafe(plan.name)} saved.\n${planTable([plan])}`);
    });
}

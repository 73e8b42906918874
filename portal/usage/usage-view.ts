import type { ApiKeyService } from '../../identity/api-key-service';
import { DEFAULT_USAGE_DAYS, type DailyUsageService } from '../../identity/daily-usage-service';
import type { UsagePanelView } from '../pages/usage-panel';

export interface UsageViewDeps {
  dailyUsage: Pick<DailyUsageService, 'forKey' | 'forAccount'>;
  apiKeys: Pick<ApiKeyService, 'list'>;
}

/**
 * What the keys page's usage section shows: the key named by `?usage=` when the account owns it,
 * else the whole account (with a notice when a key was asked for that the account does not own).
 */
export async function loadUsageView(deps: UsageViewDeps, accountId: number, requested: unknown): Promise<UsagePanelView> {
  if (requested !== undefined) {
    const key = typeof requested === 'string' ? (await deps.apiKeys.list(accountId)).find((k) => k.id === requested) : undefined;
    if (key) {
      const subject = { kind: 'key' as const, id: key.id, name: key.name, prefix: key.prefix, environment: key.environment };
      return { subject, days: await deps.dailyUsage.forKey(accountId, key.id, DEFAULT_USAGE_DAYS) };
    }
  }
  const days = await deps.dailyUsage.forAccount(accountId, DEFAULT_USAGE_DAYS);
  return requested === undefined ? { subject: { kind: 'account' }, days } : { subject: { kind: 'account' }, days, notice: 'Your account has no key with that id; here are all your keys.' };
}

import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../bench/support/processes';
import { accountFields, accountTable } from '../cli/commands/accounts';
import { auditTable } from '../cli/commands/audit';
import { keyTable } from '../cli/commands/keys';
import { planTable } from '../cli/commands/plans';
import { ROOT } from './support/child-process';
import { tempDir } from './support/databases';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { adminClient, nextPagePath, type AdminClient } from './support/admin-client';

const OPS_TOKEN = 'ops-token-0123456789abcdefghijklmnop';
/** The gateway's ADMIN_TOKEN, a list: the CLI takes it as is and speaks with the first token, so the audit trail says admin:ops. */
const ADMIN_TOKEN = `ops:${OPS_TOKEN},backup:backup-token-0123456789abcdefghijkl`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The real command, as `npm run admin -- …` runs it: a child process with only ADMIN_URL, ADMIN_TOKEN, PATH and HOME. */
function admin(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/admin.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.stdin ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('the admin CLI against a running gateway', () => {
  let gw: TestGateway;
  let api: AdminClient;
  let env: Record<string, string>;
  const keyDir = tempDir('asg-cli-key-');
  const cli = (args: string[], stdin?: string) => admin(args, { env, stdin });

  beforeAll(async () => {
    gw = await startTestGateway({ database: 'postgres', env: { ADMIN_TOKEN } });
    api = adminClient(gw.adminUrl!, OPS_TOKEN);
    env = { ADMIN_URL: gw.adminUrl!, ADMIN_TOKEN };
  });
  afterAll(async () => {
    await gw?.stop();
    rmSync(keyDir, { recursive: true, force: true });
  });

  const callApi = (key: string) => fetch(`${gw.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });

  test('when --help is asked of the program or a command, then its usage on stdout and exit 0, without ADMIN_TOKEN', async () => {
    const [top, suspend] = await Promise.all([admin(['--help']), admin(['accounts', 'suspend', '--help'])]);
    expect(top).toMatchObject({ code: 0, stderr: '' });
    expect(top.stdout).toMatch(/^Usage: npm run admin -- \[options\] \[command\]\n/);
    for (const command of ['accounts', 'keys', 'plans', 'audit']) expect(top.stdout).toMatch(new RegExp(`\\n {2}${command} `));
    expect(suspend).toMatchObject({ code: 0, stderr: '' });
    expect(suspend.stdout).toContain('Usage: npm run admin -- accounts suspend [options] <id>');
    expect(suspend.stdout).toContain('--reason <text>');
  });

  test('when accounts are listed and one is shown, then the tables hold the API\'s data and --json is the API\'s JSON', async () => {
    const dev = await signUpDeveloper(gw.url);
    await signUpDeveloper(gw.url);
    const listed = (await api.get('/admin/v1/accounts')).body;
    const detail = (await api.get(`/admin/v1/accounts/${dev.accountId}`)).body;
    const [table, json, shown, shownJson] = await Promise.all([
      cli(['accounts', 'list']),
      cli(['accounts', 'list', '--json']),
      cli(['accounts', 'show', String(dev.accountId)]),
      cli(['accounts', 'show', String(dev.accountId), '--json']),
    ]);
    expect(table).toEqual({ code: 0, stdout: accountTable(listed), stderr: '' });
    expect(table.stdout).toMatch(/^ID +EMAIL +STATUS +PLAN +KEYS +REQUESTS THIS MONTH +CREATED\n/);
    expect(table.stdout).toContain(dev.email);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual(listed);
    expect(shown).toEqual({ code: 0, stdout: `${accountFields(detail)}\n${keyTable(detail.keys)}`, stderr: '' });
    expect(detail.keys).toHaveLength(2);
    expect(JSON.parse(shownJson.stdout)).toEqual(detail);
  });

  test('when --limit is below the count, then only that many and a note on stderr that there are more', async () => {
    await signUpDeveloper(gw.url);
    await signUpDeveloper(gw.url);
    const run = await cli(['accounts', 'list', '--json', '--limit', '1']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toHaveLength(1);
    expect(run.stderr).toBe('(the first 1 accounts shown; there are more: raise --limit)\n');
  });

  test('when an account is suspended twice and reinstated, then the second suspension fails with the API\'s Error and exit 1', async () => {
    const dev = await signUpDeveloper(gw.url);
    const suspended = await cli(['accounts', 'suspend', String(dev.accountId), '--reason', 'abuse report 4711']);
    expect(suspended).toMatchObject({ code: 0, stderr: '' });
    expect(suspended.stdout).toMatch(new RegExp(`^Account ${dev.accountId} suspended\\.\\nid +${dev.accountId}\\n`));
    expect(suspended.stdout).toMatch(/\nstatus +suspended\n(.|\n)*\nreason +abuse report 4711\n/);
    expect((await callApi(dev.productionKey)).status).toBe(401);

    const again = await cli(['accounts', 'suspend', String(dev.accountId), '--reason', 'again']);
    expect(again).toEqual({ code: 1, stdout: '', stderr: `error: Account ${dev.accountId} is already suspended. (conflict, HTTP 409)\n` });

    const reinstated = await cli(['accounts', 'reinstate', String(dev.accountId), '--json']);
    expect(reinstated).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(reinstated.stdout)).toMatchObject({ id: dev.accountId, status: 'active', suspendedAt: null, suspensionReason: null });
    expect((await callApi(dev.productionKey)).status).toBe(200);
  });

  test('when a plan is set and an account moved to it, then plans list shows it and the account is on it', async () => {
    const dev = await signUpDeveloper(gw.url);
    const set = await cli(['plans', 'set', 'partner', '--per-minute', '1200', '--per-month', 'none']);
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(set.stdout).toMatch(/^Plan partner saved\.\nNAME +PER MINUTE +PER MONTH +CREATED +UPDATED\npartner +1200 +none +/);
    const changed = await cli(['plans', 'set', 'partner', '--per-minute', '1500', '--per-month', '900000', '--json']);
    expect(JSON.parse(changed.stdout)).toMatchObject({ name: 'partner', requestsPerMinute: 1500, requestsPerMonth: 900000 });

    const plans = (await api.get('/admin/v1/plans')).body;
    const [table, json, moved] = await Promise.all([cli(['plans', 'list']), cli(['plans', 'list', '--json']), cli(['accounts', 'plan', String(dev.accountId), 'partner'])]);
    expect(table).toEqual({ code: 0, stdout: planTable(plans), stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual(plans);
    expect(plans.map((p: { name: string }) => p.name)).toEqual(['default', 'partner']);
    expect(moved).toMatchObject({ code: 0, stderr: '' });
    expect(moved.stdout).toMatch(/^Account \d+ is on plan partner\.\n/);
    expect((await api.get(`/admin/v1/accounts/${dev.accountId}`)).body.plan).toBe('partner');

    const unknown = await cli(['accounts', 'plan', String(dev.accountId), 'platinum']);
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'error: There is no plan named "platinum". (invalid_request, HTTP 400)\n' });
  });

  test('when a key is found by its prefix and revoked by id, then it answers 401', async () => {
    const dev = await signUpDeveloper(gw.url);
    const key = (await api.get(`/admin/v1/accounts/${dev.accountId}`)).body.keys.find((k: { environment: string }) => k.environment === 'production');
    const found = (await api.get(`/admin/v1/keys?prefix=${key.prefix}`)).body;
    const [table, json] = await Promise.all([cli(['keys', 'find', key.prefix]), cli(['keys', 'find', key.prefix, '--json'])]);
    expect(table).toEqual({ code: 0, stdout: keyTable(found), stderr: '' });
    expect(table.stdout).toContain(key.id);
    expect(JSON.parse(json.stdout)).toEqual(found);

    const revoked = await cli(['keys', 'revoke', key.id, '--reason', 'seen in a public repository']);
    expect(revoked).toMatchObject({ code: 0, stderr: '' });
    expect(revoked.stdout).toMatch(new RegExp(`^Key ${key.id} revoked\\.\\nID .*\\n${key.id} +${dev.accountId} +production key +${key.prefix} +production +revoked `));
    expect((await callApi(dev.productionKey)).status).toBe(401);
    expect(await cli(['keys', 'revoke', key.id, '--reason', 'again'])).toEqual({ code: 1, stdout: '', stderr: `error: Key ${key.id} is already revoked. (conflict, HTTP 409)\n` });
  });

  test('when a leaked key is piped to revoke-secret, then it is revoked; again, then it says it already was; from --key-file too', async () => {
    const dev = await signUpDeveloper(gw.url);
    const first = await cli(['keys', 'revoke-secret', '-'], `${dev.stagingKey}\n`);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(new RegExp(`^Key key_\\S+ of account ${dev.accountId} \\(${dev.email.replace(/\./g, '\\.')}\\) revoked\\.\\n`));
    const staging = await fetch(`${gw.url}/staging/v1/pets`, { headers: { authorization: `Bearer ${dev.stagingKey}` } });
    expect(staging.status).toBe(401);

    const again = await cli(['keys', 'revoke-secret', '-', '--json'], dev.stagingKey);
    expect(JSON.parse(again.stdout)).toMatchObject({ owner: { id: dev.accountId, email: dev.email }, alreadyRevoked: true, key: { status: 'revoked' } });

    const file = join(keyDir, 'leaked.txt');
    writeFileSync(file, `${dev.productionKey}\n`, { mode: 0o600 });
    const fromFile = await cli(['keys', 'revoke-secret', '--key-file', file]);
    expect(fromFile).toMatchObject({ code: 0, stderr: '' });
    expect(fromFile.stdout).toMatch(/ revoked\.\n/);
    expect((await callApi(dev.productionKey)).status).toBe(401);
  });

  test('when the key is given on the command line, then it is refused, nothing is revoked, and the key is not printed', async () => {
    const dev = await signUpDeveloper(gw.url);
    const run = await cli(['keys', 'revoke-secret', dev.productionKey]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: the key is not taken from the command line: arguments show in `ps`/);
    expect(run.stderr).not.toContain(dev.productionKey.slice(9));
    expect((await callApi(dev.productionKey)).status).toBe(200);
  });

  test('when the audit trail is read, then the table and --json are the API\'s, each change made by admin:ops', async () => {
    const dev = await signUpDeveloper(gw.url);
    await cli(['accounts', 'suspend', String(dev.accountId), '--reason', 'audit me']);
    const entries = (await api.get(`/admin/v1/audit?accountId=${dev.accountId}`)).body;
    const [table, json] = await Promise.all([cli(['audit', '--account', String(dev.accountId)]), cli(['audit', '--account', String(dev.accountId), '--json'])]);
    expect(table).toEqual({ code: 0, stdout: auditTable(entries), stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual(entries);
    expect(entries[0]).toMatchObject({ actor: 'admin:ops', action: 'account.suspended', reason: 'audit me', accountId: dev.accountId });
  });

  test('when a list spans pages, then --json follows Link rel="next" to the end, 100 at a time', async () => {
    // 120 audit entries more than there are now, made through the API directly (a child per change would take minutes).
    for (let i = 0; i < 120; i++) expect((await api.put(`/admin/v1/plans/bulk-${i}`, { requestsPerMinute: 10 + i, requestsPerMonth: null })).status).toBe(201);
    const all: { id: number }[] = [];
    for (let url = '/admin/v1/audit?limit=100'; ; ) {
      const page = await api.get(url);
      all.push(...page.body);
      if (!page.headers.get('link')) break;
      url = nextPagePath(page.headers.get('link'), url);
    }
    expect(all.length).toBeGreaterThan(120);
    const run = await cli(['audit', '--json', '--limit', '100000']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual(all);
  });

  test('when ADMIN_URL says localhost while the listener binds 127.0.0.1, then the CLI still follows Link rel="next" past the first page', async () => {
    for (let i = 0; i < 105; i++) expect((await api.put(`/admin/v1/plans/via-localhost-${i}`, { requestsPerMinute: 10, requestsPerMonth: null })).status).toBe(201);
    const run = await admin(['audit', '--json', '--limit', '105'], { env: { ADMIN_URL: gw.adminUrl!.replace('127.0.0.1', 'localhost'), ADMIN_TOKEN } });
    expect(run).toMatchObject({ code: 0, stderr: '(the first 105 entries shown; there are more: raise --limit)\n' });
    const entries = JSON.parse(run.stdout) as { action: string; targetId: string }[];
    expect(entries.map((e) => `${e.action} ${e.targetId}`)).toEqual(Array.from({ length: 105 }, (_, i) => `plan.created via-localhost-${104 - i}`));
  });

  test('when an account is deleted, then it needs --yes, and afterwards show fails with the 404', async () => {
    const dev = await signUpDeveloper(gw.url);
    expect((await cli(['accounts', 'delete', String(dev.accountId), '--reason', 'erasure request'])).code).toBe(1);
    expect((await api.get(`/admin/v1/accounts/${dev.accountId}`)).status).toBe(200);
    expect(await cli(['accounts', 'delete', String(dev.accountId), '--reason', 'erasure request', '--yes'])).toEqual({ code: 0, stdout: `Account ${dev.accountId} deleted.\n`, stderr: '' });
    expect(await cli(['accounts', 'show', String(dev.accountId)])).toEqual({ code: 1, stdout: '', stderr: 'error: No account with this id exists. (not_found, HTTP 404)\n' });
  });

  test('when the token is wrong, then exit 1 with the API\'s 401 message', async () => {
    const run = await admin(['accounts', 'list'], { env: { ADMIN_URL: gw.adminUrl!, ADMIN_TOKEN: 'ops:not-the-token-0123456789abcdefghijklm' } });
    expect(run).toEqual({ code: 1, stdout: '', stderr: 'error: This admin token is not valid. (unauthorized, HTTP 401)\n' });
  });

  test('when no gateway listens at ADMIN_URL, then exit 1 naming the URL and that the admin API needs ADMIN_TOKEN on the gateway', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await admin(['plans', 'list'], { env: { ADMIN_URL: url, ADMIN_TOKEN } });
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: cannot reach the admin API at ${url} (connection refused). Check ADMIN_URL, and that the gateway runs with ADMIN_TOKEN set: it serves the admin API only then.\n`,
    });
  });
});

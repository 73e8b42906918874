import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { Command } from 'commander';
import type { CliContext } from './context';
import { buildProgram } from './program';
import { runAdmin } from './run-admin';

const KEY = `asg_prod_${'Zq3'.repeat(14)}x`;

/** A server that answers every request with 500 and counts them: these commands must refuse before any request. */
let server: Server;
let adminUrl = '';
let requests = 0;
beforeAll(async () => {
  server = createServer((_req, res) => {
    requests += 1;
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  adminUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  requests = 0;
});

async function run(args: string[], env: Record<string, string> = { ADMIN_URL: adminUrl, ADMIN_TOKEN: 'ops:t0ken' }) {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(args, { env, stdin: Readable.from([]), stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

/** Every command path in the tree, e.g. ["accounts", "list"]. */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.filter((c) => c.name() !== 'help').flatMap((c) => [[...prefix, c.name()], ...commandPaths(c, [...prefix, c.name()])]);
}

describe('the admin CLI, before it sends anything', () => {
  const paths = commandPaths(buildProgram({} as CliContext));

  test('the tree has every command of issue 23', () => {
    expect(paths.map((p) => p.join(' '))).toEqual([
      'accounts',
      'accounts list',
      'accounts show',
      'accounts suspend',
      'accounts reinstate',
      'accounts delete',
      'accounts plan',
      'keys',
      'keys find',
      'keys revoke',
      'keys revoke-secret',
      'plans',
      'plans list',
      'plans set',
      'audit',
    ]);
  });

  test.each(paths.map((p) => [p.join(' '), p]))('when "%s --help" is run without ADMIN_TOKEN, then its usage on stdout and exit 0', async (name, path) => {
    const { code, stdout, stderr } = await run([...(path as string[]), '--help'], {});
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`Usage: npm run admin -- ${name as string}`);
  });

  test('when the key is given as an argument to revoke-secret, then exit 1, the reason, no request, and the key is not echoed', async () => {
    const { code, stdout, stderr } = await run(['keys', 'revoke-secret', KEY]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^error: the key is not taken from the command line: arguments show in `ps` to every user of this machine and stay in your shell history\./);
    expect(stderr).not.toContain(KEY.slice(9, 20));
    expect(requests).toBe(0);
  });

  test.each([
    ['keys revoke', ['keys', 'revoke', KEY, '--reason', 'leaked']],
    ['keys find', ['keys', 'find', KEY]],
  ])('when a whole key is given to %s, then it is refused without a request and without echoing it', async (_, args) => {
    const { code, stderr } = await run(args);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: that is a whole key, not .*: to revoke a leaked key, pass it to "keys revoke-secret" on stdin or with --key-file/);
    expect(stderr).not.toContain(KEY.slice(9, 20));
    expect(requests).toBe(0);
  });

  test('when commander refuses an option that holds a whole key, then its message shows only the visible prefix', async () => {
    const { code, stderr } = await run(['keys', 'revoke-secret', `--key=${KEY}`]);
    expect(code).toBe(1);
    expect(stderr.split('\n')[0]).toBe(`error: unknown option '--key=${KEY.slice(0, 15)}…(redacted)'`);
    expect(stderr).not.toContain(KEY.slice(15));
    expect(requests).toBe(0);
  });

  test('when delete is asked without --yes, then nothing is sent and it says how to confirm', async () => {
    expect(await run(['accounts', 'delete', '7'])).toEqual({ code: 1, stdout: '', stderr: 'error: deleting erases account 7, its keys and usage for good; add --yes to do it.\n' });
    expect(requests).toBe(0);
  });

  test.each([
    [['accounts', 'show', 'abc'], "error: command-argument value 'abc' is invalid for argument 'id'. An account id must be a whole number of at least 1."],
    [['accounts', 'show', '0'], "error: command-argument value '0' is invalid for argument 'id'. An account id must be a whole number of at least 1."],
    [['accounts', 'suspend', '3'], "error: required option '--reason <text>' not specified"],
    [['accounts', 'suspend', '3', '--reason', '  '], "error: option '--reason <text>' argument '  ' is invalid. A reason must say something."],
    [['accounts', 'list', '--limit', '0'], "error: option '--limit <n>' argument '0' is invalid. --limit must be a whole number of at least 1."],
    [['plans', 'set', 'gold', '--per-minute', '100'], "error: required option '--per-month <n|none>' not specified"],
    [['plans', 'set', 'gold', '--per-minute', '1.5', '--per-month', 'none'], "error: option '--per-minute <n>' argument '1.5' is invalid. --per-minute must be a whole number of at least 1."],
    [['plans', 'set', 'gold', '--per-minute', '10', '--per-month', '0'], "error: option '--per-month <n|none>' argument '0' is invalid. --per-month must be \"none\" or a whole number of at least 1."],
    [['audit', '--account', '-3'], "error: option '--account <id>' argument '-3' is invalid. An account id must be a whole number of at least 1."],
    [['accounts', 'frobnicate'], "error: unknown command 'frobnicate'"],
  ])('when run with %p, then exit 1 and commander names the problem, before any request', async (args, message) => {
    const { code, stdout, stderr } = await run(args);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.split('\n')[0]).toBe(message);
    expect(stderr).toContain('(add --help for usage)');
    expect(requests).toBe(0);
  });

  test('when ADMIN_TOKEN is missing, then exit 1 and it says to export it', async () => {
    expect(await run(['plans', 'list'], { ADMIN_URL: adminUrl })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: ADMIN_TOKEN is not set: export the token the gateway was started with (ADMIN_TOKEN="label:token,…" works as is).\n',
    });
  });

  test('when the API fails without an Error body, then exit 1 and the status on stderr', async () => {
    expect(await run(['plans', 'list'])).toEqual({ code: 1, stdout: '', stderr: 'error: the admin API refused the request without an Error body (HTTP 500)\n' });
    expect(requests).toBe(1);
  });
});

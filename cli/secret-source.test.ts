import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { CliError } from './errors';
import { chooseSecretSource, readSecret, secretIn } from './secret-source';

const KEY = `asg_prod_${'A'.repeat(43)}`;

describe('chooseSecretSource', () => {
  test('when the key itself is given as an argument, then it is refused, saying why and what to do instead', () => {
    expect(() => chooseSecretSource({ argument: KEY })).toThrow(CliError);
    expect(() => chooseSecretSource({ argument: KEY })).toThrow(/not taken from the command line: arguments show in `ps` .* shell history.*"-".*--key-file/);
  });

  test('when the refusal is told, then it does not repeat the key', () => {
    let message = '';
    try {
      chooseSecretSource({ argument: KEY });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).not.toContain(KEY.slice(9));
  });

  test('when any argument other than "-" is given, even with --key-file, then it is refused', () => {
    expect(() => chooseSecretSource({ argument: 'leaked.txt', keyFile: 'leaked.txt' })).toThrow(/not taken from the command line/);
  });

  test('when "-" is given, then stdin; when --key-file, then that file', () => {
    expect(chooseSecretSource({ argument: '-' })).toEqual({ from: 'stdin' });
    expect(chooseSecretSource({ keyFile: '/tmp/k' })).toEqual({ from: 'file', path: '/tmp/k' });
  });

  test('when both or neither are given, then it says to choose one', () => {
    expect(() => chooseSecretSource({ argument: '-', keyFile: '/tmp/k' })).toThrow('read the key from stdin ("-") or from --key-file, not both.');
    expect(() => chooseSecretSource({})).toThrow('say where the key is: "-" to read it from stdin, or --key-file <path>.');
  });
});

describe('secretIn', () => {
  test('when the input is the key and a line break, then the key', () => {
    expect(secretIn(Buffer.from(`${KEY}\n`), 'stdin')).toBe(KEY);
    expect(secretIn(Buffer.from(`  ${KEY}\r\n`), 'stdin')).toBe(KEY);
  });

  test('when the input is empty, holds two words, or is far longer than a key, then it is refused', () => {
    expect(() => secretIn(Buffer.from('\n'), 'stdin')).toThrow('stdin holds no key.');
    expect(() => secretIn(Buffer.from(`${KEY}\n${KEY}\n`), '--key-file')).toThrow('--key-file must hold one key and nothing else.');
    expect(() => secretIn(Buffer.alloc(5000, 'a'), 'stdin')).toThrow('stdin holds more than a key (over 4096 bytes).');
  });
});

describe('readSecret', () => {
  const dir = mkdtempSync(join(tmpdir(), 'asg-cli-secret-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const notes: string[] = [];
  const note = (text: string) => notes.push(text);

  test('when "-" is given, then the key is read from the stream to its end', async () => {
    expect(await readSecret({ argument: '-' }, Readable.from([Buffer.from('asg_prod_'), Buffer.from(`${'A'.repeat(43)}\n`)]), note)).toBe(KEY);
  });

  test('when --key-file names a file, then the key is read from it', async () => {
    const file = join(dir, 'key.txt');
    writeFileSync(file, `${KEY}\n`, { mode: 0o600 });
    expect(await readSecret({ keyFile: file }, Readable.from([]), note)).toBe(KEY);
  });

  test('when --key-file names no file, then a CliError names the path and the reason', async () => {
    await expect(readSecret({ keyFile: join(dir, 'missing.txt') }, Readable.from([]), note)).rejects.toThrow(`cannot read --key-file ${JSON.stringify(join(dir, 'missing.txt'))}: ENOENT.`);
  });

  test('when stdin is a terminal, then it says what to type; when it is a pipe, then nothing', async () => {
    notes.length = 0;
    await readSecret({ argument: '-' }, Readable.from([`${KEY}\n`]), note);
    expect(notes).toEqual([]);
    const terminal = Object.assign(Readable.from([`${KEY}\n`]), { isTTY: true });
    await readSecret({ argument: '-' }, terminal, note);
    expect(notes).toEqual(['Paste the key, then press Enter and Ctrl-D:\n']);
  });
});

import { readFile } from 'node:fs/promises';
import { CliError } from './errors';

/** Far more than a key; a file or stream longer than this is not one. */
const MAX_BYTES = 4096;

export interface SecretSource {
  /** A positional argument: only `-` (stdin) is accepted. */
  argument?: string;
  keyFile?: string;
}

/**
 * Where `keys revoke-secret` reads the leaked key: stdin (`-`) or a file, never the command line,
 * which other users see in `ps` and which the shell keeps in its history.
 */
export function chooseSecretSource({ argument, keyFile }: SecretSource): { from: 'stdin' } | { from: 'file'; path: string } {
  if (argument !== undefined && argument !== '-') {
    throw new CliError(
      'the key is not taken from the command line: arguments show in `ps` to every user of this machine and stay in your shell history. ' +
        'Pipe it in with "-" (keys revoke-secret - < key.txt) or name a file with --key-file <path>, and clear the line from your shell history.',
    );
  }
  if (argument === '-' && keyFile !== undefined) throw new CliError('read the key from stdin ("-") or from --key-file, not both.');
  if (argument === '-') return { from: 'stdin' };
  if (keyFile !== undefined) return { from: 'file', path: keyFile };
  throw new CliError('say where the key is: "-" to read it from stdin, or --key-file <path>.');
}

export async function readSecret(source: SecretSource, stdin: NodeJS.ReadableStream & { isTTY?: boolean }, note: (text: string) => void): Promise<string> {
  const chosen = chooseSecretSource(source);
  let bytes: Buffer;
  if (chosen.from === 'file') {
    try {
      bytes = await readFile(chosen.path);
    } catch (err) {
      throw new CliError(`cannot read --key-file ${JSON.stringify(chosen.path)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}.`, { cause: err });
    }
  } else {
    if (stdin.isTTY) note('Paste the key, then press Enter and Ctrl-D:\n');
    bytes = await readAll(stdin);
  }
  return secretIn(bytes, chosen.from === 'file' ? '--key-file' : 'stdin');
}

/** The one key the input holds, without the line break around it. */
export function secretIn(bytes: Buffer, where: string): string {
  if (bytes.length > MAX_BYTES) throw new CliError(`${where} holds more than a key (over ${MAX_BYTES} bytes).`);
  const text = bytes.toString('utf8').trim();
  if (!text) throw new CliError(`${where} holds no key.`);
  if (/\s/.test(text)) throw new CliError(`${where} must hold one key and nothing else.`);
  return text;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    // Stop reading early: the length check in secretIn refuses it anyway.
    if (size > MAX_BYTES) return Buffer.concat([...chunks, buffer]);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

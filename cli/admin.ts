import { runAdmin } from './run-admin';

// `npm run admin -- … | head` closes stdout early; that is the reader's choice, not a failure.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
});

void runAdmin(process.argv.slice(2), {
  env: process.env,
  stdin: process.stdin,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}).then((code) => {
  process.exitCode = code;
});

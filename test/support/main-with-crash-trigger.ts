/**
 * The real entry point (`npm start`) plus a way to make it fail as a bug would, for tests of its
 * process-level handlers: a line on stdin throws an uncaught exception or leaves a rejection unhandled.
 */
import '../../gateway/main';

process.stdin.setEncoding('utf8');
process.stdin.on('data', (line: string) => {
  const command = line.trim();
  if (command === 'exception') {
    setTimeout(() => {
      throw new Error('uncaught failure with a secret detail');
    });
  } else if (command === 'rejection') {
    void Promise.reject(new Error('unhandled rejection with a secret detail'));
  }
});

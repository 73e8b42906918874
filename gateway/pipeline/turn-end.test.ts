import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { createTurnEnd } from './turn-end';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('turn end', () => {
  test("the turn's reads run before its writes, whatever order they were given in, and only once the turn's I/O is done", async () => {
    const turnEnd = createTurnEnd();
    const ran: string[] = [];
    turnEnd.writes(() => ran.push('write 1'));
    turnEnd.beforeWrites(() => ran.push('read 1'));
    turnEnd.writes(() => ran.push('write 2'));
    turnEnd.beforeWrites(() => ran.push('read 2'));
    expect(ran).toEqual([]);
    await nextTurn();
    expect(ran).toEqual(['read 1', 'read 2', 'write 1', 'write 2']);
  });

  test('work given in a later turn runs in that turn, and work that adds a write during the reads gets it run in the same turn', async () => {
    const turnEnd = createTurnEnd();
    const ran: string[] = [];
    turnEnd.beforeWrites(() => {
      ran.push('read');
      turnEnd.writes(() => ran.push('write added by the read'));
    });
    await nextTurn();
    expect(ran).toEqual(['read', 'write added by the read']);
    turnEnd.writes(() => ran.push('later write'));
    await nextTurn();
    expect(ran).toEqual(['read', 'write added by the read', 'later write']);
  });

  test('a task that throws does not keep the others from running; its error surfaces as an uncaught exception', () => {
    const script = `
      const { createTurnEnd } = require(${JSON.stringify(join(__dirname, 'turn-end.ts'))});
      process.on('uncaughtException', (err) => console.log('uncaught: ' + err.message));
      const turnEnd = createTurnEnd();
      turnEnd.beforeWrites(() => { throw new Error('boom'); });
      turnEnd.beforeWrites(() => console.log('second read ran'));
      turnEnd.writes(() => console.log('write ran'));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { env: { ...process.env, NODE_OPTIONS: '' }, encoding: 'utf8' });
    expect(out.trim().split('\n')).toEqual(['second read ran', 'write ran', 'uncaught: boom']);
  });
});

import { captureLogs } from '../../test/support/captured-logs';
import { servePipeline } from '../../test/support/pipeline-server';
import { until } from '../../test/support/until';
import { pipelineErrorHandler } from './error-handler';
import { composePipeline, type Next, type Step } from './pipeline';

const INTERNAL_ERROR = { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 };
type LogLine = { level: number; msg?: string; requestId?: string; code?: string; method?: string; path?: string; err?: { message?: string; stack?: string } };

/**
 * `first` goes on as the case says; `handOff` stands for a step that hands the request off and
 * answers later (the proxy), so a second `next` from `first` has a response left to fail; `answer`
 * answers 200 at once, so running it means a step was skipped into.
 */
async function serveSteps(first: (next: Next) => void | Promise<void>) {
  const { lines, logger } = captureLogs<LogLine>('info');
  const runs = { handOff: 0, answer: 0 };
  const steps: Step[] = [
    function goesOn(_req, _res, next) {
      return first(next);
    },
    function handOff() {
      runs.handOff++;
    },
    function answer(_req, res) {
      runs.answer++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"reached":"answer"}');
    },
  ];
  const server = await servePipeline({ prefix: '/v1', environment: 'production', run: composePipeline(steps, pipelineErrorHandler(logger)) });
  return { lines, runs, server };
}

describe('composePipeline', () => {
  test('when each step goes on once, then every step runs once, in order, and the last one answers', async () => {
    const order: string[] = [];
    const step =
      (name: string): Step =>
      (_req, _res, next) => {
        order.push(name);
        next();
      };
    const answer: Step = (_req, res) => void res.writeHead(204).end();
    const server = await servePipeline({ prefix: '/v1', environment: 'production', run: composePipeline([step('a'), step('b'), answer], () => order.push('onError')) });
    try {
      expect((await fetch(server.url('/pets'))).status).toBe(204);
      expect(order).toEqual(['a', 'b']);
    } finally {
      await server.close();
    }
  });

  test.each([
    ['twice in a row', (next: Next) => (next(), next()), undefined],
    ['again after an await', async (next: Next) => (next(), await Promise.resolve(), next()), undefined],
    ['on, then with an error', (next: Next) => (next(), next(new Error('second thoughts'))), 'second thoughts'],
  ])(
    'when a step calls next %s, then the request fails with 500 internal_error, one error line names the step, and the step after it runs once',
    async (_case, first, cause) => {
      const { lines, runs, server } = await serveSteps(first);
      try {
        const res = await fetch(server.url('/pets'), { headers: { 'x-request-id': 'twice-1' } });
        expect(res.status).toBe(500);
        expect(await res.json()).toEqual(INTERNAL_ERROR);
        expect(runs).toEqual({ handOff: 1, answer: 0 });
        const errors = lines.filter((l) => l.level >= 50);
        expect(errors).toEqual([
          expect.objectContaining({
            level: 50,
            msg: 'request failed',
            requestId: 'twice-1',
            code: 'internal_error',
            method: 'GET',
            path: '/v1/pets',
            // pino writes an error's causes after its message.
            err: expect.objectContaining({ message: `next() called multiple times by the pipeline step goesOn.${cause ? `: ${cause}` : ''}` }),
          }),
        ]);
        expect(errors[0]!.err!.stack).toContain('next() called multiple times');
        if (cause) expect(errors[0]!.err!.stack).toContain(`caused by: Error: ${cause}`);
      } finally {
        await server.close();
      }
    },
  );

  test('when a step fails with an error, then the request fails with it once and no later step runs', async () => {
    const { lines, runs, server } = await serveSteps((next) => next(new Error('step failure')));
    try {
      const res = await fetch(server.url('/pets'));
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual(INTERNAL_ERROR);
      expect(runs).toEqual({ handOff: 0, answer: 0 });
      expect(lines.filter((l) => l.level >= 50).map((l) => l.err?.message)).toEqual(['step failure']);
    } finally {
      await server.close();
    }
  });

  test('when a step fails with an error and then goes on anyway, then no later step runs, and the second call is logged too', async () => {
    const { lines, runs, server } = await serveSteps((next) => {
      next(new Error('first failure'));
      next();
    });
    try {
      // The first call answered 500; the second finds the response sent and cuts the connection, so the client may see either.
      await fetch(server.url('/pets')).then((res) => res.text()).catch(() => undefined);
      await until('two error lines', () => lines.filter((l) => l.level >= 50).length === 2);
      expect(runs).toEqual({ handOff: 0, answer: 0 });
      expect(lines.filter((l) => l.level >= 50).map((l) => l.err?.message)).toEqual(['first failure', 'next() called multiple times by the pipeline step goesOn.']);
    } finally {
      await server.close();
    }
  });

  test('when a step throws after going on, then the request fails with its error, not as a second next', async () => {
    const { lines, runs, server } = await serveSteps((next) => {
      next();
      throw new Error('thrown after next');
    });
    try {
      const res = await fetch(server.url('/pets'));
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual(INTERNAL_ERROR);
      expect(runs).toEqual({ handOff: 1, answer: 0 });
      expect(lines.filter((l) => l.level >= 50).map((l) => l.err?.message)).toEqual(['thrown after next']);
    } finally {
      await server.close();
    }
  });

  test('when a request with a key in its path fails, then its error line shows the key redacted', async () => {
    const { lines, server } = await serveSteps((next) => next(new Error('step failure')));
    try {
      const key = `asg_stag_${'k'.repeat(43)}`;
      expect((await fetch(server.url(`/pets/${key}?q=${key}`))).status).toBe(500);
      expect(lines.filter((l) => l.level >= 50).map((l) => l.path)).toEqual(['/v1/pets/asg_stag_[redacted]']);
      expect(JSON.stringify(lines)).not.toContain(key);
    } finally {
      await server.close();
    }
  });
});


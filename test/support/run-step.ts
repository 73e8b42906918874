import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { ApiError, type ErrorBody } from '../../lib/api-error';
import { ResponseHeaders } from '../../gateway/http/response-headers';
import type { GatewayRequest, RequestContext, Step } from '../../gateway/pipeline/pipeline';

/** What a step did with a request: how often it went on (`next()`), and the error it failed with, if any. */
export interface StepOutcome {
  next: number;
  /** Thrown, rejected or passed to `next`: the pipeline treats the three alike. */
  error?: unknown;
}

/**
 * A request as the front handler hands it to the steps (production, `/v1`, nothing learnt yet),
 * readable like an IncomingMessage: its body is `body`, or empty.
 */
export function stepRequest(
  options: { method?: string; apiPath?: string; search?: string; headers?: IncomingHttpHeaders; body?: string; ctx?: Partial<RequestContext> } = {},
): GatewayRequest {
  const ctx: RequestContext = {
    requestId: 'req-test-1',
    environment: 'production',
    prefix: '/v1',
    apiPath: options.apiPath ?? '/pets',
    search: options.search ?? '',
    startedAt: performance.now(),
    headers: new ResponseHeaders(),
    sharedFill: false,
    ...options.ctx,
  };
  const stream = Readable.from(options.body === undefined ? [] : [Buffer.from(options.body)], { objectMode: false });
  return Object.assign(stream, { method: options.method ?? 'GET', headers: options.headers ?? {}, ctx }) as unknown as GatewayRequest;
}

/** Runs one step as the pipeline does, waiting for the promise it returns, and says what it did. */
export async function runStep(step: Step, req: GatewayRequest, res: ServerResponse = {} as ServerResponse): Promise<StepOutcome> {
  const outcome: StepOutcome = { next: 0 };
  try {
    await step(req, res, (err?: unknown) => {
      if (err === undefined) outcome.next++;
      else outcome.error = err;
    });
  } catch (thrown) {
    outcome.error = thrown;
  }
  return outcome;
}

/** A refusal as the client meets it: the Error body and the headers that belong to it; and whether the step also went on. */
export function refusalOf(outcome: StepOutcome): { next: number; body: ErrorBody; headers: Readonly<Record<string, string>> } {
  if (!(outcome.error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(outcome.error)}`);
  return { next: outcome.next, body: outcome.error.toBody(), headers: outcome.error.headers };
}

/** The headers the steps set on the request's response so far, by name. */
export function headersSet(req: GatewayRequest): Record<string, string> {
  const { list } = req.ctx.headers;
  const headers: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) headers[String(list[i])] = String(list[i + 1]);
  return headers;
}

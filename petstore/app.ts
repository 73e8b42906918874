import express, { type Request, type Response } from 'express';
import { ApiError } from '../lib/api-error';
import type { Logger } from '../lib/logger';
import { readJsonBody } from '../lib/read-json-body';
import { createErrorReporter } from '../lib/report-error';
import { safeRequestId } from '../lib/request-id';
import type { ApiOperation, OperationTable } from '../openapi/operations';
import { requireGatewayToken } from './gateway-token';
import type { NewPet, PetRepository, PetStatus } from './pet-repository';

type Handler = (ctx: { req: Request; res: Response; query: Record<string, unknown>; params: Record<string, unknown>; body: unknown }) => Promise<void>;

export interface PetStoreDeps {
  pets: PetRepository;
  /** Compiled from the public OpenAPI document: the store validates with the same contract as the gateway. */
  operations: OperationTable;
  /** Set when the store is embedded in a gateway: only requests carrying it are answered. Unset for the standalone store. */
  gatewayToken?: string;
  /** A request that fails with a 5xx is one line here: the client's Error body says nothing of the cause. */
  logger: Pick<Logger, 'error'>;
}

/**
 * The gateway sends its request id along, so the store's line and the gateway's access line match;
 * another caller's id is logged only when the gateway would log it (no key in it).
 */
const describeStoreRequest = (req: Request) => ({ requestId: safeRequestId(req.get('x-request-id')), method: req.method, path: req.path });

/**
 * The embedded pet store: a plain HTTP service with paths relative to its own root
 * (`/pets`, `/messages`). The gateway reaches it over loopback like any other upstream.
 */
export function createPetStoreApp({ pets, operations, gatewayToken, logger }: PetStoreDeps): express.Express {
  const handlers: Record<string, Handler> = {
    async listPets({ res, query }) {
      const limit = query.limit as number;
      const status = query.status as PetStatus | undefined;
      const page = await pets.list({ limit, status, after: query.after as number | undefined });
      if (page.nextAfter !== undefined) {
        const next = new URLSearchParams({ limit: String(limit), ...(status ? { status } : {}), after: String(page.nextAfter) });
        res.setHeader('Link', `</pets?${next}>; rel="next"`);
      }
      res.status(200).json(page.pets);
    },
    async createPet({ res, body }) {
      const pet = await pets.create(body as NewPet);
      res.setHeader('Location', `/pets/${pet.id}`);
      res.status(201).json(pet);
    },
    async getPet({ res, params }) {
      const pet = await pets.get(params.petId as number);
      if (!pet) throw new ApiError('not_found', `Pet ${params.petId} was not found.`);
      res.status(200).json(pet);
    },
    async createMessage({ res, body }) {
      res.status(202).json(await pets.queueMessage((body as { message: string }).message));
    },
    async listOrders() {
      throw new ApiError('not_found', 'Store orders are experimental and not available yet.');
    },
  };

  const report = createErrorReporter({ logger, message: 'pet store request failed', describe: describeStoreRequest });
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  if (gatewayToken !== undefined) app.use(requireGatewayToken(gatewayToken));
  app.use(async function dispatchOperation(req, res) {
    try {
      const url = new URL(req.originalUrl, 'http://store');
      const match = operations.match(req.method, url.pathname);
      if (match.kind === 'not_found') throw new ApiError('not_found', `No operation at ${req.method} ${url.pathname}.`);
      if (match.kind === 'method_not_allowed') {
        throw new ApiError('method_not_allowed', `${req.method} is not allowed on ${url.pathname}.`, { headers: { Allow: match.allow } });
      }
      const op: ApiOperation = match.operation;
      const params = op.parsePathParams(match.rawParams);
      const query = op.parseQuery(url.searchParams);
      let body: unknown;
      if (op.acceptsBody) {
        body = (await readJsonBody(req)).value;
        op.checkBody(body);
      }
      const handler = handlers[op.operationId];
      if (!handler) throw new ApiError('not_found', `${op.operationId} is not implemented.`);
      await handler({ req, res, query, params, body });
    } catch (err) {
      report(err, req, res);
    }
  });
  return app;
}

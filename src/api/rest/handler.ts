/** The types every handler of the REST side shares. */
import type { Exchange } from '../exchange.js';

export type { OperationMeta } from '../exchange.js';

export interface ValidatedRequest {
  params: Record<string, number>;
  query: Record<string, unknown>;
  body: unknown;
}

export type Handler = (x: Exchange, req: ValidatedRequest) => Promise<void>;
export type Handlers = Record<string, Handler>;

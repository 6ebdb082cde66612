/** Request state typed once for every middleware and handler of the REST adapter. */
import type { Middleware, ParameterizedContext } from 'koa';
import type { Operation } from '../contract/openapi.js';
import type { Principal } from '../service/records.js';

export interface OperationMeta {
  operationId: string;
  method: string;
  /** OpenAPI path template, e.g. /pets/{petId}. */
  path: string;
  op: Operation;
  public: boolean;
}

export interface ValidatedRequest {
  params: Record<string, number>;
  query: Record<string, unknown>;
  body: unknown;
}

export interface AppState {
  operation?: OperationMeta;
  principal?: Principal;
  /** The limiter's verdict for this request (set by the rate-limit middleware). */
  rateLimit?: { limit: number; remaining: number; reset: number };
  /** What an idempotent replay of this response returns, when it differs from the body sent. */
  replayBody?: unknown;
}

/** Koa's context with our state and the router's decoded path parameters. */
export interface ApiContextExtras {
  params: Record<string, string>;
}
export type ApiContext = ParameterizedContext<AppState, ApiContextExtras>;
export type ApiMiddleware = Middleware<AppState, ApiContextExtras>;

export type Handler = (ctx: ApiContext, req: ValidatedRequest) => Promise<void>;
export type Handlers = Record<string, Handler>;

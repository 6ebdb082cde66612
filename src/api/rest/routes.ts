/**
 * Routes built from the OpenAPI document: every operation in `schema/openapi.yaml` is routed
 * to the handler named by its operationId, behind the steps its description implies
 * (authentication unless `security: []`, the stability and deprecation headers, request
 * validation, idempotency for POST). A path that exists with another method is 405 with
 * `Allow`; anything else is 404. Operations served by another adapter (`x-adapter`, GraphQL)
 * are left to it.
 */
import { createAjv, operationsOf, type OpenApiDoc } from '../../contract/openapi.js';
import { NotFoundError } from '../../service/errors.js';
import { MethodNotAllowedError } from '../errors.js';
import type { Services } from '../../service/services.js';
import type { Clock } from '../../service/clock.js';
import { replaysRefusal } from '../../service/idempotency.js';
import type { Admit } from '../admission-step.js';
import { deprecationHeaders, sunsetGate } from './deprecation.js';
import { errorResponse } from '../error-map.js';
import { HOST_OPERATIONS } from './handlers/meta.js';
import type { Exchange, OperationMeta, RouteMatch } from '../exchange.js';
import { compileRequestValidator } from './request-validator.js';
import { inexactIds, quotingIds, type SentId } from '../path-ids.js';
import type { Handler, Handlers } from './handler.js';

export interface OperationsOptions {
  doc: OpenApiDoc;
  handlers: Handlers;
  /** Operations a host may leave out (they then answer 404): the server's docs and metrics. */
  optional?: readonly string[];
  services: Services;
  clock: Clock;
  sunset: Date;
  /** Authentication and the limiter, run before every non-public request. */
  admit: Admit;
}

/** A path template of the document with what each of its methods runs. */
interface Template {
  path: string;
  re: RegExp;
  names: string[];
  public: boolean;
  methods: Map<string, (x: Exchange) => Promise<void>>;
  /** The methods to announce in `Allow` (GET implies HEAD). */
  allow: string[];
}

export interface Routes {
  /** Routes the request and runs its operation; unknown paths and methods throw 404 / 405. */
  dispatch(x: Exchange): Promise<void>;
  /** Runs the operation a host's router matched (from `routeTable`), with its decoded path parameters. */
  run(x: Exchange, route: RouteMatch): Promise<void>;
  /** The methods of the contract path that matches `path` (undefined for a path not in it). */
  methodsAt(path: string): string[] | undefined;
}

export function compileRoutes(opts: OperationsOptions): Routes {
  const { doc, handlers, services } = opts;
  const ajv = createAjv(doc, { useDefaults: true });
  const templates: Template[] = [];
  const byId = new Map<string, (x: Exchange) => Promise<void>>();

  for (const { path, method, op } of operationsOf(doc)) {
    const isPublic = Array.isArray(op.security) && op.security.length === 0;
    let t = templates.find((x) => x.path === path);
    if (!t) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      t = { path, re: new RegExp(`^${path.replace(/\{\w+\}/g, '([^/]+)')}/?$`), names, public: isPublic, methods: new Map(), allow: [] };
      templates.push(t);
    }
    t.allow.push(method);
    if (method === 'GET') t.allow.push('HEAD');
    if (op['x-adapter']) continue; // mounted by its own adapter (GraphQL)

    const handler = handlers[op.operationId] ?? (opts.optional?.includes(op.operationId) ? notServedHere(path) : undefined);
    if (!handler) throw new Error(`no handler for operation ${op.operationId}`);
    const meta: OperationMeta = { operationId: op.operationId, method, path, op, public: isPublic };
    const validate = compileRequestValidator(ajv, doc, op);
    const stability = op['x-stability'];
    const deprecation = op.deprecated ? deprecationHeaders(opts.sunset) : undefined;
    const sunset = op.deprecated ? sunsetGate(opts.sunset, opts.clock) : undefined;
    const idempotent = method === 'POST' && !isPublic;

    const run = async (x: Exchange): Promise<void> => {
      x.operation = meta;
      if (stability) x.set('x-api-stability', stability);
      deprecation?.(x);
      if (!isPublic) await opts.admit(x);
      sunset?.();
      const req = await validate(x);
      const run = idempotent ? () => runIdempotent(x, services, req.body, () => handler(x, req)) : () => handler(x, req);
      const inexact = sentIds(x.params, req.params);
      await (inexact ? quotingIds(inexact, run) : run());
    };
    t.methods.set(method, run);
    byId.set(op.operationId, run);
  }

  const match = (path: string): { t: Template; m: RegExpExecArray } | undefined => {
    for (const t of templates) {
      const m = t.re.exec(path);
      if (m) return { t, m };
    }
    return undefined;
  };

  return {
    async dispatch(x) {
      const found = match(x.req.path);
      const method = x.req.method === 'HEAD' ? 'GET' : x.req.method;
      const run = found?.t.methods.get(method);
      if (found && run) {
        found.t.names.forEach((name, i) => (x.params[name] = safeDecode(found.m[i + 1]!)));
        return run(x);
      }
      const refuse = () => {
        if (!found) throw new NotFoundError(`No resource at ${x.req.path}.`);
        throw new MethodNotAllowedError(`${x.req.method} is not allowed here; use ${found.t.allow.join(', ')}.`, found.t.allow);
      };
      // Unknown paths and methods still need a key, so they reveal nothing to strangers.
      if (!found?.t.public) await opts.admit(x);
      refuse();
    },
    run(x, route) {
      const run = byId.get(route.operationId);
      if (!run) throw new Error(`no route for operation ${route.operationId}`);
      x.params = route.params;
      return run(x);
    },
    methodsAt(path) {
      return match(path)?.t.allow;
    },
  };
}

/** One operation of the document as both hosts' routers register it (the Koa router, MSW). */
export interface RouteEntry {
  /** Upper-case. */
  method: string;
  /** The OpenAPI path template, e.g. /pets/{petId}. */
  path: string;
  /** The same path in the routers' syntax, e.g. /pets/:petId. */
  pattern: string;
  operationId: string;
  /** `security: []`: no key needed. */
  public: boolean;
  /** Served by the server alone (its docs page and metrics); the mocks leave it out. */
  hostOnly: boolean;
}

/**
 * The route table: every operation of the document, /graphql and the public documents
 * included, in the document's order. A host registers one route per entry and hands the
 * pipeline the matched operation id and path parameters (`Pipeline`'s `route`), so nothing is
 * matched twice; what its router does not match goes to the pipeline alone (404, 405, preflights).
 */
export function routeTable(doc: OpenApiDoc): RouteEntry[] {
  return operationsOf(doc).map(({ path, method, op }) => ({
    method,
    path,
    pattern: path.replace(/\{(\w+)\}/g, ':$1'),
    operationId: op.operationId,
    public: Array.isArray(op.security) && op.security.length === 0,
    hostOnly: (HOST_OPERATIONS as readonly string[]).includes(op.operationId),
  }));
}

/** The path ids as sent whose number prints otherwise (a path id above 2^53-1), if any. */
function sentIds(texts: Record<string, string>, values: Record<string, number>): SentId[] | undefined {
  let sent: SentId[] | undefined;
  for (const name in values) (sent ??= []).push([texts[name] ?? '', values[name]!]);
  return sent && inexactIds(sent);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function notServedHere(path: string): Handler {
  return async () => {
    throw new NotFoundError(`${path} is served by the Pet Store server only.`);
  };
}

/** Runs a POST under its Idempotency-Key, replaying the first response for a repeat. */
async function runIdempotent(x: Exchange, services: Services, body: unknown, run: () => Promise<void>): Promise<void> {
  const key = x.header('idempotency-key');
  if (!key) return run();
  const request = `REST ${x.req.method} ${x.req.path} ${JSON.stringify(body)}`;
  const { outcome, replayed } = await services.idempotency.run(x.principal!.keyId, key, request, async () => {
    try {
      await run();
      return { outcome: { status: x.status, body: x.replayBody ?? x.body, location: x.headers.location ?? '' }, record: true };
    } catch (err) {
      const res = errorResponse(err);
      if (!replaysRefusal(res.body.code)) throw err;
      return { outcome: { status: res.status, body: res.body, location: '' }, record: true };
    }
  });
  x.status = outcome.status;
  x.body = replayed || outcome.status >= 400 ? outcome.body : x.body;
  if (outcome.location) x.set('location', outcome.location);
  if (replayed) x.set('idempotent-replayed', 'true');
}

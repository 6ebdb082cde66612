/**
 * GraphQL subscriptions over HTTP (CONTRACT section 14). Apollo Server does not execute
 * subscriptions over HTTP, so the mount runs them here with graphql-js's `subscribe` on the same
 * schema and context, and frames the results in one of two transports, chosen by `Accept`:
 *
 * - `text/event-stream`: graphql-sse's "distinct connections" mode (what urql's
 *   `fetchSubscriptions: true` and graphql-sse's own client speak): each result an `event: next`
 *   message, the end an `event: complete` one, written with graphql-sse's own `print`. graphql-sse's
 *   handler is not used as a whole: it recognises only an `Accept` of exactly `text/event-stream`
 *   (urql sends `text/event-stream, multipart/mixed`), it would parse and validate the document
 *   again outside the document cache and its limits, and it reads results into a queue as fast as
 *   they come whatever the client takes, where these frames are pulled as the client reads.
 * - `multipart/mixed; subscriptionSpec="1.0"`: Apollo's multipart HTTP subscription protocol (what
 *   Apollo Client's `HttpLink` speaks): boundary `graphql`, each result a `{"payload": ...}` part,
 *   heartbeats `{}`, a fatal error `{"payload": null, "errors": [...]}`, then the closing delimiter.
 *
 * Every stream holds a lease of the stream registry (the per-plan quota SSE shares, bans,
 * revocations, the maximum age); its heartbeats run on the registry's clock.
 */
import { GraphQLError, subscribe, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { print as sseMessage } from 'graphql-sse';
import Negotiator from 'negotiator';
import { BadRequestError, isCoded } from '../errors.js';
import type { GraphQLContext } from './context.js';
import { formatErrors, mapError } from './format-error.js';

export type Transport = 'sse' | 'multipart';

/** The media types a subscription is answered with, by transport. */
export const SUBSCRIPTION_MEDIA_TYPES: Record<Transport, string> = {
  sse: 'text/event-stream; charset=utf-8',
  multipart: 'multipart/mixed; boundary="graphql"; subscriptionSpec="1.0"',
};

/** graphql-sse's server pings every 12 s; Apollo's router sends a multipart heartbeat every 5 s. */
export const HEARTBEAT_MS: Record<Transport, number> = { sse: 12_000, multipart: 5_000 };

/**
 * The transport a request's `Accept` asks for: the first of `text/event-stream` and
 * `multipart/mixed` it names, by its preference. Wildcards name neither: a client that did not ask
 * for a stream is told to (subscriptionNeedsStream).
 */
export function subscriptionTransport(accept: string): Transport | undefined {
  const lower = accept.toLowerCase();
  if (!lower.includes('text/event-stream') && !lower.includes('multipart/mixed')) return undefined;
  for (const type of new Negotiator({ headers: { accept } }).mediaTypes()) {
    if (type === 'text/event-stream') return 'sse';
    if (type === 'multipart/mixed') return 'multipart';
  }
  return undefined;
}

/**
 * The answer to a subscription whose request asked for no stream (a plain JSON POST or GET):
 * 400 BAD_REQUEST, from the mount and from Apollo alike.
 */
export function subscriptionNeedsStream(): GraphQLError {
  const refusal = new BadRequestError(
    'A subscription is answered as a stream: send it with Accept: text/event-stream (graphql-sse) or multipart/mixed; subscriptionSpec="1.0" (Apollo multipart HTTP).',
  );
  return new GraphQLError(refusal.message, { originalError: refusal, extensions: { code: refusal.code, http: { status: 400 } } });
}

export interface SubscriptionArgs {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName: string | undefined;
  variables: Record<string, unknown>;
  context: GraphQLContext;
}

/** The refusal of a subscription that did not start: its HTTP status and errors, as a query's would be. */
export interface NotStarted {
  status: number;
  errors: GraphQLError[];
}

/**
 * Starts the subscription: its results, or why it did not start (the arguments were refused, the
 * variables did not coerce). graphql-js reports both as a result with errors and no data.
 */
export async function startSubscription(args: SubscriptionArgs): Promise<AsyncGenerator<ExecutionResult> | NotStarted> {
  const result = await subscribe({
    schema: args.schema,
    document: args.document,
    operationName: args.operationName,
    variableValues: args.variables,
    contextValue: args.context,
  });
  if (Symbol.asyncIterator in result) return result;
  // Errors without a path are graphql-js's own about the request (variables that do not coerce):
  // the client's fault, as Apollo words them for a query (BAD_USER_INPUT, VALIDATION_FAILED here).
  const errors = (result.errors ?? [new GraphQLError('The subscription did not start.')]).map((e) =>
    e.path ? e : new GraphQLError(e.message, { nodes: e.nodes, source: e.source, positions: e.positions, extensions: { ...e.extensions, code: 'BAD_USER_INPUT' } }),
  );
  return { status: mapError(errors[0]).status, errors };
}

export interface StreamOptions {
  transport: Transport;
  /** Added to every result (`rateLimit` as of the open, `cost`), as every GraphQL response carries them. */
  extensions: Record<string, unknown>;
  /** Calls back every `ms` of the registry's clock while the stream is open (the lease's `every`). */
  every(ms: number, fn: () => void): void;
  /** Ends the subscription's source (the follow) and gives the stream's slot back; called once, when the body ends. */
  close(): void;
  /** Aborts when the stream must end (the client left, the registry ended it). */
  signal: AbortSignal;
}

/**
 * The response body of a started subscription, as text chunks pulled by the host as the client
 * reads: the opening, one frame per result and per heartbeat, then the closing frame once the
 * results end (the signal aborted: the client left, or the registry ended the stream) or fail.
 * One result is asked for at a time, and only once the frame before it was taken. The waits
 * share one wake-up and no promise outlives its wait (a stream may stay open for an hour).
 */
export async function* subscriptionBody(results: AsyncGenerator<ExecutionResult>, opts: StreamOptions): AsyncGenerator<string> {
  const frames = opts.transport === 'sse' ? SSE_FRAMES : MULTIPART_FRAMES;
  let wake: (() => void) | undefined;
  let beats = 0;
  let stopping = opts.signal.aborted;
  let asked = false;
  let settled: { result: IteratorResult<ExecutionResult> } | { error: unknown } | undefined;
  const onAbort = () => {
    stopping = true;
    wake?.();
  };
  opts.signal.addEventListener('abort', onAbort, { once: true });
  opts.every(HEARTBEAT_MS[opts.transport], () => {
    beats++;
    wake?.();
  });
  try {
    yield frames.open;
    for (;;) {
      if (stopping) break;
      if (beats > 0) {
        beats = 0;
        yield frames.heartbeat;
        continue;
      }
      if (settled) {
        const outcome = settled;
        settled = undefined;
        if ('error' in outcome) {
          yield frames.failure(formatErrors([asGraphQLError(outcome.error)]));
          break;
        }
        if (outcome.result.done) break;
        yield frames.next(withExtensions(outcome.result.value, opts.extensions));
        continue;
      }
      if (!asked) {
        asked = true;
        results.next().then(
          (result) => {
            asked = false;
            settled = { result };
            wake?.();
          },
          (error: unknown) => {
            asked = false;
            settled = { error };
            wake?.();
          },
        );
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
    yield frames.close;
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
    opts.close();
    // The source ends on the aborted signal; its end is not waited for here.
    results.return(undefined).catch(() => undefined);
  }
}

interface Frames {
  open: string;
  next(result: object): string;
  heartbeat: string;
  /** A failure of the stream itself (its source failed): the errors, after which it closes. */
  failure(errors: unknown[]): string;
  close: string;
}

/** graphql-sse's distinct connections: a comment first (some browsers wait for a first byte), then its messages. */
const SSE_FRAMES: Frames = {
  open: ':\n\n',
  next: (result) => sseMessage({ event: 'next', data: result as ExecutionResult }),
  heartbeat: ':\n\n',
  failure: (errors) => sseMessage({ event: 'next', data: { errors } as unknown as ExecutionResult }),
  close: sseMessage({ event: 'complete', data: null }),
};

/**
 * Apollo's multipart subscriptions. Every part is followed at once by the next delimiter, so a
 * client's parser (which waits for the delimiter after a part) reads each as soon as it is sent.
 */
const PART = '\r\ncontent-type: application/json; charset=utf-8\r\n\r\n';
const DELIMITER = '\r\n--graphql';
const MULTIPART_FRAMES: Frames = {
  open: DELIMITER,
  next: (result) => `${PART}${JSON.stringify({ payload: result })}${DELIMITER}`,
  heartbeat: `${PART}{}${DELIMITER}`,
  failure: (errors) => `${PART}${JSON.stringify({ payload: null, errors })}${DELIMITER}`,
  close: '--\r\n',
};

function withExtensions(result: ExecutionResult, extensions: Record<string, unknown>): object {
  return {
    ...(result.errors?.length ? { errors: formatErrors(result.errors) } : {}),
    data: result.data,
    extensions: { ...result.extensions, ...extensions },
  };
}

/** An error as GraphQL reports it, with its code when it has one (else the mapper masks it as INTERNAL). */
export function asGraphQLError(err: unknown): GraphQLError {
  if (err instanceof GraphQLError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new GraphQLError(message, { originalError: err instanceof Error ? err : undefined, extensions: isCoded(err) ? { code: err.code } : {} });
}

/**
 * Chunks as the response body the hosts stream (a web ReadableStream, in Node and in browsers),
 * pulled as the client reads; the hosts cancel it when the client goes away, which `cancel` hears.
 */
export function byteStream(chunks: AsyncGenerator<string>, cancel: () => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.next();
      try {
        if (done) controller.close();
        else controller.enqueue(encoder.encode(value));
      } catch {
        // Cancelled while this chunk was on its way: nobody reads it.
      }
    },
    cancel() {
      cancel();
      chunks.return(undefined).catch(() => undefined);
    },
  });
}

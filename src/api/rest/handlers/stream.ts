/**
 * The live event stream (CONTRACT section 14): GET /events/stream as Server-Sent Events, and
 * POST /events/stream-tokens for EventSource, which cannot send X-API-Key.
 *
 * The stream is a web ReadableStream that both hosts send as it comes (src/api/exchange.ts). It
 * holds a lease of the stream registry (the plan's quota; ended on a ban, a revocation, the
 * maximum age or shutdown) and reads `services.events.follow` one event per pull, so a client that
 * reads slowly holds back only its own reading, never the others'. Frames:
 *
 *   retry: 3000                     first
 *   id: evt_N / event: <type> / data: <event JSON>
 *   event: expired / data: {"oldestSequence":N}   when the resume point is older than retention
 *   : ping                          every 15 seconds (by the injected clock)
 */
import { ValidationError } from '../../../service/errors.js';
import { parseTypeFilter, sequenceOf, toEvent, type TypeFilter } from '../../../service/events.js';
import type { FollowItem } from '../../../service/event-log.js';
import type { Principal } from '../../../service/records.js';
import type { Services } from '../../../service/services.js';
import type { StreamLease } from '../../../service/streams.js';
import { ok } from '../respond.js';
import type { Handlers } from '../handler.js';
import { actor } from './actor.js';

/** How long EventSource waits before reconnecting (the first frame). */
export const RETRY_MS = 3000;
/** A comment this often keeps proxies and clients from taking a quiet stream for a dead one. */
export const PING_MS = 15_000;

const encoder = new TextEncoder();
const RETRY_FRAME = encoder.encode(`retry: ${RETRY_MS}\n\n`);
const PING_FRAME = encoder.encode(': ping\n\n');

export function streamHandlers(s: Services): Handlers {
  return {
    async streamEvents(x, req) {
      const q = req.query as { type?: string; after?: number; 'Last-Event-ID'?: string };
      const types = parseTypeFilter(q.type === undefined ? undefined : [q.type]);
      const who = actor(x);
      // With no resume point the stream starts after the latest event as it stands now, when it
      // opens (not when follow first reads): a write answered before this never shows, one after always does.
      const after = q['Last-Event-ID'] !== undefined ? lastEventId(q['Last-Event-ID']) : (q.after ?? (await s.events.now()));
      // Last: nothing may fail once a lease is held, or its slot would be lost with the error.
      const lease = s.streams.open(who);
      x.status = 200;
      x.type = 'text/event-stream; charset=utf-8';
      x.body = eventStream(s, who, lease, { types, after });
    },

    async createStreamToken(x) {
      const token = await s.streamTokens.issue(actor(x));
      ok(x, token);
      // The token is a bearer secret: a replay tells when it expires, never the token itself.
      x.replayBody = { expiresAt: token.expiresAt };
    },
  };
}

/** `Last-Event-ID`: the id of an event (evt_N); evt_0 would name none, so it is refused too. */
function lastEventId(value: string): number {
  const n = sequenceOf(value.trim());
  if (n === undefined) throw new ValidationError('Last-Event-ID is not an event id.', [{ path: 'Last-Event-ID', message: 'must be an event id such as evt_12' }]);
  return n;
}

/**
 * The body of one stream: `follow` read one item per pull, framed. It starts reading at once (the
 * resume point of a stream "from now" is fixed when it is opened, not when the client first reads),
 * and ends when the lease ends (the client resumes later) or the client leaves (the host cancels
 * the body: the follower stops and the slot is given back).
 */
function eventStream(s: Services, who: Principal, lease: StreamLease, opts: { types: TypeFilter; after?: number }): ReadableStream<Uint8Array> {
  const stop = new AbortController();
  const items = s.events.follow(who, { types: opts.types, after: opts.after, signal: stop.signal });
  let first: Promise<IteratorResult<FollowItem>> | undefined = items.next();
  first.catch(() => undefined); // read (and its failure handled) by the first pull
  let closed = false;
  let close = () => {};
  const finish = () => {
    lease.signal.removeEventListener('abort', ended);
    lease.release();
    stop.abort();
  };
  // The lease ended (a ban, a revocation, the maximum age, shutdown): whatever is queued still goes, then the end.
  const ended = () => {
    finish();
    close();
  };
  lease.signal.addEventListener('abort', ended, { once: true });
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        close = () => {
          if (closed) return;
          closed = true;
          controller.close();
        };
        controller.enqueue(RETRY_FRAME);
        lease.every(PING_MS, () => {
          if (!closed) controller.enqueue(PING_FRAME);
        });
      },
      async pull(controller) {
        let next: IteratorResult<FollowItem>;
        try {
          next = await (first ?? items.next());
        } catch {
          // The store failed under the follower: end the stream; the client resumes where it was.
          next = { done: true, value: undefined };
        }
        first = undefined;
        if (closed) return;
        if (next.done) {
          finish();
          close();
          return;
        }
        controller.enqueue(frameOf(next.value));
      },
      cancel() {
        closed = true;
        finish();
        void items.return(undefined).catch(() => undefined);
      },
    },
    // One frame at a time: the follower reads the next event when the host has taken this one.
    { highWaterMark: 1 },
  );
}

/**
 * Each event's frame is encoded once, however many streams send it: followers read the same
 * records from the event hub's window, so a fan-out to many streams shares one frame.
 */
const frames = new WeakMap<object, Uint8Array>();

function frameOf(item: FollowItem): Uint8Array {
  if (item.kind === 'expired') return encoder.encode(`event: expired\ndata: ${JSON.stringify({ oldestSequence: item.oldest })}\n\n`);
  let frame = frames.get(item.event);
  if (!frame) {
    const e = toEvent(item.event);
    frame = encoder.encode(`id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    frames.set(item.event, frame);
  }
  return frame;
}

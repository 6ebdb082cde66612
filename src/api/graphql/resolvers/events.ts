/**
 * GraphQL resolvers for events (CONTRACT section 14): the `events` subscription over the event
 * log's one live read (`services.events.follow`, which applies the one visibility rule), with the
 * REST feed's one type-filter parser and `after` bounds; and the Event type, whose record fields
 * hold the record as the event saw it (`data.object`), their nested fields resolving live through
 * the other entities' resolvers and this request's loaders.
 */
import { EventsExpiredError } from '../../../service/errors.js';
import { eventId, parseTypeFilter, type EventRecord, type EventType } from '../../../service/events.js';
import type { FollowItem } from '../../../service/event-log.js';
import type { GraphQLContext } from '../context.js';
import type { InputChecker } from '../inputs.js';
import type { Args, EntityResolvers } from './shared.js';

/** The events that remove a record: their `data.object` is `{ id }` alone. */
const REMOVALS: ReadonlySet<EventType> = new Set(['pet.deleted', 'category.deleted', 'order.cancelled']);

/** The record an event of this type holds, by the Event field that shows it. */
const RECORD_FIELD: Record<string, 'pet' | 'category' | 'order' | 'inventory' | undefined> = {
  pet: 'pet',
  category: 'category',
  order: 'order',
  inventory: 'inventory',
};

const recordOf = (field: 'pet' | 'category' | 'order' | 'inventory') => (e: EventRecord) =>
  !REMOVALS.has(e.type) && RECORD_FIELD[e.type.slice(0, e.type.indexOf('.'))] === field ? e.data.object : null;

export function eventResolvers(inputs: InputChecker): EntityResolvers {
  return {
    Subscription: {
      events: {
        /**
         * Checks the arguments before the stream starts, so that a refusal answers as a query's
         * would (VALIDATION_FAILED, EVENTS_EXPIRED), then follows the log until the stream ends.
         */
        subscribe: async (_: unknown, args: Args, ctx: GraphQLContext) => {
          const types = parseTypeFilter(args.types ?? undefined, 'types');
          const { after } = inputs.params<{ after?: number }>('listEvents', 'query', { after: args.after });
          if (after !== undefined) await ctx.services.events.requireKept(after);
          if (!ctx.signal) throw new Error('a subscription runs with the signal of its stream');
          // Without `after`, from the latest event as the subscription starts (not when it is first read).
          const from = after ?? (await ctx.services.events.now());
          return eventsOf(ctx.services.events.follow(ctx.principal, { types, after: from, signal: ctx.signal }), from);
        },
        resolve: (event: EventRecord) => event,
      },
    },
    Event: {
      id: (e: EventRecord) => eventId(e.sequence),
      sequence: (e: EventRecord) => String(e.sequence),
      pet: recordOf('pet'),
      category: recordOf('category'),
      order: recordOf('order'),
      inventory: recordOf('inventory'),
      deletedId: (e: EventRecord) => (REMOVALS.has(e.type) ? String(e.data.object.id) : null),
      previousJson: (e: EventRecord) => (e.data.previous ? JSON.stringify(e.data.previous) : null),
    },
  };
}

/**
 * The followed events. The follow takes its first step at once, so a subscription without `after`
 * starts at the events committed after it was made, not after the client first reads. Retention
 * dropped the resume point between the check above and that step only in a race; the stream then
 * ends with EVENTS_EXPIRED rather than skip events silently.
 */
function eventsOf(items: AsyncGenerator<FollowItem>, after: number): AsyncGenerator<EventRecord> {
  const first = items.next();
  first.catch(() => undefined);
  return (async function* () {
    try {
      for (let step = await first; !step.done; step = await items.next()) {
        const item = step.value;
        if (item.kind === 'expired') throw new EventsExpiredError(after, item.oldest);
        yield item.event;
      }
    } finally {
      await items.return(undefined);
    }
  })();
}

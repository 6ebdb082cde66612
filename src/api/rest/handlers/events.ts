/** REST handlers for the event feed (CONTRACT section 14). */
import { parseTypeFilter } from '../../../service/events.js';
import type { Services } from '../../../service/services.js';
import { pageRequest } from '../paging-params.js';
import { ok, paged } from '../respond.js';
import type { Handlers } from '../handler.js';
import { actor } from './actor.js';

export function eventHandlers(s: Services): Handlers {
  return {
    async listEvents(x, req) {
      const q = req.query as { type?: string; after?: number };
      const types = parseTypeFilter(q.type === undefined ? undefined : [q.type]);
      paged(x, await s.events.list(actor(x), { types, after: q.after }, pageRequest(req)));
    },
    async getEvent(x) {
      ok(x, await s.events.get(actor(x), x.params.eventId ?? ''));
    },
  };
}

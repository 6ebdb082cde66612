/**
 * Live updates: one event stream (`GET /events/stream` through the typed client's `events()`,
 * which sends the key in a header, resumes after the last event on a dropped connection and never
 * delivers one twice) keeps the pets, orders and inventory on screen current. Events apply the
 * records they carry, so an update costs no request and no budget.
 *
 * The stream is opened before the page reads its first data, and the events that arrive
 * meanwhile wait until that data is on screen: nothing that changes after the page connects is
 * missed, and nothing is overwritten by an older read.
 */
import { isApiError, type PetStoreClient, type TypedEvent } from 'petstore-gateway/client';
import type { Inventory } from './inventory.js';
import type { Orders } from './orders.js';
import type { PetList } from './pet-list.js';

export interface LiveViews {
  petList: PetList;
  inventory: Inventory;
  orders: Orders;
}

export interface Live {
  /** Resolves when the stream is open or has stopped, or after `ms` (the page works without it). */
  opened(ms: number): Promise<void>;
  /** The page's data is on screen: apply what arrived meanwhile, then every event as it comes. */
  start(views: LiveViews): void;
}

type State = 'connecting' | 'open' | 'reconnecting' | 'stopped';

export function connectLive(rest: PetStoreClient, indicator: HTMLElement): Live {
  let views: LiveViews | undefined;
  const waiting: TypedEvent[] = [];
  let markOpen: () => void = () => undefined;
  const open = new Promise<void>((resolve) => (markOpen = resolve));

  const show = (state: State, text: string) => {
    indicator.dataset.state = state;
    indicator.textContent = `Live updates: ${text}`;
    document.body.dataset.live = state;
  };

  void (async () => {
    try {
      const stream = rest.events({
        types: ['pet.*', 'order.*', 'inventory.changed'],
        onOpen: () => {
          show('open', 'on (Server-Sent Events)');
          markOpen();
        },
        onDisconnect: ({ delayMs, error }) =>
          show('reconnecting', `reconnecting in ${Math.ceil(delayMs / 1000)} s${error ? ` (${error.status} ${error.code})` : ''}`),
      });
      for await (const event of stream) {
        if (views) apply(views, event);
        else waiting.push(event);
        show('open', `on · last ${event.type} (${event.id})`);
      }
    } catch (err) {
      console.error(err);
      markOpen(); // not open, and it will not be: the page goes on without live updates
      show('stopped', `stopped (${isApiError(err) ? `${err.status} ${err.code}` : String(err)})`);
    }
  })();

  return {
    opened: (ms) => Promise.race([open, new Promise<void>((resolve) => setTimeout(resolve, ms))]),
    start(v) {
      views = v;
      for (const event of waiting.splice(0)) apply(v, event);
    },
  };
}

/** What one event changes on screen. */
function apply({ petList, inventory, orders }: LiveViews, event: TypedEvent): void {
  switch (event.type) {
    case 'pet.updated':
    case 'pet.status_changed':
      petList.apply(event.data.object);
      inventory.applyPet(event.data.object);
      return;
    case 'inventory.changed':
      inventory.apply(event.data.object);
      return;
    case 'order.placed':
    case 'order.updated':
    case 'order.completed':
      orders.apply(event.data.object);
      return;
    case 'order.cancelled':
      orders.cancelled(event.data.object.id);
      return;
    default:
      // pet.created, pet.deleted: the pages shift; the table shows them on its next load.
      return;
  }
}

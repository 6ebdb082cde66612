/** GraphQL resolvers for orders: translate arguments, call the order service, shape the result. */
import { DomainError, type ErrorCode } from '../../../service/errors.js';
import { replaysRefusal } from '../../../service/idempotency.js';
import type { NewOrder } from '../../../service/orders.js';
import type { Order } from '../../../service/records.js';
import { connection } from '../connection.js';
import type { GraphQLContext } from '../context.js';
import { bodyId, pageOf, withId, type InputChecker } from '../inputs.js';
import type { Args, EntityResolvers, Paging } from './shared.js';

type OrdersQuery = Paging & { petId?: number; complete?: boolean };

/** A recorded idempotent failure, replayed with its original code. */
class ReplayedError extends DomainError {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function orderResolvers(inputs: InputChecker): EntityResolvers {
  return {
    Query: {
      order: (_, { id }, { principal, services }) => withId(id, 'id', (n) => services.orders.get(principal, n)),
      orders: async (_, args, { principal, services }) => {
        const q = inputs.params<OrdersQuery>('listOrders', 'query', { petId: args.petId, complete: args.complete, limit: args.first, cursor: args.after });
        const filter = { petId: q.petId, complete: q.complete };
        const list = await services.orders.list(principal, filter, pageOf(q));
        return connection(list, (o) => o.id, () => services.orders.count(principal, filter));
      },
    },
    Mutation: {
      placeOrder: async (_, args, { principal, services }) => {
        const { input } = args;
        const order = inputs.check<NewOrder>('NewOrder', { petId: bodyId(input.petId), quantity: input.quantity, shipDate: input.shipDate }, 'input');
        const idempotencyKey = inputs.params<{ 'Idempotency-Key'?: string }>('placeOrder', 'header', { 'Idempotency-Key': args.idempotencyKey })['Idempotency-Key'];
        if (idempotencyKey === undefined) return services.orders.place(principal, order);
        // Shares the API key's namespace with REST's Idempotency-Key; the fingerprint tells them apart.
        const request = `GRAPHQL placeOrder ${JSON.stringify(order)}`;
        type Outcome = { order?: Order; error?: { code: ErrorCode; message: string } };
        const { outcome } = await services.idempotency.run<Outcome>(principal.keyId, idempotencyKey, request, async () => {
          try {
            return { outcome: { order: await services.orders.place(principal, order) }, record: true };
          } catch (err) {
            if (err instanceof DomainError && replaysRefusal(err.code)) {
              return { outcome: { error: { code: err.code, message: err.message } }, record: true };
            }
            throw err;
          }
        });
        if (outcome.error) throw new ReplayedError(outcome.error.code, outcome.error.message);
        return outcome.order;
      },
      completeOrder: (_, { id }, { principal, services }) => withId(id, 'id', (n) => services.orders.complete(principal, n)),
      cancelOrder: async (_, { id }, { principal, services }) => {
        await withId(id, 'id', (n) => services.orders.cancel(principal, n));
        return id;
      },
    },
    Order: {
      id: (o: Order) => String(o.id),
      petId: (o: Order) => String(o.petId),
      // An order outlives its pet (deleting a pet keeps its orders), so this may be null.
      pet: async (o: Order, _: Args, ctx: GraphQLContext) => ctx.loaders.pet.load(o.petId).then((p) => p ?? null),
    },
  };
}

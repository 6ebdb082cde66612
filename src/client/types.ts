/**
 * Types of the client, all derived from the generated `paths` and `components` of
 * schema/openapi.yaml (src/client/openapi-types.ts): nothing here re-types a record by hand.
 */
import type { components, paths } from './openapi-types.js';

type Schemas = components['schemas'];

// The records and inputs of the REST surface, as the OpenAPI document defines them.
export type Pet = Schemas['Pet'];
export type NewPet = Schemas['NewPet'];
export type PetPatch = Schemas['PetPatch'];
export type PetStatus = Schemas['PetStatus'];
export type Category = Schemas['Category'];
export type NewCategory = Schemas['NewCategory'];
export type Order = Schemas['Order'];
export type NewOrder = Schemas['NewOrder'];
export type OrderPatch = Schemas['OrderPatch'];
export type InventoryItem = Schemas['InventoryItem'];
export type InventoryUpdate = Schemas['InventoryUpdate'];
export type Key = Schemas['Key'];
export type KeyCreated = Schemas['KeyCreated'];
export type NewKey = Schemas['NewKey'];
export type Role = Schemas['Role'];
export type Plan = Schemas['Plan'];
export type Webhook = Schemas['Webhook'];
export type NewWebhook = Schemas['NewWebhook'];
export type WebhookPatch = Schemas['WebhookPatch'];
export type CreatedWebhook = Schemas['CreatedWebhook'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
/** The REST error body `{ code, message, status, details? }`. */
export type ErrorBody = Schemas['Error'];
/** Every error code the contract defines (CONTRACT section 8). */
export type ErrorCode = ErrorBody['code'];
/** One entry of `details`: `{ path, message }`. */
export type ErrorDetail = NonNullable<ErrorBody['details']>[number];

// Machinery that reads an operation's inputs and outputs off `paths`.

export type HttpMethod = 'get' | 'put' | 'post' | 'patch' | 'delete';
export type ApiPath = keyof paths;
/** The methods a path has in the document. */
export type MethodOf<P extends ApiPath> = {
  [M in HttpMethod]: [NonNullable<paths[P][M]>] extends [never] ? never : M;
}[HttpMethod];
/** The generated operation object at a path and method. */
export type OperationAt<P extends ApiPath, M extends MethodOf<P>> = NonNullable<paths[P][M]>;

type ResponsesOf<O> = O extends { responses: infer R } ? R : never;
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;
type SuccessStatus = 200 | 201 | 202 | 204;

/** The body of the operation's success response (`undefined` for 204). */
export type SuccessBody<O> = {
  [S in keyof ResponsesOf<O>]: S extends SuccessStatus ? JsonOf<ResponsesOf<O>[S]> : never;
}[keyof ResponsesOf<O>];
/** The JSON request body of the operation, or never when it takes none. */
export type RequestBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
/** The path parameters of the operation, or never when it has none. */
export type PathParams<O> = O extends { parameters: { path: infer P } } ? P : never;
/** The query parameters of the operation, or never when it has none. */
export type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** The element type of a list operation's success body. */
export type ItemOf<O> = SuccessBody<O> extends (infer T)[] ? T : never;

// Shorthands by path and method, used by the client's method signatures.
export type Body<P extends ApiPath, M extends MethodOf<P>> = RequestBody<OperationAt<P, M>>;
export type Query<P extends ApiPath, M extends MethodOf<P>> = QueryParams<OperationAt<P, M>>;
export type Ok<P extends ApiPath, M extends MethodOf<P>> = SuccessBody<OperationAt<P, M>>;
export type Item<P extends ApiPath, M extends MethodOf<P>> = ItemOf<OperationAt<P, M>>;
export type Param<P extends ApiPath, M extends MethodOf<P>, N extends keyof PathParams<OperationAt<P, M>>> = PathParams<
  OperationAt<P, M>
>[N];

// Events (CONTRACT section 14).

/** The type of an event: what changed. */
export type EventType = Schemas['EventType'];
/** An event as the document defines it (`data.object` untyped); see TypedEvent. */
export type Event = Schemas['Event'];
/** One entry of a type filter: a type, or a family of types such as `order.*`. */
export type EventTypeFilter = EventType | (EventType extends `${infer Family}.${string}` ? `${Family}.*` : never);
/** What `data.object` holds for events of type T: the record after the change, or `{ id }` of a deleted one. */
export type EventObject<T extends EventType> = T extends 'pet.deleted' | 'category.deleted' | 'order.cancelled'
  ? { id: number }
  : T extends `pet.${string}`
    ? Pet
    : T extends `category.${string}`
      ? Category
      : T extends `order.${string}`
        ? Order
        : T extends 'inventory.changed'
          ? InventoryItem
          : Record<string, unknown>;
/**
 * An event whose `data` is typed by its `type`, a union over every type, so checking `type`
 * narrows `data.object` (`inventory.changed`: an InventoryItem). `previous` holds the old values
 * of the fields that changed (`null` where there was none).
 */
export type TypedEvent<T extends EventType = EventType> = T extends EventType
  ? Omit<Event, 'type' | 'data'> & {
      type: T;
      data: { object: EventObject<T>; previous?: { [K in keyof EventObject<T>]?: EventObject<T>[K] | null } };
    }
  : never;

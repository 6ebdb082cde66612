/**
 * The typed REST client of the Pet Store API (CONTRACT section 11). Browser- and Node-safe:
 * nothing here imports from node:.
 *
 *   const api = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'psk_pro_...' });
 *   const pet = await api.createPet({ name: 'Rex', categoryId: 1 });
 *   for await (const p of api.iteratePets({ status: ['available'] })) console.log(p.name);
 *   for await (const e of api.events({ types: ['order.*'], signal })) console.log(e.type, e.data.object);
 */
export { createClient } from './client.js';
export { nextLink } from './wire.js';
export type { ClientOptions, EventsOptions, FetchLike, Page, PetStoreClient, PostOptions, RequestOptions } from './client.js';
export { ApiError, isApiError } from './errors.js';
export type { ApiErrorInit, ClientErrorCode } from './errors.js';
export { decideRetry, fullJitterDelay, parseRetryAfter } from './backoff.js';
export type { Outcome, RetryDecision, RetryPolicy } from './backoff.js';
export type * from './types.js';
export type { components, operations, paths } from './openapi-types.js';

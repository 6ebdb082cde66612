/**
 * What went wrong with a request, in the terms the page shows: a refusal with a time to come back
 * (429 RATE_LIMITED or KEY_BANNED, on either surface), or any other error.
 */
import { ClientError } from 'graphql-request';
import { isApiError, parseRetryAfter } from 'petstore-gateway/client';

export type Problem =
  | { kind: 'refusal'; code: 'RATE_LIMITED' | 'KEY_BANNED'; until: Date | undefined; surface: 'REST' | 'GraphQL' }
  | { kind: 'error'; title: string; detail: string };

export function problemOf(err: unknown): Problem {
  if (isApiError(err)) {
    if (err.code === 'RATE_LIMITED' || err.code === 'KEY_BANNED') {
      // The client computed both from Retry-After when the answer arrived.
      return { kind: 'refusal', code: err.code, until: err.bannedUntil ?? err.retryAt, surface: 'REST' };
    }
    if (err.code === 'NETWORK_ERROR') {
      return {
        kind: 'error',
        title: 'Network error',
        detail: `${err.method} ${err.url} got no answer. Is the server running, and does its PETSTORE_CORS_ORIGINS allow ${location.origin}?`,
      };
    }
    const details = (err.details ?? []).map((d) => `${d.path}: ${d.message}`).join('; ');
    return { kind: 'error', title: `${err.status} ${err.code}`, detail: details ? `${err.message} (${details})` : err.message };
  }
  if (err instanceof ClientError) {
    const { status, headers } = err.response;
    const first = err.response.errors?.[0];
    const code = String((first?.extensions as { code?: unknown } | undefined)?.code ?? `HTTP ${status}`);
    if (code === 'RATE_LIMITED' || code === 'KEY_BANNED') {
      const ms = parseRetryAfter(headers.get('retry-after'), Date.now());
      return { kind: 'refusal', code, until: ms === undefined ? undefined : new Date(Date.now() + ms), surface: 'GraphQL' };
    }
    return { kind: 'error', title: `GraphQL ${code}`, detail: first?.message ?? `HTTP ${status}` };
  }
  return { kind: 'error', title: 'Unexpected error', detail: err instanceof Error ? err.message : String(err) };
}

/**
 * What webhooks need of the network, injected by the host (CONTRACT section 14): the server's
 * sender posts over HTTP with the SSRF checks at every connection (src/hosts/node/webhook-sender.ts);
 * the mocks hand each signed request to `onWebhook` and never touch the network.
 */
import type { DeliveryError } from './webhook-records.js';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  /** The exact bytes signed and sent (JSON text). */
  body: string;
}

/** The receiver's answer (its body is never kept), or why there was none. */
export type WebhookOutcome = { status: number; retryAfter?: string } | { error: DeliveryError };

export interface WebhookNetwork {
  /**
   * Why an https URL (already checked for scheme and credentials, its host not on the allow list)
   * may not be registered: its host is, or resolves to, a loopback, private, link-local,
   * unique-local, CGNAT, multicast or unspecified address. Undefined when it may.
   */
  refuse(url: URL): Promise<string | undefined>;
  /** One attempt: POST, 10 s timeout, no redirect followed. Never throws. */
  send(request: WebhookRequest): Promise<WebhookOutcome>;
}

/** Whether a URL's host is on PETSTORE_WEBHOOK_ALLOW_HOSTS (compared without brackets or case). */
export function isAllowedHost(url: URL, allowHosts: readonly string[]): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return allowHosts.some((h) => h.replace(/^\[|\]$/g, '').toLowerCase() === host);
}

/** Host names that are loopback by definition (RFC 6761), whatever a resolver says. */
export function isLocalhostName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

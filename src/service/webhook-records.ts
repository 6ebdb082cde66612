/**
 * The records of webhooks (CONTRACT section 14) as the store keeps them: endpoints, and one
 * delivery per event (or ping) and endpoint with the log of its attempts.
 */
import type { Event } from './events.js';

export const WEBHOOK_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Why an attempt failed without an HTTP status (section 14). */
export const DELIVERY_ERRORS = ['timeout', 'dns', 'refused', 'tls', 'blocked', 'redirect'] as const;
export type DeliveryError = (typeof DELIVERY_ERRORS)[number];

/** Why an endpoint is disabled: its owner (or an admin) said so, the receiver answered 410, or every attempt failed for 72 hours. */
export type DisabledReason = 'manual' | 'gone' | 'failing';

export interface WebhookEndpointRecord {
  id: number;
  /** The key that created it (the env admin: 0); its role at delivery time decides what it receives. */
  ownerKeyId: number;
  url: string;
  /** The type filter as given (`order.*`, `pet.created`); parsed with parseTypeFilter. */
  types: string[];
  description?: string;
  status: WebhookStatus;
  disabledReason?: DisabledReason;
  /** `whsec_<base64>`: the signing secret, shown once to its owner. */
  secret: string;
  /** ISO 8601. */
  createdAt: string;
  updatedAt?: string;
  /** Only events with a higher sequence are delivered (the log's latest when it was created or last enabled). */
  afterSequence: number;
  /** Epoch ms of the first failed attempt since the last success (undefined: the last attempt succeeded, or none yet). */
  failingSince?: number;
}

/** One attempt: an HTTP status, or an error class when no status came back. */
export interface DeliveryAttempt {
  /** ISO 8601 of the attempt's start. */
  at: string;
  status?: number;
  error?: DeliveryError;
  durationMs: number;
}

export interface WebhookDeliveryRecord {
  id: number;
  endpointId: number;
  /** The body sent, as an event (a ping is a `webhook.ping` event not kept in the feed). */
  event: Event;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  /** Epoch ms at which the next attempt is due (pending deliveries only). */
  nextAttemptAt?: number;
  /** ISO 8601. */
  createdAt: string;
  /** Epoch ms of the first attempt's due time: at most 12 attempts within 72 hours of it. */
  firstDueAt: number;
}

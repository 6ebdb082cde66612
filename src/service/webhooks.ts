/**
 * Webhook endpoints and their deliveries (CONTRACT section 14): the REST API's service. Every
 * operation is keyed; a customer and a staff key manage their own endpoints, an admin every one
 * (another key's endpoint is NOT_FOUND); a key owns at most 10. The signing secret is returned
 * once, on creation. A URL must be https without credentials (http too for hosts on
 * PETSTORE_WEBHOOK_ALLOW_HOSTS), and its host may not be or resolve to a private address
 * (WEBHOOK_URL_FORBIDDEN). Deliveries are made by the WebhookEngine (webhook-engine.ts).
 */
import { NotFoundError, ValidationError, WebhookUrlForbiddenError } from './errors.js';
import { parseTypeFilter } from './events.js';
import { pageOf, type Page, type PageRequest } from './paging.js';
import type { Principal } from './records.js';
import type { Clock } from './clock.js';
import type { Store } from './store-port.js';
import { isAllowedHost, isLocalhostName, type WebhookNetwork } from './webhook-network.js';
import type { DeliveryAttempt, DeliveryError, DeliveryStatus, WebhookDeliveryRecord, WebhookEndpointRecord, WebhookStatus } from './webhook-records.js';
import { newWebhookSecret } from './webhook-signing.js';

export const MAX_WEBHOOKS_PER_KEY = 10;
export const PING_TYPE = 'webhook.ping';

export interface NewWebhook {
  url: string;
  types: string[];
  description?: string;
}

export interface WebhookPatch {
  url?: string;
  types?: string[];
  /** null removes it. */
  description?: string | null;
  status?: WebhookStatus;
}

/** An endpoint as the API shows it (never its secret, but on creation). */
export interface Webhook {
  id: number;
  url: string;
  types: string[];
  description?: string;
  status: WebhookStatus;
  disabledReason?: string;
  ownerKeyId: number;
  createdAt: string;
  updatedAt?: string;
}

export interface CreatedWebhook extends Webhook {
  secret: string;
}

export interface DeliveryView {
  id: number;
  webhookId: number;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  attempts: { at: string; status?: number; error?: DeliveryError; durationMs: number }[];
  nextAttemptAt?: string;
  createdAt: string;
}

export function toWebhook(r: WebhookEndpointRecord): Webhook {
  const w: Webhook = { id: r.id, url: r.url, types: r.types, status: r.status, ownerKeyId: r.ownerKeyId, createdAt: r.createdAt };
  if (r.description !== undefined) w.description = r.description;
  if (r.disabledReason !== undefined) w.disabledReason = r.disabledReason;
  if (r.updatedAt !== undefined) w.updatedAt = r.updatedAt;
  return w;
}

export function toDelivery(r: WebhookDeliveryRecord): DeliveryView {
  const d: DeliveryView = {
    id: r.id,
    webhookId: r.endpointId,
    eventId: r.event.id,
    eventType: r.event.type,
    status: r.status,
    attemptCount: r.attempts.length,
    attempts: r.attempts.map(attemptView),
    createdAt: r.createdAt,
  };
  if (r.status === 'pending' && r.nextAttemptAt !== undefined) d.nextAttemptAt = new Date(r.nextAttemptAt).toISOString();
  return d;
}

function attemptView(a: DeliveryAttempt): DeliveryView['attempts'][number] {
  const v: DeliveryView['attempts'][number] = { at: a.at, durationMs: a.durationMs };
  if (a.status !== undefined) v.status = a.status;
  if (a.error !== undefined) v.error = a.error;
  return v;
}

export interface WebhookServiceOptions {
  network: WebhookNetwork;
  /** PETSTORE_WEBHOOK_ALLOW_HOSTS. */
  allowHosts?: readonly string[];
}

export class WebhookService {
  private readonly allowHosts: readonly string[];

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** The delivery engine: told when a delivery is due now, and when an endpoint starts listening. */
    private readonly engine: { wake(): void; endpointsChanged(): void },
    private readonly opts: WebhookServiceOptions,
  ) {
    this.allowHosts = opts.allowHosts ?? [];
  }

  async create(actor: Principal, input: NewWebhook): Promise<CreatedWebhook> {
    const types = checkTypes(input.types);
    const url = await this.checkUrl(input.url);
    const now = this.iso();
    const secret = newWebhookSecret();
    const { latest } = await this.store.eventWindow();
    const rec = await this.store.transaction(async (tx) => {
      if ((await tx.countWebhooks(actor.keyId)) >= MAX_WEBHOOKS_PER_KEY) {
        throw new ValidationError(`A key may have at most ${MAX_WEBHOOKS_PER_KEY} webhook endpoints; delete one first.`, [
          { path: '/url', message: `this key already has ${MAX_WEBHOOKS_PER_KEY} webhook endpoints` },
        ]);
      }
      const r: WebhookEndpointRecord = {
        id: await tx.nextId('webhooks'),
        ownerKeyId: actor.keyId,
        url,
        types,
        status: 'enabled',
        secret,
        createdAt: now,
        afterSequence: latest,
      };
      if (input.description !== undefined) r.description = input.description;
      await tx.putWebhook(r);
      return r;
    });
    this.engine.endpointsChanged();
    return { ...toWebhook(rec), secret };
  }

  list(actor: Principal, page: PageRequest): Promise<Page<Webhook>> {
    const ownerKeyId = actor.role === 'admin' ? undefined : actor.keyId;
    return pageOf(page, (after, limit) => this.store.listWebhooks({ after, limit, ownerKeyId }), toWebhook, (w) => w.id);
  }

  async get(actor: Principal, id: number): Promise<Webhook> {
    return toWebhook(await this.own(actor, id));
  }

  async update(actor: Principal, id: number, patch: WebhookPatch): Promise<Webhook> {
    await this.own(actor, id);
    const types = patch.types === undefined ? undefined : checkTypes(patch.types);
    const url = patch.url === undefined ? undefined : await this.checkUrl(patch.url);
    const { latest } = await this.store.eventWindow();
    const rec = await this.store.transaction(async (tx) => {
      const cur = await tx.getWebhook(id);
      if (!cur || !mayManage(actor, cur)) throw notFound(id);
      const next: WebhookEndpointRecord = { ...cur, updatedAt: this.iso() };
      if (url !== undefined) next.url = url;
      if (types !== undefined) next.types = types;
      if (patch.description === null) delete next.description;
      else if (patch.description !== undefined) next.description = patch.description;
      if (patch.status === 'enabled' && cur.status === 'disabled') {
        // Enabled again, it receives the events from now on, not those of the time it was disabled.
        next.status = 'enabled';
        next.afterSequence = Math.max(cur.afterSequence, latest);
        delete next.disabledReason;
        delete next.failingSince;
      } else if (patch.status === 'disabled' && cur.status === 'enabled') {
        next.status = 'disabled';
        next.disabledReason = 'manual';
      }
      await tx.putWebhook(next);
      return next;
    });
    if (rec.status === 'enabled') this.engine.endpointsChanged();
    return toWebhook(rec);
  }

  async delete(actor: Principal, id: number): Promise<void> {
    await this.store.transaction(async (tx) => {
      const cur = await tx.getWebhook(id);
      if (!cur || !mayManage(actor, cur)) throw notFound(id);
      await tx.deleteWebhook(id);
    });
  }

  /** A `webhook.ping` event (not kept in the feed), delivered and logged like any other. */
  async ping(actor: Principal, id: number): Promise<DeliveryView> {
    const ep = await this.own(actor, id);
    const { latest } = await this.store.eventWindow();
    const rec = await this.enqueue(ep.id, (deliveryId) => ({
      id: `evt_ping_${deliveryId}`,
      type: PING_TYPE,
      sequence: latest,
      createdAt: this.iso(),
      data: { object: toWebhook(ep) as unknown as Record<string, unknown> },
    }));
    return toDelivery(rec);
  }

  async listDeliveries(actor: Principal, id: number, status: DeliveryStatus | undefined, page: PageRequest): Promise<Page<DeliveryView>> {
    await this.own(actor, id);
    return pageOf(page, (after, limit) => this.store.listWebhookDeliveries({ endpointId: id, status, after, limit }), toDelivery, (d) => d.id);
  }

  /** Sends a delivery's event again, as a new delivery (the same event id, so receivers recognise it). */
  async redeliver(actor: Principal, id: number, deliveryId: number): Promise<DeliveryView> {
    await this.own(actor, id);
    const old = await this.store.getWebhookDelivery(deliveryId);
    if (!old || old.endpointId !== id) throw new NotFoundError(`No delivery with id ${deliveryId} for webhook ${id}.`);
    return toDelivery(await this.enqueue(id, () => old.event));
  }

  private async enqueue(endpointId: number, event: (deliveryId: number) => WebhookDeliveryRecord['event']): Promise<WebhookDeliveryRecord> {
    const now = this.clock.now();
    const rec = await this.store.transaction(async (tx) => {
      if (!(await tx.getWebhook(endpointId))) throw notFound(endpointId);
      const deliveryId = await tx.nextId('deliveries');
      const r: WebhookDeliveryRecord = {
        id: deliveryId,
        endpointId,
        event: event(deliveryId),
        status: 'pending',
        attempts: [],
        nextAttemptAt: now,
        createdAt: new Date(now).toISOString(),
        firstDueAt: now,
      };
      await tx.putWebhookDelivery(r);
      return r;
    });
    this.engine.wake();
    return rec;
  }

  /** The endpoint, if the actor may manage it; else NOT_FOUND (another key's endpoint is not revealed). */
  private async own(actor: Principal, id: number): Promise<WebhookEndpointRecord> {
    const ep = await this.store.getWebhook(id);
    if (!ep || !mayManage(actor, ep)) throw notFound(id);
    return ep;
  }

  /** The URL as it will be called, or WEBHOOK_URL_FORBIDDEN. */
  private async checkUrl(text: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new ValidationError('The url is not an absolute URL.', [{ path: '/url', message: 'must be an absolute https URL' }]);
    }
    const allowed = isAllowedHost(url, this.allowHosts);
    if (url.protocol !== 'https:' && !(allowed && url.protocol === 'http:')) throw forbidden('must use https');
    if (url.username || url.password) throw forbidden('may not carry credentials');
    if (!allowed) {
      if (isLocalhostName(url.hostname)) throw forbidden(`names a loopback host (${url.hostname})`);
      const reason = await this.opts.network.refuse(url);
      if (reason) throw forbidden(reason);
    }
    return url.href;
  }

  private iso(): string {
    return new Date(this.clock.now()).toISOString();
  }
}

function mayManage(actor: Principal, ep: WebhookEndpointRecord): boolean {
  return actor.role === 'admin' || ep.ownerKeyId === actor.keyId;
}

function notFound(id: number): NotFoundError {
  return new NotFoundError(`No webhook with id ${id}.`);
}

function forbidden(why: string): WebhookUrlForbiddenError {
  return new WebhookUrlForbiddenError(`The webhook URL ${why}.`, [{ path: '/url', message: why }]);
}

/** The type filter as given, checked (unknown types are VALIDATION_FAILED). */
function checkTypes(types: string[]): string[] {
  const list = types.map((t) => t.trim()).filter((t) => t !== '');
  if (list.length === 0) throw new ValidationError('Name at least one event type.', [{ path: '/types', message: 'must name at least one event type' }]);
  parseTypeFilter(list, '/types');
  return [...new Set(list)];
}

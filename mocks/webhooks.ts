/**
 * The mocks' webhook network (CONTRACT sections 11 and 14): deliveries never touch the network.
 * Each is signed as the server signs it and handed to `onWebhook` as a fetch Request; its Response
 * is the receiver's answer (a 3xx is the failure `redirect`, a throw `refused`, no answer within
 * 10 s `timeout`). Registration refuses what the server refuses that can be told without DNS: IP
 * addresses outside public unicast and `localhost` names (the one rule of src/limits/client-address.ts).
 */
import { forbiddenAddressRange } from '../src/limits/client-address.js';
import type { WebhookNetwork, WebhookOutcome } from '../src/service/webhook-network.js';

export type OnWebhook = (request: Request) => Response | Promise<Response>;

const TIMEOUT_MS = 10_000;

export function mockWebhookNetwork(onWebhook: OnWebhook | undefined): WebhookNetwork {
  return {
    async refuse(url) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const range = forbiddenAddressRange(host);
      return range === undefined || range === 'invalid' ? undefined : `names a ${range} address (${host})`;
    },
    async send(req): Promise<WebhookOutcome> {
      // Without a receiver the delivery has nowhere to go, as a connection nobody accepts.
      if (!onWebhook) return { error: 'refused' };
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<WebhookOutcome>((resolve) => {
        timer = setTimeout(() => resolve({ error: 'timeout' }), TIMEOUT_MS);
      });
      const answer = (async (): Promise<WebhookOutcome> => {
        try {
          const res = await onWebhook(new Request(req.url, { method: 'POST', headers: req.headers, body: req.body }));
          if (res.status >= 300 && res.status < 400) return { error: 'redirect' };
          const retryAfter = res.headers.get('retry-after');
          return retryAfter === null ? { status: res.status } : { status: res.status, retryAfter };
        } catch {
          return { error: 'refused' };
        }
      })();
      try {
        return await Promise.race([answer, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

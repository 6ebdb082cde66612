/**
 * The server's webhook network (CONTRACT section 14): node:http(s) requests, because Node's fetch
 * takes no agent and no lookup. Each delivery is one POST (on a kept-alive connection to the same
 * host and port when one is free), a 10 s deadline for the answer's head, no redirect followed (a
 * 3xx is the failure `redirect`), and the receiver's body drained unread (at most 64 kB, else the
 * connection is closed).
 *
 * No SSRF: a host that is, or resolves to, an address outside public unicast (ipaddr.js's ranges:
 * loopback, private, link-local, unique-local, CGNAT, multicast, unspecified and the other
 * special-purpose ones) is refused at registration (`refuse`) and again at every connection: the
 * request's own DNS lookup checks every address it returns, so the address connected to is always
 * one that was checked and a name that rebinds to a private address fails as `blocked`. Hosts on
 * PETSTORE_WEBHOOK_ALLOW_HOSTS (test receivers) skip the address checks and may use http.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { forbiddenAddressRange } from '../../limits/client-address.js';
import { isAllowedHost, isLocalhostName, type WebhookNetwork, type WebhookOutcome, type WebhookRequest } from '../../service/webhook-network.js';
import type { DeliveryError } from '../../service/webhook-records.js';

export const WEBHOOK_TIMEOUT_MS = 10_000;
/** The most of a receiver's body drained to keep its connection; more closes it. */
const MAX_DRAIN_BYTES = 64 * 1024;
/** Connections per receiver host and port, and how long an idle one stays open. */
const SOCKETS_PER_HOST = 8;
const IDLE_SOCKET_MS = 15_000;
/** How long a name may take to resolve at registration. */
const RESOLVE_TIMEOUT_MS = 5_000;

export interface WebhookSenderOptions {
  /** PETSTORE_WEBHOOK_ALLOW_HOSTS. */
  allowHosts?: readonly string[];
  /** The deadline of one attempt (default 10 s; tests shorten it). */
  timeoutMs?: number;
  /** The resolver (default node:dns lookup; tests make a name rebind). */
  lookup?: typeof dnsLookup;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

class BlockedAddressError extends Error {
  readonly code = 'EBLOCKED';
}

export function createWebhookSender(opts: WebhookSenderOptions = {}): WebhookNetwork {
  const allowHosts = opts.allowHosts ?? [];
  const timeoutMs = opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const resolve = opts.lookup ?? dnsLookup;
  // One pool per scheme. A connection is made with the lookup of its request, and a host is
  // allowed or not for the sender's whole life, so a pooled connection is always one whose
  // address was checked when it was made.
  const agentOptions = { keepAlive: true, maxSockets: SOCKETS_PER_HOST, maxFreeSockets: SOCKETS_PER_HOST, timeout: IDLE_SOCKET_MS };
  const agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };

  /** A lookup for http(s).request that answers only public addresses, every one checked. */
  const guardedLookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as unknown as LookupAddress[];
      const bad = list.find((a) => forbiddenAddressRange(a.address) !== undefined);
      if (bad || list.length === 0) return callback(new BlockedAddressError(`${hostname} resolves to ${bad?.address ?? 'nothing'}`), []);
      if (options.all) callback(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };

  return {
    async refuse(url: URL): Promise<string | undefined> {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const literal = forbiddenAddressRange(host);
      if (literal !== 'invalid') return literal === undefined ? undefined : `names a ${literal} address (${host})`;
      let addresses: LookupAddress[];
      try {
        addresses = await withTimeout(
          new Promise<LookupAddress[]>((ok, fail) => resolve(host, { all: true }, (err, a) => (err ? fail(err) : ok(a as unknown as LookupAddress[])))),
          RESOLVE_TIMEOUT_MS,
        );
      } catch {
        // A name that does not resolve now names no private address now; each attempt resolves it again.
        return undefined;
      }
      for (const a of addresses) {
        const range = forbiddenAddressRange(a.address);
        if (range !== undefined) return `resolves to a ${range} address (${host} is ${a.address})`;
      }
      return undefined;
    },

    send(req: WebhookRequest): Promise<WebhookOutcome> {
      let url: URL;
      try {
        url = new URL(req.url);
      } catch {
        return Promise.resolve({ error: 'refused' });
      }
      const allowed = isAllowedHost(url, allowHosts);
      if (!allowed) {
        const host = url.hostname.replace(/^\[|\]$/g, '');
        const literal = forbiddenAddressRange(host);
        if (url.protocol !== 'https:' || url.username || url.password || isLocalhostName(host) || (literal !== undefined && literal !== 'invalid')) {
          return Promise.resolve({ error: 'blocked' });
        }
      }
      return post(url, req, allowed ? undefined : guardedLookup, timeoutMs, url.protocol === 'https:' ? agents.https : agents.http);
    },
  };
}

function post(url: URL, req: WebhookRequest, lookup: RequestOptions['lookup'], timeoutMs: number, agent: HttpAgent): Promise<WebhookOutcome> {
  return new Promise<WebhookOutcome>((settle) => {
    let done = false;
    let request: ClientRequest | undefined;
    /** Settles once; without an answer (`keep` false) the request and its connection go. */
    const finish = (o: WebhookOutcome, keep = false) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      settle(o);
      if (!keep) request?.destroy();
    };
    const deadline = setTimeout(() => finish({ error: 'timeout' }), timeoutMs);
    const body = Buffer.from(req.body, 'utf8');
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    try {
      request = send(
        url,
        {
          method: 'POST',
          agent,
          lookup,
          headers: { ...req.headers, 'content-length': String(body.length), 'user-agent': 'petstore-webhooks/1' },
        },
        (res: IncomingMessage) => {
          const status = res.statusCode ?? 0;
          const retryAfter = res.headers['retry-after'];
          drain(res, timeoutMs);
          if (status >= 300 && status < 400) finish({ error: 'redirect' }, true);
          else finish(retryAfter === undefined ? { status } : { status, retryAfter }, true);
        },
      );
    } catch {
      finish({ error: 'refused' });
      return;
    }
    request.on('error', (err) => finish({ error: classify(err as NodeJS.ErrnoException) }));
    request.end(body);
  });
}

/** Reads the receiver's body away unkept, so the connection can serve the next delivery; too much or too slow closes it. */
function drain(res: IncomingMessage, timeoutMs: number): void {
  let bytes = 0;
  const slow = setTimeout(() => res.destroy(), timeoutMs);
  slow.unref();
  res.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > MAX_DRAIN_BYTES) res.destroy();
  });
  res.on('close', () => clearTimeout(slow));
  res.on('error', () => undefined);
}

function classify(err: NodeJS.ErrnoException): DeliveryError {
  const code = err.code ?? '';
  if (err instanceof BlockedAddressError || code === 'EBLOCKED') return 'blocked';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA') return 'dns';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/.test(code) || /SSL|TLS|certificate/i.test(err.message)) return 'tls';
  return 'refused';
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((ok, fail) => {
    const t = setTimeout(() => fail(new Error('timed out')), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        ok(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        fail(e);
      },
    );
  });
}

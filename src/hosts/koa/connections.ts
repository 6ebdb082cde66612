/**
 * Connection limits of the listening server (CONTRACT section 12): at most `max` connections open
 * at once (Node's `maxConnections`, which closes a connection over it as soon as it is accepted)
 * and at most `perAddress` from one client address, so one client cannot take every descriptor
 * while others (a health check) still get in. A connection over either limit is closed at once.
 * Behind a reverse proxy every connection comes from the proxy, so `perAddress` is then left out.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  max: number;
  /** undefined: no per-address limit (PETSTORE_TRUST_PROXY is set). */
  perAddress?: number;
}

/** The per-address limit of the contract. */
export const CONNECTIONS_PER_ADDRESS = 256;

/** Connections refused so far, by reason (the total cap, or one address's). */
export interface ConnectionCounts {
  refusedTotal: number;
  refusedPerAddress: number;
}

export function limitConnections(server: Server, limits: ConnectionLimits): ConnectionCounts {
  const counts: ConnectionCounts = { refusedTotal: 0, refusedPerAddress: 0 };
  server.maxConnections = limits.max;
  server.on('drop', () => counts.refusedTotal++);
  const perAddress = limits.perAddress;
  if (perAddress === undefined) return counts;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = clientOf(socket.remoteAddress ?? '');
    const n = (open.get(address) ?? 0) + 1;
    if (n > perAddress) {
      counts.refusedPerAddress++;
      socket.destroy();
      return;
    }
    open.set(address, n);
    socket.once('close', () => {
      const left = open.get(address)! - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return counts;
}

/**
 * Who a peer address is, for the per-address limit: an IPv4 address as such (also when it comes
 * IPv4-mapped), an IPv6 address by its /64 network, as the limiter counts clients (section 6).
 */
export function clientOf(address: string): string {
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!address.includes(':')) return address;
  const bare = address.split('%')[0]!.toLowerCase();
  const [head = '', tail] = bare.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => (Number.parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}

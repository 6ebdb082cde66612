/**
 * Connection limits of the listening server (CONTRACT section 12): at most `max` connections open
 * at once (Node's `maxConnections`, which closes a connection over it as soon as it is accepted)
 * and at most `perAddress` from one client address, so one client cannot take every descriptor
 * while others (a health check) still get in. A connection over either limit is closed at once.
 * Behind a reverse proxy every connection comes from the proxy, so `perAddress` is then left out.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientNetwork } from '../../limits/client-address.js';

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
    // Counted as the limiter counts clients (CONTRACT section 6): IPv6 by its /64 network.
    const address = clientNetwork(socket.remoteAddress ?? '');
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

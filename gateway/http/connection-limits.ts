import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../../lib/logger';
import { limitKey, normalizeAddress } from './client-ip';

/** At most one warning a minute while connections are being closed at a cap, so an attack does not flood the log. */
const WARN_EVERY_MS = 60_000;

export interface ConnectionLimits {
  /** Open connections the server keeps at most. */
  maxConnections: number;
  /** Open connections one socket address keeps at most; undefined applies none (behind a proxy, every socket is the proxy's). */
  maxPerAddress?: number;
  /** Told, at most once a minute, that new connections are being closed. */
  logger?: Pick<Logger, 'warn'>;
}

/**
 * Caps a server's open connections, in total and per client (an address, or an IPv6 /64), so
 * sockets cannot use up the process's file descriptors. A connection over its client's cap is
 * closed at once. At the total cap a place is made for the new one, so a client that has never
 * connected before (a health check) still gets in: the oldest idle connection (no request in
 * progress) is closed, or else the oldest of the client holding the most, unless that is the
 * newcomer's own. Must be attached before the server's own listeners.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  const { maxConnections, maxPerAddress, logger } = limits;
  if (!Number.isInteger(maxConnections) || maxConnections < 1) throw new Error('limitConnections: maxConnections must be a positive integer');
  if (maxPerAddress !== undefined && (!Number.isInteger(maxPerAddress) || maxPerAddress < 1)) throw new Error('limitConnections: maxPerAddress must be a positive integer');
  // Insertion order is age order: the first idle socket found is the oldest.
  const open = new Set<Socket>();
  const perClient = new Map<string, Set<Socket>>();
  const clientOf = new WeakMap<Socket, string>();

  let closedSinceWarning = 0;
  let lastWarningAt = -Infinity;

  function refuse(socket: Socket, cap: 'per_client' | 'total', address: string): void {
    socket.destroy();
    closedSinceWarning++;
    const now = Date.now();
    if (now - lastWarningAt < WARN_EVERY_MS) return;
    logger?.warn({ cap, address, closedSinceWarning, maxConnections, maxPerAddress }, 'connection cap reached: closing new connections');
    lastWarningAt = now;
    closedSinceWarning = 0;
  }

  /** Closes a connection to make a place; out of the counts now, since 'close' comes a turn later. */
  function evict(socket: Socket, client: string): void {
    open.delete(socket);
    forget(socket, client);
    socket.destroy();
  }

  function forget(socket: Socket, client: string): void {
    const sockets = perClient.get(client);
    if (!sockets?.delete(socket)) return;
    if (sockets.size === 0) perClient.delete(client);
  }

  /** The oldest idle connection, or else the oldest of the client holding the most connections other than `newcomer`. */
  function makePlace(newcomer: string): boolean {
    for (const socket of open) {
      if (!isIdle(socket)) continue;
      evict(socket, clientOf.get(socket)!);
      return true;
    }
    let busiest: string | undefined;
    let most = perClient.get(newcomer)?.size ?? 0;
    for (const [client, sockets] of perClient) {
      if (sockets.size > most) [busiest, most] = [client, sockets.size];
    }
    if (busiest === undefined) return false;
    evict(perClient.get(busiest)!.values().next().value!, busiest);
    return true;
  }

  server.prependListener('connection', function admitConnection(socket: Socket) {
    const address = socket.remoteAddress;
    if (address === undefined) return void socket.destroy();
    const client = limitKey(normalizeAddress(address));
    const sockets = perClient.get(client);
    if (maxPerAddress !== undefined && sockets !== undefined && sockets.size >= maxPerAddress) return refuse(socket, 'per_client', client);
    if (open.size >= maxConnections && !makePlace(client)) return refuse(socket, 'total', client);
    open.add(socket);
    clientOf.set(socket, client);
    if (sockets) sockets.add(socket);
    else perClient.set(client, new Set([socket]));
    socket.once('close', () => {
      open.delete(socket);
      forget(socket, client);
    });
  });
}

/** Node keeps the response a connection is writing in `_httpMessage`; none means no request is in progress. */
function isIdle(socket: Socket): boolean {
  return !(socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
}

import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../lib/logger';

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
 * Caps a server's open connections, in total and per client address, so idle sockets cannot
 * use up the process's file descriptors. A connection over its address's cap is closed at once.
 * At the total cap the oldest idle connection (no request in progress) is closed to admit the
 * new one, so a client that has never connected before (a health check) still gets in; when
 * none is idle, the new one is closed. Must be attached before the server's own listeners.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  const { maxConnections, maxPerAddress, logger } = limits;
  if (!Number.isInteger(maxConnections) || maxConnections < 1) throw new Error('limitConnections: maxConnections must be a positive integer');
  if (maxPerAddress !== undefined && (!Number.isInteger(maxPerAddress) || maxPerAddress < 1)) throw new Error('limitConnections: maxPerAddress must be a positive integer');
  // Insertion order is age order: the first idle socket found is the oldest.
  const open = new Set<Socket>();
  const perAddress = new Map<string, number>();

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

  function released(address: string): void {
    const left = perAddress.get(address)! - 1;
    if (left === 0) perAddress.delete(address);
    else perAddress.set(address, left);
  }

  server.prependListener('connection', function admitConnection(socket: Socket) {
    const address = socket.remoteAddress;
    if (address === undefined) return void socket.destroy();
    const count = perAddress.get(address) ?? 0;
    if (maxPerAddress !== undefined && count >= maxPerAddress) return refuse(socket, 'per_client', address);
    if (open.size >= maxConnections && !closeOldestIdle(open)) return refuse(socket, 'total', address);
    open.add(socket);
    perAddress.set(address, count + 1);
    socket.once('close', () => {
      open.delete(socket);
      released(address);
    });
  });
}

/** Node keeps the response a connection is writing in `_httpMessage`; none means no request is in progress. */
function closeOldestIdle(open: Set<Socket>): boolean {
  for (const socket of open) {
    if ((socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage) continue;
    // Out of the count now: 'close' comes a turn later, after the new connection has been admitted.
    open.delete(socket);
    socket.destroy();
    return true;
  }
  return false;
}

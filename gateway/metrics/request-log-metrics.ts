import { Counter, type Registry } from 'prom-client';
import type { RequestLogWriterStats } from '../request-log/request-log-writer';

/**
 * `asg_request_log_dropped_total{reason}`: records the per-key request log lost, read from the
 * writer's plain counts when scraped, so recording pays nothing for metrics.
 */
export function registerRequestLogMetrics(registry: Registry, writer: { stats(): RequestLogWriterStats }): void {
  new Counter({
    name: 'asg_request_log_dropped_total',
    help: 'Request log records lost: its buffer was full (buffer_full) or the store failed to take a batch (store_failed). Requests are never affected.',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      const { droppedBufferFull, droppedStoreFailed } = writer.stats();
      this.reset();
      this.labels('buffer_full').inc(droppedBufferFull);
      this.labels('store_failed').inc(droppedStoreFailed);
    },
  });
}

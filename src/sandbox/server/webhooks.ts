// Delivery of async results to the caller's x-callback-url: a JSON POST, retried
// with doubling backoff on network errors and non-2xx answers. --webhook-fail n
// makes the first n attempts count as failures without sending anything.
import { Agent } from '../../api/undici.js';
import type { WebhookError, WebhookSuccess } from '../../api/schema.js';
import { startDeadline } from '../../webhook/deadline.js';
import { formatDuration } from '../../input/duration.js';
import { sleep, type Faults } from '../faults.js';
import { RecentLog } from './recent-log.js';

export interface DeliveryAttempt {
  requestId: string;
  url: string;
  attempt: number;
  time: string;
  kind: 'success' | 'error';
  /** delivered: receiver answered 2xx; failed: error or non-2xx; skipped: withheld by --webhook-fail. */
  outcome: 'delivered' | 'failed' | 'skipped';
  status?: number;
  detail?: string;
  /** True on the last attempt when every attempt failed. */
  gaveUp?: boolean;
  /** What was (or, when skipped, would have been) posted: the success or error payload of the spec's Events. */
  payload: WebhookSuccess | WebhookError;
}

export interface WebhookPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Wait before the first retry; doubled for each further one. */
  firstRetryDelayMs: number;
  /** Per attempt, until the receiver's answer is complete. */
  timeoutMs: number;
}

export const DEFAULT_WEBHOOK_POLICY: WebhookPolicy = { attempts: 6, firstRetryDelayMs: 200, timeoutMs: 5_000 };

export class WebhookSender {
  private readonly agent = new Agent({ connect: { timeout: 5_000 }, keepAliveTimeout: 1_000 });
  private readonly attemptLog = new RecentLog<DeliveryAttempt>();

  constructor(
    private readonly policy: WebhookPolicy,
    private readonly faults: Faults,
    private readonly now: () => number,
  ) {}

  attempts(): DeliveryAttempt[] {
    return this.attemptLog.entries();
  }

  clear(): number {
    return this.attemptLog.clear();
  }

  /** Resolves true once a receiver accepted the payload, false when every attempt failed or `signal` aborted. */
  async deliver(url: string, payload: WebhookSuccess | WebhookError, signal: AbortSignal): Promise<boolean> {
    const kind = 'signedUrl' in payload ? 'success' : 'error';
    const body = JSON.stringify(payload);
    for (let attempt = 1; attempt <= this.policy.attempts && !signal.aborted; attempt++) {
      if (attempt > 1) {
        await sleep(this.policy.firstRetryDelayMs * 2 ** (attempt - 2), signal);
        if (signal.aborted) break;
      }
      const record: DeliveryAttempt = { requestId: payload.requestId, url, attempt, time: new Date(this.now()).toISOString(), kind, outcome: 'failed', payload };
      if (this.faults.takeWebhookFailure()) {
        record.outcome = 'skipped';
        record.detail = 'withheld by --webhook-fail';
      } else {
        await this.post(url, body, attempt, signal, record);
      }
      if (record.outcome !== 'delivered' && attempt === this.policy.attempts) record.gaveUp = true;
      this.attemptLog.push(record);
      if (record.outcome === 'delivered') return true;
    }
    return false;
  }

  private async post(url: string, body: string, attempt: number, signal: AbortSignal, record: DeliveryAttempt): Promise<void> {
    const deadline = startDeadline(this.policy.timeoutMs, signal);
    try {
      const target = new URL(url);
      const res = await this.agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'aerial-sandbox-webhook',
          'x-sandbox-delivery-attempt': String(attempt),
        },
        signal: deadline.signal,
      });
      record.status = res.statusCode;
      await res.body.dump();
      record.outcome = res.statusCode >= 200 && res.statusCode < 300 ? 'delivered' : 'failed';
    } catch (error) {
      record.outcome = 'failed';
      record.detail = deadline.expired ? `no answer within ${formatDuration(this.policy.timeoutMs)}` : (error as Error).message;
    } finally {
      deadline.clear();
    }
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }
}

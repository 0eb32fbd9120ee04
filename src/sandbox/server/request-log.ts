// What tests read back from GET /__sandbox/requests: every request the sandbox
// answered (or dropped), with the account's key id — never the key itself.
import { RecentLog } from './recent-log.js';

export interface RequestLogEntry {
  seq: number;
  time: string;
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  /** null when the connection was dropped or closed before an answer. */
  status: number | null;
  /** Error code of a JSON error answer (ValidationFailed, InsufficientCredits, …). */
  error?: string;
  keyId: string | null;
  /** Set when the request carried an x-api-key header, whatever its value: a download of a temporary URL never should. */
  apiKeyHeader?: true;
  /** The parsed JSON body of generation requests; a summary when it could not be parsed. */
  body?: unknown;
  callbackUrl?: string;
  requestId?: string;
  imageId?: string;
  dropped?: boolean;
  /** A scripted answer (the fixture's use()) answered the request, or shaped the sandbox's answer. */
  scripted?: true;
  /** The Via header a forwarding proxy added, which shows the request came through it. */
  via?: string;
  durationMs: number;
}

export class RequestLog extends RecentLog<RequestLogEntry> {
  private nextSeq = 1;

  add(entry: Omit<RequestLogEntry, 'seq'>): RequestLogEntry {
    const full = { seq: this.nextSeq++, ...entry };
    this.push(full);
    return full;
  }
}

// What every route handler receives: the sandbox's parts, and one exchange
// (request, response, and the notes that end up in the request log).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BackgroundWork } from './background.js';
import type { Faults } from '../faults.js';
import type { SceneRenderer } from './generation.js';
import type { RequestLog } from './request-log.js';
import type { ScriptedAnswers } from './scripts.js';
import type { SandboxStore } from './store.js';
import type { WebhookSender } from './webhooks.js';

export interface SandboxApp {
  store: SandboxStore;
  faults: Faults;
  renderer: SceneRenderer;
  log: RequestLog;
  /** Answers a test scripted (the fixture's use()): taken before a request is routed. */
  scripts: ScriptedAnswers;
  webhooks: WebhookSender;
  background: BackgroundWork;
  now: () => number;
  /** The server's own URL; links use the Host the client addressed instead when there is one. */
  url: string;
  warn: (message: string) => void;
}

export interface ExchangeNotes {
  keyId: string | null;
  body?: unknown;
  callbackUrl?: string;
  requestId?: string;
  imageId?: string;
  error?: string;
  dropped?: boolean;
  /** A script answered the request, or shaped the answer. */
  scripted?: boolean;
}

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Aborted when the client goes away or the sandbox closes. */
  signal: AbortSignal;
  notes: ExchangeNotes;
  /** When the request arrived (performance.now()). */
  arrivedAt: number;
  /**
   * Resolves once an answer may be sent. Every answer, error answers included,
   * waits for it. handleApi makes it the --latency floor; other routes answer at once.
   */
  earliestAnswer: Promise<void>;
}

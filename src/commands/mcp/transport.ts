// The stdio transport of `aerial mcp`, counting the requests it has received
// and not yet answered, so that the end of stdin (the client's way to end the
// session) lets what was asked be answered before the server closes: a
// generation on the wire is paid for, and its file is saved. Every message is
// written as list --json writes JSON: the characters a reader could act on
// (C1 controls, line separators, direction overrides) as escapes, whatever
// text a message carries.
import type { Readable, Writable } from 'node:stream';
import { terminalSafeJson } from '../../text/printable.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

export class StdioSession implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private readonly stdio: StdioServerTransport;
  private readonly stdout: Writable;
  private readonly unanswered = new Set<RequestId>();
  private idleWaiters: Array<() => void> = [];

  constructor(stdin: Readable, stdout: Writable) {
    this.stdout = stdout;
    this.stdio = new StdioServerTransport(stdin, stdout);
    this.stdio.onclose = () => this.onclose?.();
    this.stdio.onerror = (error) => this.onerror?.(error);
    this.stdio.onmessage = (message) => {
      if (isJSONRPCRequest(message)) this.unanswered.add(message.id);
      // A request the client cancels gets no answer (the protocol's rule).
      if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') this.answered((message.params as { requestId?: RequestId } | undefined)?.requestId);
      this.onmessage?.(message);
    };
  }

  start(): Promise<void> {
    return this.stdio.start();
  }

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    try {
      // As the SDK's transport writes it (one line, then the wait for a full pipe to drain), in the safe form.
      await new Promise<void>((resolve) => (this.stdout.write(`${terminalSafeJson(message)}\n`) ? resolve() : this.stdout.once('drain', resolve)));
    } finally {
      if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) this.answered(message.id);
    }
  }

  close(): Promise<void> {
    return this.stdio.close();
  }

  /** Resolves once every request received so far has been answered (or cancelled). */
  idle(): Promise<void> {
    if (this.unanswered.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private answered(id: RequestId | undefined): void {
    if (id === undefined) return;
    this.unanswered.delete(id);
    if (this.unanswered.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

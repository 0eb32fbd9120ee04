// An image response written straight into a sink as undici parses it: no
// stream stages between the socket and the file, with the same guarantees as
// the client's image streams (JPEG signature and end, size cap, announced
// length, transfer deadline). A batch receives sixteen images at a time, and
// every stage a chunk passes through delays the next request.
import type { Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { CliError } from './errors.js';
import { CorruptImageError, JpegCheck } from './jpeg-verifier.js';

/** What came back: an image now in the sink, or an answer that is not one (its body bounded). */
export type DownloadOutcome =
  | { kind: 'image'; statusCode: number; bytes: number }
  | { kind: 'answer'; statusCode: number; headers: Dispatcher.ResponseData['headers']; body: Buffer };

export interface DownloadRules {
  /** Checks a 2xx answer's headers; a problem ends the exchange before any body is read. */
  imageProblem(statusCode: number, headers: Dispatcher.ResponseData['headers']): CliError | undefined;
  /** Called once an image is on its way; returns where its bytes go. Not ended here: the caller finishes it. */
  openSink(): Writable;
  maxImageBytes: number;
  /** How much of a non-image answer is kept (enough for an error message). */
  maxAnswerBytes: number;
  /** Longest time the whole body may take. */
  deadlineMs: number;
  /** What a network-level failure (not the sink's, nor a check's) becomes. */
  networkError(error: unknown): CliError;
  tooLarge(): CliError;
  timedOut(): CliError;
  signal?: AbortSignal;
}

/** Sends one request through `dispatcher`, delivering an image's bytes into the sink as they arrive. */
export function download(dispatcher: Dispatcher, request: Dispatcher.DispatchOptions, rules: DownloadRules): Promise<DownloadOutcome> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(request, new ImageExchange(rules, resolve, reject));
  });
}

class ImageExchange implements Dispatcher.DispatchHandler {
  private controller?: Dispatcher.DispatchController;
  private statusCode = 0;
  private headers: Dispatcher.ResponseData['headers'] = {};
  private sink?: Writable;
  private check?: JpegCheck;
  private expectedLength?: number;
  private answer: Buffer[] = [];
  private answerBytes = 0;
  private failure?: Error;
  private timer?: NodeJS.Timeout;
  private settled = false;
  private readonly onAbort = () => this.fail(this.rules.signal!.reason as Error);

  constructor(
    private readonly rules: DownloadRules,
    private readonly resolve: (outcome: DownloadOutcome) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    const { signal } = this.rules;
    if (signal?.aborted) return this.fail(signal.reason as Error);
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Dispatcher.ResponseData['headers']): void {
    if (statusCode < 200) return; // informational: the real answer follows
    this.statusCode = statusCode;
    this.headers = headers;
    // Never the reason the process stays alive; the socket it guards is.
    // An error answer that never ends is still reported with what arrived of it.
    this.timer = setTimeout(() => (this.sink ? this.fail(this.rules.timedOut()) : this.answered(true)), this.rules.deadlineMs).unref();
    // A redirect's body is of no use, and an error's is read only as far as a message needs.
    if (statusCode >= 300 && statusCode < 400) return this.answered(true);
    if (statusCode >= 300) return;
    const problem = this.rules.imageProblem(statusCode, headers);
    if (problem) return this.fail(problem);
    const length = Number(headers['content-length']);
    this.expectedLength = Number.isFinite(length) && length >= 0 ? length : undefined;
    this.check = new JpegCheck();
    let sink: Writable;
    try {
      sink = this.rules.openSink();
    } catch (error) {
      return this.fail(error as Error);
    }
    // A sink that failed already (a file that could not be created) would never drain.
    if (sink.errored || sink.destroyed) return this.fail(sink.errored ?? new Error('the image sink was closed before the image arrived'));
    this.sink = sink;
    // A sink that fails later (a full disk) ends the exchange with its error.
    sink.once('error', (error) => this.fail(error));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (!this.sink || !this.check) {
      this.answer.push(chunk.subarray(0, this.rules.maxAnswerBytes - this.answerBytes));
      this.answerBytes += chunk.length;
      if (this.answerBytes >= this.rules.maxAnswerBytes) this.answered(true);
      return;
    }
    if (this.check.bytes + chunk.length > this.rules.maxImageBytes) return this.fail(this.rules.tooLarge());
    const corrupt = this.check.add(chunk);
    if (corrupt) return this.fail(corrupt);
    if (!this.sink.write(chunk)) {
      controller.pause();
      this.sink.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    if (this.settled) return;
    if (!this.sink || !this.check) return this.answered(false);
    const problem =
      this.check.finish() ??
      (this.expectedLength !== undefined && this.check.bytes !== this.expectedLength
        ? new CorruptImageError(`JPEG is truncated: got ${this.check.bytes} of ${this.expectedLength} bytes`)
        : undefined);
    if (problem) return this.fail(problem);
    this.settle();
    this.resolve({ kind: 'image', statusCode: this.statusCode, bytes: this.check.bytes });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    // Our own reason for ending the exchange wins over how undici reports the abort.
    this.fail(this.failure ?? this.rules.networkError(error), false);
  }

  /** Settles with the (non-image) answer read so far; a body not yet over is cut off with its connection. */
  private answered(cutOff: boolean): void {
    if (this.settled) return;
    this.settle();
    if (cutOff && this.controller && !this.controller.aborted) this.controller.abort(new Error('the rest of the answer is not needed'));
    this.resolve({ kind: 'answer', statusCode: this.statusCode, headers: this.headers, body: Buffer.concat(this.answer) });
  }

  /** Ends the exchange with `error` (once): the connection is dropped and the promise rejects. */
  private fail(error: Error, abort = true): void {
    if (this.settled) return;
    this.failure ??= error;
    this.settle();
    if (abort && this.controller && !this.controller.aborted) this.controller.abort(error);
    this.reject(error);
  }

  private settle(): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.rules.signal?.removeEventListener('abort', this.onAbort);
  }
}

// The one way an image reaches its destination: written straight into a sink
// (a temp file, a device or FIFO, standard output) as undici parses it, with no
// stream stages between the socket and the sink. On the way every image gets
// the same checks (JPEG signature and end marker, size cap, announced length,
// transfer deadline) and, when the caller asks, its metadata spliced in. A
// batch receives sixteen images at a time, and every stage a chunk passes
// through would delay the next request.
import type { Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { RequestError } from './errors.js';
import { CorruptImageError, JpegCheck } from './jpeg-verifier.js';

/** Changes chunks on their way into the sink (metadata insertion): see MetadataSplicer. */
export interface ChunkEditor {
  /** What to write for this chunk; undefined to hold it back for now. */
  edit(chunk: Buffer): Buffer | undefined;
  /** Whatever is still held back when the image ends. */
  rest(): Buffer | undefined;
  /** Starts over, for an image asked for again after a broken attempt. */
  reset?(): void;
}

/** Where an image goes, as the client sees it. */
export interface ImageSink {
  /**
   * Where the bytes go, asked for once an image is on its way (a batch's temp
   * file is already open by then). Not ended here: the caller finishes it.
   */
  open(): Writable | Promise<Writable>;
  /** Applied to the bytes on their way in; the checks see them as the server sent them. */
  editor?: ChunkEditor;
  /**
   * Makes the sink ready for another attempt after one that wrote into it.
   * Absent where what was written cannot be taken back (standard output, a
   * FIFO): such an image is never asked for again.
   */
  reset?(): Promise<void>;
}

/** An image now whole in its sink. */
export interface ReceivedImage {
  statusCode: number;
  /** As the server sent them. */
  bytes: number;
  /** Written into the sink: `bytes` plus any metadata spliced in. */
  written: number;
}

/** What came back: an image now in the sink, or an answer that is not one (its body bounded). */
export type DownloadOutcome =
  | ({ kind: 'image' } & ReceivedImage)
  | { kind: 'answer'; statusCode: number; headers: Dispatcher.ResponseData['headers']; body: Buffer };

export interface DownloadRules {
  /** Checks a 2xx answer's headers; a problem ends the exchange before any body is read. */
  imageProblem(statusCode: number, headers: Dispatcher.ResponseData['headers']): RequestError | undefined;
  sink: ImageSink;
  /** Told once an image is on its way, before the sink is asked for. */
  onImage?(): void;
  maxImageBytes: number;
  /** How much of a non-image answer is kept (enough for an error message). */
  maxAnswerBytes: number;
  /** Longest time the whole body may take. */
  deadlineMs: number;
  /**
   * How much may wait in the sink before the connection is paused; by default
   * as much as the sink itself takes (its highWaterMark).
   */
  bufferBytes?: number;
  /** What a network-level failure (not the sink's, nor a check's) becomes. */
  networkError(error: unknown): Error;
  tooLarge(): RequestError;
  timedOut(): RequestError;
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
  /** Set once an image is on its way; `sink` once the sink is open. */
  private check?: JpegCheck;
  private sink?: Writable;
  /** Chunks that came while the sink was being opened. */
  private early: Buffer[] = [];
  private ended = false;
  private written = 0;
  private expectedLength?: number;
  private answer: Buffer[] = [];
  private answerBytes = 0;
  private failure?: Error;
  private timer?: NodeJS.Timeout;
  private settled = false;
  private readonly onAbort = () => this.fail(this.rules.signal!.reason as Error);
  private readonly onSinkError = (error: Error) => this.fail(error);
  private paused = false;
  private readonly onDrain = () => {
    this.paused = false;
    this.controller?.resume();
  };

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
    // Never the reason the process stays alive; the socket it guards is. An error answer
    // still unfinished at the deadline is reported by its status alone: its text was never whole.
    this.timer = setTimeout(() => {
      if (this.check) return this.fail(this.rules.timedOut());
      this.answer = [];
      this.answered(true);
    }, this.rules.deadlineMs).unref();
    // A redirect's body is of no use, and an error's is read only as far as a message needs.
    if (statusCode >= 300 && statusCode < 400) return this.answered(true);
    if (statusCode >= 300) return;
    const problem = this.rules.imageProblem(statusCode, headers);
    if (problem) return this.fail(problem);
    const length = Number(headers['content-length']);
    this.expectedLength = Number.isFinite(length) && length >= 0 ? length : undefined;
    this.check = new JpegCheck();
    let opened: Writable | Promise<Writable>;
    try {
      this.rules.onImage?.();
      opened = this.rules.sink.open();
    } catch (error) {
      return this.fail(error as Error);
    }
    if (opened instanceof Promise) opened.then((sink) => this.opened(sink), (error: Error) => this.fail(error));
    else this.opened(opened);
  }

  /** The sink is open: what came meanwhile goes in first. */
  private opened(sink: Writable): void {
    if (this.settled) return;
    // A sink that failed already (a file that could not be created) would never drain.
    if (sink.errored || sink.destroyed) return this.fail(sink.errored ?? new Error('the image sink was closed before the image arrived'));
    this.sink = sink;
    // A sink that fails later (a full disk, a reader gone) ends the exchange with its error.
    sink.once('error', this.onSinkError);
    const early = this.early;
    this.early = [];
    for (const chunk of early) this.write(chunk);
    if (this.ended) this.finish();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (!this.check) {
      this.answer.push(chunk.subarray(0, this.rules.maxAnswerBytes - this.answerBytes));
      this.answerBytes += chunk.length;
      if (this.answerBytes >= this.rules.maxAnswerBytes) this.answered(true);
      return;
    }
    if (this.check.bytes + chunk.length > this.rules.maxImageBytes) return this.fail(this.rules.tooLarge());
    const corrupt = this.check.add(chunk);
    if (corrupt) return this.fail(corrupt);
    if (!this.sink) {
      this.early.push(chunk);
      return;
    }
    const full = !this.write(chunk) && (this.rules.bufferBytes === undefined || this.sink.writableLength >= this.rules.bufferBytes);
    if (full && !this.paused) {
      this.paused = true;
      controller.pause();
      this.sink.once('drain', this.onDrain);
    }
  }

  /** Writes a chunk through the editor; false when the sink asks to wait. */
  private write(chunk: Buffer): boolean {
    const edited = this.rules.sink.editor ? this.rules.sink.editor.edit(chunk) : chunk;
    if (!edited) return true;
    this.written += edited.length;
    return this.sink!.write(edited);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    if (!this.check) return this.answered(false);
    const problem =
      this.check.finish() ??
      (this.expectedLength !== undefined && this.check.bytes !== this.expectedLength
        ? new CorruptImageError(`JPEG is truncated: got ${this.check.bytes} of ${this.expectedLength} bytes`)
        : undefined);
    if (problem) return this.fail(problem);
    this.ended = true;
    if (this.sink) this.finish();
  }

  /** The whole image has passed its checks and is in the sink (whatever the editor held back included). */
  private finish(): void {
    const rest = this.rules.sink.editor?.rest();
    if (rest) {
      this.written += rest.length;
      this.sink!.write(rest);
    }
    this.settle();
    this.resolve({ kind: 'image', statusCode: this.statusCode, bytes: this.check!.bytes, written: this.written });
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
    // The sink may outlive the exchange (standard output): nothing of ours stays attached to it.
    this.sink?.off('error', this.onSinkError);
    this.sink?.off('drain', this.onDrain);
  }
}

// The terminal layer in one injectable object: streams, TTY facts, colour,
// spinners and message levels. Commands talk only to this, never to `process`.
import type { Readable, Writable } from 'node:stream';
import { NetworkError } from '../api/errors.js';
import { CliError, FileSystemError } from '../lifecycle/errors.js';
import { MESSAGE_MAX, printable, terminalSafeJson, terminalSafeJsonText } from '../text/printable.js';
import { Redactor, redactValue } from '../text/secrets.js';
import { drained } from '../lifecycle/shutdown.js';

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

export interface Spinner {
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  stop(): void;
}

export interface TerminalOptions {
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
  /** A function defers creating process.stdin (a few ms) until a command reads it. */
  stdin: (Readable & { isTTY?: boolean }) | (() => Readable & { isTTY?: boolean });
  env: Record<string, string | undefined>;
  quiet?: boolean;
  verbose?: boolean;
  json?: boolean;
  /** false when --no-color was given. */
  color?: boolean;
  /** The painter used when colour is on (chalk, loaded by the caller only then; see loadStyle). */
  style?: Style;
}

const unstyled = (text: string) => text;
/** What every message uses when colour is off: no codes at all. */
export const PLAIN_STYLE: Style = { bold: unstyled, dim: unstyled, red: unstyled, green: unstyled, yellow: unstyled, cyan: unstyled };

/**
 * chalk's import sniffs the terminal (node:tty and friends), a real share of
 * startup; it is loaded only when colour is actually on.
 */
export async function loadStyle(color: boolean): Promise<Style> {
  if (!color) return PLAIN_STYLE;
  const { Chalk } = await import('chalk');
  return new Chalk({ level: 1 });
}

/** Colour is on for a terminal unless NO_COLOR or --no-color; FORCE_COLOR turns it on anywhere. */
export function colorEnabled(env: Record<string, string | undefined>, isTTY: boolean, flag = true): boolean {
  if (!flag) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  if (env.TERM === 'dumb') return false;
  return isTTY;
}

export class Terminal {
  readonly stdout: TerminalOptions['stdout'];
  readonly stderr: TerminalOptions['stderr'];
  private readonly stdinSource: TerminalOptions['stdin'] | (() => TerminalOptions['stdin']);
  readonly env: Record<string, string | undefined>;
  readonly quiet: boolean;
  readonly verbose: boolean;
  readonly json: boolean;
  readonly color: boolean;
  readonly style: Style;
  /** The run's secrets (secrets.ts): everything written here, and every file written from a service's data, is redacted by it. */
  readonly redactor = new Redactor();

  constructor(options: TerminalOptions) {
    this.stdout = options.stdout;
    this.stderr = options.stderr;
    this.stdinSource = options.stdin;
    this.env = options.env;
    this.quiet = options.quiet ?? false;
    this.verbose = options.verbose ?? false;
    this.json = options.json ?? false;
    this.color = colorEnabled(options.env, Boolean(options.stderr.isTTY), options.color ?? true);
    // Colour is decided here (flags, NO_COLOR, FORCE_COLOR, TTY), not by chalk's own sniffing.
    this.style = this.color && options.style ? options.style : PLAIN_STYLE;
  }

  get stdin(): Readable & { isTTY?: boolean } {
    const source = this.stdinSource;
    return source instanceof Function ? (source as () => Readable & { isTTY?: boolean })() : source;
  }

  get stdoutIsTTY(): boolean {
    return Boolean(this.stdout.isTTY);
  }
  get stderrIsTTY(): boolean {
    return Boolean(this.stderr.isTTY);
  }
  get stdinIsTTY(): boolean {
    return Boolean(this.stdin.isTTY);
  }
  /** Prompts, spinners and progress bars only when a person is watching. */
  get interactive(): boolean {
    return this.stdinIsTTY && this.stderrIsTTY && !this.json;
  }

  /** Registers a value that must never be printed or stored (the API key); every text write is scrubbed of it. */
  addSecret(secret: string | undefined): void {
    this.redactor.add(secret);
  }

  /** The text without any secret, in any of the forms secrets.ts knows. An arrow: it is handed around as a function. */
  readonly redact = (text: string): string => this.redactor.redact(text);

  /** Data for scripts: stdout only. */
  out(text: string): void {
    this.stdout.write(this.redact(text.endsWith('\n') ? text : `${text}\n`));
  }

  outJson(value: unknown): void {
    // Redacted as data first: a secret the service sent already JSON-escaped would be escaped again by the text.
    this.out(terminalSafeJson(redactValue(value, this.redact), this.stdoutIsTTY ? 2 : undefined));
  }

  /**
   * Data for scripts too long to build as one string, written in parts: each
   * resolves once stdout can take more, so a slow reader holds the writer
   * back instead of the process holding the output. False once stdout is gone
   * (its reader went away): write nothing more.
   */
  async outPart(text: string): Promise<boolean> {
    return this.outRedacted(this.redact(text));
  }

  /** outPart for text already redacted. */
  private async outRedacted(text: string): Promise<boolean> {
    if (this.stdout.destroyed) return false;
    if (!this.stdout.write(text)) await drained(this.stdout);
    return !this.stdout.destroyed;
  }

  /**
   * One JSON document, as outJson would write `{...head, [key]: items, ...tail()}`,
   * whose array `key` is too long to hold, written as its elements come:
   * an item that is a string is the JSON text of one element; an item that is
   * an array is several elements as values (a page of a listing), written
   * with one JSON.stringify, searched for secrets once as a whole text and
   * redacted as data only when one is there, escaped in one pass. `tail`
   * gives the members that follow the array, known only once it has been
   * written (counts of it).
   */
  async outJsonStream(
    head: Record<string, unknown>,
    key: string,
    items: Iterable<string | readonly unknown[]> | AsyncIterable<string | readonly unknown[]>,
    tail: () => Record<string, unknown> = () => ({}),
  ): Promise<void> {
    const indent = this.stdoutIsTTY ? 2 : undefined;
    // The document with a marker for the array, cut at the marker once the tail is known.
    const marker = `\u0001${key}\u0001`;
    const around = (rest: Record<string, unknown>) => terminalSafeJson(redactValue({ ...head, [key]: marker, ...rest }, this.redact), indent).split(JSON.stringify(marker));
    const [before] = around({});
    let chunk = `${this.redact(before!)}[`;
    let first = true;
    const element = (text: string) => (indent ? terminalSafeJson(JSON.parse(text), indent).replace(/^/gm, ' '.repeat(indent * 2)) : terminalSafeJsonText(text));
    for await (const item of items) {
      let text: string;
      if (typeof item === 'string') text = this.redact(element(item));
      else if (item.length === 0) continue;
      else if (indent) text = item.map((value) => this.redact(element(JSON.stringify(redactValue(value, this.redact))))).join(',\n');
      else {
        // The elements' text without the array's brackets. A string holding a secret in any form shows one in
        // this text too (JSON.stringify writes a string as it is but for quotes, backslashes and controls, and a
        // secret with those is looked for JSON-escaped as well): where none is here, none is in the values.
        const whole = JSON.stringify(item).slice(1, -1);
        const found = this.redact(whole) !== whole;
        // Redacted as data first: a secret the service sent already JSON-escaped would be escaped again by the text.
        const plain = found ? this.redact(JSON.stringify(redactValue(item, this.redact)).slice(1, -1)) : whole;
        // Escapes change the text only where a terminal could act on a character (rare): then it is searched again.
        const escaped = terminalSafeJsonText(plain);
        text = escaped === plain ? plain : this.redact(escaped);
      }
      chunk += `${first ? '' : ','}${indent ? '\n' : ''}${text}`;
      first = false;
      if (chunk.length >= 16 * 1024) {
        if (!(await this.outRedacted(chunk))) return;
        chunk = '';
      }
    }
    const [, after] = around(tail());
    await this.outRedacted(`${chunk}${first || !indent ? ']' : `\n${' '.repeat(indent)}]`}${this.redact(after!)}\n`);
  }

  /** Human messages: stderr, silenced by --quiet. */
  info(message: string): void {
    if (!this.quiet) this.stderr.write(`${this.redact(message)}\n`);
  }

  success(message: string): void {
    this.info(`${this.style.green('✔')} ${message}`);
  }

  /** Warnings carry foreign text (a row's failure, a server's message): always made printable. */
  warn(message: string): void {
    if (!this.quiet) this.stderr.write(`${this.style.yellow('warning:')} ${printable(this.redact(message), MESSAGE_MAX)}\n`);
  }

  debug(message: string): void {
    if (this.verbose) this.stderr.write(`${this.style.dim(this.redact(message))}\n`);
  }

  /** One line on stderr: human, or one JSON object with --json. Never silenced. */
  error(error: CliError): void {
    if (this.json) {
      this.stderr.write(`${this.redact(terminalSafeJson(error.toJSON()))}\n`);
      return;
    }
    // A network or file failure's code (UND_ERR_SOCKET, ResponseTimeout, NoSpace) is already in its message, or says nothing to a person.
    const generic = ['UsageError', 'NetworkError', 'Unexpected', 'Interrupted', 'MissingApiKey'].includes(error.code) || error.cause instanceof NetworkError || error instanceof FileSystemError;
    // Codes and messages carry what servers, webhooks and files said: one printable line.
    // Redacted before it is cut: a cut must not leave half a key behind.
    const message = printable(this.redact(error.message), MESSAGE_MAX);
    const text = generic ? message : `${printable(this.redact(error.code), 80)} — ${message}`;
    this.stderr.write(`${this.style.red('error:')} ${text}\n`);
  }

  /** An ora spinner on a terminal; a silent stand-in otherwise (scripts see no control codes). */
  async spinner(text: string): Promise<Spinner> {
    // A terminal that reports no width (some pseudo-terminals) sends ora's redraw into an endless loop.
    const width = (this.stderr as { columns?: number }).columns;
    if (!this.stderrIsTTY || this.quiet || this.json || !(width && width > 0)) {
      // One rule for success lines, on a terminal or not: they start with ✔ (as success() writes them).
      return { update() {}, succeed: (t) => t && this.success(t), fail() {}, stop() {} };
    }
    const { default: ora } = await import('ora');
    // ora colours its frames and its ✔/✖ by its own sniffing of the terminal, which knows nothing
    // of NO_COLOR: both come from this terminal's decision instead.
    const spinner = ora({ text: this.redact(text), stream: this.stderr as NodeJS.WritableStream, color: this.color ? 'cyan' : false, isEnabled: true, discardStdin: false }).start();
    const end = (symbol: string, t: string | undefined) => spinner.stopAndPersist({ symbol, text: t === undefined ? undefined : this.redact(t) });
    return {
      update: (t) => {
        spinner.text = this.redact(t);
      },
      succeed: (t) => end(this.style.green('✔'), t),
      fail: (t) => end(this.style.red('✖'), t),
      stop: () => {
        spinner.stop();
      },
    };
  }
}

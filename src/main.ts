// Builds the commander program and runs it. Each command lives in its own
// module under commands/ and keeps its heavy imports inside its action, so
// `--help` loads nothing but commander. Commands see only their Context
// (cli/context.ts); main() runs them in a Process, Node's own or a test terminal.
import { Command, CommanderError, Option, type OutputConfiguration } from 'commander';
import { asCliError, BrokenPipeError, CliError, ExitCode, FileSystemError, fileSystemFailure, InterruptedError, UsageError } from './lifecycle/errors.js';
import { DEFAULT_BASE_URL } from './config/config.js';
import { openContext, type ActionFactory, type CommandBody, type CommandRegistration, type Context, type GlobalOptions, type Process } from './cli/context.js';
import { fitHelpText, formatItem } from './cli/help-layout.js';
import { Terminal } from './terminal/terminal.js';
import { registrations } from './commands/index.js';
import { canReplaceProcess, exitNow, poolIsBusy, Shutdown, UNWIND_MS } from './lifecycle/shutdown.js';
import { nearest } from './text/suggest.js';
import { VERSION } from './build-outputs/version.js';

export { VERSION };

/** For a program that is only looked at (its help, its options): actions that do nothing. */
const IGNORE_ACTION: ActionFactory = () => async () => {};

/**
 * Help is laid out for 80 columns, narrower only on a narrower terminal: the
 * same text everywhere else, which is what lets the build precompute it.
 */
export const HELP_WIDTH = 80;
function helpWidthFor(stdout: { isTTY?: boolean; columns?: number }): number {
  const columns = stdout.isTTY ? stdout.columns : undefined;
  return columns && columns < HELP_WIDTH ? columns : HELP_WIDTH;
}

/**
 * The help of the program and of each top-level command (by name and alias), as
 * `--help` prints it at full width. The build writes these to dist/help.json so
 * bin/aerial.js can answer `aerial --help` and `aerial <command> --help` without
 * loading commander; a test holds them to what commander prints live.
 */
export function renderHelpTexts(): Record<string, string> {
  let captured = '';
  const program = buildProgram(IGNORE_ACTION, {
    writeOut: (text) => (captured += text),
    writeErr: (text) => (captured += text),
    getOutHelpWidth: () => HELP_WIDTH,
    getErrHelpWidth: () => HELP_WIDTH,
  });
  const capture = (command: Command): string => {
    captured = '';
    command.outputHelp();
    return captured;
  };
  const texts: Record<string, string> = { '': capture(program) };
  for (const command of program.commands) {
    const text = capture(command);
    for (const name of [command.name(), ...command.aliases()]) texts[name] = text;
  }
  return texts;
}

/**
 * The command a command line runs, when its first word names one (by name or
 * alias) that needs no other: the program is then built with that command
 * alone (setting up every command's options is a good part of start-up).
 * Anything else (options first, `help`, an unknown word) gets them all.
 */
export function commandToRun(argv: string[]): CommandRegistration | undefined {
  const word = argv[2];
  const found = registrations.find((registration) => registration.name === word || registration.aliases?.includes(word ?? ''));
  return found?.needsWholeProgram ? undefined : found;
}

/**
 * The program with every command registered (or only `only`), their actions made by `action`
 * (by default ones that do nothing: a program to look at, not to run). Help
 * is written through `output`, fitted to its width (by default 80 columns,
 * narrower only on a narrower terminal).
 */
export function buildProgram(action: ActionFactory = IGNORE_ACTION, output: OutputConfiguration = {}, only?: CommandRegistration): Command {
  const program = new Command('aerial')
    .description('Generate AI aerial images of any coordinates with the GenAerial v1 API')
    .version(`aerial ${VERSION} (node ${process.version})`, '-V, --version', 'print the version of aerial and Node.js')
    .addOption(new Option('--api-key <key>', 'API key (prefer AERIAL_API_KEY or `aerial config set api-key`)'))
    .addOption(new Option('--base-url <url>', `service base URL (env AERIAL_BASE_URL; default ${DEFAULT_BASE_URL})`))
    .addOption(new Option('--profile <name>', 'config profile to use (env AERIAL_PROFILE)'))
    .option('--json', 'machine-readable output on stdout, errors as JSON on stderr')
    .option('-q, --quiet', 'print only data, no progress or notices')
    .option('-v, --verbose', 'trace HTTP requests on stderr (method, URL, status, timing; never the key)')
    .option('--sandbox', 'use the bundled local sandbox server instead of the real service')
    .option('--no-color', 'disable colour (also NO_COLOR)')
    .showSuggestionAfterError(true)
    .configureHelp({ sortSubcommands: false, showGlobalOptions: true, formatItem, minWidthToWrap: 20 })
    .addHelpText(
      'after',
      `
Examples:
  $ aerial generate --sandbox --lat 48.8584 --lng 2.2945 -o eiffel.jpg
  $ aerial generate --at "40.6892,-74.0445" --zoom High --bearing NE -o liberty.jpg
  $ aerial list --json | jq '.content[].id'
  $ aerial config set api-key          # hidden prompt; or pipe the key on stdin

Exit codes: 0 ok, 1 unexpected, 2 usage/validation or an output that cannot be
written, 3 auth, 4 credits, 5 not found, 6 generation/server error,
7 network/timeout, 8 rate limited, 130 interrupted (Ctrl-C, SIGTERM, SIGHUP),
141 the reader of the output went away (| head).`,
    );
  // Set before the subcommands exist: they inherit all three when created. The
  // program's options are read only before the command's name (each command
  // takes them after it as options of its own: takeGlobalOptions).
  program.exitOverride();
  program.enablePositionalOptions();
  const width = output.getOutHelpWidth ?? (() => helpWidthFor(process.stdout));
  const writeOut = output.writeOut ?? ((text: string) => process.stdout.write(text));
  program.configureOutput({
    getOutHelpWidth: width,
    getErrHelpWidth: width,
    ...output,
    // Help, with its examples and notes, laid out for the terminal's width.
    writeOut: (text) => writeOut(fitHelpText(text, width())),
  });
  for (const registration of only ? [only] : registrations) {
    const command = program.command(registration.name);
    for (const alias of registration.aliases ?? []) command.alias(alias);
    registration.register(command, action);
    // `aerial batch help status` as `aerial help batch status` (the program's own help command is ours, below).
    if (command.commands.length > 0) command.helpCommand('help [command]', 'display help for a subcommand');
  }
  // commander's own help command looks one level deep (`aerial help config set` showed
  // the help of `config`); this one follows the whole path. It joins the Setup group.
  program
    .helpCommand(false)
    .commandsGroup('Setup:')
    .command('help')
    .argument('[command...]', 'a command, and a subcommand of it')
    .description('display help for command')
    .action((names: string[]) => helpFor(program, names).help());
  const globals = program.options.filter((option) => option.long !== '--version');
  for (const command of program.commands) takeGlobalOptions(command, globals);
  return program;
}

/**
 * Gives `command` and its subcommands the program's options as hidden options
 * of their own, where they have no option of that flag: the global options
 * work after the command's name, and help lists them once, as global. Left to
 * commander's default (the program's options looked for anywhere on the
 * line), the program took them out of its commands' option values, as it
 * cannot know which of its commands' options take one: `generate --prompt -V`
 * printed the version and sent nothing, and `--prompt --json` switched the
 * output to JSON.
 */
function takeGlobalOptions(command: Command, globals: readonly Option[]): void {
  for (const global of globals) {
    const taken = command.options.some((own) => own.long === global.long || (global.short !== undefined && own.short === global.short));
    if (!taken) command.addOption(new Option(global.flags, global.description).hideHelp());
  }
  for (const sub of command.commands) takeGlobalOptions(sub, globals);
}

/**
 * The option values of `command` and of the commands above it: a value typed
 * on the line wins over a default, and a later command's over an earlier's
 * (commander's optsWithGlobals lets any later value win, so the default of a
 * command's own `--no-color`, true, undid `aerial --no-color list`).
 */
function optionsWithGlobals(command: Command): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const at of lineage(command)) {
    for (const [key, value] of Object.entries(at.opts())) {
      if (!(key in merged) || at.getOptionValueSource(key) !== 'default') merged[key] = value;
    }
  }
  return merged;
}

/** `command` and the commands above it, the program first. */
function lineage(command: Command): Command[] {
  const chain: Command[] = [];
  for (let at: Command | null = command; at; at = at.parent) chain.unshift(at);
  return chain;
}

/** The command `names` lead to from `program` (by name or alias); an unknown name is a usage error. */
function helpFor(program: Command, names: string[]): Command {
  let command = program;
  for (const [depth, name] of names.entries()) {
    const found = command.commands.find((sub) => sub.name() === name || sub.aliases().includes(name));
    if (!found) {
      const known = command.commands.map((sub) => sub.name());
      const suggestion = nearest(name, known);
      const path = names.slice(0, depth + 1).join(' ');
      throw new UsageError(`unknown command '${path}'${suggestion ? ` (did you mean ${suggestion}?)` : ''}; commands: ${known.join(', ')}`);
    }
    command = found;
  }
  return command;
}

/**
 * The command commander is parsing the command line for: the program, then
 * each subcommand it hands the rest to. A parser error (an unknown option, a
 * missing argument) is about the last one, whose help it points to.
 */
function trackParsedCommand(program: Command): { command(): Command } {
  let current = program;
  const follow = (command: Command) => {
    command.hook('preSubcommand', (_parent, sub) => {
      current = sub;
    });
    command.commands.forEach(follow);
  };
  follow(program);
  return { command: () => current };
}

/**
 * A usage error of the argument parser (unknown option or command, missing
 * or excess arguments, a value not among the choices) as one line, like the
 * CLI's own: commander's suggestion joins the line, and the line points to
 * the help of the command it concerns.
 */
function parserUsageError(error: CommanderError, command: Command): UsageError {
  const message = error.message
    .replace(/^error:\s*/, '')
    .replace(/\s*\n\(Did you mean (.*)\?\)\s*$/, ' (did you mean $1?)')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  const path = lineage(command).map((at) => at.name());
  return new UsageError(`${message.replace(/\.$/, '')}; see '${path.join(' ')} --help'`);
}

function errorFromUnknown(error: unknown, signal: AbortSignal): CliError {
  // The CLI's own errors, and the API layer's with the exit code of their kind (errors.ts).
  const named = asCliError(error);
  if (named) return named;
  if (signal.aborted) return signal.reason instanceof CliError ? signal.reason : new InterruptedError();
  // Ctrl-C inside an inquirer prompt is a keypress in raw mode, not a SIGINT: inquirer rejects instead.
  if (error instanceof Error && ['ExitPromptError', 'AbortPromptError'].includes(error.name)) return new InterruptedError();
  // A full disk, a read-only directory, a directory where a file must go: nameable, so not "unexpected".
  const fileSystem = fileSystemFailure(error);
  if (fileSystem) return fileSystem;
  const message = error instanceof Error ? error.message : String(error);
  return new CliError(`unexpected: ${message}`, ExitCode.Unexpected, 'Unexpected');
}

/**
 * Ends Node's own process once main() has resolved with `code`. An interrupted
 * command may have left behind a call stuck in the thread pool (the write of
 * an aborted download to a hung disk), which process.exit() would wait for.
 * Where that cannot be helped without ending by the signal itself (Node 20),
 * calls still in the pool are given UNWIND_MS to finish first: most are only
 * slow, and the exit code then stays 130.
 */
export async function endProcess(code: number): Promise<void> {
  if (code === ExitCode.Interrupted) {
    for (const started = Date.now(); !canReplaceProcess && poolIsBusy() && Date.now() - started < UNWIND_MS; ) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    exitNow(code, stoppedBy);
  }
  process.exit(code);
}

/** The signal that stopped the command main() ran in Node's own process, for endProcess. */
let stoppedBy: NodeJS.Signals | undefined;

/**
 * Runs the command line in `proc` and resolves with the exit code once the
 * command has ended and stdout and stderr have handed all their data to the
 * reader, so the caller may exit the process at once. `argv` is as Node gives
 * it (the node binary and the script first).
 */
export async function main(argv: string[], proc: Process = process): Promise<number> {
  const shutdown = new Shutdown({
    // Node's own process ends without waiting for a call stuck in the thread pool (shutdown.ts).
    exit: (code) => (proc === process ? exitNow(code, shutdown.interruptedBy) : proc.exit(code)),
    onForcedExit: (reason) => report(reason),
  });
  shutdown.attach(proc, proc);

  const jsonErrors = argv.includes('--json');
  const bootIo = new Terminal({ stdout: proc.stdout, stderr: proc.stderr, stdin: () => proc.stdin, env: proc.env, json: jsonErrors, color: !argv.includes('--no-color') });
  let exitCode: number = ExitCode.Ok;
  let activeContext: Context | undefined;

  const action: ActionFactory =
    <O,>(body: CommandBody<O>) =>
    async (...args: unknown[]) => {
      const command = args[args.length - 1] as Command;
      const globals = optionsWithGlobals(command) as GlobalOptions & O;
      const ctx = await openContext(proc, globals, shutdown);
      activeContext = ctx;
      try {
        await body(ctx, globals, command.args);
      } finally {
        await ctx.cleanup();
      }
    };

  const helpWidth = () => helpWidthFor(proc.stdout);
  const output: OutputConfiguration = {
    writeOut: (text) => proc.stdout.write(text),
    writeErr: (text) => proc.stderr.write(text),
    getOutHelpWidth: helpWidth,
    getErrHelpWidth: helpWidth,
    // The parser's errors are reported below, as every other failure is: one line, or one JSON line.
    outputError: () => {},
  };
  // `--version --json` is `version --json` (bin/aerial.js answers both before the bundle loads; this is for a run in-process).
  const words = argv.slice(2);
  if (words.includes('--json') && words.some((word) => word === '--version' || word === '-V') && words.every((word) => ['--version', '-V', '--json'].includes(word))) {
    argv = [...argv.slice(0, 2), 'version', '--json'];
  }
  const program = buildProgram(action, output, commandToRun(argv));
  const parsing = trackParsedCommand(program);

  /** Says what went wrong, once; nothing when the reader is gone (there may be nobody left to tell). */
  let reported: CliError | undefined;
  const report = (failure: CliError, cause?: unknown) => {
    reported = failure;
    if (failure instanceof BrokenPipeError) return;
    (activeContext?.io ?? bootIo).error(failure);
    // With --verbose, an error from below the CLI (a bug, or a file-system failure it could only name) shows where.
    const fromBelow = failure.exitCode === ExitCode.Unexpected || failure instanceof FileSystemError;
    if (fromBelow && cause instanceof Error && !(cause instanceof CliError) && activeContext?.io.verbose) {
      activeContext.io.debug(cause.stack ?? '');
    }
  };
  try {
    await program.parseAsync(argv);
    if (shutdown.signal.aborted) exitCode = ExitCode.Interrupted;
  } catch (error) {
    if (error instanceof CommanderError && ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code)) {
      exitCode = ExitCode.Ok;
    } else if (error instanceof CommanderError) {
      const failure = parserUsageError(error, parsing.command());
      report(failure);
      exitCode = failure.exitCode;
    } else {
      // A stream that failed under the command (a reader gone, stdout on a full disk) is the cause of whatever it threw.
      const failure = shutdown.outputFailure ?? errorFromUnknown(error, shutdown.signal);
      report(failure, failure === shutdown.outputFailure ? shutdown.outputCause : error);
      exitCode = failure.exitCode;
    }
  }
  shutdown.end();
  await shutdown.drain();
  // The last write may be the one that failed (the whole --json document, to a reader already gone).
  if (shutdown.outputFailure && reported !== shutdown.outputFailure) {
    report(shutdown.outputFailure, shutdown.outputCause);
    await shutdown.drain();
  }
  exitCode = shutdown.exitCode(exitCode);
  if (proc === process) stoppedBy = shutdown.interruptedBy;
  shutdown.detach();
  return exitCode;
}

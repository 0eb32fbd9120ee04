// Shell completion scripts for bash, zsh and fish, generated from the
// commander program itself (commands, aliases, options, arguments) and the
// scene vocabulary, so they cannot drift from the CLI. `aerial completion <shell>`
// prints one; scripts/completions.mjs writes the committed copies.
import type { Argument, Command, Option } from 'commander';
import { configKeys } from './config.js';
import { PROTOCOLS } from './preview/terminal.js';
import { isSceneField, sceneSpec } from './scene-vocabulary.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** What can follow an option or fill an argument: fixed words, a file name, or anything. */
export type ValueKind = { kind: 'words'; words: string[] } | { kind: 'file' } | { kind: 'free' };

export interface CompletionOption {
  short?: string;
  long: string;
  description: string;
  /** Undefined for a boolean flag. */
  value?: ValueKind;
  /** The placeholder from the flags text, e.g. "file" in `--output <file>`. */
  valueName?: string;
}

export interface CompletionArgument {
  name: string;
  variadic: boolean;
  value: ValueKind;
}

export interface CompletionCommand {
  /** Names from the program down, e.g. ['aerial', 'config', 'set']. */
  path: string[];
  name: string;
  aliases: string[];
  description: string;
  options: CompletionOption[];
  arguments: CompletionArgument[];
  subcommands: CompletionCommand[];
}

/** Values that commander does not know as `.choices()` but the CLI does: scene enums, config keys, view's protocols, batch's formats and separators. */
function knownValues(name: string, commandPath: string[]): string[] | undefined {
  const spec = isSceneField(name) ? sceneSpec(name) : undefined;
  if (spec?.kind === 'enum') return [...spec.values];
  if (commandPath[1] === 'config' && name === 'key') return configKeys().map((key) => key.name);
  if (commandPath[1] === 'view' && name === 'protocol') return ['auto', ...PROTOCOLS];
  if (commandPath[1] === 'batch' && name === 'format') return ['csv', 'jsonl', 'json'];
  // By name: a ';' or '|' would need quoting on the command line.
  if (commandPath[1] === 'batch' && name === 'delimiter') return ['comma', 'semicolon', 'tab', 'pipe'];
  return undefined;
}

function valueKind(choices: readonly string[] | undefined, name: string, placeholder: string, commandPath: string[]): ValueKind {
  const words = choices ? [...choices] : knownValues(name, commandPath);
  if (words) return { kind: 'words', words };
  return /file|path|dir/i.test(placeholder) ? { kind: 'file' } : { kind: 'free' };
}

function describeOption(option: Option, commandPath: string[]): CompletionOption {
  const placeholder = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1];
  return {
    short: option.short,
    long: option.long!,
    description: option.description,
    ...(placeholder !== undefined
      ? { valueName: placeholder, value: valueKind(option.argChoices, option.attributeName(), placeholder, commandPath) }
      : {}),
  };
}

function describeArgument(argument: Argument, commandPath: string[]): CompletionArgument {
  return {
    name: argument.name(),
    variadic: argument.variadic,
    value: valueKind(argument.argChoices, argument.name(), argument.name(), commandPath),
  };
}

/** The completion model of `command` and everything under it, as commander's own help sees it. */
export function describeCommand(command: Command, parentPath: string[] = []): CompletionCommand {
  const help = command.createHelp();
  const path = [...parentPath, command.name()];
  const subcommands = help.visibleCommands(command).map((sub) => {
    // `help [command]` (commander's implicit one, or the program's own) completes the command names.
    if (!command.commands.includes(sub) || (sub.name() === 'help' && sub.commands.length === 0)) {
      return {
        path: [...path, sub.name()],
        name: sub.name(),
        aliases: [],
        description: sub.description(),
        options: [],
        arguments: [{ name: 'command', variadic: false, value: { kind: 'words', words: command.commands.map((c) => c.name()).filter((name) => name !== 'help') } }],
        subcommands: [],
      } satisfies CompletionCommand;
    }
    return describeCommand(sub, path);
  });
  return {
    path,
    name: command.name(),
    aliases: command.aliases(),
    description: command.description(),
    options: help.visibleOptions(command).filter((o) => o.long).map((o) => describeOption(o, path)),
    arguments: command.registeredArguments.map((a) => describeArgument(a, path)),
    subcommands,
  };
}

/** Program options that also work after a subcommand (everything but --help and --version). */
function globalOptions(root: CompletionCommand): CompletionOption[] {
  return root.options.filter((o) => o.long !== '--help' && o.long !== '--version');
}

/** Every command with the options valid there: its own, plus the program's globals. */
function flatten(root: CompletionCommand): Array<{ command: CompletionCommand; options: CompletionOption[] }> {
  const globals = globalOptions(root);
  const out: Array<{ command: CompletionCommand; options: CompletionOption[] }> = [];
  const walk = (command: CompletionCommand) => {
    const own = command.options;
    const inherited = command === root ? [] : globals.filter((g) => !own.some((o) => o.long === g.long));
    out.push({ command, options: [...own, ...inherited] });
    command.subcommands.forEach(walk);
  };
  walk(root);
  return out;
}

/**
 * Option flags that take a value, over the whole program. The scripts skip
 * the word after one of these when working out which subcommand is being
 * typed; that needs a flag to mean the same thing everywhere.
 */
export function valueFlags(root: CompletionCommand): string[] {
  const takesValue = new Map<string, boolean>();
  for (const { options } of flatten(root)) {
    for (const option of options) {
      for (const flag of [option.short, option.long].filter((f): f is string => Boolean(f))) {
        const previous = takesValue.get(flag);
        if (previous !== undefined && previous !== Boolean(option.value)) {
          throw new Error(`completion: ${flag} takes a value in one command but not in another`);
        }
        takesValue.set(flag, Boolean(option.value));
      }
    }
  }
  return [...takesValue].filter(([, value]) => value).map(([flag]) => flag).sort();
}

const HEADER = (shell: string) =>
  `generated from the aerial CLI by \`aerial completion ${shell}\` (scripts/completions.mjs); do not edit`;

function key(path: string[]): string {
  return path.join(' ');
}

function flagsOf(option: CompletionOption): string[] {
  return [option.short, option.long].filter((f): f is string => Boolean(f));
}

// ---------------------------------------------------------------- bash

function bashCase(entries: Array<[patterns: string[], body: string]>): string {
  return entries.map(([patterns, body]) => `    ${patterns.map((p) => `"${p}"`).join('|')}) ${body} ;;`).join('\n');
}

function bashValue(value: ValueKind): string {
  if (value.kind === 'file') return 'echo @file';
  if (value.kind === 'free') return 'echo @free';
  return `echo "${value.words.join(' ')}"`;
}

export function bashScript(root: CompletionCommand): string {
  const all = flatten(root);
  const children: Array<[string[], string]> = [];
  const words: Array<[string[], string]> = [];
  const options: Array<[string[], string]> = [];
  const values: Array<[string[], string]> = [];
  for (const { command, options: opts } of all) {
    for (const sub of command.subcommands) {
      children.push([[sub.name, ...sub.aliases].map((n) => `${key(command.path)} ${n}`), `echo ${sub.name}`]);
    }
    if (command.subcommands.length) {
      // A command that takes a file as well as subcommands (batch <file>, batch status) offers both.
      const file = command.arguments[0]?.value.kind === 'file' ? '@file ' : '';
      words.push([[key(command.path)], `echo "${file}${command.subcommands.map((s) => s.name).join(' ')}"`]);
    } else if (command.arguments[0]) {
      words.push([[key(command.path)], bashValue(command.arguments[0].value)]);
    }
    options.push([[key(command.path)], `echo "${opts.flatMap(flagsOf).join(' ')}"`]);
    for (const option of opts) {
      if (option.value) values.push([flagsOf(option).map((f) => `${key(command.path)} ${f}`), bashValue(option.value)]);
    }
  }
  return `# bash completion for aerial — ${HEADER('bash')}.
# Install: aerial completion bash > ~/.local/share/bash-completion/completions/aerial
#      or: echo 'source <(aerial completion bash)' >> ~/.bashrc

_aerial_child() {
  case "$1 $2" in
${bashCase(children)}
  esac
}

_aerial_words() {
  case "$1" in
${bashCase(words)}
  esac
}

_aerial_options() {
  case "$1" in
${bashCase(options)}
  esac
}

_aerial_values() {
  case "$1 $2" in
${bashCase(values)}
    *) return 1 ;;
  esac
}

_aerial() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="aerial" word child i skip=0
  local value_flags=" ${valueFlags(root).join(' ')} "
  if ((COMP_CWORD > 0)); then prev="\${COMP_WORDS[COMP_CWORD - 1]}"; fi
  # --zoom=<TAB>: bash splits at '=', so the flag is two words back.
  if [[ $prev == "=" && COMP_CWORD -gt 1 ]]; then prev="\${COMP_WORDS[COMP_CWORD - 2]}"; fi
  if [[ $cur == "=" ]]; then cur=""; fi
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    if [[ $word == "=" ]]; then skip=1; continue; fi
    if ((skip)); then skip=0; continue; fi
    if [[ $word == -* ]]; then
      [[ $value_flags == *" $word "* ]] && skip=1
      continue
    fi
    child="$(_aerial_child "$path" "$word")"
    [[ -n $child ]] && path="$path $child"
  done

  local candidates
  if ! candidates="$(_aerial_values "$path" "$prev")"; then
    if [[ $cur == -* ]]; then
      candidates="$(_aerial_options "$path")"
    else
      candidates="$(_aerial_words "$path")"
    fi
  fi
  case "$candidates" in
    @file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    "@file "*) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -W "\${candidates#@file }" -- "$cur"; compgen -f -- "$cur") ;;
    @free) COMPREPLY=() ;;
    *) mapfile -t COMPREPLY < <(compgen -W "$candidates" -- "$cur") ;;
  esac
  return 0
}

complete -F _aerial aerial
`;
}

// ---------------------------------------------------------------- zsh

function zshQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A description inside an _arguments spec: brackets and colons must be escaped. */
function zshDescription(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/([[\]:])/g, '\\$1');
}

function zshAction(value: ValueKind): string {
  if (value.kind === 'file') return '_files';
  if (value.kind === 'free') return ' ';
  return `(${value.words.join(' ')})`;
}

function zshOptionSpecs(option: CompletionOption): string {
  const description = `[${zshDescription(option.description)}]`;
  const value = option.value ? `:${option.valueName ?? 'value'}:${zshAction(option.value)}` : '';
  if (option.short) {
    const exclusive = `(${option.short} ${option.long})`;
    return `${zshQuote(exclusive)}{${option.short},${option.long}}${zshQuote(`${description}${value}`)}`;
  }
  return zshQuote(`${option.long}${description}${value}`);
}

function zshFunctionName(path: string[]): string {
  return `_${path.join('_').replace(/-/g, '_')}`;
}

function zshFunction(command: CompletionCommand, options: CompletionOption[]): string {
  const specs = options.map(zshOptionSpecs);
  const lines: string[] = [];
  if (command.subcommands.length) {
    const entries = command.subcommands.map((sub) => zshQuote(`${sub.name.replace(/:/g, '\\:')}:${sub.description}`));
    const dispatch = command.subcommands
      .map((sub) => `        ${[sub.name, ...sub.aliases].join('|')}) ${zshFunctionName(sub.path)} ;;`)
      .join('\n');
    lines.push(
      `${zshFunctionName(command.path)}() {`,
      '  local curcontext="$curcontext" state line',
      '  typeset -A opt_args',
      '  local -a subcommands',
      `  subcommands=(${entries.join(' ')})`,
      '  _arguments -C \\',
      ...specs.map((s) => `    ${s} \\`),
      `    '1: :->subcommand' \\`,
      `    '*:: :->args'`,
      '  case $state in',
      `    subcommand) _describe -t commands ${zshQuote(`${key(command.path)} command`)} subcommands${command.arguments[0]?.value.kind === 'file' ? '; _files' : ''} ;;`,
      '    args)',
      '      case $words[1] in',
      dispatch,
      '      esac',
      '      ;;',
      '  esac',
      '}',
    );
  } else {
    const args = command.arguments.map((arg, i) =>
      zshQuote(`${arg.variadic ? '*' : String(i + 1)}:${arg.name}:${zshAction(arg.value)}`),
    );
    lines.push(`${zshFunctionName(command.path)}() {`, '  _arguments \\', ...[...specs, ...args].map((s, i, all) => `    ${s}${i < all.length - 1 ? ' \\' : ''}`), '}');
  }
  return lines.join('\n');
}

export function zshScript(root: CompletionCommand): string {
  const functions = flatten(root).map(({ command, options }) => zshFunction(command, options));
  return `#compdef aerial
# zsh completion for aerial — ${HEADER('zsh')}.
# Install: aerial completion zsh > "\${fpath[1]}/_aerial"   (then restart zsh)
#      or: a directory of your own: mkdir -p ~/.zfunc && aerial completion zsh > ~/.zfunc/_aerial
#          with fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc

${functions.join('\n\n')}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _aerial "$@"
else
  compdef _aerial aerial
fi
`;
}

// ---------------------------------------------------------------- fish

function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function fishValue(value: ValueKind | undefined): string {
  if (!value) return '';
  if (value.kind === 'file') return ' -r -F';
  if (value.kind === 'free') return ' -x';
  return ` -x -a ${fishQuote(value.words.join(' '))}`;
}

export function fishScript(root: CompletionCommand): string {
  const all = flatten(root);
  const globals = new Set(globalOptions(root).map((o) => o.long));
  const children: string[] = [];
  const lines: string[] = [];
  for (const { command, options } of all) {
    const here = `-n ${fishQuote(`__aerial_is ${fishQuote(key(command.path))}`)}`;
    for (const sub of command.subcommands) {
      children.push(`        case ${[sub.name, ...sub.aliases].map((n) => fishQuote(`${key(command.path)} ${n}`)).join(' ')}`, `            echo ${sub.name}`);
      lines.push(`complete -c aerial ${here} -a ${fishQuote(sub.name)} -d ${fishQuote(sub.description)}`);
    }
    for (const arg of command.arguments) {
      if (arg.value.kind === 'words') lines.push(`complete -c aerial ${here} -a ${fishQuote(arg.value.words.join(' '))}`);
      if (arg.value.kind === 'file') lines.push(`complete -c aerial ${here} -F`);
    }
    for (const option of options) {
      // The program's globals are declared once, for every command, below.
      if (command !== root && globals.has(option.long) && !command.options.includes(option)) continue;
      const where = command === root && globals.has(option.long) ? '' : ` ${here}`;
      const short = option.short ? ` -s ${option.short.slice(1)}` : '';
      lines.push(`complete -c aerial${where}${short} -l ${option.long.slice(2)}${fishValue(option.value)} -d ${fishQuote(option.description)}`);
    }
  }
  return `# fish completion for aerial — ${HEADER('fish')}.
# Install: aerial completion fish > ~/.config/fish/completions/aerial.fish

# The subcommand path being typed ("aerial config set"), skipping option values.
function __aerial_path
    set -l path aerial
    set -l skip 0
    set -l value_flags ${valueFlags(root).join(' ')}
    for word in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        if string match -q -- '-*' $word
            contains -- $word $value_flags; and set skip 1
            continue
        end
        set -l child (__aerial_child "$path" $word)
        test -n "$child"; and set path "$path $child"
    end
    echo $path
end

function __aerial_child
    switch "$argv[1] $argv[2]"
${children.join('\n')}
    end
end

function __aerial_is
    test (__aerial_path) = "$argv[1]"
end

complete -c aerial -f
${lines.join('\n')}
`;
}

export function completionScript(program: Command, shell: Shell): string {
  const model = describeCommand(program);
  switch (shell) {
    case 'bash':
      return bashScript(model);
    case 'zsh':
      return zshScript(model);
    case 'fish':
      return fishScript(model);
  }
}

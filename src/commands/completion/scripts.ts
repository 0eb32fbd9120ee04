// Shell completion scripts for bash, zsh and fish, generated from the
// commander program itself (commands, aliases, options, arguments) and the
// scene vocabulary, so they cannot drift from the CLI. `aerial completion <shell>`
// prints one; scripts/completions.mjs writes the committed copies.
import type { Argument, Command, Option } from 'commander';
import { SORT_PROPERTIES } from '../../api/spec.js';
import { configKeys, type ConfigKey } from '../../config/config.js';
import { PROTOCOLS } from '../../preview/terminal.js';
import { isSceneField, sceneSpec } from '../../scene/vocabulary.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/**
 * What can follow an option or fill an argument: fixed words, a file name, or
 * anything; or, for an argument, words that depend on the argument before it
 * (`config set defaults.zoom <value>`, `help config <subcommand>`), with
 * nothing offered after a word the table does not hold.
 */
export type ValueKind =
  | { kind: 'words'; words: string[] }
  | { kind: 'file' }
  | { kind: 'free' }
  | { kind: 'byPrevious'; words: Record<string, string[]> };

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

/** The values `config set <key>` takes for a key, when they are a fixed few. */
function configValues(key: ConfigKey): string[] | undefined {
  switch (key.kind) {
    case 'enumDefault': {
      const spec = sceneSpec(key.field);
      return spec.kind === 'enum' ? [...spec.values] : undefined;
    }
    case 'booleanDefault':
    case 'previewDefault':
      return ['true', 'false'];
    default:
      return undefined;
  }
}

/**
 * Values that commander does not know as `.choices()` but the CLI does: scene
 * enums, config keys and their values, view's protocols, list's sort criteria,
 * batch's formats and separators.
 */
function knownValues(name: string, commandPath: string[]): ValueKind | undefined {
  const spec = isSceneField(name) ? sceneSpec(name) : undefined;
  if (spec?.kind === 'enum') return { kind: 'words', words: [...spec.values] };
  if (commandPath[1] === 'config' && name === 'key') return { kind: 'words', words: configKeys().map((key) => key.name) };
  if (commandPath[1] === 'config' && commandPath[2] === 'set' && name === 'value') {
    const words: Record<string, string[]> = {};
    for (const key of configKeys()) {
      const values = configValues(key);
      if (values) words[key.name] = values;
    }
    return { kind: 'byPrevious', words };
  }
  if (commandPath[1] === 'view' && name === 'protocol') return { kind: 'words', words: ['auto', ...PROTOCOLS] };
  if (commandPath[1] === 'list' && name === 'sort') return { kind: 'words', words: SORT_PROPERTIES.flatMap((property) => [`${property},desc`, `${property},asc`]) };
  if (commandPath[1] === 'batch' && name === 'format') return { kind: 'words', words: ['csv', 'jsonl', 'json'] };
  // By name: a ';' or '|' would need quoting on the command line.
  if (commandPath[1] === 'batch' && name === 'delimiter') return { kind: 'words', words: ['comma', 'semicolon', 'tab', 'pipe'] };
  return undefined;
}

function valueKind(choices: readonly string[] | undefined, name: string, placeholder: string, commandPath: string[]): ValueKind {
  if (choices) return { kind: 'words', words: [...choices] };
  return knownValues(name, commandPath) ?? (/file|path|dir/i.test(placeholder) ? { kind: 'file' } : { kind: 'free' });
}

/**
 * The arguments of `help`: a command, then (for a command that has them) one
 * of its subcommands, as `aerial help config set` reads them.
 */
function helpArguments(command: Command): CompletionArgument[] {
  const commands = command.commands.filter((c) => c.name() !== 'help');
  const subcommands: Record<string, string[]> = {};
  for (const sub of commands) {
    const names = sub.commands.map((c) => c.name()).filter((name) => name !== 'help');
    if (names.length > 0) for (const name of [sub.name(), ...sub.aliases()]) subcommands[name] = names;
  }
  const first: CompletionArgument = { name: 'command', variadic: false, value: { kind: 'words', words: commands.map((c) => c.name()) } };
  if (Object.keys(subcommands).length === 0) return [first];
  return [first, { name: 'subcommand', variadic: false, value: { kind: 'byPrevious', words: subcommands } }];
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
    // `help [command]` (commander's implicit one, or the program's own) completes the command names, then their subcommands.
    if (!command.commands.includes(sub) || (sub.name() === 'help' && sub.commands.length === 0)) {
      return {
        path: [...path, sub.name()],
        name: sub.name(),
        aliases: [],
        description: sub.description(),
        options: [],
        arguments: helpArguments(command),
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

/** A case pattern: quoted, but for a trailing * that matches anything. */
function bashPattern(pattern: string): string {
  return pattern.endsWith('*') ? `"${pattern.slice(0, -1)}"*` : `"${pattern}"`;
}

function bashCase(entries: Array<[patterns: string[], body: string]>): string {
  return entries.map(([patterns, body]) => `    ${patterns.map(bashPattern).join('|')}) ${body} ;;`).join('\n');
}

function bashValue(value: Exclude<ValueKind, { kind: 'byPrevious' }>): string {
  if (value.kind === 'file') return 'echo @file';
  if (value.kind === 'free') return 'echo @free';
  return `echo "${value.words.join(' ')}"`;
}

/**
 * The case entries of a command's arguments, matched against
 * "<path>|<arguments typed>|<the last of them>": each argument at its
 * position, a variadic last one at any later position too.
 */
function bashArguments(command: CompletionCommand): Array<[string[], string]> {
  const entries: Array<[string[], string]> = [];
  const at = key(command.path);
  command.arguments.forEach((argument, index) => {
    if (argument.value.kind === 'byPrevious') {
      for (const [previous, words] of Object.entries(argument.value.words)) {
        entries.push([[`${at}|${index}|${previous}`], bashValue({ kind: 'words', words })]);
      }
      entries.push([[`${at}|${index}|*`], 'echo @free']);
      return;
    }
    entries.push([[`${at}|${index}|*`], bashValue(argument.value)]);
  });
  const last = command.arguments[command.arguments.length - 1];
  if (last?.variadic && last.value.kind !== 'byPrevious') entries.push([[`${at}|*`], bashValue(last.value)]);
  return entries;
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
      // A command that takes a file as well as subcommands (batch <file>, batch status) offers both, first.
      const file = command.arguments[0]?.value.kind === 'file' ? '@file ' : '';
      words.push([[`${key(command.path)}|0|*`], `echo "${file}${command.subcommands.map((s) => s.name).join(' ')}"`]);
    } else {
      words.push(...bashArguments(command));
    }
    options.push([[key(command.path)], `echo "${opts.flatMap(flagsOf).join(' ')}"`]);
    for (const option of opts) {
      if (option.value && option.value.kind !== 'byPrevious') values.push([flagsOf(option).map((f) => `${key(command.path)} ${f}`), bashValue(option.value)]);
    }
  }
  return `# bash completion for aerial — ${HEADER('bash')}.
# Install: mkdir -p ~/.local/share/bash-completion/completions && aerial completion bash > ~/.local/share/bash-completion/completions/aerial
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
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="aerial" word child i skip=0 last=""
  local -a operands=()
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
    if [[ -n $child ]]; then
      path="$path $child"
      operands=()
    else
      operands+=("$word")
    fi
  done
  ((\${#operands[@]})) && last="\${operands[\${#operands[@]} - 1]}"

  local candidates
  if ! candidates="$(_aerial_values "$path" "$prev")"; then
    if [[ $cur == -* ]]; then
      candidates="$(_aerial_options "$path")"
    else
      candidates="$(_aerial_words "$path|\${#operands[@]}|$last")"
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

/** The action of an _arguments spec; `previous` is where the argument before this one is, in $line (from 1). */
function zshAction(value: ValueKind, previous = 0): string {
  if (value.kind === 'file') return '_files';
  if (value.kind === 'free') return ' ';
  if (value.kind === 'words') return `(${value.words.join(' ')})`;
  const cases = Object.entries(value.words).map(([word, words]) => `(${word}) compadd -- ${words.join(' ')};;`);
  return `{case $line[${previous}] in ${cases.join(' ')} esac}`;
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
      zshQuote(`${arg.variadic ? '*' : String(i + 1)}:${arg.name}:${zshAction(arg.value, i)}`),
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
  if (!value || value.kind === 'byPrevious') return '';
  if (value.kind === 'file') return ' -r -F';
  if (value.kind === 'free') return ' -x';
  return ` -x -a ${fishQuote(value.words.join(' '))}`;
}

/** The lines completing a command's arguments, each at its position (`__aerial_at`). */
function fishArguments(command: CompletionCommand): string[] {
  const lines: string[] = [];
  const condition = (position: string, previous?: string) =>
    `-n ${fishQuote(`__aerial_at ${fishQuote(key(command.path))} ${position}${previous === undefined ? '' : ` ${fishQuote(previous)}`}`)}`;
  command.arguments.forEach((argument, index) => {
    const position = argument.variadic ? `${index}+` : String(index);
    if (argument.value.kind === 'words') lines.push(`complete -c aerial ${condition(position)} -a ${fishQuote(argument.value.words.join(' '))}`);
    if (argument.value.kind === 'file') lines.push(`complete -c aerial ${condition(position)} -F`);
    if (argument.value.kind === 'byPrevious') {
      for (const [previous, words] of Object.entries(argument.value.words)) {
        lines.push(`complete -c aerial ${condition(position, previous)} -a ${fishQuote(words.join(' '))}`);
      }
    }
  });
  return lines;
}

export function fishScript(root: CompletionCommand): string {
  const all = flatten(root);
  const globals = new Set(globalOptions(root).map((o) => o.long));
  const children: string[] = [];
  const lines: string[] = [];
  for (const { command, options } of all) {
    const here = `-n ${fishQuote(`__aerial_is ${fishQuote(key(command.path))}`)}`;
    // Subcommands go where the first word after the command goes.
    const first = `-n ${fishQuote(`__aerial_at ${fishQuote(key(command.path))} 0`)}`;
    for (const sub of command.subcommands) {
      children.push(`        case ${[sub.name, ...sub.aliases].map((n) => fishQuote(`${key(command.path)} ${n}`)).join(' ')}`, `            echo ${sub.name}`);
      lines.push(`complete -c aerial ${first} -a ${fishQuote(sub.name)} -d ${fishQuote(sub.description)}`);
    }
    // A command with subcommands offers them, and its own first argument, where the first word goes.
    lines.push(...(command.subcommands.length ? fishArguments({ ...command, arguments: command.arguments.slice(0, 1) }) : fishArguments(command)));
    for (const option of options) {
      // The program's globals are declared once, for every command, below.
      if (command !== root && globals.has(option.long) && !command.options.includes(option)) continue;
      const where = command === root && globals.has(option.long) ? '' : ` ${here}`;
      const short = option.short ? ` -s ${option.short.slice(1)}` : '';
      lines.push(`complete -c aerial${where}${short} -l ${option.long.slice(2)}${fishValue(option.value)} -d ${fishQuote(option.description)}`);
    }
  }
  return `# fish completion for aerial — ${HEADER('fish')}.
# Install: mkdir -p ~/.config/fish/completions && aerial completion fish > ~/.config/fish/completions/aerial.fish

# The subcommand path being typed ("aerial config set"), skipping option values;
# then, one a line, the arguments typed after it.
function __aerial_path
    set -l path aerial
    set -l operands
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
        if test -n "$child"
            set path "$path $child"
            set operands
        else
            set -a operands $word
        end
    end
    echo $path
    test (count $operands) -gt 0; and printf '%s\\n' $operands
end

# At this path with this many arguments typed (N, or N+ for at least N), and the last of them, if given.
function __aerial_at
    set -l state (__aerial_path)
    test "$state[1]" = "$argv[1]"; or return 1
    set -l typed (math (count $state) - 1)
    if string match -q -- '*+' $argv[2]
        test $typed -ge (string trim -r -c + -- $argv[2]); or return 1
    else
        test $typed -eq $argv[2]; or return 1
    end
    test (count $argv) -lt 3; or test "$state[-1]" = "$argv[3]"
end

function __aerial_child
    switch "$argv[1] $argv[2]"
${children.join('\n')}
    end
end

function __aerial_is
    set -l state (__aerial_path)
    test "$state[1]" = "$argv[1]"
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

// Help that stays readable on a narrow terminal. commander lays options out in
// two columns and gives up wrapping when the second would be narrower than 40
// columns, and it prints our examples and notes as written: on 60 columns both
// wrap into ragged lines. Here an option's description goes under it when the
// columns are too narrow, notes are reflowed to the width, and a long example
// command is broken with shell continuations, so it still pastes.
import { Help } from 'commander';

/** Below this, a description beside its option is too narrow to read. */
const MIN_DESCRIPTION_WIDTH = 40;
/** Where a description starts when it goes under its option. */
const STACKED_INDENT = 6;

/** commander's formatItem, with the description under the term when there is no room beside it. */
export function formatItem(this: Help, term: string, termWidth: number, description: string, helper: Help): string {
  const width = this.helpWidth ?? 80;
  if (!description || width - termWidth - 4 >= MIN_DESCRIPTION_WIDTH) return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
  const lines = wrapWords(description.split(/\s+/), width - STACKED_INDENT);
  return [`  ${term}`, ...lines.map((line) => `${' '.repeat(STACKED_INDENT)}${line}`)].join('\n');
}

/** Words in lines of at most `width` characters; a longer word has a line to itself. */
function wrapWords(words: string[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of words.filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * An example command too long for the width, broken at spaces with " \" so a
 * shell still reads it as one; a trailing "# comment" goes on lines of its own.
 */
function wrapCommand(line: string, width: number, continued: boolean): string[] {
  const indent = /^ */.exec(line)![0];
  // Continuation lines sit under the command's first word, or stay where an existing one was.
  const more = continued ? '' : '    ';
  const [command, comment] = splitComment(line.trim());
  const oneLine = comment === undefined ? `${indent}${command}` : `${indent}${command} # ${comment}`;
  if (oneLine.length <= width) return [oneLine];
  const lines: string[] = [];
  let current = '';
  for (const word of command.split(' ').filter(Boolean)) {
    // Room is kept for the " \" that continues the line.
    if (current && indent.length + current.length + 1 + word.length > width - 2) {
      lines.push(`${indent}${current} \\`);
      current = `${more}${word}`;
    } else {
      current = current ? `${current} ${word}` : word;
    }
  }
  lines.push(`${indent}${current}`);
  if (comment !== undefined) lines.push(...wrapWords(comment.split(/\s+/), width - indent.length - 6).map((part) => `${indent}${more}# ${part}`));
  return lines;
}

/** ["aerial sandbox --port 0", "prints …"] from "aerial sandbox --port 0     # prints …". */
function splitComment(text: string): [string, string | undefined] {
  const match = /^(.*?)\s+#\s+(.*)$/.exec(text);
  return match ? [match[1]!, match[2]!] : [text, undefined];
}

const isProse = (line: string) => /^[^\s$]/.test(line);

/**
 * Text laid out for `width` columns: paragraphs of prose with a line too long
 * are reflowed, a too-long example command (`  $ aerial …`) is continued on the
 * next line, and any other too-long indented line wraps under itself. Lines
 * that fit are left as they are.
 */
export function fitHelpText(text: string, width: number): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    if (isProse(lines[i]!)) {
      let end = i;
      while (end < lines.length && isProse(lines[end]!)) end++;
      const paragraph = lines.slice(i, end);
      out.push(...(paragraph.some((line) => line.length > width) ? wrapWords(paragraph.join(' ').split(/\s+/), width) : paragraph));
      i = end;
      continue;
    }
    const line = lines[i++]!;
    // A line after one ending in " \" is more of the same command.
    const continued = i >= 2 && lines[i - 2]!.endsWith(' \\');
    if (line.length <= width) out.push(line);
    else if (/^\s*\$ /.test(line) || continued) out.push(...wrapCommand(line, width, continued));
    else {
      const indent = /^ */.exec(line)![0];
      out.push(...wrapWords(line.trim().split(/\s+/), width - indent.length - 2).map((part, n) => `${indent}${n ? '  ' : ''}${part}`));
    }
  }
  return out.join('\n');
}

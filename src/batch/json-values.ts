// A JSON array of row objects (`[{…}, {…}]`, pretty-printed or not), or
// objects one after another (what `jq '.[]'` prints), cut into the text of
// each object as the file streams by, with the line it starts on. Each
// object's text is then parsed on its own (JSON.parse), so a large array is
// never held whole and a bad row is named by its line. This only finds where
// each object starts and ends: strings are skipped, brackets counted.
import { inputError } from './input-text.js';

export interface JsonValueText {
  /** The line the object starts on (1-based; line ends made '\n' before). */
  line: number;
  text: string;
}

const ROW_EXAMPLE = 'rows are objects such as {"lat": 48.85, "lng": 2.29}';

export class JsonValues {
  private line = 1;
  /** Before the first value; in an array; objects one after another; after the array's ']'. */
  private mode: 'start' | 'array' | 'sequence' | 'closed' = 'start';
  /** In an array: what must come next. */
  private expect: 'value-or-end' | 'value' | 'comma-or-end' = 'value-or-end';
  private inObject = false;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The object's text from earlier chunks. */
  private pending = '';
  private objectLine = 0;
  private commaLine = 0;
  private arrayLine = 0;

  constructor(private readonly path: string) {}

  /** The objects that end in this chunk (text with '\n' line ends only). */
  push(chunk: string): JsonValueText[] {
    const found: JsonValueText[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c === 10) this.line++;
      if (this.inObject) {
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (c === 92) this.escaped = true;
          else if (c === 34) this.inString = false;
        } else if (c === 34) this.inString = true;
        else if (c === 123 || c === 91) this.depth++;
        else if ((c === 125 || c === 93) && --this.depth === 0) {
          found.push({ line: this.objectLine, text: this.pending + chunk.slice(start, i + 1) });
          this.pending = '';
          this.inObject = false;
          if (this.mode === 'array') this.expect = 'comma-or-end';
        }
        continue;
      }
      // Between objects: white space, and in an array its commas and closing bracket.
      if (c === 32 || c === 10 || c === 9 || c === 13 || c === 0xfeff) continue;
      if (c === 123 && (this.mode === 'start' || this.mode === 'sequence' || (this.mode === 'array' && this.expect !== 'comma-or-end'))) {
        if (this.mode === 'start') this.mode = 'sequence';
        this.inObject = true;
        this.depth = 1;
        this.objectLine = this.line;
        start = i;
        continue;
      }
      this.structural(c);
    }
    if (this.inObject) this.pending += chunk.slice(start);
    return found;
  }

  /** Checks that the file ended where it may. */
  end(): void {
    if (this.inObject) {
      throw inputError(this.path, this.objectLine, "the object that starts here is never closed (a '}' is missing): close it");
    }
    if (this.mode === 'array') {
      throw inputError(this.path, this.arrayLine, "the JSON array that starts here is never closed (a ']' is missing): close it");
    }
  }

  private structural(c: number): void {
    const char = String.fromCharCode(c);
    if (this.mode === 'start') {
      if (c === 91) {
        this.mode = 'array';
        this.arrayLine = this.line;
        return;
      }
      throw inputError(this.path, this.line, `starts with '${char}', not a JSON array or object: ${ROW_EXAMPLE}`);
    }
    if (this.mode === 'array') {
      if (c === 44 && this.expect === 'comma-or-end') {
        this.expect = 'value';
        this.commaLine = this.line;
        return;
      }
      if (c === 93 && this.expect !== 'value') {
        this.mode = 'closed';
        return;
      }
      if (c === 93) throw inputError(this.path, this.commaLine, "a ',' before the array's closing ']', which JSON does not allow: remove it");
      if (c === 44) throw inputError(this.path, this.line, 'an empty place in the array (two commas, or one after \'[\'): remove the extra comma');
      if (this.expect === 'comma-or-end') throw inputError(this.path, this.line, `'${char}' where a ',' or the closing ']' should be: put a ',' between rows`);
      throw inputError(this.path, this.line, `an array element that is not an object: ${ROW_EXAMPLE}`);
    }
    if (this.mode === 'closed') throw inputError(this.path, this.line, "text after the array's closing ']': remove it, or put it inside the array");
    throw inputError(this.path, this.line, `'${char}' between objects, where only the next object may come: ${ROW_EXAMPLE}`);
  }
}

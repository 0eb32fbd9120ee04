// The one place that keeps secrets (the API key, a proxy's password) out of
// what the CLI prints and stores. A service may repeat the key in anything it
// sends (error bodies, webhook error payloads, listing fields), in clear or
// encoded; each secret is therefore looked for in every form a service or a
// file format could plausibly give it:
//   - as it is;
//   - URL-encoded (encodeURIComponent, and every byte as %XX, in either case);
//   - JSON-escaped ("\/" too) and HTML/XML-escaped;
//   - as hex, in either case;
//   - inside base64 or base64url of any text that contains it ("Bearer <key>",
//     "user:<key>" basic auth, the key alone): the characters of the encoding
//     that depend only on the key, at each of the three alignments, so a
//     prefix or suffix around the key does not hide it.
// Each is replaced by ***. Encoded forms are only looked for when the secret
// is at least 8 characters, so short ones cannot match random text.
//
// Where it is applied: the API client redacts a service's text as it turns an
// answer into an error, before anything is cut to length (a cut must not leave
// half a key behind); the terminal redacts everything it writes; and every
// file written from a service's data (batch manifest, reports, GeoJSON,
// export's index, image metadata) is redacted on the way to disk.

const MASK = '***';
/** Shortest secret whose encoded forms are looked for. */
const MIN_ENCODED = 8;

function percentEncodeEveryByte(secret: string): string {
  return [...Buffer.from(secret, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`).join('');
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * The part of a base64 encoding that depends on `secret` alone when it stands
 * `align` bytes into a group of three: encoded between filler of all-zero and
 * of all-one bits, only the characters fully made of the secret's bits agree.
 */
function base64Cores(secret: Buffer): string[] {
  const cores: string[] = [];
  for (let align = 0; align < 3; align++) {
    const low = Buffer.concat([Buffer.alloc(align, 0x00), secret, Buffer.alloc(3, 0x00)]).toString('base64');
    const high = Buffer.concat([Buffer.alloc(align, 0xff), secret, Buffer.alloc(3, 0xff)]).toString('base64');
    let start = 0;
    while (start < low.length && low[start] !== high[start]) start++;
    let end = start;
    while (end < low.length && low[end] === high[end]) end++;
    const core = low.slice(start, end);
    if (core.length >= MIN_ENCODED) cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return cores;
}

/** Every form of `secret` that is redacted, longest first. */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  if (secret.length >= MIN_ENCODED) {
    const bytes = Buffer.from(secret, 'utf8');
    const escaped = JSON.stringify(secret).slice(1, -1);
    const encoded = [
      encodeURIComponent(secret),
      percentEncodeEveryByte(secret),
      escaped,
      escaped.replace(/\//g, '\\/'),
      secret.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!),
      secret.replace(/[&<>"']/g, (c) => (c === "'" ? '&apos;' : HTML_ENTITIES[c]!)),
      bytes.toString('hex'),
      ...base64Cores(bytes),
    ];
    for (const form of encoded) {
      forms.add(form);
      // Percent escapes in lower case, and an encoding that was itself URL-encoded (base64's + / =).
      forms.add(form.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
      forms.add(encodeURIComponent(form));
      if (/^[0-9a-f]+$/.test(form)) forms.add(form.toUpperCase());
    }
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** The secrets of one run, and every text, or value, made safe of them. */
export class Redactor {
  /** Every form of every secret, longest first; made when a text is first looked at. */
  private forms: string[] | undefined = [];
  private readonly secrets = new Set<string>();
  /** The shortest form: no text shorter than it can hold any. */
  private shortest = 0;

  /** Registers a value that must never be printed or stored; too short a value (under 4) is not one. */
  add(secret: string | undefined): void {
    if (!secret || secret.length < 4 || this.secrets.has(secret)) return;
    this.secrets.add(secret);
    this.forms = undefined;
  }

  redact(text: string): string {
    // Short texts (most of a listing's fields) are let through before any form is made or looked for.
    if (this.secrets.size === 0 || text.length < 4) return text;
    if (!this.forms) {
      this.forms = [...new Set([...this.secrets].flatMap(secretForms))].sort((a, b) => b.length - a.length);
      this.shortest = this.forms.at(-1)!.length;
    }
    if (text.length < this.shortest) return text;
    let out = text;
    for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(MASK);
    return out;
  }
}

/** Redaction as a plain function, for code that takes one (the API client, writers of files). */
export type Redact = (text: string) => string;

/**
 * A JSON-like value with every string in it, keys too, redacted: for data on
 * its way into a file, before it is serialised in whatever way that file
 * escapes text. What holds no secret is the caller's own, not a copy (a
 * listing of a million records is redacted record by record, and copying
 * each one was a third of what the walk allocated); callers that change what
 * they get spread it into an object of their own.
 */
export function redactValue<T>(value: T, redact: Redact): T {
  const deep = (item: unknown): unknown => {
    if (typeof item === 'string') return redact(item);
    if (Array.isArray(item)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < item.length; i++) {
        const inner = deep(item[i]);
        if (inner !== item[i]) (copy ??= item.slice())[i] = inner;
      }
      return copy ?? item;
    }
    if (item && typeof item === 'object' && Object.getPrototypeOf(item) === Object.prototype) {
      const record = item as Record<string, unknown>;
      // for…in: its own keys, in order (its prototype has no enumerable ones), without an array of them.
      for (const key in record) {
        if (redact(key) !== key || deep(record[key]) !== record[key]) {
          return Object.fromEntries(Object.entries(record).map(([name, inner]) => [redact(name), deep(inner)]));
        }
      }
      return item;
    }
    return item;
  };
  return deep(value) as T;
}

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManifestIndex, manifestRecords } from '../../../src/batch/manifest.js';
import { scanLine } from '../../../src/batch/manifest-lines.js';
import { tempDir } from '../../helpers/cli.js';

const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  while (dirs.length) dirs.pop()!.remove();
});

function manifestFile(text: string): string {
  const dir = tempDir('aerial-manifest-lines-');
  dirs.push(dir);
  const path = join(dir.path, 'm.jsonl');
  writeFileSync(path, text);
  return path;
}

/** The index as JSON.parse of every line makes it: the reference the byte scan must agree with. */
async function parsedIndex(path: string): Promise<ManifestIndex> {
  const index = new ManifestIndex();
  for await (const record of manifestRecords(path)) index.add(record);
  return index;
}

const K = '5a48e7b94bb53fbfb71eb60e4d59c4dc';
const L = '0123456789abcdef0123456789abcdef';
const written = [
  `{"row":1,"key":"${K}","status":"started","file":"r1.jpg","time":"2026-11-24T03:58:05.047Z"}`,
  `{"row":1,"key":"${K}","status":"done","file":"r1.jpg","bytes":1234,"attempts":1,"time":"2026-11-24T03:58:05.147Z"}`,
  `{"row":2,"key":"${L}","status":"failed","file":"a \\"b\\" \\\\ \\u00e9 \\n.jpg","attempts":3,"error":"HTTP 500","exitCode":6,"time":"t"}`,
  `{"row":2,"key":"${L}","status":"done","file":"ü/☕.jpg","bytes":0,"attempts":0,"adopted":true,"time":"t"}`,
  `{"row":3,"key":"${L}","status":"done","file":"x","bytes":4294967296,"rateLimited":2,"requestId":"q","imageId":null}`,
];
const D = '00112233445566778899aabbccddeeff';
/** Done lines with an input digest: the scan also reads their file's name. */
const withDigest = [
  `{"row":4,"key":"${K}","status":"done","file":"x/ü ☕.jpg","bytes":9,"attempts":1,"input":"${D}","time":"t"}`,
  `{"row":5,"input":"${D}","file":"","key":"${L}","status":"done"}`,
  `{"row":6,"key":"${L}","status":"failed","file":"f.jpg","input":"${D}"}`,
];
const unusual = [
  `{"key":"${K}","status":"done","bytes":12.5}`,
  `{"key":"${K}","status":"done","bytes":-0}`,
  `{"key":"${K}","status":"done","bytes":-3}`,
  `{"key":"${K}","status":"done","bytes":1e3}`,
  `{"key":"${K}","status":"done","bytes":"12"}`,
  `{"key":"${K}","status":"done","bytes":12,"bytes":13}`,
  `{"key":"${K}","key":"${L}","status":"done"}`,
  `{"key":"${K}","status":"done","status":"failed"}`,
  `{"key":"${K}","status":"constructor","bytes":5}`,
  `{"key":"${K}","status":"Done","bytes":5}`,
  `{"key":"${K.toUpperCase()}","status":"done","bytes":5}`,
  `{"key":"\\u0035${K.slice(1)}","status":"done","bytes":5}`,
  `{"k\\u0065y":"${L}","status":"done","bytes":5}`,
  `{"key":"${K}","status":"done","bytes":5,"extra":{"bytes":9}}`,
  `{"key":"${K}","status":"done","bytes":5,"list":[1,2]}`,
  `{ "key": "${K}", "status": "done", "bytes": 7 }`,
  `\uFEFF{"key":"${K}","status":"done","bytes":5}`,
  `{"key":"${K}","status":"done","bytes":0123}`,
  `{"key":"${K}","status":"done","bytes":5,}`,
  `{"key":"${K}","status":"done","bytes":5}}`,
  `{"key":"${K}","status":"done","bytes":5,"bad":"\\x"}`,
  `{"key":"${K}","status":"done","bytes":5,"bad":"\\u12g4"}`,
  `{"key":"${K}","status":"done","bytes":5,"ok":true,"no":false,"nil":null}`,
  `{"key":"${K}","status":"done","bytes":5,"nope":tru}`,
  `{"key":42,"status":"done"}`,
  `{"key":"${K}"}`,
  `{"status":"done","bytes":5}`,
  `{}`,
  `[]`,
  `null`,
  `   `,
  ``,
];

describe('manifest lines read from their bytes', () => {
  it('gives the key, status and bytes of the lines the writer makes', () => {
    const facts = written.map((line) => scanLine(Buffer.from(line), 0, Buffer.byteLength(line)));
    expect(facts.map((f) => f && [f.status, f.bytes])).toEqual([
      [1, -1],
      [2, 1234],
      [3, -1],
      [2, 0],
      [2, 4294967296],
    ]);
    expect(facts[0]!.key.map((w) => w.toString(16).padStart(8, '0')).join('')).toBe(K);
  });

  it('leaves whatever it is not sure of to JSON.parse', () => {
    for (const line of unusual.slice(0, 22)) expect(scanLine(Buffer.from(line), 0, Buffer.byteLength(line)), line).toBeUndefined();
  });

  it('agrees with JSON.parse whenever it answers: on every line and every torn prefix of one', () => {
    const cases = [...written, ...withDigest, ...unusual].flatMap((line) => [line, ...Array.from({ length: line.length }, (_, n) => line.slice(0, n))]);
    let answered = 0;
    for (const line of cases) {
      const facts = scanLine(Buffer.from(line), 0, Buffer.byteLength(line));
      if (!facts) continue;
      answered++;
      // What the index takes from JSON.parse of the line (ManifestIndex.add).
      const record = JSON.parse(line) as { key: string; status: string; bytes?: unknown; input?: string; file?: string };
      const hex = (words: number[]) => words.map((w) => w.toString(16).padStart(8, '0')).join('');
      expect(hex(facts.key), line).toBe(record.key);
      expect(['', 'started', 'done', 'failed'][facts.status], line).toBe(record.status);
      expect(facts.bytes, line).toBe(typeof record.bytes === 'number' && record.bytes >= 0 ? record.bytes : -1);
      expect(facts.input && hex(facts.input), line).toBe(record.input);
      const file = facts.file && Buffer.from(line).toString('utf8', facts.file.start, facts.file.end);
      expect(file, line).toBe(record.input === undefined ? undefined : record.file);
    }
    expect(answered).toBe(written.length + withDigest.length + 2);
  });

  it('reads a manifest as JSON.parse of each line does, with LF, CRLF or no final line break', async () => {
    for (const ending of ['\n', '\r\n', '']) {
      for (const lines of [written, unusual, [...written, written[0]!.slice(0, 40)], [written[1]!, ...unusual]]) {
        const path = manifestFile(lines.join(ending) + ending);
        const [scanned, parsed] = [await ManifestIndex.read(path), await parsedIndex(path)];
        for (const key of [K, L]) expect(scanned.get(key)).toEqual(parsed.get(key));
        expect(scanned.size).toBe(parsed.size);
      }
    }
  });

  it('keeps the last line of each key across read boundaries and lines longer than the buffer', async () => {
    const long = `{"row":9,"key":"${L}","status":"failed","file":"f","error":"${'e'.repeat(3 * 1024 * 1024)}"}`;
    const many = Array.from({ length: 20_000 }, (_, i) => written[i % 2]!.replace('1234', String(i)));
    const path = manifestFile(`${many.join('\n')}\n${long}\n${written[1]}\n{"key":"${L}","status":"done","bytes":77}`);
    const index = await ManifestIndex.read(path);
    // Each key's last done record, and that its request was sent (an earlier line of it says so).
    expect(index.get(K)).toEqual({ status: 'done', bytes: 1234, sent: true, doneBytes: 1234 });
    expect(index.get(L)).toEqual({ status: 'done', bytes: 77, sent: true, doneBytes: 77 });
    expect(index.size).toBe(2);
  });
});

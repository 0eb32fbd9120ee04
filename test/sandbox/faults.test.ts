// The fault knobs, over real sockets: latency, fail rate (exact at 0 and 1,
// reproducible by seed), rate limiting with Retry-After, and dropped connections.
import { afterEach, describe, expect, it } from 'vitest';
import { generationRequest, manualClock, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

function generate(target: TestSandbox, key = target.key): Promise<Response> {
  return fetch(target.api(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(generationRequest({ saveImage: false })),
  });
}

async function statuses(target: TestSandbox, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await generate(target);
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

describe('--latency', () => {
  it('delays API responses by the given milliseconds', async () => {
    sb = await startTestSandbox({ latencyMs: 250 });
    const started = performance.now();
    const res = await fetch(sb.api(), { headers: { 'x-api-key': sb.key } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
    // A POST's body is read while the latency runs, and the answer still waits for it (see latency.test.ts).
    const posted = await generate(sb);
    expect(posted.status).toBe(200);
    await posted.arrayBuffer();
  });
});

describe('--fail-rate', () => {
  it('fails every generation at 1 and none at 0', async () => {
    sb = await startTestSandbox({ failRate: 1 });
    expect(new Set(await statuses(sb, 15))).toEqual(new Set([500]));
    sb.setFaults({ failRate: 0 });
    expect(new Set(await statuses(sb, 15))).toEqual(new Set([200]));
  });

  it('replays the same failures for the same seed', async () => {
    const runs: number[][] = [];
    for (const seed of [42, 42, 7]) {
      sb = await startTestSandbox({ failRate: 0.5, seed });
      runs.push(await statuses(sb, 24));
      await sb.close();
      sb = undefined;
    }
    expect(runs[0]).toEqual(runs[1]);
    expect(runs[0]).toContain(500);
    expect(runs[0]).toContain(200);
    expect(runs[2]).not.toEqual(runs[0]);
  });
});

describe('--rate-limit', () => {
  it('answers 429 RateLimited with Retry-After once an account exceeds n requests per second', async () => {
    const clock = manualClock();
    sb = await startTestSandbox({ rateLimit: 2, now: clock.now });
    const list = (key = sb!.key) => fetch(sb!.api(), { headers: { 'x-api-key': key } });
    expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(200);
    const limited = await list();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await limited.json()).toMatchObject({ status: 429, error: 'RateLimited' });

    // Another account has its own budget.
    const other = await sb.createAccount({ credits: 1 });
    expect((await list(other.key)).status).toBe(200);

    clock.advance(500);
    expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(429);
    clock.advance(1000);
    expect((await list()).status).toBe(200);
  });
});

describe('--drop-rate', () => {
  it('resets the connection without processing or charging at 1', async () => {
    sb = await startTestSandbox({ dropRate: 1 });
    const before = await sb.credits(sb.key);
    await expect(generate(sb)).rejects.toThrow();
    expect(await sb.credits(sb.key)).toBe(before);
    const [entry] = sb.requests();
    expect(entry).toMatchObject({ method: 'POST', status: null, dropped: true });

    sb.setFaults({ dropRate: 0 });
    const res = await generate(sb);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  it('drops the same requests for the same seed', async () => {
    const runs: string[] = [];
    for (const seed of [3, 3]) {
      sb = await startTestSandbox({ dropRate: 0.5, seed });
      let pattern = '';
      for (let i = 0; i < 16; i++) {
        try {
          const res = await fetch(sb.api(), { headers: { 'x-api-key': sb.key } });
          await res.arrayBuffer();
          pattern += 'o';
        } catch {
          pattern += 'x';
        }
      }
      runs.push(pattern);
      await sb.close();
      sb = undefined;
    }
    expect(runs[0]).toBe(runs[1]);
    expect(runs[0]).toMatch(/x/);
    expect(runs[0]).toMatch(/o/);
  });
});

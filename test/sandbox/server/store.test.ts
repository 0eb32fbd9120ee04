// Group commit in SandboxStore.update: updates that arrive while a write is in
// flight share the next write; each caller hears of its own update only once
// it is durable; a refused update is undone without touching its neighbours.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as atomicFile from '../../../src/files/atomic-file.js';
import { SandboxStore, serializeState, type SandboxState, type StoredImage } from '../../../src/sandbox/server/store.js';
import { tempDataDir } from '../../helpers/sandbox.js';

vi.mock('../../../src/files/atomic-file.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/files/atomic-file.js')>();
  return { ...original, writeFileAtomic: vi.fn(original.writeFileAtomic) };
});
const writeFileAtomic = vi.mocked(atomicFile.writeFileAtomic);

const dirs: string[] = [];
afterEach(() => {
  writeFileAtomic.mockClear();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function openStore(): Promise<SandboxStore> {
  const dir = tempDataDir('aerial-store-');
  dirs.push(dir);
  const store = await SandboxStore.open(dir);
  await store.update((state) => {
    state.accounts.push({ id: 'acct_a', keyId: 'key_a', key: 'sbx_a', credits: 100, createdAt: '2030-01-01T00:00:00.000Z' });
  });
  writeFileAtomic.mockClear();
  return store;
}

function onDisk(store: SandboxStore): SandboxState {
  return JSON.parse(readFileSync(store.statePath, 'utf8')) as SandboxState;
}

function stateWrites(store: SandboxStore): number {
  return writeFileAtomic.mock.calls.filter(([path]) => path === store.statePath).length;
}

const charge = (amount: number) => (state: SandboxState) => {
  const account = state.accounts[0]!;
  if (account.credits < amount) throw new Error(`only ${account.credits} credits`);
  account.credits -= amount;
  return account.credits;
};

describe('SandboxStore group commit', () => {
  it('applies 50 concurrent updates in arrival order with far fewer writes, each resolving with its own result', async () => {
    const store = await openStore();
    const results = await Promise.all(Array.from({ length: 50 }, () => store.update(charge(1))));
    expect(results).toEqual(Array.from({ length: 50 }, (_, i) => 99 - i));
    expect(onDisk(store).accounts[0]!.credits).toBe(50);
    expect((await store.snapshot()).accounts[0]!.credits).toBe(50);
    // The first update is written alone; everything that arrived meanwhile shares the next write.
    expect(stateWrites(store)).toBeGreaterThanOrEqual(1);
    expect(stateWrites(store)).toBeLessThanOrEqual(3);
  });

  it('settles an update only once the write that holds it is durable', async () => {
    const store = await openStore();
    let finishWrite: () => void = () => {};
    const writeHeld = new Promise<void>((resolve) => (finishWrite = resolve));
    const real = await vi.importActual<typeof atomicFile>('../../../src/files/atomic-file.js');
    writeFileAtomic.mockImplementationOnce(async (...args) => {
      await writeHeld;
      return real.writeFileAtomic(...args);
    });
    let settled = false;
    const update = store.update(charge(5)).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    expect(onDisk(store).accounts[0]!.credits).toBe(100);
    // Readers see the last durable state, not the one being written.
    expect((await store.snapshot()).accounts[0]!.credits).toBe(100);
    finishWrite();
    expect(await update).toBe(95);
    expect(onDisk(store).accounts[0]!.credits).toBe(95);
  });

  it('undoes a refused update, even one that changed the state before throwing, and keeps the rest of its write', async () => {
    const store = await openStore();
    const sloppy = (state: SandboxState) => {
      state.accounts[0]!.credits -= 1000;
      state.images.push({ id: 'half-made', seq: state.nextSeq++, accountId: 'acct_a', createdAt: '', inHistory: true, width: 1, height: 1, bytes: 1, scene: {} as never });
      state.accounts.push({ id: 'acct_b', keyId: 'key_b', key: 'sbx_b', credits: 1, createdAt: '' });
      throw new Error('refused after all');
    };
    // The first update is written alone; the next four arrive during that write and share the next one.
    const first = store.update(charge(1));
    const [a, b, c, d] = [store.update(charge(10)), store.update(sloppy), store.update(charge(1000)), store.update(charge(20))];
    expect(await first).toBe(99);
    expect(await a).toBe(89);
    await expect(b).rejects.toThrow('refused after all');
    await expect(c).rejects.toThrow('only 89 credits');
    expect(await d).toBe(69);
    const state = onDisk(store);
    expect(state.accounts.map((account) => [account.id, account.credits])).toEqual([['acct_a', 69]]);
    expect(state.images).toEqual([]);
    expect(state.nextSeq).toBe(1);
    expect(stateWrites(store)).toBe(2);
  });

  it('writes nothing when every update of a batch is refused', async () => {
    const store = await openStore();
    await expect(store.update(charge(1000))).rejects.toThrow('only 100 credits');
    expect(stateWrites(store)).toBe(0);
  });

  it('rejects every accepted update of a failed write, and the next write starts from what is on disk', async () => {
    const store = await openStore();
    const real = await vi.importActual<typeof atomicFile>('../../../src/files/atomic-file.js');
    writeFileAtomic.mockImplementationOnce(real.writeFileAtomic).mockImplementationOnce(async () => {
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    });
    // The first update is written alone; the next three share the write that fails.
    const first = store.update(charge(1));
    const failed = [store.update(charge(1)), store.update(charge(1000)), store.update(charge(2))];
    expect(await first).toBe(99);
    const outcomes = await Promise.allSettled(failed);
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : outcome.value))).toEqual([
      'ENOSPC: no space left on device',
      'only 98 credits',
      'ENOSPC: no space left on device',
    ]);
    expect(onDisk(store).accounts[0]!.credits).toBe(99);
    expect((await store.snapshot()).accounts[0]!.credits).toBe(99);
    expect(await store.update(charge(5))).toBe(94);
    expect(onDisk(store).accounts[0]!.credits).toBe(94);
    expect(readFileSync(join(store.dataDir, 'state.json'), 'utf8').endsWith('\n')).toBe(true);
  });
});

describe('serializeState', () => {
  const image = (n: number): StoredImage => ({
    id: `img-${n}`,
    seq: n,
    accountId: 'acct_a',
    createdAt: '2030-01-01T00:00:00.000Z',
    inHistory: n % 2 === 0,
    width: 1280,
    height: 720,
    bytes: 1000 + n,
    scene: { coordinates: { lat: n, lng: -n }, resolution: 'HD', tags: [`t"${n}`], prompt: 'ünïcode ✓' } as never,
  });

  it('writes exactly what JSON.stringify writes, however often a record is written again', () => {
    const state: SandboxState = {
      version: 1,
      signingSecret: 'secret',
      defaultAccountId: 'acct_a',
      nextSeq: 4,
      accounts: [{ id: 'acct_a', keyId: 'key_a', key: 'sbx_a', credits: 7, createdAt: '2030-01-01T00:00:00.000Z' }],
      images: [image(1), image(2)],
    };
    expect(serializeState(state).toString('utf8')).toBe(`${JSON.stringify(state)}\n`);
    // A later write shares the stored records and changes everything around them.
    const later = { ...state, nextSeq: 5, accounts: [{ ...state.accounts[0]!, credits: 6 }], images: [...state.images.slice(1), image(3)] };
    expect(serializeState(later).toString('utf8')).toBe(`${JSON.stringify(later)}\n`);
    expect(serializeState({ ...later, images: [] }).toString('utf8')).toBe(`${JSON.stringify({ ...later, images: [] })}\n`);
  });

  it('is what the store writes, so a state read back from disk is the one written', async () => {
    const store = await openStore();
    await Promise.all(
      [1, 2, 3].map((n) =>
        store.update((state) => {
          state.images.push({ ...image(n), seq: state.nextSeq++ });
        }),
      ),
    );
    const text = readFileSync(store.statePath, 'utf8');
    expect(text).toBe(`${JSON.stringify(JSON.parse(text))}\n`);
    expect(onDisk(store).images.map((stored) => stored.id)).toEqual(['img-1', 'img-2', 'img-3']);
  });
});

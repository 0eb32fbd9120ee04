// Persistence of one sandbox data directory:
//
//   <dataDir>/state.json      accounts, image records, signing secret (JSON, mode 0600)
//   <dataDir>/state.lock      O_EXCL lock file held while state.json is rewritten
//   <dataDir>/images/<id>.jpg one file per stored image
//
// Mutations are group-committed: while one write of state.json is in flight,
// the updates that arrive meanwhile wait, and the next write applies them all
// at once. Each write takes the lock, re-reads state.json (another process may
// have changed it), applies its batch of updates in arrival order and replaces
// the file atomically; every caller's promise settles once that write is
// durable. So a burst of N updates costs a few writes, not N. The re-read is
// parsed only when the bytes differ from the last ones this process read or
// wrote (the file grows with the image history). Reads use the cached copy
// unless the file changed on disk (inode, size, mtime). Image files
// are written before the record that names them and removed after it, so a
// crash leaves at worst an orphan file, which the start-up sweep removes.
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { GenerationRequest } from '../../api/schema.js';
import type { StoredAccount } from './accounts.js';
import { TEMP_SUFFIX, writeFileAtomic } from '../../files/atomic-file.js';
import { makeDirectories } from '../../files/directories.js';
import { withFileLock } from '../../files/file-lock.js';
import { URL_LIFETIME_MS } from './signing.js';

export const STATE_VERSION = 1;
const STATE_FILE = 'state.json';
const LOCK_FILE = 'state.lock';
const IMAGES_DIR = 'images';
/** Temp and orphan files younger than this may belong to a write in progress elsewhere. */
const LEFTOVER_AGE_MS = 60_000;

export type StoredScene = Omit<GenerationRequest, 'saveImage'>;

export interface StoredImage {
  id: string;
  /** Creation order within the data directory; breaks ties when sorting. */
  seq: number;
  accountId: string;
  createdAt: string;
  /** False for async results with saveImage:false: reachable through their signed URL only, never listed. */
  inHistory: boolean;
  width: number;
  height: number;
  bytes: number;
  scene: StoredScene;
}

export interface SandboxState {
  version: typeof STATE_VERSION;
  signingSecret: string;
  defaultAccountId: string | null;
  nextSeq: number;
  accounts: StoredAccount[];
  images: StoredImage[];
}

export class StateVersionError extends Error {}

function freshState(): SandboxState {
  return {
    version: STATE_VERSION,
    signingSecret: randomBytes(32).toString('hex'),
    defaultAccountId: null,
    nextSeq: 1,
    accounts: [],
    images: [],
  };
}

function checkState(value: unknown, path: string): SandboxState {
  const state = value as Partial<SandboxState> | null;
  if (!state || typeof state !== 'object') throw new Error('not a JSON object');
  if (typeof state.version === 'number' && state.version > STATE_VERSION) {
    throw new StateVersionError(`${path} was written by a newer aerial (state version ${state.version}); upgrade aerial or use another --data-dir`);
  }
  if (
    state.version !== STATE_VERSION ||
    typeof state.signingSecret !== 'string' ||
    typeof state.nextSeq !== 'number' ||
    !Array.isArray(state.accounts) ||
    !Array.isArray(state.images)
  ) {
    throw new Error('missing or mistyped fields');
  }
  return state as SandboxState;
}

/**
 * Forgets unlisted async results (saveImage:false) whose signed URLs have
 * expired; returns their ids so the caller can remove the files afterwards.
 */
export function dropExpiredUnlisted(state: SandboxState, nowMs: number): string[] {
  const cutoff = nowMs - URL_LIFETIME_MS;
  const expired = state.images.filter((image) => !image.inHistory && Date.parse(image.createdAt) < cutoff);
  if (expired.length) state.images = state.images.filter((image) => !expired.includes(image));
  return expired.map((image) => image.id);
}

/** Each stored image record's JSON bytes, made once: records never change after they are stored. */
const imageJson = new WeakMap<StoredImage, Buffer>();
const COMMA = Buffer.from(',');

/**
 * The bytes of state.json: JSON.stringify(state) and a newline, with `images`
 * last (where every state this module makes has it). Every write rewrites the
 * whole history, so each image record is serialised only the first time and
 * its bytes reused after that: a write costs the accounts' JSON and a copy
 * (about 1 ms for 5 000 images, against 7 ms for stringifying it all).
 */
export function serializeState(state: SandboxState): Buffer {
  const { images, ...rest } = state;
  const parts: Buffer[] = [Buffer.from(`${JSON.stringify(rest).slice(0, -1)},"images":[`)];
  images.forEach((image, index) => {
    let json = imageJson.get(image);
    if (json === undefined) imageJson.set(image, (json = Buffer.from(JSON.stringify(image))));
    if (index > 0) parts.push(COMMA);
    parts.push(json);
  });
  parts.push(Buffer.from(']}\n'));
  return Buffer.concat(parts);
}

/** Ids become file names; anything else is refused rather than escaped. */
export function isSafeId(id: string): boolean {
  return /^[A-Za-z0-9_-]{1,100}$/.test(id);
}

interface PendingUpdate {
  mutate: (state: SandboxState) => unknown;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * A copy that updates can change without touching the original. Updates change
 * scalars, add or remove array entries and edit accounts in place; image
 * records are never edited once stored, so they can be shared.
 */
function copyForUpdate(state: SandboxState): SandboxState {
  return { ...state, accounts: state.accounts.map((account) => ({ ...account })), images: [...state.images] };
}

/** Lets a refused update (one that throws, e.g. a 402) be undone without undoing the rest of its batch. */
function checkpoint(state: SandboxState): () => void {
  const saved = copyForUpdate(state);
  return () => void Object.assign(state, saved);
}

export class SandboxStore {
  /** The last state this process read or wrote, with the file's bytes and identity at the time. */
  private cached?: { state: SandboxState; fingerprint: string; bytes: Buffer | undefined };
  /** The state this process is writing right now: once renamed into place, readers need not parse it. */
  private writingNow?: { state: SandboxState; bytes: Buffer };
  /** Updates that arrived while a write was in flight: the next write applies them together. */
  private pending: PendingUpdate[] = [];
  /** True while this process writes (one write at a time; the lock file serialises processes). */
  private writing = false;

  private constructor(
    readonly dataDir: string,
    private readonly warn: (message: string) => void,
  ) {}

  static async open(dataDir: string, options: { onWarning?: (message: string) => void } = {}): Promise<SandboxStore> {
    await makeDirectories(join(dataDir, IMAGES_DIR), 0o700);
    return new SandboxStore(dataDir, options.onWarning ?? (() => {}));
  }

  get statePath(): string {
    return join(this.dataDir, STATE_FILE);
  }

  private get lockPath(): string {
    return join(this.dataDir, LOCK_FILE);
  }

  /** The current state, read-only: reloaded only when another writer replaced the file. */
  async snapshot(): Promise<SandboxState> {
    const fingerprint = await this.fingerprint();
    if (this.cached?.fingerprint === fingerprint) return this.cached.state;
    const bytes = await this.readBytes();
    const state = this.knownState(bytes) ?? (await this.parseState(bytes, false));
    this.cached = { state, fingerprint, bytes };
    return state;
  }

  /**
   * Applies `mutate` to the freshest state under the lock and persists it; resolves
   * with its result once the change is durable. `mutate` must be synchronous.
   * When it throws, its change is undone and the error propagates (e.g. a 402);
   * the other updates of the same write are not affected.
   */
  update<T>(mutate: (state: SandboxState) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ mutate, resolve: resolve as (result: unknown) => void, reject });
      if (!this.writing) void this.writeBatches();
    });
  }

  /** Writes until no update is waiting: each write takes everything that arrived during the previous one. */
  private async writeBatches(): Promise<void> {
    this.writing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        await this.commit(batch);
      }
    } finally {
      this.writing = false;
    }
  }

  /** One lock, one read and (when anything changed) one durable write for a whole batch. Never throws. */
  private async commit(batch: PendingUpdate[]): Promise<void> {
    const settle: Array<(writeError?: unknown) => void> = [];
    try {
      await withFileLock(this.lockPath, async () => {
        const state = await this.stateToUpdate();
        let changed = false;
        for (const update of batch) {
          const undo = checkpoint(state);
          try {
            const result = update.mutate(state);
            changed = true;
            settle.push((writeError) => (writeError === undefined ? update.resolve(result) : update.reject(writeError)));
          } catch (error) {
            undo();
            settle.push(() => update.reject(error));
          }
        }
        if (!changed) return;
        const bytes = serializeState(state);
        this.writingNow = { state, bytes };
        try {
          await writeFileAtomic(this.statePath, bytes, 0o600);
        } finally {
          this.writingNow = undefined;
        }
        this.cached = { state, fingerprint: await this.fingerprint(), bytes };
      });
    } catch (error) {
      // The lock, the read or the write failed: no update of this batch is durable.
      const failure = error ?? new Error('sandbox state write failed');
      for (const update of batch.slice(settle.length)) update.reject(failure);
      for (const done of settle) done(failure);
      return;
    }
    for (const done of settle) done();
  }

  imagePath(id: string): string {
    if (!isSafeId(id)) throw new Error(`unsafe image id ${JSON.stringify(id)}`);
    return join(this.dataDir, IMAGES_DIR, `${id}.jpg`);
  }

  writeImage(id: string, jpeg: Buffer): Promise<void> {
    return writeFileAtomic(this.imagePath(id), jpeg, 0o600);
  }

  async readImage(id: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.imagePath(id));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async removeImageFile(id: string): Promise<void> {
    await unlink(this.imagePath(id)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  /**
   * Start-up housekeeping after `dropExpiredUnlisted`: removes the files of the
   * dropped images, and temp or orphan files a crash left behind (old enough
   * that no live writer can still own them).
   */
  async sweepFiles(droppedIds: readonly string[]): Promise<void> {
    for (const id of droppedIds) await this.removeImageFile(id);
    const known = new Set((await this.snapshot()).images.map((image) => image.id));
    const imagesDir = join(this.dataDir, IMAGES_DIR);
    const candidates = [
      ...(await listDir(this.dataDir)).filter((name) => name.endsWith(TEMP_SUFFIX)).map((name) => join(this.dataDir, name)),
      ...(await listDir(imagesDir))
        .filter((name) => name.endsWith(TEMP_SUFFIX) || (name.endsWith('.jpg') && !known.has(name.slice(0, -4))))
        .map((name) => join(imagesDir, name)),
    ];
    for (const path of candidates) {
      try {
        if (Date.now() - (await stat(path)).mtimeMs > LEFTOVER_AGE_MS) await unlink(path);
      } catch {
        // Someone else swept it first.
      }
    }
  }

  private async fingerprint(): Promise<string> {
    try {
      const info = await stat(this.statePath, { bigint: true });
      return `${info.ino}:${info.size}:${info.mtimeNs}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
      throw error;
    }
  }

  /**
   * Under the lock: the state on disk, as a copy the caller may change. The
   * file's bytes are compared with what this process last read or wrote, and
   * when they match the cached state is copied instead of parsing the file again
   * (it grows with the image history). Bytes, not the file's identity: a reused
   * inode within one timestamp tick could make two different files look alike.
   */
  private async stateToUpdate(): Promise<SandboxState> {
    const bytes = await this.readBytes();
    const known = this.knownState(bytes);
    return known ? copyForUpdate(known) : this.parseState(bytes, true);
  }

  /** The state whose serialisation is exactly `bytes`, when this process has it at hand. */
  private knownState(bytes: Buffer | undefined): SandboxState | undefined {
    if (!bytes) return undefined;
    for (const known of [this.cached, this.writingNow]) if (known?.bytes?.equals(bytes)) return known.state;
    return undefined;
  }

  private async readBytes(): Promise<Buffer | undefined> {
    try {
      return await readFile(this.statePath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** With `repair` (only under the lock), an unreadable file is moved aside and the sandbox starts afresh. */
  private async parseState(bytes: Buffer | undefined, repair: boolean): Promise<SandboxState> {
    if (bytes === undefined) return freshState();
    try {
      return checkState(JSON.parse(bytes.toString('utf8')), this.statePath);
    } catch (error) {
      if (error instanceof StateVersionError || !repair) {
        throw error instanceof StateVersionError ? error : new Error(`sandbox state ${this.statePath} is unreadable: ${(error as Error).message}`);
      }
      const aside = `${this.statePath}.corrupt-${Date.now()}`;
      await rename(this.statePath, aside);
      this.warn(`sandbox state ${this.statePath} was unreadable (${(error as Error).message}); moved it to ${aside} and started afresh`);
      return freshState();
    }
  }
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

/**
 * Empties a data directory (`aerial sandbox reset`): its state and images go,
 * under the lock every write takes, so no write of another process is torn.
 * What was removed, or undefined when the directory held no sandbox data.
 */
export async function resetSandboxData(dataDir: string): Promise<{ images: number; accounts: number } | undefined> {
  const { rm } = await import('node:fs/promises');
  const exists = (path: string) => stat(path).then(() => true, () => false);
  if (!(await exists(join(dataDir, STATE_FILE))) && !(await exists(join(dataDir, IMAGES_DIR)))) return undefined;
  return withFileLock(join(dataDir, LOCK_FILE), async () => {
    let counts = { images: 0, accounts: 0 };
    try {
      const state = JSON.parse(await readFile(join(dataDir, STATE_FILE), 'utf8')) as Partial<SandboxState>;
      counts = { images: Array.isArray(state.images) ? state.images.length : 0, accounts: Array.isArray(state.accounts) ? state.accounts.length : 0 };
    } catch {
      // No state, or one that cannot be read: it goes all the same.
    }
    await rm(join(dataDir, STATE_FILE), { force: true });
    await rm(join(dataDir, IMAGES_DIR), { recursive: true, force: true });
    return counts;
  });
}

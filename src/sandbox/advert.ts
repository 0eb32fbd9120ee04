// A running `aerial sandbox` says so in its data directory (server.json: its
// URL, its process and the default account's key, mode 0600 beside state.json,
// which holds the keys anyway), so that `--sandbox` commands on the same data
// reach it instead of serving in-process: the image URLs they print (list
// --json) then stay good after the command ends, for as long as it runs. An
// in-process sandbox never says so: it ends with its command.
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../files/atomic-file.js';

const ADVERT_FILE = 'server.json';

export interface SandboxAdvert {
  url: string;
  pid: number;
  key: string;
}

/** Says, in `dataDir`, that this process serves it at `url`; the returned function takes it back (when it is still ours). */
export async function advertiseSandbox(dataDir: string, advert: Omit<SandboxAdvert, 'pid'>): Promise<() => Promise<void>> {
  const path = join(dataDir, ADVERT_FILE);
  await writeFileAtomic(path, `${JSON.stringify({ ...advert, pid: process.pid })}\n`, 0o600);
  return async () => {
    const current = await readAdvert(dataDir);
    // Another sandbox started on the same data since: its word stays.
    if (current?.pid === process.pid) await unlink(path).catch(() => {});
  };
}

/** The sandbox serving `dataDir` from another live process, if one says so. */
export async function runningSandbox(dataDir: string): Promise<SandboxAdvert | undefined> {
  const advert = await readAdvert(dataDir);
  if (!advert || advert.pid === process.pid) return undefined;
  try {
    process.kill(advert.pid, 0);
  } catch (error) {
    // EPERM: alive, but another user's; anything else (ESRCH): gone, its file left behind by a crash.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return advert;
}

async function readAdvert(dataDir: string): Promise<SandboxAdvert | undefined> {
  try {
    const value = JSON.parse(await readFile(join(dataDir, ADVERT_FILE), 'utf8')) as Partial<SandboxAdvert>;
    const { url, pid, key } = value;
    if (typeof url !== 'string' || !/^http:\/\//.test(url) || !Number.isInteger(pid) || (pid as number) <= 0 || typeof key !== 'string' || key === '') return undefined;
    return { url, pid: pid as number, key };
  } catch {
    return undefined;
  }
}

// Placeholder: the sandbox server is being written; this only fixes its interface.
export interface SandboxOptions {
  host?: string;
  port?: number;
  dataDir: string;
  credits?: number;
  key?: string;
  latencyMs?: number;
  failRate?: number;
  rateLimit?: number;
  dropRate?: number;
  webhookFail?: number;
  now?: () => number;
}
export interface RunningSandbox {
  url: string;
  port: number;
  defaultKey: string;
  close(): Promise<void>;
}
export function defaultSandboxDir(env: Record<string, string | undefined>): string {
  return `${env.AERIAL_CONFIG_DIR ?? ''}/sandbox`;
}
export async function startSandbox(_options: SandboxOptions): Promise<RunningSandbox> {
  throw new Error('sandbox not built yet');
}

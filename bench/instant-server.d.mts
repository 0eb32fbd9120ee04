export interface InstantServer {
  url: string;
  /** Generations answered so far. */
  answered(): number;
  /** When the first request since the start (or the last reset) arrived, epoch ms. */
  firstArrival(): number | undefined;
  reset(): void;
  close(): Promise<void>;
}
export function smallJpeg(): Buffer;
export function startInstantServer(image?: Buffer): Promise<InstantServer>;

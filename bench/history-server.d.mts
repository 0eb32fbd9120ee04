export interface HistoryRecord {
  id: string;
  url: string;
  coordinates: { latitude: number; longitude: number };
  resolution: string;
  createdAt: string;
  [field: string]: unknown;
}
export interface HistoryServer {
  url: string;
  count: number;
  /** List requests answered since the start (or the last reset). */
  listRequests(): number;
  /** Image downloads answered since the start (or the last reset). */
  imageRequests(): number;
  /** Every `size` the list requests asked for. */
  sizesAsked(): number[];
  reset(): void;
  close(): Promise<void>;
}
export function historyId(index: number): string;
export function historyIndex(id: string): number;
export function historyRecord(base: string, index: number): HistoryRecord;
export function startHistoryServer(options: { count: number; maxPageSize?: number; image?: Buffer; imageLatencyMs?: number }): Promise<HistoryServer>;

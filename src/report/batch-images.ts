// A batch's rows as report images: each row's request (location, scene, tags)
// with how it went (status, error, file). A row has no image id (the
// synchronous endpoint returns only the JPEG), so it is known by its row number;
// its time is when its file was written.
import { stat } from 'node:fs/promises';
import type { PlannedRow } from '../batch/plan.js';
import type { RowOutcome } from '../batch/summary.js';
import { sceneOf, type ReportImage } from './images.js';

export async function batchReportImages(rows: readonly PlannedRow[], outcomes: readonly RowOutcome[]): Promise<ReportImage[]> {
  const byRow = new Map(outcomes.map((outcome) => [outcome.row, outcome]));
  return Promise.all(
    rows.map(async (row): Promise<ReportImage> => {
      const outcome = byRow.get(row.row);
      const request = row.request;
      const status = outcome?.status ?? 'skipped';
      const file = outcome?.file ?? row.target;
      const written = status === 'done' && file ? await stat(file).catch(() => undefined) : undefined;
      return {
        row: row.row,
        lat: request?.coordinates.lat,
        lng: request?.coordinates.lng,
        file,
        scene: request ? sceneOf(request) : {},
        tags: request?.tags ?? [],
        status,
        error: outcome?.error ?? row.error ?? (outcome ? undefined : 'not started'),
        createdAt: written?.mtime.toISOString(),
      };
    }),
  );
}

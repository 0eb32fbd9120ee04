// A batch's rows as report images, and the report and GeoJSON written from
// them: each row's request (location, scene, tags) with how it went (status,
// error, file). A row has no image id (the synchronous endpoint returns only
// the JPEG), so it is known by its row number; its time is when its file was
// written. `batch --report/--geojson` calls writeBatchOutputs at the end of a
// run; anything else that knows a batch's rows and their states can too.
import { stat } from 'node:fs/promises';
import type { PlannedRow } from '../../batch/plan.js';
import type { RowOutcome } from '../../bulk/summary.js';
import { sceneOf, type ReportImage } from '../../report/images.js';
import { writeImageOutputs, type ImageOutputs, type WrittenOutputs } from '../../report/outputs.js';

/**
 * What became of a row, as much as a report needs: a run's RowOutcome is one;
 * so is a row's last manifest record once its file is made absolute and its
 * status is one of these. A row with no state is shown as skipped, "not started".
 */
export type BatchRowState = Pick<RowOutcome, 'row' | 'status' | 'file' | 'error'>;

export async function batchReportImages(rows: readonly PlannedRow[], states: readonly BatchRowState[]): Promise<ReportImage[]> {
  const byRow = new Map(states.map((state) => [state.row, state]));
  return Promise.all(
    rows.map(async (row): Promise<ReportImage> => {
      const state = byRow.get(row.row);
      const request = row.request;
      const status = state?.status ?? 'skipped';
      const file = state?.file ?? row.target;
      const written = status === 'done' && file ? await stat(file).catch(() => undefined) : undefined;
      return {
        row: row.row,
        lat: request?.coordinates.lat,
        lng: request?.coordinates.lng,
        file,
        scene: request ? sceneOf(request) : {},
        tags: request?.tags ?? [],
        status,
        error: state?.error ?? row.error ?? (state ? undefined : 'not started'),
        createdAt: written?.mtime.toISOString(),
      };
    }),
  );
}

/**
 * The HTML report (thumbnails in `<report>.thumbnails/` beside it) and/or the
 * GeoJSON of a batch's rows, every row shown, failed and unstarted ones
 * included. Paths are absolute and checked beforehand (checkOutputFile).
 */
export async function writeBatchOutputs(rows: readonly PlannedRow[], states: readonly BatchRowState[], outputs: Omit<ImageOutputs, 'noun'>): Promise<WrittenOutputs> {
  return writeImageOutputs(await batchReportImages(rows, states), { ...outputs, noun: 'row' });
}

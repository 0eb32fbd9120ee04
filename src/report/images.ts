// The images a report or a GeoJSON file describes, as plain records: where an
// image is, what its file is, how it was asked for and how it went. Batch rows
// and exported history records become these (commands/batch/report-images.ts,
// export-images.ts); the builders (html.ts, geojson.ts) take nothing else.
import { readWire, sceneSpec, SCENE_FIELD_NAMES, wirePath, flagName, type SceneField } from '../scene/vocabulary.js';

export type ReportStatus = 'done' | 'failed' | 'skipped';

export interface ReportImage {
  /** The image's id in the account's history, when known (export; not a batch row's). */
  id?: string;
  /** The batch row, for an image without an id. */
  row?: number;
  lat?: number;
  lng?: number;
  /** Absolute path of the JPEG; it may not exist (a failed row). */
  file?: string;
  /** Scene parameters by wire name (resolution, zoom, …, prompt), those that are known. */
  scene: Record<string, unknown>;
  tags: string[];
  status: ReportStatus;
  /** Why a row failed or was skipped. */
  error?: string;
  /** ISO 8601. */
  createdAt?: string;
}

/**
 * The scene parameters a report shows: every field of the vocabulary that
 * goes into the request, except the location (shown as such) and the tags
 * (shown as tags).
 */
export const REPORT_SCENE_FIELDS: readonly SceneField[] = SCENE_FIELD_NAMES.filter((field) => {
  const kind = sceneSpec(field).kind;
  return kind !== 'coordinate' && kind !== 'location' && kind !== 'list' && wirePath(field) !== undefined;
});

/** A field's key in a report image's scene (its wire name) and its label (its flag's name). */
export const sceneKey = (field: SceneField): string => wirePath(field)!;
export const sceneLabel = (field: SceneField): string => flagName(field);

/** The scene parameters found in a request body or a list record (both use the wire names). */
export function sceneOf(body: object): Record<string, unknown> {
  const scene: Record<string, unknown> = {};
  for (const field of REPORT_SCENE_FIELDS) {
    const value = readWire(body, field);
    if (value !== undefined && value !== null) scene[sceneKey(field)] = value;
  }
  return scene;
}

/** Tags as strings, whatever a record holds there. */
export function tagsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((tag): tag is string => typeof tag === 'string') : [];
}

/** A coordinate pair that can be placed on a map, or undefined. */
export function located(image: Pick<ReportImage, 'lat' | 'lng'>): { lat: number; lng: number } | undefined {
  const { lat, lng } = image;
  if (typeof lat !== 'number' || typeof lng !== 'number' || !Number.isFinite(lat) || !Number.isFinite(lng)) return undefined;
  if (Math.abs(lat) > 90 || Math.abs(lng) > 180) return undefined;
  return { lat, lng };
}

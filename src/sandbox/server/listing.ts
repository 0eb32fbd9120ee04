// The list endpoint's query (page, size, sort) and the page it answers with.
import { RESOLUTIONS } from '../../api/enums.js';
import { validationFailed } from './http-io.js';
import type { StoredImage } from './store.js';

export const DEFAULT_PAGE_SIZE = 20;
/**
 * The spec shows no maximum; the sandbox refuses more than this rather than
 * silently clamping. 1,000 is the size `list --all` and `export` ask for first.
 */
export const MAX_PAGE_SIZE = 1000;

const SORTABLE = ['createdAt', 'id', 'resolution'] as const;
type SortProperty = (typeof SORTABLE)[number];

export interface SortKey {
  property: SortProperty;
  direction: 'asc' | 'desc';
}

export interface ListQuery {
  page: number;
  size: number;
  sort: SortKey[];
}

/** Newest first when the caller names no order. */
export const DEFAULT_SORT: SortKey[] = [{ property: 'createdAt', direction: 'desc' }];

function wholeNumber(params: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const values = params.getAll(name).filter((value) => value !== '');
  if (values.length === 0) return fallback;
  const rangeText = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
  if (values.length > 1) throw validationFailed(`${name} may be given once; got ${values.length} values`);
  const raw = values[0]!.trim();
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw validationFailed(`${name} must be a whole number ${rangeText}; got '${values[0]!.slice(0, 40)}'`);
  }
  return Number(raw);
}

/**
 * Spring-style sort parameters: `property[,property…][,asc|desc]`, repeatable;
 * the direction defaults to asc, as in Spring Data.
 */
export function parseSort(values: string[]): SortKey[] {
  const keys: SortKey[] = [];
  for (const value of values) {
    const parts = value.split(',').map((part) => part.trim()).filter(Boolean);
    if (parts.length === 0) continue;
    let direction: SortKey['direction'] = 'asc';
    const last = parts[parts.length - 1]!.toLowerCase();
    if (last === 'asc' || last === 'desc') {
      direction = last;
      parts.pop();
    }
    if (parts.length === 0) throw validationFailed(`sort '${value.slice(0, 60)}' names no property; use e.g. createdAt,desc`);
    for (const property of parts) {
      if (!(SORTABLE as readonly string[]).includes(property)) {
        throw validationFailed(`sort property '${property.slice(0, 40)}' is not supported; use one of ${SORTABLE.join(', ')}`);
      }
      keys.push({ property: property as SortProperty, direction });
    }
  }
  return keys;
}

export function parseListQuery(params: URLSearchParams): ListQuery {
  const page = wholeNumber(params, 'page', 0, 0, Number.MAX_SAFE_INTEGER);
  const size = wholeNumber(params, 'size', DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE);
  const sort = parseSort(params.getAll('sort'));
  return { page, size, sort: sort.length ? sort : DEFAULT_SORT };
}

function compareBy(property: SortProperty, a: StoredImage, b: StoredImage): number {
  switch (property) {
    case 'createdAt':
      return Date.parse(a.createdAt) - Date.parse(b.createdAt);
    case 'id':
      return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    case 'resolution':
      // By pixel count (HD < FHD < UHD), which is what anyone sorting by resolution means.
      return RESOLUTIONS.indexOf(a.scene.resolution) - RESOLUTIONS.indexOf(b.scene.resolution);
  }
}

/**
 * A total order, so pages never overlap or skip: ties after the requested keys
 * are broken by creation order, in the direction of the first key.
 */
export function sortImages(images: readonly StoredImage[], sort: readonly SortKey[]): StoredImage[] {
  const tieDirection = sort[0]?.direction === 'desc' ? -1 : 1;
  return [...images].sort((a, b) => {
    for (const key of sort) {
      const order = compareBy(key.property, a, b);
      if (order !== 0) return key.direction === 'desc' ? -order : order;
    }
    return (a.seq - b.seq) * tieDirection;
  });
}

export interface PageOf<T> {
  content: T[];
  totalElements: number;
  totalPages: number;
  page: number;
  size: number;
}

/** A page past the end is empty but still carries the true totals. */
export function pageOf<T>(items: readonly T[], page: number, size: number): PageOf<T> {
  const start = page * size;
  return {
    content: start < items.length ? items.slice(start, start + size) : [],
    totalElements: items.length,
    totalPages: Math.ceil(items.length / size),
    page,
    size,
  };
}

/** The spec's image record (id, url, coordinates.latitude/longitude, resolution, createdAt) plus scene details. */
export function imageRecord(image: StoredImage, url: string): Record<string, unknown> {
  const { scene } = image;
  return {
    id: image.id,
    url,
    coordinates: { latitude: scene.coordinates.lat, longitude: scene.coordinates.lng },
    resolution: scene.resolution,
    createdAt: image.createdAt,
    zoom: scene.zoom,
    bearing: scene.bearing,
    angle: scene.angle,
    weather: scene.weather,
    daytime: scene.daytime,
    aspectRatio: scene.aspectRatio,
    epoch: scene.epoch,
    tags: scene.tags,
    ...(scene.prompt !== undefined ? { prompt: scene.prompt } : {}),
    width: image.width,
    height: image.height,
  };
}

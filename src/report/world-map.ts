// The report's world map: Natural Earth's land at 1:110m (world-atlas, as
// TopoJSON, bundled with the CLI: no network), drawn as one SVG path in an
// equirectangular projection, on which each image is a marker.
import { feature } from 'topojson-client';
import type { Topology } from 'topojson-specification';
import land from 'world-atlas/land-110m.json' with { type: 'json' };

/** SVG units per degree: the map is 720 × 360. */
const SCALE = 2;
export const MAP_WIDTH = 360 * SCALE;
export const MAP_HEIGHT = 180 * SCALE;

/** Where a position falls on the map (equirectangular: longitude and latitude as x and y). */
export function project(lng: number, lat: number): [number, number] {
  return [round((lng + 180) * SCALE), round((90 - lat) * SCALE)];
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

let path: string | undefined;

/** The land as SVG path data, made once. */
export function landPath(): string {
  if (path !== undefined) return path;
  const topology = land as unknown as Topology;
  // The land object is a collection of (multi)polygons.
  const shapes = feature(topology, topology.objects.land!) as unknown as GeoJSON.Feature | GeoJSON.FeatureCollection;
  const polygons = (shapes.type === 'FeatureCollection' ? shapes.features : [shapes]).flatMap(({ geometry }) =>
    geometry.type === 'Polygon' ? [geometry.coordinates] : geometry.type === 'MultiPolygon' ? geometry.coordinates : [],
  );
  const parts: string[] = [];
  for (const polygon of polygons) {
    for (const ring of polygon) {
      // A ring across the antimeridian (Chukotka, Fiji) jumps from +180° to -180°: its longitudes are made
      // continuous instead, and the part past the edge is drawn again from the other edge (the SVG clips both).
      const unwrapped: Array<[number, number]> = [];
      for (const [lng, lat] of ring) {
        let x = lng!;
        const previous = unwrapped[unwrapped.length - 1]?.[0];
        if (previous !== undefined) while (x - previous > 180) x -= 360;
        if (previous !== undefined) while (x - previous < -180) x += 360;
        unwrapped.push([x, lat!]);
      }
      const xs = unwrapped.map(([x]) => x);
      const shifts = [0, ...(Math.max(...xs) > 180 ? [-360] : []), ...(Math.min(...xs) < -180 ? [360] : [])];
      for (const shift of shifts) {
        let last = '';
        const points: string[] = [];
        for (const [lng, lat] of unwrapped) {
          const point = project(lng + shift, lat).join(' ');
          if (point !== last) points.push(point);
          last = point;
        }
        if (points.length > 2) parts.push(`M${points.join('L')}Z`);
      }
    }
  }
  path = parts.join('');
  return path;
}

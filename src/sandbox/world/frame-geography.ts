// The geography of one frame, on the renderer's grid of knots (every
// `stride` pixels both ways; the renderer interpolates between them):
//
//   water   share of open water (sea or lake) around the knot, box-filtered
//           over ±`reach` knots, so its 0.5 contour is the shore
//   river   metres from the nearest river's centre line
//   urban   how built-up the ground is, from the places around and their populations
//   climate land cover shares (climate.ts) per knot row, at the row's middle
//
// Everything is worked out in local metres east and north of the request's
// point (an equirectangular map around it, which is affine in longitude and
// latitude, so straight edges stay straight). Each frame row is a straight
// line on the ground, for the top view and the oblique ones alike: the
// shores are found by crossing those lines with the coast and shore edges near
// the frame, starting from whether the line's first point is on land.
import type { Climate } from './climate.js';
import { CLIMATE_CHANNELS } from './climate.js';
import {
  climateInto,
  EdgeStamps,
  forEachEdgeNear,
  forEachPlaceNear,
  insideAt,
  placeCountry,
  placeName,
  type Atlas,
  type EdgeLayer,
} from './atlas.js';
import { METRES_PER_DEGREE, wrapLongitude } from './grid.js';

/** A frame row on the ground: the point of pixel x is (east, north) = origin + x · step, `ahead` metres in front of the camera. */
export interface GroundLine {
  originEast: number;
  originNorth: number;
  stepEast: number;
  stepNorth: number;
  ahead: number;
}

export interface FrameGeometry {
  width: number;
  height: number;
  stride: number;
  /** Knot columns (x = k · stride) and rows (y = K · stride). */
  columns: number;
  rows: number;
  lat: number;
  lng: number;
  /** Where frame row y (any real y) lies on the ground. Ahead must fall as y grows. */
  line(y: number): GroundLine;
  /** Ground farther ahead than this is given the geography at this distance (it is lost in haze anyway). */
  farthest: number;
  /** Metres per pixel at the frame's centre: sets the shore filter's reach. */
  metresPerPixel: number;
  /** How far places' built-up areas reach, as a share of the present day's (the past had smaller towns). */
  townScale: number;
}

/** The river distance of knots with no river near: far, but finite, so interpolating between knots stays a number. */
const NO_RIVER = 1e6;
/** Half width of a Natural Earth 1:50m river, metres: these are the great rivers. */
export const RIVER_HALF_WIDTH = 110;
/** Metres over which the shore filter blends, at most, whatever the zoom. */
const SHORE_REACH_METRES = 150;
/** Built-up radius of a place of 10 000 people, metres; it grows with population^0.45. */
const TOWN_RADIUS = 1200;
/** The farthest any place's built-up area reaches, in degrees of latitude (a metropolis of 20 million). */
const MAX_TOWN_REACH_DEGREES = (TOWN_RADIUS * (2000 ** 0.45)) / METRES_PER_DEGREE;

/** A place near the frame: its population, where it is (metres east and north of the frame's point) and how far its built-up area reaches. */
interface NearbyPlace {
  index: number;
  population: number;
  east: number;
  north: number;
  radius: number;
}

/** A place with its name and country (ISO 3166-1 alpha-2), from GeoNames. */
export interface Place extends NearbyPlace {
  name: string;
  country: string;
}

export class FrameGeography {
  readonly water: Float32Array;
  readonly river: Float32Array;
  readonly urban: Float32Array;
  /** CLIMATE_CHANNELS.length values per knot row. */
  readonly climate: Float32Array;
  /** The shore filter's reach, in knots. */
  readonly reach: number;

  private readonly metresEast: number;
  private readonly firstRow: number;
  private readonly lines: GroundLine[] = [];

  constructor(
    private readonly world: Atlas,
    private readonly frame: FrameGeometry,
  ) {
    const { columns, rows } = frame;
    this.water = new Float32Array(columns * rows);
    this.river = new Float32Array(columns * rows).fill(NO_RIVER);
    this.urban = new Float32Array(columns * rows);
    this.climate = new Float32Array(rows * CLIMATE_CHANNELS.length);
    this.metresEast = METRES_PER_DEGREE * Math.max(1e-3, Math.cos((frame.lat * Math.PI) / 180));
    this.reach = Math.max(1, Math.min(8, Math.round(SHORE_REACH_METRES / (frame.stride * frame.metresPerPixel))));
    // Rows above the frame are never drawn; rows beyond `farthest` take its geography.
    this.firstRow = Math.max(0, this.firstRowWithin(frame.farthest));
    for (let K = 0; K < rows; K++) this.lines.push(this.lineAt(K * frame.stride));
    this.fillWater();
    this.fillRivers();
    this.fillUrban();
    this.fillClimate();
  }

  /** The ground line of frame row y, held at `farthest` for rows beyond it. */
  private lineAt(y: number): GroundLine {
    return this.frame.line(Math.max(y, this.firstRow));
  }

  /** The first (top) frame row whose ground lies no farther than `farthest`: bisection, since ahead falls with y. */
  private firstRowWithin(farthest: number): number {
    let low = -this.frame.height;
    let high = this.frame.height * 2;
    if (this.frame.line(low).ahead <= farthest) return low;
    for (let i = 0; i < 40; i++) {
      const middle = (low + high) / 2;
      if (this.frame.line(middle).ahead > farthest) low = middle;
      else high = middle;
    }
    return high;
  }

  private toLngLat(east: number, north: number): [number, number] {
    return [this.frame.lng + east / this.metresEast, this.frame.lat + north / METRES_PER_DEGREE];
  }

  /** The longitude and latitude box around the ground the frame shows, with `margin` pixels either side of each row. */
  private footprint(margin: number): [number, number, number, number] {
    const { width, rows, stride } = this.frame;
    let west = Infinity;
    let south = Infinity;
    let east = -Infinity;
    let north = -Infinity;
    for (const y of [this.firstRow, (rows - 1) * stride + margin]) {
      const line = this.lineAt(y);
      for (const x of [-margin, width + margin]) {
        const e = line.originEast + x * line.stepEast;
        const n = line.originNorth + x * line.stepNorth;
        west = Math.min(west, e);
        east = Math.max(east, e);
        south = Math.min(south, n);
        north = Math.max(north, n);
      }
    }
    const [lngWest, latSouth] = this.toLngLat(west, south);
    const [lngEast, latNorth] = this.toLngLat(east, north);
    return [lngWest, Math.max(-90, latSouth), lngEast, Math.min(90, latNorth)];
  }

  /** The layer's edges near the frame in local metres (x0, y0, x1, y1 each), found through the index. */
  private localEdges(layer: EdgeLayer, box: [number, number, number, number], stamps: EdgeStamps): Float64Array {
    const found: number[] = [];
    const [west, south, east, north] = box;
    forEachEdgeNear(layer, west, south, east, north, stamps, (edge) => found.push(edge));
    const out = new Float64Array(found.length * 4);
    const { vertices } = layer;
    for (let i = 0; i < found.length; i++) {
      const v = found[i]! * 2;
      const lngA = vertices[v]!;
      const dA = wrapLongitude(lngA - this.frame.lng);
      const dB = dA + (vertices[v + 2]! - lngA);
      out[i * 4] = dA * this.metresEast;
      out[i * 4 + 1] = (vertices[v + 1]! - this.frame.lat) * METRES_PER_DEGREE;
      out[i * 4 + 2] = dB * this.metresEast;
      out[i * 4 + 3] = (vertices[v + 3]! - this.frame.lat) * METRES_PER_DEGREE;
    }
    return out;
  }

  /**
   * Open water: for sample lines every third of a knot, the spans of water
   * along the line (crossings of coast and lake-shore edges, from the state
   * at the line's start), integrated into each knot's ±reach box; then the
   * sample lines within ±reach knots of each knot row are averaged.
   */
  private fillWater(): void {
    const { width, stride, columns, rows } = this.frame;
    const reach = this.reach;
    const margin = (reach + 1) * stride;
    const box = this.footprint(margin);
    const stamps = new EdgeStamps();
    const coast = this.localEdges(this.world.land, box, stamps);
    const shores = this.localEdges(this.world.lakes, box, stamps);
    if (coast.length === 0 && shores.length === 0) {
      // No shore near: the whole frame is as wet as its point.
      const { lng, lat } = this.frame;
      this.water.fill(!insideAt(this.world.land, lng, lat) || insideAt(this.world.lakes, lng, lat) ? 1 : 0);
      return;
    }
    const samplesPerKnot = 3;
    const sampleRows = (rows - 1) * samplesPerKnot + 1;
    const samples = new Float32Array(sampleRows * columns);
    const spans: number[] = [];
    const events: number[] = [];
    const half = reach * stride;
    for (let j = 0; j < sampleRows; j++) {
      const y = (j * stride) / samplesPerKnot;
      if (j > 0 && y < this.firstRow) {
        samples.copyWithin(j * columns, (j - 1) * columns, j * columns);
        continue;
      }
      const line = this.lineAt(y);
      events.length = 0;
      crossings(coast, line, -margin, width + margin, 0, events);
      crossings(shores, line, -margin, width + margin, 1, events);
      const [lng, lat] = this.toLngLat(line.originEast - margin * line.stepEast, line.originNorth - margin * line.stepNorth);
      let onLand = insideAt(this.world.land, lng, lat);
      let inLake = insideAt(this.world.lakes, lng, lat);
      // Spans of water: where not on land, or in a lake.
      sortPairs(events);
      spans.length = 0;
      let start = !onLand || inLake ? -margin : NaN;
      for (let e = 0; e < events.length; e += 2) {
        if (events[e + 1] === 0) onLand = !onLand;
        else inLake = !inLake;
        const wet = !onLand || inLake;
        if (wet && Number.isNaN(start)) start = events[e]!;
        else if (!wet && !Number.isNaN(start)) {
          spans.push(start, events[e]!);
          start = NaN;
        }
      }
      if (!Number.isNaN(start)) spans.push(start, width + margin);
      for (let k = 0; k < columns; k++) {
        const centre = k * stride;
        samples[j * columns + k] = spans.length === 0 ? 0 : overlap(spans, centre - half, centre + half) / (2 * half);
      }
    }
    // The vertical half of the box: sample rows within ±reach knots, as a running sum down each column.
    const halfRows = reach * samplesPerKnot;
    const sampleAt = (j: number, k: number) => samples[Math.min(sampleRows - 1, Math.max(0, j)) * columns + k]!;
    for (let k = 0; k < columns; k++) {
      let sum = 0;
      for (let j = -halfRows; j <= halfRows; j++) sum += sampleAt(j, k);
      for (let K = 0; K < rows; K++) {
        this.water[K * columns + k] = sum / (2 * halfRows + 1);
        const centre = K * samplesPerKnot;
        for (let j = centre + 1; j <= centre + samplesPerKnot; j++) sum += sampleAt(j + halfRows, k) - sampleAt(j - halfRows - 1, k);
      }
    }
  }

  /** Distance from each knot to the nearest river centre line, for rivers near the frame. */
  private fillRivers(): void {
    const { stride, columns, rows } = this.frame;
    const reachMetres = RIVER_HALF_WIDTH * 3;
    const box = this.footprint(stride);
    const grow = reachMetres / METRES_PER_DEGREE;
    const edges = this.localEdges(this.world.rivers, [box[0] - grow * 4, box[1] - grow, box[2] + grow * 4, box[3] + grow], new EdgeStamps());
    if (edges.length === 0) return;
    const squared = new Float64Array(columns);
    for (let K = 0; K < rows; K++) {
      const line = this.lines[K]!;
      const stepSquared = line.stepEast * line.stepEast + line.stepNorth * line.stepNorth;
      const length = Math.sqrt(stepSquared);
      squared.fill(NO_RIVER * NO_RIVER);
      let any = false;
      for (let i = 0; i < edges.length; i += 4) {
        const ax = edges[i]!;
        const ay = edges[i + 1]!;
        const bx = edges[i + 2]!;
        const by = edges[i + 3]!;
        // Only segments that come near this row's line, and only the knots along the row that they come near.
        const a = sideOfLine(line, ax, ay) / length;
        const b = sideOfLine(line, bx, by) / length;
        if (Math.abs(a) > reachMetres && Math.abs(b) > reachMetres && a > 0 === b > 0) continue;
        const xa = ((ax - line.originEast) * line.stepEast + (ay - line.originNorth) * line.stepNorth) / stepSquared;
        const xb = ((bx - line.originEast) * line.stepEast + (by - line.originNorth) * line.stepNorth) / stepSquared;
        const slack = reachMetres / length;
        const from = Math.max(0, Math.ceil((Math.min(xa, xb) - slack) / stride));
        const to = Math.min(columns - 1, Math.floor((Math.max(xa, xb) + slack) / stride));
        for (let k = from; k <= to; k++) {
          const x = k * stride;
          const d = distanceToSegmentSquared(line.originEast + x * line.stepEast, line.originNorth + x * line.stepNorth, ax, ay, bx, by);
          if (d < squared[k]!) {
            squared[k] = d;
            any = true;
          }
        }
      }
      if (any) for (let k = 0; k < columns; k++) this.river[K * columns + k] = Math.sqrt(squared[k]!);
    }
  }

  /**
   * Built-up ground around every place near the frame: each place a disc
   * whose radius grows with its population, densest at its centre; where
   * discs overlap, the ground is as built-up as their union.
   */
  private fillUrban(): void {
    const { stride, columns, rows, townScale } = this.frame;
    const [west, south, east, north] = this.footprint(stride);
    const reachLng = MAX_TOWN_REACH_DEGREES / Math.max(0.05, Math.cos((this.frame.lat * Math.PI) / 180));
    const open = new Float32Array(columns * rows).fill(1);
    // All rows are parallel lines on the ground: each one's offset along their common normal, to find a place's rows fast.
    const first = this.lines[0]!;
    const length = Math.hypot(first.stepEast, first.stepNorth);
    const normalEast = -first.stepNorth / length;
    const normalNorth = first.stepEast / length;
    const offsets = this.lines.map((line) => line.originEast * normalEast + line.originNorth * normalNorth);
    const rising = offsets[rows - 1]! >= offsets[0]!;
    for (const place of this.placesIn(west - reachLng, south - MAX_TOWN_REACH_DEGREES, east + reachLng, north + MAX_TOWN_REACH_DEGREES)) {
      const radius = place.radius * townScale;
      const peak = townPeak(place.population) * (0.55 + 0.45 * townScale);
      const offset = place.east * normalEast + place.north * normalNorth;
      // The first row past the place (bisection over the monotonic offsets), then outwards while rows come within its radius.
      let low = 0;
      let high = rows;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (offsets[middle]! < offset === rising) low = middle + 1;
        else high = middle;
      }
      for (const direction of [-1, 1]) {
        for (let K = direction < 0 ? low - 1 : low; K >= 0 && K < rows && Math.abs(offsets[K]! - offset) < radius; K += direction) {
          const line = this.lines[K]!;
          // Where along this row the disc lies: |origin + x·step − centre|² ≤ r².
          const ox = line.originEast - place.east;
          const oy = line.originNorth - place.north;
          const a = line.stepEast * line.stepEast + line.stepNorth * line.stepNorth;
          const b = ox * line.stepEast + oy * line.stepNorth;
          const c = ox * ox + oy * oy - radius * radius;
          const discriminant = b * b - a * c;
          if (discriminant <= 0) continue;
          const root = Math.sqrt(discriminant);
          const from = Math.max(0, Math.ceil((-b - root) / a / stride));
          const to = Math.min(columns - 1, Math.floor((-b + root) / a / stride));
          for (let k = from; k <= to; k++) {
            const x = k * stride;
            const dx = ox + x * line.stepEast;
            const dy = oy + x * line.stepNorth;
            const q = 1 - (dx * dx + dy * dy) / (radius * radius);
            if (q > 0) open[K * columns + k]! *= 1 - peak * q * q;
          }
        }
      }
    }
    for (let i = 0; i < open.length; i++) this.urban[i] = 1 - open[i]!;
  }

  private fillClimate(): void {
    const { width, rows } = this.frame;
    const channels = CLIMATE_CHANNELS.length;
    for (let K = 0; K < rows; K++) {
      const line = this.lines[K]!;
      const [lng, lat] = this.toLngLat(line.originEast + (width / 2) * line.stepEast, line.originNorth + (width / 2) * line.stepNorth);
      climateInto(this.world, lng, lat, this.climate, K * channels);
    }
  }

  /** The places in a box, in local metres. */
  private placesIn(west: number, south: number, east: number, north: number): NearbyPlace[] {
    const { places } = this.world;
    const found: NearbyPlace[] = [];
    forEachPlaceNear(places, west, south, east, north, (place) => {
      const lng = places.positions[place * 2]!;
      const lat = places.positions[place * 2 + 1]!;
      if (lat < south || lat > north) return;
      const population = places.population[place]!;
      found.push({
        index: place,
        population,
        east: wrapLongitude(lng - this.frame.lng) * this.metresEast,
        north: (lat - this.frame.lat) * METRES_PER_DEGREE,
        radius: townRadius(population),
      });
    });
    return found;
  }

  /**
   * The place the frame's point belongs to: of the places within 40 km, the
   * one that matters most there (population over squared distance), with its
   * name and country.
   */
  landmark(): Place | undefined {
    const reach = 40_000;
    const dLat = reach / METRES_PER_DEGREE;
    const dLng = reach / this.metresEast;
    let best: NearbyPlace | undefined;
    let bestScore = 0;
    for (const place of this.placesIn(this.frame.lng - dLng, this.frame.lat - dLat, this.frame.lng + dLng, this.frame.lat + dLat)) {
      const distance = Math.hypot(place.east, place.north);
      if (distance > reach) continue;
      const score = place.population / (distance + 2000) ** 2;
      if (score > bestScore) {
        best = place;
        bestScore = score;
      }
    }
    if (!best) return undefined;
    return { ...best, name: placeName(this.world.places, best.index), country: placeCountry(this.world.places, best.index) };
  }

  /** Index of knot (k, K) in the per-knot arrays, clamped to the grid. */
  knot(k: number, K: number): number {
    const { columns, rows } = this.frame;
    return Math.min(rows - 1, Math.max(0, K)) * columns + Math.min(columns - 1, Math.max(0, k));
  }

  /** The urban field at screen position (x, y), bilinear between knots. */
  urbanAtScreen(x: number, y: number, stride: number): number {
    const { columns, rows } = this.frame;
    const gx = Math.min(columns - 1.001, Math.max(0, x / stride));
    const gy = Math.min(rows - 1.001, Math.max(0, y / stride));
    const k = Math.floor(gx);
    const K = Math.floor(gy);
    const fx = gx - k;
    const fy = gy - K;
    const u = this.urban;
    const i = K * columns + k;
    return (u[i]! * (1 - fx) + u[i + 1]! * fx) * (1 - fy) + (u[i + columns]! * (1 - fx) + u[i + columns + 1]! * fx) * fy;
  }

  /** Sets `into`'s climate shares to those at (fractional) knot row K. */
  climateBetween(K: number, into: Climate): void {
    const channels = CLIMATE_CHANNELS.length;
    const row = Math.min(this.frame.rows - 1.001, Math.max(0, K));
    const above = Math.floor(row);
    const t = row - above;
    for (let c = 0; c < channels; c++) {
      const a = this.climate[above * channels + c]!;
      into[CLIMATE_CHANNELS[c]!] = a + (this.climate[(above + 1) * channels + c]! - a) * t;
    }
  }
}

export function townRadius(population: number): number {
  return TOWN_RADIUS * (population / 10_000) ** 0.45;
}

/** How built-up a place is at its centre: a village about a third, a metropolis nearly all. */
function townPeak(population: number): number {
  return Math.min(0.95, Math.max(0.3, 0.35 + 0.13 * Math.log10(population / 1000)));
}

/**
 * Appends (x, layer) for every edge of `edges` that crosses the ground line
 * between pixels x0 and x1; an edge end exactly on the line counts as left of it.
 */
function crossings(edges: Float64Array, line: GroundLine, x0: number, x1: number, layer: number, out: number[]): void {
  const { originEast: oe, originNorth: on, stepEast: se, stepNorth: sn } = line;
  const squared = se * se + sn * sn;
  for (let i = 0; i < edges.length; i += 4) {
    const ax = edges[i]!;
    const ay = edges[i + 1]!;
    const bx = edges[i + 2]!;
    const by = edges[i + 3]!;
    const sa = se * (ay - on) - sn * (ax - oe);
    const sb = se * (by - on) - sn * (bx - oe);
    if (sa >= 0 === sb >= 0) continue;
    const t = sa / (sa - sb);
    const px = ax + (bx - ax) * t - oe;
    const py = ay + (by - ay) * t - on;
    const x = (px * se + py * sn) / squared;
    if (x > x0 && x < x1) out.push(x, layer);
  }
}

/** Sorts a flat array of (key, value) pairs by key. */
function sortPairs(pairs: number[]): void {
  const count = pairs.length / 2;
  if (count < 2) return;
  const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => pairs[a * 2]! - pairs[b * 2]!);
  const copy = pairs.slice();
  order.forEach((from, to) => {
    pairs[to * 2] = copy[from * 2]!;
    pairs[to * 2 + 1] = copy[from * 2 + 1]!;
  });
}

/** Total length of the spans (start, end pairs, in order) inside [a, b]. */
function overlap(spans: number[], a: number, b: number): number {
  let sum = 0;
  for (let i = 0; i < spans.length; i += 2) {
    const start = Math.max(a, spans[i]!);
    const end = Math.min(b, spans[i + 1]!);
    if (end > start) sum += end - start;
  }
  return sum;
}

/** Signed area test: which side of the ground line (east, north) is on, scaled by the step's length. */
function sideOfLine(line: GroundLine, east: number, north: number): number {
  return line.stepEast * (north - line.originNorth) - line.stepNorth * (east - line.originEast);
}

function distanceToSegmentSquared(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const squared = dx * dx + dy * dy;
  const t = squared > 0 ? Math.min(1, Math.max(0, ((px - ax) * dx + (py - ay) * dy) / squared)) : 0;
  const ex = px - ax - t * dx;
  const ey = py - ay - t * dy;
  return ex * ex + ey * ey;
}

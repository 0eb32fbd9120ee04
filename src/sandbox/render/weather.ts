// Screen-space weather overlays: the low cloud layer with its shadows, rain
// streaks and snowflakes, drawn over the painted scene.
import type { Look } from './look.js';
import { clamp01, smoothstep, valueNoise } from './noise.js';
import { blendPixel, distance, type Frame } from './overlays.js';

/**
 * Low clouds drifting between camera and ground, with their shadows offset on
 * the ground below. Density is computed on a coarse grid and interpolated.
 */
export function paintCloudLayer(frame: Frame, look: Look, random: () => number): void {
  const { width, height, rgb } = frame;
  const shortSide = Math.min(width, height);
  const shadowDX = Math.round(shortSide * 0.05);
  const shadowDY = Math.round(shortSide * 0.035);
  const density = new CoarseField(width + shadowDX, height + shadowDY, 8, shortSide * 0.4, Math.floor(random() * 1e9));
  const cloudRow = new Float32Array(width + shadowDX + 1);
  const shadowRow = new Float32Array(width + shadowDX + 1);
  const [cloudR, cloudG, cloudB] = look.cloudColour;
  const low = 0.6 - 0.08 * look.cloudLayer;
  const horizon = look.perspective ? Math.max(0, look.view.horizon * height) : 0;
  for (let y = Math.ceil(horizon); y < height; y++) {
    // Clouds thin out towards the horizon, where they would be tiny and hazy.
    const fade = horizon > 0 ? clamp01((y - horizon) / (height * 0.25)) : 1;
    density.fillRow(y, cloudRow);
    density.fillRow(y + shadowDY, shadowRow);
    let p = y * width * 3;
    for (let x = 0; x < width; x++, p += 3) {
      const thickness = cloudRow[x]!;
      const shadowThickness = shadowRow[x + shadowDX]!;
      if (thickness <= low && shadowThickness <= low) continue; // clear sky: most pixels
      const shadow = smoothstep(low, low + 0.2, shadowThickness) * 0.3 * fade;
      const cover = smoothstep(low, low + 0.2, thickness) * 0.8 * fade;
      // Thick cloud is brighter than its thin, grey fringes.
      const bright = 255 * (0.88 + 0.3 * (thickness - low));
      const keep = 1 - shadow;
      rgb[p] = rgb[p]! * keep + (cloudR * bright - rgb[p]! * keep) * cover;
      rgb[p + 1] = rgb[p + 1]! * keep + (cloudG * bright - rgb[p + 1]! * keep) * cover;
      rgb[p + 2] = rgb[p + 2]! * keep + (cloudB * bright - rgb[p + 2]! * keep) * cover;
    }
  }
}

/** Cloud noise sampled every `step` pixels over a width×height area, read back a row at a time. */
class CoarseField {
  private readonly cols: number;
  private readonly rows: number;
  private readonly grid: Float32Array;

  constructor(
    private readonly width: number,
    height: number,
    private readonly step: number,
    scale: number,
    seed: number,
  ) {
    this.cols = Math.ceil(width / step) + 2;
    this.rows = Math.ceil(height / step) + 2;
    this.grid = new Float32Array(this.cols * this.rows);
    for (let j = 0; j < this.rows; j++) {
      for (let i = 0; i < this.cols; i++) this.grid[j * this.cols + i] = cloudNoise((i * step) / scale, (j * step) / scale, seed);
    }
  }

  /** Bilinear values along pixel row y into out[0 … width]. */
  fillRow(y: number, out: Float32Array): void {
    const { cols, step, grid } = this;
    const gy = Math.min(this.rows - 1.001, y / step);
    const j = Math.floor(gy);
    const fy = gy - j;
    for (let i = 0; i + 1 < cols; i++) {
      const left = grid[j * cols + i]! + (grid[(j + 1) * cols + i]! - grid[j * cols + i]!) * fy;
      const right = grid[j * cols + i + 1]! + (grid[(j + 1) * cols + i + 1]! - grid[j * cols + i + 1]!) * fy;
      const x0 = i * step;
      for (let k = 0; k < step && x0 + k <= this.width && x0 + k < out.length; k++) out[x0 + k] = left + ((right - left) * k) / step;
    }
  }
}

/** Billowy density: octaves on rotated lattices so the square grid of value noise does not show. */
function cloudNoise(x: number, y: number, seed: number): number {
  return (
    valueNoise(x, y, seed) * 0.5 +
    valueNoise(x * 1.7 + y * 1.3, y * 1.7 - x * 1.3, seed + 1) * 0.28 +
    valueNoise(x * 2.9 - y * 3.9, y * 2.9 + x * 3.9, seed + 2) * 0.14 +
    valueNoise(x * 9.6 + y * 2.8, y * 9.6 - x * 2.8, seed + 3) * 0.08
  );
}

/** Slanted translucent streaks, roughly one per 700 pixels. */
export function paintRain(frame: Frame, look: Look, random: () => number): void {
  const { width, height, rgb } = frame;
  const scale = Math.min(width, height) / 720;
  const count = Math.round((width * height) / 700);
  const brightness = look.glow >= 1 ? 0.45 : 0.85;
  const thickness = Math.max(1, Math.round(scale));
  for (let n = 0; n < count; n++) {
    const x0 = random() * width;
    const y0 = random() * height;
    const length = (12 + 18 * random()) * scale;
    const alpha = 0.12 + 0.16 * random();
    const colour = 255 * brightness * (0.9 + 0.1 * random());
    for (let k = 0; k < length; k++) {
      const y = Math.floor(y0 + k);
      if (y >= height) break;
      const x = Math.floor(x0 + k * 0.2);
      for (let t = 0; t < thickness; t++) {
        if (x + t >= width) break;
        blendPixel(rgb, (y * width + x + t) * 3, colour, colour, colour * 1.05, alpha);
      }
    }
  }
}

/** Soft white discs of a few sizes; bigger flakes are rarer. */
export function paintSnowfall(frame: Frame, look: Look, random: () => number): void {
  const { width, height, rgb } = frame;
  const scale = Math.min(width, height) / 720;
  const count = Math.round((width * height) / 1100);
  const brightness = look.glow >= 1 ? 150 : 250;
  for (let n = 0; n < count; n++) {
    const cx = random() * width;
    const cy = random() * height;
    const radius = (0.7 + 2.2 * random() ** 3) * scale;
    const alpha = 0.55 + 0.4 * random();
    const reach = Math.ceil(radius + 1);
    for (let y = Math.max(0, Math.floor(cy - reach)); y <= Math.min(height - 1, cy + reach); y++) {
      for (let x = Math.max(0, Math.floor(cx - reach)); x <= Math.min(width - 1, cx + reach); x++) {
        const d = distance(x + 0.5 - cx, y + 0.5 - cy);
        const coverage = clamp01(radius + 0.5 - d);
        if (coverage > 0) blendPixel(rgb, (y * width + x) * 3, brightness, brightness, brightness + 5, alpha * coverage);
      }
    }
  }
}

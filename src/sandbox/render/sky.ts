// The sky band above the horizon of oblique views.
import { SALT_MOTTLE, SALT_RIVER, SALT_TERRAIN } from './layout.js';
import type { Look } from './look.js';
import { mix32, smoothstep, valueNoise } from './noise.js';
import type { Frame } from './overlays.js';

/**
 * The sky band above the horizon for oblique views: a gradient from zenith to
 * horizon, clouds, the low sun's glow, stars at night, and a strip of distant
 * hills so the ground does not just end.
 */
export class SkyPainter {
  private readonly ridge: Float32Array;
  private readonly clouds: Float32Array;
  private readonly sunX: number;
  private readonly sunY: number;
  private readonly sunRadius: number;

  constructor(
    private readonly frame: Frame,
    private readonly look: Look,
    private readonly seed: number,
    private readonly horizonRow: number,
  ) {
    const { width, height } = frame;
    this.ridge = new Float32Array(width);
    const band = height * 0.035;
    for (let x = 0; x < width; x++) {
      const broad = valueNoise(x / (width * 0.09), 0.5, seed ^ SALT_TERRAIN);
      const n = broad * 0.7 + valueNoise(x / (width * 0.025), 3.5, seed ^ SALT_TERRAIN) * 0.3;
      this.ridge[x] = horizonRow - band * (0.15 + 0.85 * n);
    }
    this.clouds = new Float32Array(width);
    // The sun sits on the horizon where its azimuth falls within a 90° field of view.
    let offset = look.sunAzimuth - look.bearing;
    offset = Math.atan2(Math.sin(offset), Math.cos(offset));
    this.sunX = width / 2 + (offset / (Math.PI / 4)) * (width / 2);
    this.sunY = horizonRow - height * 0.04;
    this.sunRadius = width * 0.16;
  }

  paintRow(y: number, vignette: Float32Array, rowVignette: number, grainSeed: number): void {
    const { width, rgb } = this.frame;
    const look = this.look;
    const s = Math.pow(Math.max(0, y / this.horizonRow), 0.7);
    const baseR = look.skyTop[0] + (look.skyHorizon[0] - look.skyTop[0]) * s;
    const baseG = look.skyTop[1] + (look.skyHorizon[1] - look.skyTop[1]) * s;
    const baseB = look.skyTop[2] + (look.skyHorizon[2] - look.skyTop[2]) * s;
    this.fillCloudRow(y);
    const threshold = 1 - look.skyClouds;
    const [cloudR, cloudG, cloudB] = look.cloudColour;
    const [hillR, hillG, hillB] = look.hills;
    let i = y * width * 3;
    for (let x = 0; x < width; x++, i += 3) {
      let r = baseR;
      let g = baseG;
      let b = baseB;
      if (look.sunGlow > 0) {
        const dx = (x - this.sunX) / this.sunRadius;
        const dy = (y - this.sunY) / (this.sunRadius * 0.6);
        const glow = look.sunGlow / (1 + 4 * (dx * dx + dy * dy));
        r += (1 - r) * glow;
        g += (0.78 - g) * glow;
        b += (0.45 - b) * glow;
      }
      if (look.stars && (mix32(this.seed + y * 7919 + x * 104729) & 4095) < 3) {
        r = g = b = 0.75;
      }
      const cover = smoothstep(threshold - 0.08, threshold + 0.2, this.clouds[x]!);
      if (cover > 0) {
        // Cloud bases are darker than their tops.
        const underside = 0.85 + 0.15 * (1 - s);
        r += (cloudR * underside - r) * cover;
        g += (cloudG * underside - g) * cover;
        b += (cloudB * underside - b) * cover;
      }
      const ridge = this.ridge[x]!;
      if (y > ridge) {
        // Far hills, mostly lost in the haze, and more so at their feet.
        const k = 0.5 - 0.25 * ((y - ridge) / (this.horizonRow - ridge + 1));
        r = look.haze[0] + (hillR - look.haze[0]) * k;
        g = look.haze[1] + (hillG - look.haze[1]) * k;
        b = look.haze[2] + (hillB - look.haze[2]) * k;
      }
      const shade = 255 * vignette[x]! * rowVignette;
      const grain = ((mix32(grainSeed + y * width + x) & 7) - 3.5) * look.grain;
      rgb[i] = r * shade + grain;
      rgb[i + 1] = g * shade + grain;
      rgb[i + 2] = b * shade + grain;
    }
  }

  /** Cloud density along a sky row, stretched horizontally; sparse knots, linear between. */
  private fillCloudRow(y: number): void {
    const { width } = this.frame;
    const stride = 8;
    const v = y / (this.horizonRow * 0.35);
    let previous = 0;
    for (let x = 0; x <= width + stride; x += stride) {
      const u = x / (width * 0.22);
      const n = valueNoise(u, v, this.seed ^ SALT_MOTTLE) * 0.6 + valueNoise(u * 2.7, v * 2.7, this.seed ^ SALT_RIVER) * 0.4;
      if (x > 0) {
        for (let j = 0; j < stride && x - stride + j < width; j++) {
          this.clouds[x - stride + j] = previous + ((n - previous) * j) / stride;
        }
      }
      previous = n;
    }
  }
}

// The camera: where each frame row lands on the ground (orthographic for Top,
// a pinhole-like projection with a horizon for the oblique angles), and where a
// ground point lands on screen.
import type { GroundLine } from '../world/frame-geography.js';
import type { FrameSize } from './frame.js';
import type { Layout } from './layout.js';
import type { Look } from './look.js';

/**
 * Where a frame row lands on the ground: grid position of pixel x is
 * (originX + x·stepX, originY + x·stepY), linear along the row for every view.
 */
export class RowProjection {
  metresPerPixel = 0;
  originX = 0;
  originY = 0;
  stepX = 0;
  stepY = 0;
  haze = 0;
  /** Metres ahead of the camera's point, along the view. */
  ahead = 0;
  /** Result of screenOf. */
  screenX = 0;
  screenY = 0;
  private readonly base: number;
  private readonly horizonRow: number;
  private readonly rightX: number;
  private readonly rightY: number;
  private readonly forwardX: number;
  private readonly forwardY: number;

  constructor(
    private readonly frame: FrameSize,
    private readonly look: Look,
    private readonly layout: Layout,
  ) {
    this.base = look.metresAcross / Math.min(frame.width, frame.height);
    this.horizonRow = look.perspective ? look.view.horizon * frame.height : -Infinity;
    const heading = look.bearing - layout.gridAngle;
    this.rightX = Math.cos(heading);
    this.rightY = -Math.sin(heading);
    this.forwardX = Math.sin(heading);
    this.forwardY = Math.cos(heading);
  }

  /** Top views are orthographic; oblique views shrink the ground towards the horizon like a pinhole camera. */
  at(y: number): void {
    const { width, height } = this.frame;
    const base = this.base;
    let mpp = base;
    // Metres ahead of the frame centre (negative: behind it, towards the bottom edge).
    let ahead = (height / 2 - y - 0.5) * base;
    let haze = 0;
    if (this.look.perspective) {
      const t = Math.max(1e-4, (y + 0.5 - this.horizonRow) / (height - this.horizonRow));
      mpp = base / t;
      ahead = -(height / 2) * base + base * (height - this.horizonRow) * this.look.view.foreshorten * (1 / t - 1);
      // Capped so the most distant land still shows through faintly instead of becoming a wall of fog.
      haze = 0.93 * (1 - Math.exp(-(ahead + (height / 2) * base) / this.look.hazeReach));
    }
    this.metresPerPixel = mpp;
    this.haze = haze;
    this.ahead = ahead;
    this.originX = this.layout.cameraX + this.forwardX * ahead - this.rightX * (width / 2) * mpp;
    this.originY = this.layout.cameraY + this.forwardY * ahead - this.rightY * (width / 2) * mpp;
    this.stepX = this.rightX * mpp;
    this.stepY = this.rightY * mpp;
  }

  /** Row y as a line on the ground in metres east and north of the request's point (for the geography). */
  ground(y: number): GroundLine {
    this.at(y);
    const angle = this.layout.gridAngle;
    const cos = Math.cos(angle);
    const sin = Math.sin(angle);
    const dx = this.originX - this.layout.cameraX;
    const dy = this.originY - this.layout.cameraY;
    return {
      originEast: dx * cos + dy * sin,
      originNorth: -dx * sin + dy * cos,
      stepEast: this.stepX * cos + this.stepY * sin,
      stepNorth: -this.stepX * sin + this.stepY * cos,
      ahead: this.ahead,
    };
  }

  /** The screen position of grid point (gx, gy), into screenX and screenY; ground behind the camera lands below the frame. */
  screenOf(gx: number, gy: number): void {
    const { width, height } = this.frame;
    const dx = gx - this.layout.cameraX;
    const dy = gy - this.layout.cameraY;
    const ahead = dx * this.forwardX + dy * this.forwardY;
    const lateral = dx * this.rightX + dy * this.rightY;
    const base = this.base;
    if (!this.look.perspective) {
      this.screenY = height / 2 - 0.5 - ahead / base;
      this.screenX = width / 2 + lateral / base;
      return;
    }
    const inverse = 1 + (ahead + (height / 2) * base) / (base * (height - this.horizonRow) * this.look.view.foreshorten);
    const t = inverse > 1e-4 ? 1 / inverse : 1e4;
    this.screenY = t * (height - this.horizonRow) + this.horizonRow - 0.5;
    this.screenX = width / 2 + (lateral * t) / base;
  }
}

/**
 * Where the request's point lies on screen: the frame's centre from the top,
 * lower down for oblique views (the ground ahead fills the upper part).
 */
export function subjectOnScreen(frame: FrameSize, look: Look): { x: number; y: number } {
  if (!look.perspective) return { x: frame.width / 2, y: frame.height / 2 };
  const { horizon, foreshorten } = look.view;
  const horizonRow = horizon * frame.height;
  const t = 1 / (1 + frame.height / 2 / ((frame.height - horizonRow) * foreshorten));
  return { x: frame.width / 2, y: t * (frame.height - horizonRow) + horizonRow - 0.5 };
}

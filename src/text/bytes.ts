// Sizes as the CLI shows them, in one place: binary units, named as such
// (1 KiB = 1024 bytes), so a label never claims a unit it was not divided by.
const KIB = 1024;
const MIB = 1024 * KIB;

export function formatBytes(bytes: number): string {
  if (bytes < KIB) return `${bytes} B`;
  if (bytes < MIB) return `${Math.round(bytes / KIB)} KiB`;
  const mib = bytes / MIB;
  return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
}

// Places by name on the wire, against the sandbox fixture, in-process:
// `generate --at "Paris, FR"` sends Paris's coordinates, an ambiguous name
// sends nothing, and a batch file's place column is looked up row by row.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCommandsAgainstSandbox } from '../../helpers/sandbox-commands.js';

describe('places by name, on the wire', () => {
  const fixture = useCommandsAgainstSandbox();
  const { cli } = fixture;
  const sent = () =>
    fixture.sandbox
      .requests()
      .filter((entry) => entry.method === 'POST')
      .map((entry) => (entry.body as { coordinates: { lat: number; lng: number } }).coordinates);

  it('generate --at "Paris, FR" sends coordinates within 0.2° of 48.857, 2.352, and says which place it took', async () => {
    fixture.sandbox.clearRequests();
    const result = await cli(['generate', '--at', 'Paris, FR', '--resolution', 'HD', '-o', join(fixture.home.path, 'paris.jpg')]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain("'Paris, FR' is Paris, Île-de-France, FR (48.85341, 2.3488)");
    const [coordinates] = sent();
    expect(Math.abs(coordinates!.lat - 48.857)).toBeLessThan(0.2);
    expect(Math.abs(coordinates!.lng - 2.352)).toBeLessThan(0.2);
  });

  it('--at Springfield exits 2 listing candidates with country, region and coordinates, and sends nothing', async () => {
    fixture.sandbox.clearRequests();
    const result = await cli(['generate', '--at', 'Springfield', '--resolution', 'HD', '-o', join(fixture.home.path, 'spring.jpg')]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^error: AmbiguousPlace — --at 'Springfield' names \d+ places: Springfield, Missouri, US \(37\.\d+, -93\.\d+\); Springfield, Massachusetts, US \(42\.\d+, -72\.\d+\);/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(fixture.sandbox.requests()).toEqual([]);
  });

  it('generate-async takes a name too', async () => {
    fixture.sandbox.clearRequests();
    const result = await cli(['generate-async', '--at', 'Tokyo, JP', '--resolution', 'HD', '--listen', '-o', join(fixture.home.path, 'tokyo.jpg'), '--timeout', '60']);
    expect(result.exitCode, result.stderr).toBe(0);
    const [coordinates] = sent();
    expect(Math.abs(coordinates!.lat - 35.69)).toBeLessThan(0.2);
  });

  it("a batch file's place column is looked up row by row; lat/lng columns beside it win; a bad name is an invalid row", async () => {
    fixture.sandbox.clearRequests();
    const file = join(fixture.home.path, 'places.csv');
    writeFileSync(file, 'place,lat,lng\n"Lyon, FR",,\nSpringfield,1,2\nQwzxv,,\n');
    const result = await cli(['batch', file, '--resolution', 'HD', '--skip-invalid', '--output-template', join(fixture.home.path, 'b', '{row}.jpg'), '--json']);
    expect(result.exitCode).toBe(2);
    const summary = JSON.parse(result.stdout) as { rows: Array<{ row: number; status: string; error?: string }> };
    expect(summary.rows.map((row) => row.status)).toEqual(['done', 'done', 'failed']);
    expect(summary.rows[2]!.error).toMatch(/^line 4 \(row 3\): column 'place' 'Qwzxv': no such place/);
    const coordinates = sent().sort((a, b) => a.lat - b.lat);
    expect(coordinates[0]).toEqual({ lat: 1, lng: 2 });
    expect(Math.abs(coordinates[1]!.lat - 45.75)).toBeLessThan(0.2);
  });
});

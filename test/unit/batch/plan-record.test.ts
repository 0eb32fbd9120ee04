// The plan record a batch writes in its manifest: built from a run's
// settings, read back and checked field by field (a record torn, corrupt or
// from a later format is left aside with a reason), written once per plan,
// skipped by the readers of row records, and compared across shards.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveSettings } from '../../../src/config/config.js';
import { ManifestIndex, manifestRecords, ManifestWriter, type ManifestRecord } from '../../../src/batch/manifest.js';
import { parsePlanRecord, planDifferences, planRecord, PLAN_FORMAT, recordedDefaults, samePlan, type PlanRecord } from '../../../src/batch/plan-record.js';
import { tempDir } from '../../helpers/cli.js';

const defaults = resolveSettings({}, {}, {}).sceneDefaults;
const withZoom = resolveSettings({}, {}, { profiles: { default: { defaults: { zoom: 'High' } } } }).sceneDefaults;
const SHA = 'ab'.repeat(32);

const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  while (dirs.length) dirs.pop()!.remove();
});
function scratch(): string {
  const dir = tempDir('aerial-plan-record-');
  dirs.push(dir);
  return dir.path;
}

function record(overrides: Partial<Parameters<typeof planRecord>[0]> = {}): PlanRecord {
  return planRecord({
    version: '1.2.3',
    batch: { path: 'places.csv', sha256: SHA, rows: 3 },
    outputTemplate: 'out/{row}.jpg',
    format: 'csv',
    delimiter: ',',
    scene: { resolution: 'HD' },
    sceneDefaults: defaults,
    ...overrides,
  });
}

/** The record as a line would give it back: through JSON. */
const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('parsePlanRecord', () => {
  it('reads back what planRecord writes, shard and time included', () => {
    const written = { ...record({ shard: { index: 2, count: 3 } }), time: '2026-11-27T00:00:00.000Z' };
    const parsed = parsePlanRecord(roundTrip(written));
    expect(parsed).toEqual({ ok: true, record: written });
    expect(written.settings.sceneDefaults).toMatchObject({ resolution: 'FHD', zoom: 'Medium' });
    // Only values: where a default came from is no part of the record.
    expect(JSON.stringify(written)).not.toContain('source');
  });

  it('leaves aside, with a reason, a record of a later format', () => {
    const later = { ...(roundTrip(record()) as object), plan: PLAN_FORMAT + 1, somethingNew: { a: 1 } };
    expect(parsePlanRecord(later)).toEqual({ ok: false, problem: `it is in plan format ${PLAN_FORMAT + 1}, newer than this aerial reads (${PLAN_FORMAT}); upgrade aerial` });
  });

  it('takes fields it does not know beside the ones it does, and defaults for fields it does not know', () => {
    const value = roundTrip(record()) as Record<string, Record<string, unknown>>;
    value.extra = { any: 'thing' };
    value.settings!.sceneDefaults = { ...(value.settings!.sceneDefaults as object), season: 'Winter' };
    const parsed = parsePlanRecord(value);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.record.settings.sceneDefaults).not.toHaveProperty('season');
  });

  it('names what is wrong with a corrupt record', () => {
    const base = roundTrip(record({ shard: { index: 1, count: 2 } })) as Record<string, any>;
    const broken = (change: (value: Record<string, any>) => void) => {
      const value = structuredClone(base);
      change(value);
      const parsed = parsePlanRecord(value);
      return parsed.ok ? 'ok' : parsed.problem;
    };
    expect(parsePlanRecord(null)).toEqual({ ok: false, problem: 'it is not a JSON object' });
    expect(parsePlanRecord([1])).toEqual({ ok: false, problem: 'it is not a JSON object' });
    expect(broken((v) => (v.plan = '1'))).toBe('its "plan" format is not a whole number from 1');
    expect(broken((v) => (v.plan = 0))).toBe('its "plan" format is not a whole number from 1');
    expect(broken((v) => delete v.aerial)).toBe('"aerial" (the version) is not text');
    expect(broken((v) => delete v.batch)).toBe('"batch" is not an object');
    expect(broken((v) => (v.batch.sha256 = SHA.slice(1)))).toBe('"batch.sha256" is not a SHA-256 digest (64 hex digits)');
    expect(broken((v) => (v.batch.sha256 = SHA.toUpperCase()))).toBe('"batch.sha256" is not a SHA-256 digest (64 hex digits)');
    expect(broken((v) => (v.batch.rows = -1))).toBe('"batch.rows" is not a whole number from 1');
    expect(broken((v) => (v.batch.path = ''))).toBe('"batch.path" is not a file name');
    expect(broken((v) => (v.settings.outputTemplate = 7))).toBe('"settings.outputTemplate" is not a template');
    expect(broken((v) => (v.settings.format = 'xlsx'))).toBe('"settings.format" is not csv, jsonl or json');
    expect(broken((v) => (v.settings.delimiter = ':'))).toBe('"settings.delimiter" is not one of , ; | or a tab');
    expect(broken((v) => (v.settings.scene = { resolution: 4 }))).toBe('"settings.scene.resolution" is not a value --resolution takes');
    expect(broken((v) => (v.settings.scene = { tag: 'a' }))).toBe('"settings.scene.tag" is not a value --tag takes');
    expect(broken((v) => (v.settings.scene = { colour: 'red' }))).toBe(`"settings.scene" has a field this aerial does not know ('colour')`);
    expect(broken((v) => (v.settings.sceneDefaults.zoom = true))).toBe('"settings.sceneDefaults.zoom" is not a text');
    expect(broken((v) => (v.shard = { index: 3, count: 2 }))).toBe('"shard" is not a shard k of n');
    expect(broken((v) => (v.shard = '1/2'))).toBe('"shard" is not a shard k of n');
  });
});

describe('samePlan', () => {
  it('is the same record whatever its time and key order, and not for another shard or setting', () => {
    const a = record({ shard: { index: 1, count: 2 } });
    const reordered = JSON.parse(JSON.stringify({ settings: a.settings, shard: a.shard, batch: a.batch, aerial: a.aerial, plan: a.plan, time: 'later' })) as PlanRecord;
    expect(samePlan(reordered, a)).toBe(true);
    expect(samePlan(undefined, a)).toBe(false);
    expect(samePlan(record({ shard: { index: 2, count: 2 } }), a)).toBe(false);
    expect(samePlan(record({ shard: { index: 1, count: 2 }, scene: { resolution: 'UHD' } }), a)).toBe(false);
  });
});

describe('planDifferences', () => {
  it('names the settings that change rows, as flags, and not those that change nothing', () => {
    expect(planDifferences(record(), record({ shard: { index: 2, count: 2 } }), defaults)).toEqual([{ setting: 'shard count', a: 'no --shard', b: '2/2' }]);
    expect(planDifferences(record({ shard: { index: 1, count: 2 } }), record({ shard: { index: 2, count: 2 } }), defaults)).toEqual([]);
    // A flag and a config default that make the same request are the same plan.
    expect(planDifferences(record({ scene: { zoom: 'High' } }), record({ scene: {}, sceneDefaults: withZoom }), defaults)).toEqual([]);
    expect(planDifferences(record(), record({ sceneDefaults: withZoom, scene: { resolution: 'hd' } }), defaults)).toEqual([{ setting: '--zoom', a: 'Medium', b: 'High' }]);
    expect(planDifferences(record(), record({ batch: { path: 'places.csv', sha256: 'cd'.repeat(32), rows: 4 }, outputTemplate: 'x/{row}.jpg', delimiter: ';' }), defaults)).toEqual([
      { setting: 'batch file', a: 'sha256 abababababab…, 3 rows', b: 'sha256 cdcdcdcdcdcd…, 4 rows' },
      { setting: '--output-template', a: 'out/{row}.jpg', b: 'x/{row}.jpg' },
      { setting: '--delimiter', a: "','", b: "';'" },
    ]);
    // Fields named as their flags, whatever the service calls them.
    expect(planDifferences(record({ scene: { resolution: 'HD', tag: ['roofs'] } }), record(), defaults)).toEqual([{ setting: '--tag', a: '["roofs"]', b: '[]' }]);
    // The version that planned the rows is not a setting.
    expect(planDifferences(record(), record({ version: '9.9.9' }), defaults)).toEqual([]);
  });

  it('takes the defaults a record gives, and for a field it lacks the config\'s own', () => {
    const recorded = record({ sceneDefaults: withZoom });
    expect(recordedDefaults(recorded, defaults).zoom.value).toBe('High');
    const lacking = roundTrip(recorded) as PlanRecord;
    delete lacking.settings.sceneDefaults.zoom;
    expect(recordedDefaults(lacking, withZoom).zoom.value).toBe('High');
    expect(recordedDefaults(lacking, defaults).zoom.value).toBe('Medium');
  });
});

describe('the plan line in a manifest', () => {
  it('is skipped by the readers of rows, given to status, and known to a resumed run', async () => {
    const path = join(scratch(), 'm.jsonl');
    const writer = await ManifestWriter.open(path);
    const plan = record();
    writer.appendPlan(plan);
    writer.append({ row: 1, key: '0'.repeat(32), status: 'done', file: '1.jpg', bytes: 10 }, false);
    await writer.close();
    const plans: unknown[] = [];
    const records: ManifestRecord[] = [];
    for await (const read of manifestRecords(path, { onPlan: (value) => plans.push(value) })) records.push(read);
    expect(records.map((read) => read.row)).toEqual([1]);
    expect(plans).toHaveLength(1);
    expect(parsePlanRecord(plans[0])).toMatchObject({ ok: true, record: plan });
    const index = await ManifestIndex.read(path);
    expect(index.size).toBe(1);
    expect(samePlan((parsePlanRecord(index.lastPlan) as { record: PlanRecord }).record, plan)).toBe(true);
  });

  it('reads a torn plan line as a torn plan record, and the rows around it as before', async () => {
    const path = join(scratch(), 'm.jsonl');
    const line = JSON.stringify(record());
    writeFileSync(path, `${line.slice(0, 60)}\n{"row":1,"key":"${'1'.repeat(32)}","status":"done","file":"1.jpg"}\n{"plan": 1, "aerial"\n`);
    const plans: unknown[] = [];
    const rows: number[] = [];
    for await (const read of manifestRecords(path, { onPlan: (value) => plans.push(value) })) rows.push(read.row);
    expect(rows).toEqual([1]);
    expect(plans).toEqual([undefined, undefined]);
    const index = await ManifestIndex.read(path);
    expect(index.size).toBe(1);
    expect(index.lastPlan).toBeUndefined();
    // A reader that knows nothing of plans (as status did) is told nothing.
    let count = 0;
    for await (const _read of manifestRecords(path)) count++;
    expect(count).toBe(1);
    expect(readFileSync(path, 'utf8')).toContain('"plan"');
  });
});

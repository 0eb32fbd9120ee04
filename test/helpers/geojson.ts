// RFC 7946's structure, checked the way a strict reader would: a
// FeatureCollection of Features, each with a geometry (or null) and a
// properties object, a Point's position [longitude, latitude] in range.

export interface CheckedFeature {
  coordinates: [number, number] | null;
  properties: Record<string, unknown>;
}

export function checkFeatureCollection(value: unknown): CheckedFeature[] {
  const fail = (problem: string): never => {
    throw new Error(`not RFC 7946 GeoJSON: ${problem}`);
  };
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(value) || value.type !== 'FeatureCollection') return fail('the top level is not a FeatureCollection');
  // RFC 7946 §4: no crs member; positions are WGS 84 longitude, latitude.
  if ('crs' in value) fail('a crs member (removed by RFC 7946)');
  if (!Array.isArray(value.features)) return fail('features is not an array');
  return value.features.map((feature: unknown, index: number) => {
    if (!isObject(feature) || feature.type !== 'Feature') return fail(`feature ${index} is not a Feature`);
    if (!('geometry' in feature)) return fail(`feature ${index} has no geometry member`);
    if (!('properties' in feature) || !(isObject(feature.properties) || feature.properties === null)) return fail(`feature ${index} has no properties object`);
    const properties = (feature.properties ?? {}) as Record<string, unknown>;
    if (feature.geometry === null) return { coordinates: null, properties };
    const geometry = feature.geometry;
    if (!isObject(geometry) || geometry.type !== 'Point' || !Array.isArray(geometry.coordinates)) return fail(`feature ${index} is not a Point`);
    const position = geometry.coordinates as unknown[];
    if (position.length !== 2 || !position.every((n) => typeof n === 'number' && Number.isFinite(n))) return fail(`feature ${index}'s position is not two numbers`);
    const [lng, lat] = position as [number, number];
    if (lng < -180 || lng > 180) fail(`feature ${index}'s longitude ${lng} is out of range`);
    if (lat < -90 || lat > 90) fail(`feature ${index}'s latitude ${lat} is out of range`);
    return { coordinates: [lng, lat], properties };
  });
}

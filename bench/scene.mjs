// The scene every bench request asks for: an HD view of the Eiffel Tower with
// the CLI's default scene values, in the documented wire form. Bench scripts are
// plain .mjs and cannot import src/; test/helpers/sandbox.ts has the same request.
export const SCENE = Object.freeze({
  coordinates: Object.freeze({ lat: 48.8584, lng: 2.2945 }),
  resolution: 'HD',
  zoom: 'Medium',
  bearing: 'North',
  angle: 'High',
  weather: 'Sunny',
  daytime: 'Day',
  aspectRatio: 'Landscape',
  epoch: 'Nowadays',
  tags: Object.freeze([]),
});

/** The scene, moved east by `offset` degrees of longitude: a different picture for the renderer. */
export function sceneAt(offset) {
  return { ...SCENE, coordinates: { lat: SCENE.coordinates.lat, lng: SCENE.coordinates.lng + offset } };
}

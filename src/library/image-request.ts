// Generated from the scene vocabulary (src/scene/vocabulary.ts) by
// scripts/image-request-type.mjs: do not edit. After a change to the
// vocabulary, `npx vitest run test/unit/library/image-request.test.ts -u`
// writes it again; that test fails while it differs.

/**
 * A generation request, as the service takes it (docs/library.md). Scene
 * settings left out take the built-in defaults; booleans left out are the
 * service's to decide. Written `as const`, or with readonly arrays, it is
 * taken as it is. Checked again when it is sent: a value plain JavaScript
 * slips past these types is an InvalidInputError, and nothing is sent.
 */
export interface ImageRequest {
  /** Where: the place the camera looks at, in degrees. */
  coordinates: {
    /** Latitude in degrees, -90 to 90. */
    lat: number;
    /** Longitude in degrees, -180 to 180. */
    lng: number;
  };
  /** Output resolution: 'HD', 'FHD' or 'UHD'. Left out: 'FHD'. */
  resolution?: 'HD' | 'FHD' | 'UHD';
  /** How close the camera is: 'ExtraLow', 'Low', 'Medium', 'High' or 'ExtraHigh'. Left out: 'Medium'. */
  zoom?: 'ExtraLow' | 'Low' | 'Medium' | 'High' | 'ExtraHigh';
  /** Compass direction the camera faces: 'North', 'NorthEast', 'East', 'SouthEast', 'South', 'SouthWest', 'West' or 'NorthWest'. Left out: 'North'. */
  bearing?: 'North' | 'NorthEast' | 'East' | 'SouthEast' | 'South' | 'SouthWest' | 'West' | 'NorthWest';
  /** Camera angle from the ground: 'Low', 'Medium', 'High' or 'Top'. Left out: 'High'. */
  angle?: 'Low' | 'Medium' | 'High' | 'Top';
  /** Weather in the scene: 'Sunny', 'Rainy', 'Cloudy', 'GoldenHour' or 'Snow'. Left out: 'Sunny'. */
  weather?: 'Sunny' | 'Rainy' | 'Cloudy' | 'GoldenHour' | 'Snow';
  /** Time of day: 'Dusk', 'Day', 'Dawn' or 'Night'. Left out: 'Day'. */
  daytime?: 'Dusk' | 'Day' | 'Dawn' | 'Night';
  /** Image shape: 'Square', 'Landscape', 'Portrait' or 'Standard'. Left out: 'Landscape'. */
  aspectRatio?: 'Square' | 'Landscape' | 'Portrait' | 'Standard';
  /** Era the scene depicts: 'Nowadays', 'Historical' or 'Ancient'. Left out: 'Nowadays'. */
  epoch?: 'Nowadays' | 'Historical' | 'Ancient';
  /** Landmark-specific enhancement for recognised locations. Left out: the service decides. */
  includeContext?: boolean;
  /** Include the surrounding area. Left out: the service decides. */
  includeSurroundings?: boolean;
  /** Apply quality enhancement. Left out: the service decides. */
  improveOutput?: boolean;
  /** Keep the image in your history. Left out: the service decides. */
  saveImage?: boolean;
  /** Descriptive tags: at most 10, none empty. Left out: none. */
  tags?: readonly string[];
  /** Custom enhancement instructions, not empty. */
  prompt?: string;
}

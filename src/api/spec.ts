// Facts of the GenAerial v1 interface (docs/openapi.yaml describes it) that
// both the client and the sandbox build on. Free of dependencies, so either
// side imports it without loading anything of the other.

/** Every endpoint lives under this path; `v1` is the interface's version. */
export const API_ROOT = '/api/external/v1';
/** The image-generation resource: POST (sync), POST /async, GET (list), DELETE /{id}. */
export const API_PATH = `${API_ROOT}/image-generation`;
/** Temporary image URLs (list `url`, webhook `signedUrl`) are valid for two hours (spec, Limits). */
export const URL_LIFETIME_MS = 2 * 60 * 60 * 1000;
/** The public service, and the default base URL (its documentation: genaerial.com/api-docs). */
export const DEFAULT_BASE_URL = 'https://api.genaerial.com';
/** Properties the list endpoint's `sort` is documented to take (the spec shows createdAt only; others are not promised). */
export const SORT_PROPERTIES = ['createdAt'] as const;

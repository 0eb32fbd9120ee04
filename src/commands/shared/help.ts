// The help of flags more than one command offers. Each text is written out,
// not derived from the parsers' ranges, so that --help loads no parser; a test
// holds every one to the range and default its flag is parsed with
// (test/unit/input/duration-help.test.ts).

/** --retry-delay of batch and export (parsed in batch-options.ts). */
export const RETRY_DELAY_HELP =
  'delay before the first retry, doubled for each further one, with jitter: 500ms, 2s; a bare number is seconds (default 500ms, at most 30s)';

/** --progress-interval of batch and export (parsed in batch-options.ts). */
export const PROGRESS_INTERVAL_HELP = 'time between progress lines when stderr is not a terminal: 10s, 1m; a bare number is seconds (default 5s)';

/** A callback wait: generate-async --timeout and batch --callback-timeout (CALLBACK_WAIT_RANGE). */
export const CALLBACK_WAIT_HELP = 'up to 24h (default 10m): 90s, 10m, 2h; a bare number is seconds, at most 600 (a longer wait takes a unit)';

/** --preview of generate and generate-async. */
export const PREVIEW_HELP = 'show the saved image in the terminal, as aerial view does (on a terminal only; default: config defaults.preview)';

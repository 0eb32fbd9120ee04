// The sort criteria of a listing, as `list --sort` and the MCP server's
// list_images take them: `property` or `property,asc|desc`, sent as the
// service's `sort` query parameter.
import { UsageError } from '../../lifecycle/errors.js';

/** One criterion as the service takes it (createdAt,desc); what `parseSort` accepts. */
export const SORT_CRITERION = /^\s*([A-Za-z][A-Za-z0-9_.]*)\s*(?:,\s*(asc|desc)\s*)?$/i;

/** The criteria in the service's spelling; a malformed one is a usage error naming `label`. */
export function parseSort(values: string[] | undefined, label = '--sort'): string[] | undefined {
  if (!values) return undefined;
  return values.map((value) => {
    const match = SORT_CRITERION.exec(value);
    if (!match) throw new UsageError(`${label} must be property,asc or property,desc (e.g. createdAt,desc); got '${value}'`);
    return match[2] ? `${match[1]},${match[2].toLowerCase()}` : match[1]!;
  });
}

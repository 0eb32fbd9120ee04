// Text from a server made safe for one terminal line. Anything a server
// controls (error messages, ids, record fields) passes through here before it
// is printed, so a hostile answer cannot move the cursor or forge output lines.

/** No newlines, no control characters or escape sequences; long text is cut with an ellipsis. */
export function printable(text: string, max = 200): string {
  const flat = text
    .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '')
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

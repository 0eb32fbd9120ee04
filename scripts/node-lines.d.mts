export const NODE_LINES: string[];
export function nodeLines(lines?: string[]): Array<{ line: string; node: string }>;

export function renderImageRequestType(fields: object): string;

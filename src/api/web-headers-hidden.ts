// Evaluated just before undici's entry point (see ./undici.ts, which imports
// this module first and calls restoreWebHeaders() once undici has loaded):
// hides the web Headers global while undici loads.
const webHeaders = Object.getOwnPropertyDescriptor(globalThis, 'Headers');
Object.defineProperty(globalThis, 'Headers', { value: undefined, configurable: true, writable: true });

/** Puts Node's own Headers global back, exactly as it was (still unloaded, if it was). */
export function restoreWebHeaders(): void {
  if (webHeaders) Object.defineProperty(globalThis, 'Headers', webHeaders);
  else delete (globalThis as { Headers?: unknown }).Headers;
}

/**
 * Types for code that runs inside the page (the callbacks given to `page.evaluate`). The
 * project compiles against Node's types only — adding the DOM lib would retype `fetch`,
 * `Buffer` bodies and timers for all the server code — so in-page code reads the browser's
 * globals through `globalThis as unknown as PageWindow`, typed here with just what tests use.
 * Only types may be imported into such callbacks: they are sent to the browser as source text.
 */
export interface PageElement {
  id: string;
  textContent: string | null;
  value?: string;
  getAttribute(name: string): string | null;
}

interface PageStorage {
  readonly length: number;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export interface PageWindow {
  document: {
    activeElement: PageElement | null;
    getElementById(id: string): PageElement | null;
    documentElement: { scrollWidth: number; clientWidth: number };
    fonts: { ready: Promise<unknown> };
  };
  localStorage: PageStorage;
  sessionStorage: PageStorage;
  navigator: { clipboard: { readText(): Promise<string> } };
  getComputedStyle(element: unknown, pseudo?: string): { content: string; outlineStyle: string; outlineWidth: string };
  /** Swagger UI's instance (set by swagger-ui-init.js). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ui: any;
  /** axe-core, once injected. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  axe: any;
}

/**
 * Where notebook HTML goes: tslab's `display` inside a kernel (auto-detected, or the override of
 * `setHtmlDisplay`), nowhere outside one. Also the render session state shared with `render.ts`.
 */

/** The part of tslab's `display` used here; `setHtmlDisplay` accepts any such object. */
export interface HtmlDisplay {
  html(s: string): void;
}

/** The render session state: whether plotly.js was emitted, and the display override. */
export interface RenderState {
  /** plotly.js was emitted in this session. */
  injected: boolean;
  /** `setHtmlDisplay`'s override; undefined = auto-detect. */
  display?: HtmlDisplay | null;
}

/** The session's render state. It lives on globalThis so that a module re-loaded by the kernel (edited source) keeps it. */
export function renderState(): RenderState {
  const g = globalThis as unknown as { __loadlabRender?: RenderState };
  if (!g.__loadlabRender) g.__loadlabRender = { injected: false };
  return g.__loadlabRender;
}

/**
 * Send notebook output to `d` instead of the auto-detected tslab display; `null` means "no kernel"
 * (show/table only return HTML); `undefined` restores auto-detection.
 */
export function setHtmlDisplay(d: HtmlDisplay | null | undefined): void {
  renderState().display = d;
}

/** tslab's display inside a kernel, else null. tslab hooks `require('tslab')` in code it compiles. */
export function kernelDisplay(): HtmlDisplay | null {
  const override = renderState().display;
  if (override !== undefined) return override;
  if ((globalThis as { __tslab__?: unknown }).__tslab__ === undefined) return null;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return typeof require === 'function' ? (require('tslab').display as HtmlDisplay) : null;
  } catch {
    return null;
  }
}

/**
 * Display `html` in the notebook when running in a kernel. Returns true if it was displayed.
 * Used by `show` and `table`.
 */
export function displayHtml(html: string): boolean {
  const d = kernelDisplay();
  if (!d) return false;
  try {
    d.html(html);
    return true;
  } catch {
    return false; // tslab's "Not ready": loaded in a kernel process but outside a cell
  }
}

/** Escaping for server-rendered HTML and SVG (the status page, an alert's page, the backtest report). */

/** Escapes text for HTML/SVG element content and quoted attribute values. */
export function escapeHtml(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

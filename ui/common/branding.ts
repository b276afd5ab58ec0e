// A tenant's branding (docs/api/portal.md) on the pages it shows to its own customers: the accent
// colour as custom properties, with a text colour that stays readable on it. Set through the CSSOM
// (a `style` object), which the Content-Security-Policy allows where a style attribute is refused.
import type { Branding } from './routes.js';

/** WCAG 2 relative luminance of `#rrggbb`. */
export function luminanceOf(hex: string): number {
  const channel = (i: number) => {
    const value = parseInt(hex.slice(i, i + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

/**
 * Black or white, whichever reads better on `hex`: one of the two always reaches 4.5:1, so a
 * button in the tenant's colour passes the contrast check whatever colour the tenant chose.
 */
export function textOn(hex: string): '#000000' | '#ffffff' {
  const lum = luminanceOf(hex);
  return contrast(lum, 0) >= contrast(lum, 1) ? '#000000' : '#ffffff';
}

/** The custom properties that carry the accent colour, none when the tenant chose none. */
export function accentStyle(branding: Branding): Record<string, string> {
  const accent = branding.accentColor;
  if (!accent || !/^#[0-9a-fA-F]{6}$/.test(accent)) return {};
  return { '--brand-accent': accent, '--brand-on-accent': textOn(accent) };
}

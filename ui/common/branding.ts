// A tenant's branding on the pages it shows its own customers, the portal and the connect page
// (docs/api/portal.md): its accent colour made readable in light and in dark, on the pages' surfaces
// as well as under a button's text, and its logo. One rule for both pages. The accent is set as custom
// properties through the CSSOM (a `style` object), which the Content-Security-Policy allows where a
// style attribute is refused. Pure functions, tested in test/ui/connect.test.ts.

type Rgb = [number, number, number];

const HEX = /^#([0-9a-f]{6})$/i;

export function rgbOf(hex: string): Rgb | null {
  const match = HEX.exec(hex);
  if (!match?.[1]) return null;
  const n = Number.parseInt(match[1], 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

export const hexOf = (rgb: Rgb): string =>
  `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;

/** WCAG 2's relative luminance of an sRGB colour. */
function luminance([r, g, b]: Rgb): number {
  const linear = (c: number) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** WCAG 2's contrast ratio of two colours, from 1 to 21. */
export function contrast(a: Rgb, b: Rgb): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

const mix = (from: Rgb, to: Rgb, share: number): Rgb =>
  from.map((c, i) => c + ((to[i] ?? c) - c) * share) as Rgb;

/** Normal text needs 4.5:1 (WCAG 1.4.3); links, buttons' text and focus rings take the accent. */
const READABLE = 4.5;
const BLACK: Rgb = [0, 0, 0];
const WHITE: Rgb = [255, 255, 255];

/**
 * The colour, moved towards black (`toward` BLACK) or white in small steps until it reads at 4.5:1 on
 * every one of `backgrounds`; unchanged when it already does.
 */
export function readableOn(color: Rgb, backgrounds: Rgb[], toward: Rgb): Rgb {
  for (let step = 0; step <= 20; step += 1) {
    const candidate = mix(color, toward, step / 20);
    const rounded = rgbOf(hexOf(candidate)) ?? candidate;
    if (backgrounds.every((bg) => contrast(rounded, bg) >= READABLE)) return rounded;
  }
  return toward;
}

// The page's surfaces (ui/styles.css `--surface` and `--bg`), light and dark.
const LIGHT_SURFACES: Rgb[] = [
  [0xff, 0xff, 0xff],
  [0xf6, 0xf7, 0xf9],
];
const DARK_SURFACES: Rgb[] = [
  [0x17, 0x1b, 0x21],
  [0x0f, 0x12, 0x16],
];

/**
 * The custom properties that give the page the tenant's accent (ui/styles.css, `.branded`): the
 * colour as given where it reads at 4.5:1 on the page, darker in light and lighter in dark where it
 * does not, so links, the button's text and the focus ring stay readable. Null for no accent or one
 * that is not `#rrggbb`.
 */
export function accentProperties(accentColor: string | null): Record<string, string> | null {
  const color = accentColor ? rgbOf(accentColor) : null;
  if (!color) return null;
  const light = readableOn(color, LIGHT_SURFACES, BLACK);
  const dark = readableOn(color, DARK_SURFACES, WHITE);
  return {
    '--brand-accent': hexOf(light),
    '--brand-accent-hover': hexOf(mix(light, BLACK, 0.15)),
    '--brand-accent-soft': hexOf(mix(light, WHITE, 0.9)),
    '--brand-accent-dark': hexOf(dark),
    '--brand-accent-dark-hover': hexOf(mix(dark, WHITE, 0.2)),
    '--brand-accent-dark-soft': hexOf(mix(dark, DARK_SURFACES[0] ?? BLACK, 0.82)),
  };
}

/**
 * The logo the page shows: an `https` URL, whose origin the page's policy admits (decision 0079), or
 * a `data:` image; anything else (which the settings refuse anyway) is not shown.
 */
export const shownLogo = (logoUrl: string | null): string | null =>
  logoUrl && /^(https:\/\/|data:image\/(png|jpeg|svg\+xml);base64,)/.test(logoUrl) ? logoUrl : null;

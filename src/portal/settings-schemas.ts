import { Type, type Static } from 'typebox';
import { Nullable, StrictObject } from '../http/schemas.js';

// The request and answer of the portal settings routes (docs/api/portal.md). The web UI imports these
// types; the routes validate and document with them. What a schema cannot say (an origin written as a
// browser writes it, an https or image data URL) is checked by settings.ts, naming the field.

/** A logo URL's limit: the whole URL, data URLs included (64 KiB). */
export const LOGO_URL_MAX_LENGTH = 64 * 1024;
export const MAX_FRAME_ANCESTORS = 10;

export const Branding = StrictObject(
  {
    name: Nullable(Type.String({ minLength: 1, maxLength: 100, description: 'shown instead of hubgate' })),
    logoUrl: Nullable(
      Type.String({
        maxLength: LOGO_URL_MAX_LENGTH,
        description: 'an https URL, or a `data:image/(png|jpeg|svg+xml);base64,` URL; at most 64 KiB',
      }),
    ),
    accentColor: Nullable(Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: '`#rrggbb`' })),
  },
  { description: 'What the portal and connect pages show of the tenant; null: nothing of its own' },
);
export type Branding = Static<typeof Branding>;

/** The body of both PUTs, and the answer of both routes: the settings whole, defaults included. */
export const PortalSettings = StrictObject({
  frameAncestors: Type.Array(
    Type.String({ maxLength: 300, description: '`https://host` or `https://host:port`' }),
    {
      maxItems: MAX_FRAME_ANCESTORS,
      uniqueItems: true,
      description:
        "The origins whose pages may frame the tenant's portal page (CSP frame-ancestors); empty: none",
    },
  ),
  branding: Branding,
});
export type PortalSettings = Static<typeof PortalSettings>;

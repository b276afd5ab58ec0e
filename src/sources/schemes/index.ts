import type { Scheme } from '../scheme.js';
import { github } from './github.js';
import { hmac } from './hmac.js';
import { shopify } from './shopify.js';
import { slack } from './slack.js';
import { standardWebhooks } from './standard-webhooks.js';
import { stripe } from './stripe.js';

/** Every scheme a source can have, by name (docs/api/sources.md). */
export const SCHEMES: Readonly<Record<string, Scheme>> = Object.fromEntries(
  [standardWebhooks, stripe, github, slack, shopify, hmac].map((scheme) => [scheme.name, scheme]),
);

export const SCHEME_NAMES = Object.keys(SCHEMES);

export const schemeOf = (name: string): Scheme | undefined =>
  Object.hasOwn(SCHEMES, name) ? SCHEMES[name] : undefined;

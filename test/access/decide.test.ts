import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decide } from '../../src/access/decide.js';
import type { Principal } from '../../src/access/principal.js';
import type { AccessRule } from '../../src/access/rules.js';

const key = (scopes: string[], entitlements = ['integrations', 'integration_hub']): Principal => ({
  kind: 'tenant_key',
  keyId: 'key_x',
  prefix: 'tnt_x',
  tenantId: 'ten_x',
  scopes,
  entitlements,
  expiresAt: new Date(),
  rateLimitPerMinute: null,
});
const session = (
  role: 'MEMBER' | 'EXECUTIVE',
  entitlements = ['integrations', 'integration_hub'],
): Principal => ({
  kind: 'session',
  sessionId: 'ses_x',
  userId: 'usr_x',
  email: 'a@b.co',
  role,
  tenantId: 'ten_x',
  entitlements,
  authMethod: 'password',
});
const platform: Principal = { kind: 'platform_key', keyId: 'pkey_x' };
const portal = (
  access: 'read' | 'operate' | 'manage',
  entitlements = ['integrations', 'integration_hub'],
): Principal => ({
  kind: 'portal',
  sessionId: 'pts_x',
  tenantId: 'ten_x',
  subject: 'kim',
  access,
  connectionIds: null,
  entitlements,
  expiresAt: new Date(),
});

const read: AccessRule = {
  class: 'tenant',
  automation: true,
  anyOf: [{ module: 'integrations', level: 'READER' }],
};
const operate: AccessRule = {
  class: 'tenant',
  automation: true,
  anyOf: [{ module: 'integrations', level: 'OPERATOR' }],
};
const administer: AccessRule = {
  class: 'tenant',
  automation: true,
  anyOf: [{ module: 'integrations', level: 'ADMIN' }],
};
const uiOnly: AccessRule = {
  class: 'tenant',
  automation: false,
  anyOf: [{ module: 'integrations', level: 'READER' }],
};
const either: AccessRule = {
  class: 'tenant',
  automation: true,
  anyOf: [
    { module: 'integrations', level: 'READER' },
    { module: 'integration_hub', level: 'READER' },
  ],
};

const cases: Array<[string, AccessRule, Principal, string | null]> = [
  ['READER scope reads', read, key(['integrations:READER']), null],
  ['OPERATOR includes READER', read, key(['integrations:OPERATOR']), null],
  ['ADMIN includes OPERATOR', operate, key(['integrations:ADMIN']), null],
  ['READER cannot operate', operate, key(['integrations:READER']), 'insufficient_scope'],
  ['OPERATOR cannot administer', administer, key(['integrations:OPERATOR']), 'insufficient_scope'],
  ['another module’s scope does not count', read, key(['integration_hub:ADMIN']), 'insufficient_scope'],
  [
    'a scope without entitlement is nothing',
    read,
    key(['integrations:ADMIN'], ['integration_hub']),
    'entitlement_missing',
  ],
  ['entitlement is checked before scope', operate, key([], []), 'entitlement_missing'],
  ['either module opens discovery', either, key(['integration_hub:READER']), null],
  [
    'discovery needs an entitled one',
    either,
    key(['integration_hub:READER'], ['integrations']),
    'insufficient_scope',
  ],
  ['keys are refused off the allowlist', uiOnly, key(['integrations:ADMIN']), 'route_not_allowed'],
  ['sessions may use non-automation routes', uiOnly, session('MEMBER'), null],
  [
    'a keys-only route refuses every session',
    { ...either, keysOnly: true },
    session('EXECUTIVE'),
    'route_not_allowed',
  ],
  [
    'a keys-only route takes a key by scope',
    { ...either, keysOnly: true },
    key(['integrations:READER']),
    null,
  ],
  ['MEMBER reads', read, session('MEMBER'), null],
  ['MEMBER cannot operate', operate, session('MEMBER'), 'role_forbidden'],
  ['EXECUTIVE administers', administer, session('EXECUTIVE'), null],
  ['roles need entitlement too', read, session('EXECUTIVE', []), 'entitlement_missing'],
  ['platform keys stay on platform routes', read, platform, 'route_not_allowed'],
  ['platform route: platform key', { class: 'platform' }, platform, null],
  ['platform route: tenant key', { class: 'platform' }, key(['integrations:ADMIN']), 'platform_key_required'],
  ['platform route: session', { class: 'platform' }, session('EXECUTIVE'), 'platform_key_required'],
  [
    'key management: key',
    { class: 'key_management' },
    key(['integrations:ADMIN']),
    'interactive_session_required',
  ],
  ['key management: member', { class: 'key_management' }, session('MEMBER'), 'role_forbidden'],
  ['key management: executive', { class: 'key_management' }, session('EXECUTIVE'), null],
  ['key management: platform key', { class: 'key_management' }, platform, 'route_not_allowed'],
  ['session route: key', { class: 'session' }, key(['integrations:ADMIN']), 'route_not_allowed'],
  [
    'session route with roles: member',
    { class: 'session', roles: ['EXECUTIVE'] },
    session('MEMBER'),
    'role_forbidden',
  ],
  ['portal: a route that names no portal access', read, portal('manage'), 'route_not_allowed'],
  ['portal: read reads', { ...read, portal: 'read' }, portal('read'), null],
  ['portal: manage includes read', { ...read, portal: 'read' }, portal('manage'), null],
  ['portal: read cannot operate', { ...operate, portal: 'operate' }, portal('read'), 'route_not_allowed'],
  [
    'portal: within the entitlements',
    { ...read, portal: 'read' },
    portal('manage', ['integration_hub']),
    'entitlement_missing',
  ],
  ['portal: a session route it is open to', { class: 'session', portal: 'read' }, portal('read'), null],
  ['portal: a session route', { class: 'session' }, portal('manage'), 'route_not_allowed'],
  ['portal: key management', { class: 'key_management' }, portal('manage'), 'route_not_allowed'],
  ['portal: a platform route', { class: 'platform' }, portal('manage'), 'platform_key_required'],
  ['portal: its own route', { class: 'portal' }, portal('read'), null],
  ['portal route: session', { class: 'portal' }, session('EXECUTIVE'), 'route_not_allowed'],
  ['portal route: key', { class: 'portal' }, key(['integrations:ADMIN']), 'route_not_allowed'],
];

for (const [label, rule, principal, expected] of cases) {
  test(`decide: ${label}`, () => {
    const decision = decide(rule, principal);
    assert.equal(
      decision.allowed ? null : decision.problem.code,
      expected,
      `${label}: the request is decided differently (allowed vs. which refusal)`,
    );
  });
}

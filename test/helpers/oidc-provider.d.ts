// The parts of oidc-provider (v9, which ships no types) that test/helpers/oauth-provider.ts uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AdapterPayload {
    [key: string]: unknown;
    grantId?: string;
    userCode?: string;
    uid?: string;
    consumed?: number;
  }
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface InteractionDetails {
    uid: string;
    grantId?: string;
    params: Record<string, unknown> & { client_id: string };
    prompt: { name: string; details: Record<string, unknown> };
  }

  export interface Grant {
    addOIDCScope(scope: string): void;
    addResourceScope(indicator: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface TokenContext {
    oidc: { params?: Record<string, unknown> };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: 'grant.success', listener: (ctx: TokenContext) => void): this;
    on(event: 'grant.error' | 'server_error', listener: (ctx: TokenContext, error: Error) => void): this;
    Grant: new (properties: { accountId: string; clientId: string }) => Grant;
    AccessToken: { find(value: string): Promise<{ scope?: string } | undefined> };
    ClientCredentials: { find(value: string): Promise<{ scope?: string } | undefined> };
  }
}

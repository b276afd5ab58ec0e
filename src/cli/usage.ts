export class UsageError extends Error {}

export const USAGE = `usage: hubgate <command>

commands:
  serve                                          API and web UI (default for npm start)
  worker                                         delivery workers only (serve runs them too)
  migrate                                        apply database migrations
  platform-key create --name N [--expires-at T]  create a plt_ key; prints {"id","prefix","secret","expiresAt"}
  platform-key list                              list platform keys (no secrets)
  platform-key revoke ID                         revoke a platform key

configuration is read from the environment: see the README.`;

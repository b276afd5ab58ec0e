// `npm test` (full runs): the document the app publishes, linted by Redocly's recommended rules;
// any error or warning fails. The app is built on an in-memory database, and nothing goes to the
// network (Redocly's telemetry and update check are switched off).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { createKeyring } from '../src/crypto/keyring.js';
import { openDatabase } from '../src/db/database.js';
import { createLogger } from '../src/logger.js';

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: Array<{ ruleId: string; message: string; location?: Array<{ pointer?: string }> }>;
}

async function publishedDocument(): Promise<unknown> {
  const database = await openDatabase({ kind: 'memory' });
  try {
    // As deployed: the rules rightly warn about a server on localhost, the default PUBLIC_URL.
    const config = parseConfig({ LOG_LEVEL: 'silent', PUBLIC_URL: 'https://hubgate.test' });
    const app = await buildApp(config, {
      database,
      keyring: createKeyring(randomBytes(32)),
      logger: createLogger('silent'),
    });
    const document = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    await app.close();
    return document;
  } finally {
    await database.close();
  }
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'hubgate-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(await publishedDocument()));
    const root = new URL('..', import.meta.url).pathname;
    const lint = spawnSync(
      join(root, 'node_modules/.bin/redocly'),
      ['lint', file, '--extends', 'recommended', '--format', 'json'],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    const json = lint.stdout.slice(lint.stdout.indexOf('{'));
    let report: LintReport;
    try {
      report = JSON.parse(json) as LintReport;
    } catch {
      console.error(`redocly lint gave no report (exit ${lint.status}):\n${lint.stdout}${lint.stderr}`);
      return 1;
    }
    for (const problem of report.problems) {
      console.error(`${problem.ruleId}: ${problem.message} at ${problem.location?.[0]?.pointer ?? '?'}`);
    }
    const { errors, warnings } = report.totals;
    console.error(`OpenAPI lint (Redocly recommended): ${errors} errors, ${warnings} warnings`);
    return errors + warnings === 0 ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

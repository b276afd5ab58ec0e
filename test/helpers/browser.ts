import assert from 'node:assert/strict';
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Result as AxeResult } from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { startHarness, type Harness, type HarnessOptions } from './harness.js';

/**
 * Browser tests drive the machine's own Chromium (Debian's package): playwright's browser download
 * cannot work here, and nothing may be fetched from outside at test time.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Set by CI (`.ci/run`): there, a missing browser is a failure, never a skip. */
const browserRequired = process.env.HUBGATE_REQUIRE_BROWSER === '1';

const INSTALL_HINT = 'install it with: apt-get install -y chromium (or set CHROMIUM_PATH)';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** Screenshots and accessibility results, for people to look at; git-ignored. */
export const SCREENSHOTS = join(root, 'screenshots');

function chromiumPresent(): boolean {
  try {
    accessSync(CHROMIUM, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why browser tests cannot run here, for `test(name, { skip: browserSkipReason() }, …)`; undefined when
 * they can. With HUBGATE_REQUIRE_BROWSER=1 a missing browser is not a reason to skip: the tests run
 * and fail in `launchBrowser`.
 */
export function browserSkipReason(): string | undefined {
  if (chromiumPresent() || browserRequired) return undefined;
  return `chromium not found at ${CHROMIUM}: ${INSTALL_HINT}`;
}

export interface UiHarness extends Harness {
  /** The origin the app believes it is served at (its PUBLIC_URL): where pages must be opened. */
  uiUrl: string;
}

/** A port on 127.0.0.1 that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The real app for a browser: its PUBLIC_URL is `http://localhost:<port>` and it listens on that port,
 * so the pages' requests carry the `Origin` the app accepts for cookie sessions (docs/api/authentication.md) and the
 * browser treats the origin as secure (Secure and `__Host-` cookies over plain HTTP). `baseUrl` (at
 * 127.0.0.1) stays for `request`, which sends no `Origin`.
 */
export async function startUiHarness(options: Omit<HarnessOptions, 'port'> = {}): Promise<UiHarness> {
  const port = await freePort();
  const uiUrl = `http://localhost:${port}`;
  const harness = await startHarness({ ...options, port, env: { ...options.env, PUBLIC_URL: uiUrl } });
  return { ...harness, uiUrl };
}

export interface LaunchOptions {
  /** More command-line switches, after the ones that keep the browser on loopback. */
  args?: string[];
  /**
   * Variables added to the browser's environment (this process's otherwise), e.g. `KRB5_CONFIG` and
   * `KRB5CCNAME` for the GSSAPI library Chromium loads to negotiate Kerberos.
   */
  env?: Record<string, string | undefined>;
  /**
   * Chromium's Local State (the browser-wide preferences it keeps between runs) to start with. With
   * one, the browser runs on a profile folder of its own, removed when it closes; without, on the
   * empty profile Playwright makes.
   */
  localState?: Record<string, unknown>;
}

/**
 * Headless Chromium that talks to this machine only: no background services (updates, sync,
 * safe browsing, metrics), no name resolved but localhost, and every non-loopback request sent to a
 * proxy address where nothing listens, so even an IP literal goes nowhere.
 */
export async function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
  if (!chromiumPresent()) assert.fail(`chromium not found at ${CHROMIUM}: ${INSTALL_HINT}`);
  for (const arg of options.args ?? [])
    assert.doesNotMatch(arg, /^--(proxy|no-proxy|host-resolver-rules)/, 'the loopback-only lock stays');
  const launchOptions = {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
      '--proxy-server=http://127.0.0.1:9',
      ...(options.args ?? []),
    ],
    ...(options.env && { env: { ...process.env, ...options.env } }),
  };
  if (!options.localState) return chromium.launch(launchOptions);
  // Chromium reads Local State from its profile folder at start-up, and `launch` makes that folder
  // itself: a persistent context starts from a folder of ours. Its browser makes contexts as usual.
  const dir = profileFolder();
  writeFileSync(join(dir, 'Local State'), JSON.stringify(options.localState));
  const context = await chromium.launchPersistentContext(dir, launchOptions);
  const browser = context.browser();
  assert.ok(browser, 'a persistent Chromium context has a browser');
  return browser;
}

let profilesRoot: string | undefined;

/**
 * A new profile folder. All are removed when this process exits, not when their browser disconnects:
 * Chromium's helper processes still write to it for a moment after that.
 */
function profileFolder(): string {
  if (!profilesRoot) {
    const root = mkdtempSync(join(tmpdir(), 'hubgate-chromium-'));
    profilesRoot = root;
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  }
  return mkdtempSync(join(profilesRoot, 'profile-'));
}

export type ColorScheme = 'light' | 'dark';

/** A page in a fresh context (its own cookies), with what went wrong in it so far. */
export interface TestPage {
  page: Page;
  context: BrowserContext;
  /**
   * Console errors (CSP violations included), uncaught exceptions and requests that failed at the
   * network level, one line each. A test of a healthy page expects none (`assertNoPageErrors`).
   */
  errors: string[];
  /** Answers with status 400 or more (`401 GET /api/v1/auth/session` when signed out is normal). */
  httpErrors: string[];
  close(): Promise<void>;
}

const schemes = new WeakMap<Page, ColorScheme>();

export async function newPage(
  browser: Browser,
  options: { colorScheme?: ColorScheme } = {},
): Promise<TestPage> {
  const colorScheme = options.colorScheme ?? 'light';
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    locale: 'en-US',
    timezoneId: 'UTC',
    colorScheme,
  });
  const page = await context.newPage();
  schemes.set(page, colorScheme);
  const errors: string[] = [];
  const httpErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium logs every answer of 400 or more as a console error; those are in httpErrors, and an
    // API's refusal is often the expected answer.
    if (message.text().startsWith('Failed to load resource: the server responded with a status of')) return;
    errors.push(`console: ${message.text()} (${message.location().url || 'page'})`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.stack ?? error.message}`));
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText;
    // The page gave it up itself (a request a newer one replaced, or a page left): not a failure.
    if (reason === 'net::ERR_ABORTED') return;
    errors.push(`request failed: ${request.method()} ${request.url()}: ${reason}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400)
      httpErrors.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  return { page, context, errors, httpErrors, close: () => context.close() };
}

/** Fails with every console error, uncaught exception and failed request the page has had. */
export function assertNoPageErrors(testPage: TestPage, label: string): void {
  assert.deepEqual(testPage.errors, [], `${label}: the page reported errors`);
}

/** Injects axe-core and returns the page's violations. */
export async function checkAccessibility(page: Page): Promise<AxeResult[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern; a <script> tag
  // with this text would be refused by `script-src 'self'`, and the page is never tested with a
  // weakened CSP (no bypassCSP).
  await page.evaluate(readFileSync(join(root, 'node_modules/axe-core/axe.min.js'), 'utf8'));
  const results = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: AxeResult[];
  };
  return results.violations;
}

export interface AccessibilityRecord {
  label: string;
  url: string;
  counts: Record<'critical' | 'serious' | 'moderate' | 'minor', number>;
  violations: { id: string; impact: string; help: string; nodes: number; targets: string[] }[];
}

const records: AccessibilityRecord[] = [];

/** What `assertNoSeriousViolations` found in this test file so far (also written to screenshots/a11y/). */
export const accessibilityRecords = (): readonly AccessibilityRecord[] => records;

const slug = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/**
 * Runs axe-core on the page as it is, records every violation (in memory and in
 * `screenshots/a11y/<label>.json`) and fails listing each serious or critical one (docs/contributors/web-ui.md).
 */
export async function assertNoSeriousViolations(page: Page, label: string): Promise<AccessibilityRecord> {
  const violations = await checkAccessibility(page);
  const record: AccessibilityRecord = {
    label,
    url: page.url(),
    counts: { critical: 0, serious: 0, moderate: 0, minor: 0 },
    violations: violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? 'unknown',
      help: v.help,
      nodes: v.nodes.length,
      targets: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)),
    })),
  };
  for (const v of violations) if (v.impact) record.counts[v.impact] += 1;
  records.push(record);
  mkdirSync(join(SCREENSHOTS, 'a11y'), { recursive: true });
  writeFileSync(join(SCREENSHOTS, 'a11y', `${slug(label)}.json`), `${JSON.stringify(record, null, 2)}\n`);

  const serious = record.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.ok(
    serious.length === 0,
    `${label}: ${serious.length} serious or critical accessibility violation(s) at ${record.url}\n` +
      serious
        .map((v) => `- ${v.id} (${v.impact}): ${v.help}; ${v.nodes} element(s), e.g. ${v.targets.join(', ')}`)
        .join('\n'),
  );
  return record;
}

/**
 * Full-page shots of the page in light and in dark (`<name>.png`, `<name>-dark.png` under
 * screenshots/), leaving the page in the colour scheme it was created with.
 */
export async function screenshot(page: Page, name: string): Promise<{ light: string; dark: string }> {
  assert.match(name, /^[a-z0-9][a-z0-9._-]*$/i, 'a screenshot name is a plain file name');
  mkdirSync(SCREENSHOTS, { recursive: true });
  const shoot = async (colorScheme: ColorScheme, path: string) => {
    await page.emulateMedia({ colorScheme });
    await page.screenshot({ path, fullPage: true, animations: 'disabled' });
    return path;
  };
  const light = await shoot('light', join(SCREENSHOTS, `${name}.png`));
  const dark = await shoot('dark', join(SCREENSHOTS, `${name}-dark.png`));
  await page.emulateMedia({ colorScheme: schemes.get(page) ?? 'light' });
  return { light, dark };
}

/** Whether the element has the keyboard focus (a function: a string would not be called with it). */
export const hasFocus = (locator: Locator): Promise<boolean> =>
  locator.evaluate((element) => element === element.ownerDocument.activeElement);

/**
 * Signs in on the sign-in page as a person does (labels and button by name), and waits for the page
 * `next` leads to and its heading.
 */
export async function signInThroughUi(
  page: Page,
  uiUrl: string,
  user: { email: string; password: string },
  next = '/',
): Promise<void> {
  await page.goto(`${uiUrl}/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel('E-mail address').fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  const path = next.split(/[?#]/)[0];
  await page.waitForURL((url) => url.pathname === path);
  await page.getByRole('heading', { level: 1 }).first().waitFor();
}

/** Generous: two loaded cores, a cold Chromium, PGlite. */
export const WAIT_MS = 30_000;

/** Retries `check` until it stops throwing (what a person sees settles), failing with its last error. */
export async function eventually(check: () => Promise<void> | void, ms = WAIT_MS): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Waits until the element is shown (or fails after WAIT_MS). */
export const visible = (locator: Locator) => locator.waitFor({ state: 'visible', timeout: WAIT_MS });
/** Waits until the element has left the page. */
export const gone = (locator: Locator) => locator.waitFor({ state: 'detached', timeout: WAIT_MS });

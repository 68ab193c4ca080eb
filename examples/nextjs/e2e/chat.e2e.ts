// Drives the built example in headless Chromium (Debian's /usr/bin/chromium through playwright-core):
// sends messages, regenerates, stops a long answer midway and checks after a reload that the partial answer
// was kept, pages back through the history, searches, checks that a second demo user gets 404 for the first
// one's thread, and saves screenshots. Run by e2e/run.sh.
// On a throwaway PostgreSQL 15 (e2e/postgres.ts), the app connecting as a NOINHERIT login: 503 before the
// migration and the grants, served as that login after them, 503 once the server is stopped. E2E_DATABASE=pglite
// runs the same chat on the embedded PGlite instead.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { reloadMidAnswer } from './resume-step.ts';
import {
  checkFavicon,
  checkMarkdown,
  checkNarrowLayout,
  checkRecall,
  inspectorTurns,
  threadCount,
} from './product-steps.ts';
import { startAppDatabase, type AppDatabase } from './postgres.ts';
import { beforeMigration, databaseStopped, grantAppLogin, migrateAsOwner, ranAsLogin } from './postgres-steps.ts';

const APP_DIR = join(import.meta.dirname, '..');
/** PostgreSQL 15 on loopback (the default), or the embedded PGlite (E2E_DATABASE=pglite). */
const MODE = process.env.E2E_DATABASE === 'pglite' ? 'pglite' : 'postgres';
const SCREENSHOTS = join(import.meta.dirname, 'screenshots');
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const results: Array<{ name: string; ok: boolean; error?: string }> = [];
async function step(name: string, body: () => Promise<void>) {
  const started = Date.now();
  try {
    await body();
    results.push({ name, ok: true });
    console.log(`  ✓ ${name} (${Date.now() - started} ms)`);
  } catch (error) {
    results.push({ name, ok: false, error: String(error) });
    console.log(`  ✗ ${name}: ${String(error)}`);
    throw error;
  }
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// The server keeps idle connections open longer than any pause in this script: with Node's default of 5 s, a
// request sent on a pooled connection just as the server's timer closes it is reset (ECONNRESET), a race of
// the test's client, not of the app.
const KEEP_ALIVE_MS = '600000';

type App = { server: ChildProcess; output: () => string };

/** Starts `next start` on the database of `database` (DATABASE_URL, or PGLITE_DIR) and waits until it answers. */
async function startApp(port: number, database: { DATABASE_URL: string } | { PGLITE_DIR: string }): Promise<App> {
  const args = ['start', '-H', '127.0.0.1', '-p', String(port), '--keepAliveTimeout', KEEP_ALIVE_MS];
  const server = spawn(join(APP_DIR, 'node_modules/.bin/next'), args, {
    cwd: APP_DIR,
    env: {
      ...process.env,
      CHAT_PAGE_SIZE: '6',
      SCRIPTED_MODEL_DELAY_MS: '10',
      SCRIPTED_STORY_DELAY_MS: '150',
      OPENAI_API_KEY: '',
      DATABASE_URL: '',
      MIGRATION_DATABASE_URL: '',
      ...database,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout!.on('data', (chunk) => (output += chunk));
  server.stderr!.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`next start exited (${server.exitCode}):\n${output}`);
    try {
      // Any answer: with PostgreSQL the app starts before its database is ready, and answers 503 until it is.
      await (await fetch(`http://127.0.0.1:${port}/api/health`)).arrayBuffer();
      return { server, output: () => output };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  server.kill();
  throw new Error(`the app did not start within 60 s:\n${output}`);
}

const assistantTexts = (page: Page) => page.locator('[data-testid="message-assistant"]').allInnerTexts();

async function send(page: Page, text: string) {
  await page.getByTestId('composer').fill(text);
  await page.getByTestId('send').click();
}

/** Waits until the chat is idle again (the Send button is back). */
async function idle(page: Page) {
  await page.getByTestId('send').waitFor({ state: 'visible', timeout: 30_000 });
}

async function lastAssistantText(page: Page) {
  return (
    await page
      .locator('[data-testid="message-assistant"]')
      .last()
      .locator('[data-testid="message-text"]')
      .allInnerTexts()
  ).join('');
}

async function main() {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'agent-history-e2e-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let database: AppDatabase | undefined;
  if (MODE === 'postgres') database = await startAppDatabase();
  console.log(`e2e: app on ${base}, database ${database ? 'PostgreSQL 15 on loopback' : `PGlite in ${work}`}`);
  const app = await startApp(
    port,
    database ? { DATABASE_URL: database.appUrl } : { PGLITE_DIR: join(work, 'pglite') },
  ).catch((error: unknown) => {
    database?.remove();
    throw error;
  });
  const context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 800 },
  });
  try {
    if (database) {
      const db = database;
      await step('as the NOINHERIT login on an empty database, every route and page answers 503 "not migrated"', () =>
        beforeMigration(base),
      );
      await step('npm run db:migrate as the owner (no superuser); then 503 names the grant the login lacks', () =>
        migrateAsOwner(base, db, APP_DIR),
      );
      await step("the README's one grant, as the 503 named it: then the app answers", () => grantAppLogin(base, db));
    }

    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(20_000);
    let threadUrl = '';

    await step('opens a thread', async () => {
      await page.goto(base);
      await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
      threadUrl = page.url();
      await page.getByTestId('composer').waitFor();
    });

    await step('serves a favicon', () => checkFavicon(page, base));

    await step('sends a message that runs a tool over two steps, with labelled usage and a stored turn', async () => {
      await send(page, 'weather in Oslo');
      await page.getByTestId('tool-weather').filter({ hasText: '°C' }).waitFor();
      await page.locator('[data-testid="message-text"]', { hasText: 'The weather tool says' }).waitFor();
      await idle(page);
      // The token figure says what it counts: the context the model was given, and what it wrote.
      const usage = await page.getByTestId('usage').last().innerText();
      assert(/^context [\d,]+ tokens · answer \d+$/.test(usage), `unlabelled usage: ${usage}`);
      // The inspector reads the stored run back: turn 1, one run.
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="inspector-run"]').length === 1);
      assert((await inspectorTurns(page)).join() === '1:1', `inspector turns: ${await inspectorTurns(page)}`);
      // The first message created the thread: its title (offline: the message's first words) and its count (the
      // question and the answer) show without a reload, in the list and above the chat.
      await page.getByTestId('thread-link').filter({ hasText: 'weather in Oslo' }).waitFor();
      await page.waitForFunction(() => document.querySelector('[data-testid="thread-count"]')?.textContent === '2');
      assert(
        (await page.getByTestId('thread-title').innerText()).includes('weather in Oslo'),
        'no title above the chat',
      );
      await page.screenshot({ path: join(SCREENSHOTS, '01-tool-turn.png') });
    });

    await step('sends five more messages', async () => {
      for (let number = 1; number <= 5; number++) {
        await send(page, `note number ${number} about apples`);
        await page
          .locator('[data-testid="message-text"]', { hasText: `note number ${number} about apples”` })
          .waitFor();
        await idle(page);
      }
      // The count follows every exchange without a reload: 6 questions, 6 answers.
      await page.waitForFunction(() => document.querySelector('[data-testid="thread-count"]')?.textContent === '12');
      assert((await threadCount(page)) === '12', 'the thread count is stale');
    });

    await step('regenerates the last answer (the old one is excluded, not deleted)', async () => {
      const before = await lastAssistantText(page);
      assert(before.includes('Answer #6'), `unexpected last answer: ${before}`);
      await page.getByTestId('regenerate').click();
      await page.locator('[data-testid="message-text"]', { hasText: 'Answer #7' }).waitFor();
      await idle(page);
      const texts = await assistantTexts(page);
      assert(!texts.some((text) => text.includes('Answer #6')), 'the superseded answer is still shown');
      // A regenerated answer is a second run of the same turn, not a new turn.
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="inspector-run"]').length === 7);
      const turns = await inspectorTurns(page);
      assert(turns.join() === '6:2,5:1,4:1,3:1,2:1,1:1', `inspector turns after regenerate: ${turns}`);
      await page.screenshot({ path: join(SCREENSHOTS, '02-regenerated.png') });
    });

    let partial = '';
    await step('stops a long answer midway', async () => {
      await send(page, 'tell me a long story');
      await page.getByTestId('stop').waitFor();
      // Stop once the story has streamed a dozen words (and long before its end).
      await page.waitForFunction(() => {
        const messages = document.querySelectorAll('[data-testid="message-assistant"]');
        const text = messages[messages.length - 1]?.querySelector('[data-testid="message-text"]')?.textContent ?? '';
        return text.startsWith('Once upon a time') && text.split(' ').length > 12;
      });
      await page.getByTestId('stop').click();
      await idle(page);
      partial = await lastAssistantText(page);
      assert(partial.startsWith('Once upon a time'), `unexpected partial answer: ${partial}`);
      assert(!partial.includes('very last word'), 'the answer was not stopped midway');
      await page.screenshot({ path: join(SCREENSHOTS, '03-stopped.png') });
    });

    await step(
      'after a reload, the partial answer is still there, marked stopped, and the regenerated answer replaced the old one',
      async () => {
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="inspector-run"]').length === 8);
        const turnsBefore = await inspectorTurns(page);
        await page.reload();
        await page.getByTestId('composer').waitFor();
        // The inspector's turns come from the store: the same numbers after the reload.
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="inspector-run"]').length === 8);
        const turnsAfter = await inspectorTurns(page);
        assert(turnsAfter.join() === turnsBefore.join(), `turns renumbered: ${turnsBefore} -> ${turnsAfter}`);
        assert(turnsAfter[0] === '7:1', `the story is not turn 7: ${turnsAfter}`);
        // A normal session is compacted with the demo window: a stored snapshot shows in the inspector.
        const notes = await page.getByTestId('context-note').allInnerTexts();
        assert(
          notes.some((note) => /^snapshot v\d+: /.test(note)),
          `no compaction shown after 8 turns: ${JSON.stringify(notes)}`,
        );
        const last = page.locator('[data-testid="message-assistant"]').last();
        const stored = (await last.locator('[data-testid="message-text"]').allInnerTexts()).join('');
        assert(
          stored.startsWith(partial.trim()),
          `stored partial answer ${JSON.stringify(stored)} does not start with ${JSON.stringify(partial)}`,
        );
        assert(!stored.includes('very last word'), 'the stored answer is complete, not partial');
        assert(
          (await last.getAttribute('data-status')) === 'cancelled',
          'the stopped answer is not stored as cancelled',
        );
        assert((await last.getByTestId('status-badge').innerText()) === 'stopped', 'no "stopped" badge');
        const texts = await assistantTexts(page);
        assert(
          texts.some((text) => text.includes('Answer #7')) && !texts.some((text) => text.includes('Answer #6')),
          'regenerate did not survive the reload',
        );
        await page.screenshot({ path: join(SCREENSHOTS, '04-after-reload.png') });
      },
    );

    await step('pages back to the start of the thread on scroll', async () => {
      assert(
        (await page.locator('[data-testid="message-user"]', { hasText: 'weather in Oslo' }).count()) === 0,
        'the first page already holds the oldest message',
      );
      for (
        let attempt = 0;
        attempt < 10 && (await page.getByText('Start of the conversation').count()) === 0;
        attempt++
      ) {
        await page.getByTestId('messages').evaluate((element) => element.scrollTo({ top: 0 }));
        await page.waitForTimeout(300);
      }
      await page.getByText('Start of the conversation').waitFor();
      const first = page.locator('[data-testid="message-user"]').first();
      assert((await first.innerText()).includes('weather in Oslo'), 'the oldest message is not first');
      assert(
        (await page.locator('[data-testid="message-user"]').count()) === 7,
        'expected all 7 user messages after paging',
      );
      await page.screenshot({ path: join(SCREENSHOTS, '05-paged-to-start.png') });
    });

    await step('searches across threads from a new chat and opens the hit', async () => {
      await page.getByTestId('new-chat').click();
      await page.waitForURL((url) => url.href !== threadUrl && /\/t\/[0-9a-f-]{36}$/.test(url.pathname));
      await page.getByTestId('search').fill('apples');
      await page.getByTestId('search-hit').first().waitFor();
      // Once per note: the question and the answer quoting it (and its regenerated twin) are one turn, one hit.
      const hits = await page.getByTestId('search-hit').allInnerTexts();
      assert(hits.length === 5, `expected one hit per apple note, got ${hits.length}: ${JSON.stringify(hits)}`);
      const turns = hits.map((hit) => /^turn (\d+)/i.exec(hit)?.[1]).sort();
      assert(turns.join() === '2,3,4,5,6', `hits' turns: ${turns}`);
      await page.screenshot({ path: join(SCREENSHOTS, '06-search.png') });
      await page.getByTestId('search-hit').first().click();
      await page.waitForURL(threadUrl);
      await page.locator('[data-testid="message-text"]', { hasText: 'apples' }).first().waitFor();
      // The new chat had no message, so no thread: it is created by its first message.
      assert((await page.getByTestId('thread-link').count()) === 1, 'expected one thread in the list');
      await page.screenshot({ path: join(SCREENSHOTS, '07-back-from-search.png') });
    });

    await step(
      "a second signed-in user sees none of the first one's threads: its thread id is 404 everywhere",
      async () => {
        const threadId = threadUrl.split('/').at(-1)!;
        const messagesOf = async () =>
          (await page.request.get(`${base}/api/threads/${threadId}/messages`)).json() as Promise<{
            messages?: unknown[];
          }>;
        const before = (await messagesOf()).messages?.length ?? 0;
        assert(before > 0, 'the first user cannot read their own thread');
        await page.goto(`${base}/api/session?user=demo-user-2`);
        await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
        assert(page.url() !== threadUrl, "the second user was sent to the first user's thread");
        await page.getByTestId('composer').waitFor();
        assert(
          (await page.getByTestId('thread-link').count()) === 0,
          "the second user's list shows another user's threads",
        );
        const opened = await page.goto(threadUrl);
        assert(opened?.status() === 404, `opening another user's thread answered ${opened?.status()}, not 404`);
        const read = await page.request.get(`${base}/api/threads/${threadId}/messages`);
        const inspect = await page.request.get(`${base}/api/threads/${threadId}/context`);
        const post = await page.request.post(`${base}/api/chat`, {
          data: { threadId, message: { id: 'intruder-1', role: 'user', parts: [{ type: 'text', text: 'let me in' }] } },
        });
        const stop = await page.request.post(`${base}/api/chat/stop`, { data: { threadId } });
        const search = (await (await page.request.get(`${base}/api/search?q=apples`)).json()) as { hits: unknown[] };
        const statuses = [read.status(), inspect.status(), post.status(), stop.status()];
        assert(
          statuses.every((status) => status === 404),
          `expected 404 everywhere, got ${statuses.join(', ')}`,
        );
        assert(search.hits.length === 0, "search found another user's messages");
        await page.screenshot({ path: join(SCREENSHOTS, '08-other-user-404.png') });
        await page.goto(`${base}/api/session?user=demo-user`);
        await page.waitForURL(threadUrl);
        const after = (await messagesOf()).messages?.length ?? 0;
        assert(after === before, `the other user's requests changed the thread (${before} -> ${after} messages)`);
      },
    );

    await step('asks before a tool that needs approval; Approve runs it and the answer continues', async () => {
      await page.getByTestId('new-chat').click();
      await page.waitForURL((url) => url.href !== threadUrl && /\/t\/[0-9a-f-]{36}$/.test(url.pathname));
      await send(page, 'remind me to water the plants');
      await page.getByTestId('approve').waitFor();
      await idle(page);
      await page.screenshot({ path: join(SCREENSHOTS, '09-approval-requested.png') });
      await page.getByTestId('approve').click();
      await page.locator('[data-testid="message-text"]', { hasText: 'Reminder set: water the plants.' }).waitFor();
      await idle(page);
      const outcome = page.getByTestId('approval-outcome').last();
      assert((await outcome.innerText()).includes('reminder set'), 'the approved tool did not run');
      // One answer, continued in place: the approval and the text are in the same assistant message.
      assert((await page.locator('[data-testid="message-assistant"]').count()) === 1, 'expected one answer');
    });

    await step('Deny records the denial; the tool does not run and the model is told', async () => {
      await send(page, 'remind me to call Bob');
      await page.getByTestId('deny').waitFor();
      await idle(page);
      await page.getByTestId('deny').click();
      await page.locator('[data-testid="message-text"]', { hasText: 'OK, I did not set the reminder.' }).waitFor();
      await idle(page);
      assert(
        (await page.getByTestId('approval-outcome').last().innerText()).includes('denied'),
        'the denial is not shown',
      );
      await page.screenshot({ path: join(SCREENSHOTS, '10-approved-and-denied.png') });
    });

    await step(
      'after a reload, the stored approval, denial and results show, with nothing left to approve',
      async () => {
        await page.reload();
        await page.getByTestId('composer').waitFor();
        const states = await page
          .getByTestId('tool-approval')
          .evaluateAll((elements) => elements.map((element) => element.getAttribute('data-state')));
        assert(JSON.stringify(states) === '["output-available","output-denied"]', `stored states: ${states}`);
        assert((await page.getByTestId('approve').count()) === 0, 'an approval is still offered after the reload');
        const texts = await assistantTexts(page);
        assert(texts.length === 2, `expected two stored answers, got ${texts.length}`);
        assert(texts[0]!.includes('Reminder set: water the plants.'), `first stored answer: ${texts[0]}`);
        assert(texts[1]!.includes('OK, I did not set the reminder.'), `second stored answer: ${texts[1]}`);
        // The continuation after an approval is the same turn as the question, not a new one.
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="inspector-turn"]').length === 2);
        const turns = (await inspectorTurns(page)).map((turn) => turn.split(':')[0]);
        assert(turns.join() === '2,1', `approval turns: ${await inspectorTurns(page)}`);
        await page.screenshot({ path: join(SCREENSHOTS, '11-approvals-after-reload.png') });
      },
    );

    await step('renders Markdown answers as elements, and markup in them as text (nothing runs)', () =>
      checkMarkdown(page, SCREENSHOTS),
    );

    await step("a new chat recalls what the user said in another; the other user's recalls nothing of it", () =>
      checkRecall(page, base, threadUrl),
    );

    await step('at 420 px the chat keeps the width; the thread list and inspector are drawers', () =>
      checkNarrowLayout(page, threadUrl, SCREENSHOTS),
    );

    await step('reloads mid-answer: the answer resumes to its end, shown once, and is stored so', () =>
      reloadMidAnswer(page, SCREENSHOTS),
    );

    if (database) {
      const db = database;
      await step('the app ran as the NOINHERIT login: pg_stat_activity shows only it, and the rows are stored', () =>
        Promise.resolve(ranAsLogin(db)),
      );
      await step('with the PostgreSQL server stopped, the routes and pages answer 503 "unavailable"', () =>
        databaseStopped(base, db),
      );
    }
  } catch (error) {
    // What the server printed says whether it failed or the client did; print its tail with the failure.
    const exited = app.server.exitCode === null ? 'still running' : `exited with ${app.server.exitCode}`;
    console.log(`e2e: the app (${exited}) printed:\n${app.output().split('\n').slice(-60).join('\n')}`);
    throw error;
  } finally {
    await context.close().catch(() => {});
    app.server.kill('SIGTERM');
    database?.remove();
    rmSync(work, { recursive: true, force: true });
  }
}

const started = Date.now();
main().then(
  () => {
    console.log(
      `e2e (${MODE}): ${results.length} passed, 0 failed (${Math.round((Date.now() - started) / 1000)} s); screenshots in ${SCREENSHOTS}`,
    );
  },
  (error: unknown) => {
    const failed = results.filter((result) => !result.ok).length || 1;
    console.error(error);
    console.log(`e2e (${MODE}): ${results.filter((result) => result.ok).length} passed, ${failed} failed`);
    process.exit(1);
  },
);

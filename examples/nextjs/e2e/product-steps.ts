// The e2e steps for "the example looks like a product": favicon, Markdown, narrow layout, and reading the
// inspector. Used by e2e/chat.e2e.ts.
import { join } from 'node:path';
import type { Page } from 'playwright-core';

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** The inspector's turns, newest first, as `<turn>:<runs>`. */
export function inspectorTurns(page: Page): Promise<string[]> {
  return page
    .getByTestId('inspector-turn')
    .evaluateAll((sections) =>
      sections.map(
        (section) =>
          `${section.getAttribute('data-turn')}:${section.querySelectorAll('[data-testid="inspector-run"]').length}`,
      ),
    );
}

/** The active thread's message count in the list. */
export async function threadCount(page: Page): Promise<string> {
  return page.locator('.threads a.active [data-testid="thread-count"]').innerText();
}

/** The page names an icon, and the server serves it as an image. */
export async function checkFavicon(page: Page, base: string): Promise<void> {
  const href = await page.locator('link[rel="icon"]').first().getAttribute('href');
  assert(href, 'no <link rel="icon"> in the page');
  const response = await page.request.get(new URL(href, base).href);
  assert(response.status() === 200, `the icon ${href} answered ${response.status()}`);
  assert(
    (response.headers()['content-type'] ?? '').startsWith('image/'),
    `the icon is ${response.headers()['content-type']}`,
  );
}

/** A Markdown answer renders as elements; the `<script>`, `<img onerror>` and `javascript:` link in it stay text. */
export async function checkMarkdown(page: Page, screenshots: string): Promise<void> {
  const before = page.url();
  await page.getByTestId('new-chat').click();
  await page.waitForURL((url) => url.href !== before && /\/t\/[0-9a-f-]{36}$/.test(url.pathname));
  await page.waitForLoadState('networkidle');
  await page.getByTestId('composer').fill('show me some markdown');
  await page.getByTestId('send').click();
  await page.locator('[data-testid="message-text"]', { hasText: 'Markup is shown as text' }).waitFor();
  await page.getByTestId('send').waitFor({ state: 'visible', timeout: 30_000 });
  const answer = page.locator('[data-testid="message-assistant"]').last().getByTestId('message-text');
  const count = (selector: string) => answer.locator(selector).count();
  assert((await count('h3')) === 1, 'the heading is not an element');
  assert((await count('strong')) === 1 && (await count('em')) === 1, 'bold or italic is not an element');
  assert((await count('ul > li')) === 2, 'the list is not a list');
  assert((await count('pre > code')) === 1, 'the code block is not a <pre>');
  assert((await count('a[href="https://ai-sdk.dev"]')) === 1, 'the https link is not a link');
  assert((await count('script, img, a[href^="javascript"]')) === 0, 'markup from the answer became elements');
  const text = await answer.innerText();
  assert(text.includes('<script>window.__injected = "script"</script>'), `the <script> is not shown as text: ${text}`);
  assert(text.includes('<img src="x"'), 'the <img> is not shown as text');
  assert(!text.includes('**') && !text.includes('###'), 'Markdown syntax is shown raw');
  await page.waitForTimeout(300);
  assert((await page.evaluate(() => (window as { __injected?: string }).__injected)) === undefined, 'markup ran');
  await page.screenshot({ path: join(screenshots, '13-markdown.png') });
  // Stored, and rendered the same after a reload.
  await page.reload();
  await page.getByTestId('composer').waitFor();
  assert((await count('pre > code')) === 1 && (await count('script')) === 0, 'the stored answer renders otherwise');
  assert((await page.evaluate(() => (window as { __injected?: string }).__injected)) === undefined, 'markup ran');
}

/**
 * At 420 × 860 the chat has the whole width and the composer fits; the thread list and the inspector are closed
 * drawers (off screen, hidden) opened by the top bar's toggles, over the chat, and closed by the scrim.
 */
export async function checkNarrowLayout(page: Page, threadUrl: string, screenshots: string): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(threadUrl);
  await page.getByTestId('composer').waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="budget-bar"]').length > 0);
  await page.screenshot({ path: join(screenshots, '14-desktop-1280.png') });
  await page.setViewportSize({ width: 420, height: 860 });
  await page.waitForTimeout(400);
  const box = async (testId: string) => (await page.getByTestId(testId).boundingBox())!;
  const chat = await box('chat');
  assert(chat.x === 0 && chat.width === 420, `the chat is ${chat.width}px wide at x=${chat.x}, not 420 at 0`);
  const composer = await box('composer');
  assert(composer.width >= 150 && composer.x + composer.width <= 420, `the composer is ${JSON.stringify(composer)}`);
  for (const id of ['regenerate', 'send']) {
    const button = await box(id);
    assert(button.x + button.width <= 420, `${id} overflows: ${JSON.stringify(button)}`);
  }
  const bubbles = await page
    .locator('[data-testid^="message-"][data-message-id]')
    .evaluateAll((elements) => elements.map((element) => element.getBoundingClientRect().right));
  assert(
    bubbles.every((right) => right <= 420),
    `a message overflows: ${bubbles.filter((right) => right > 420).join()}`,
  );
  for (const id of ['sidebar', 'inspector']) {
    assert(!(await page.getByTestId(id).isVisible()), `the ${id} is shown over the chat while closed`);
  }
  await page.screenshot({ path: join(screenshots, '15-phone-420.png') });

  await page.getByTestId('toggle-threads').click();
  await page.getByTestId('thread-link').first().waitFor({ state: 'visible' });
  await page.waitForTimeout(300);
  const sidebar = await box('sidebar');
  assert(sidebar.x === 0 && sidebar.width <= 357, `the open thread list is ${JSON.stringify(sidebar)}`);
  await page.screenshot({ path: join(screenshots, '16-phone-threads.png') });
  await page.getByTestId('scrim').click({ position: { x: 400, y: 400 } });
  await page.waitForTimeout(300);
  assert(!(await page.getByTestId('sidebar').isVisible()), 'the scrim did not close the thread list');

  await page.getByTestId('toggle-inspector').click();
  await page.getByTestId('budget-bar').first().waitFor({ state: 'visible' });
  await page.waitForTimeout(300);
  const inspector = await box('inspector');
  assert(
    inspector.x + inspector.width === 420 && inspector.width <= 357,
    `the open inspector is ${JSON.stringify(inspector)}`,
  );
  await page.screenshot({ path: join(screenshots, '17-phone-inspector.png') });
  await page.getByTestId('scrim').click({ position: { x: 20, y: 400 } });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForTimeout(300);
}

/** Asks "what do you remember about apples?" in a new chat of the signed-in user: the answer's text. */
async function askWhatIsRemembered(page: Page): Promise<string> {
  const before = page.url();
  await page.getByTestId('new-chat').click();
  await page.waitForURL((url) => url.href !== before && /\/t\/[0-9a-f-]{36}$/.test(url.pathname));
  await page.waitForLoadState('networkidle');
  await page.getByTestId('composer').fill('what do you remember about apples?');
  await page.getByTestId('send').click();
  const answer = page.locator('[data-testid="message-assistant"]').last().getByTestId('message-text');
  await answer.filter({ hasText: /earlier chat|remember nothing/ }).waitFor();
  await page.getByTestId('send').waitFor({ state: 'visible', timeout: 30_000 });
  return (await answer.innerText()).trim();
}

/**
 * A new chat recalls what the same user said in another one (the context manager's recall reached the model, which
 * quotes it); the other demo user's new chat recalls nothing of it.
 */
export async function checkRecall(page: Page, base: string, threadUrl: string): Promise<void> {
  const recalled = await askWhatIsRemembered(page);
  assert(/^From an earlier chat: “.*apples.*”\.$/s.test(recalled), `the new chat recalled: ${recalled}`);
  await page.goto(`${base}/api/session?user=demo-user-2`);
  await page.waitForURL(/\/t\/[0-9a-f-]{36}$/);
  await page.getByTestId('composer').waitFor();
  const other = await askWhatIsRemembered(page);
  assert(other === 'I remember nothing from your other chats.', `the other user's new chat recalled: ${other}`);
  await page.goto(`${base}/api/session?user=demo-user`);
  await page.goto(threadUrl);
  await page.getByTestId('composer').waitFor();
}

// The e2e step for resumable answers (`useChat({ resume: true })` and app/api/chat/[id]/stream/route.ts): a reload in
// the middle of a slow answer, after which the answer goes on from where the server is, to its end, shown once.
import { join } from 'node:path';
import type { Page } from 'playwright-core';

const STORY_START = 'Once upon a time';
const STORY_END = 'until the very last word of this deliberately long and slow story.';

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

const lastAssistant = (page: Page) => page.locator('[data-testid="message-assistant"]').last();
const lastAssistantText = async (page: Page) =>
  (await lastAssistant(page).locator('[data-testid="message-text"]').allInnerTexts()).join('');
const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** In a new chat: asks for the slow story, reloads after a dozen words, and checks the answer ends once, whole. */
export async function reloadMidAnswer(page: Page, screenshots: string): Promise<void> {
  const before = page.url();
  await page.getByTestId('new-chat').click();
  await page.waitForURL((url) => url.href !== before && /\/t\/[0-9a-f-]{36}$/.test(url.pathname));
  const chatUrl = page.url();
  // The new chat's resume request (no thread yet: 204) and hydration are done before typing.
  await page.waitForLoadState('networkidle');
  await page.getByTestId('composer').fill('tell me a long story');
  await page.getByTestId('send').click();
  await page.waitForFunction(() => {
    const messages = document.querySelectorAll('[data-testid="message-assistant"]');
    const text = messages[messages.length - 1]?.querySelector('[data-testid="message-text"]')?.textContent ?? '';
    return text.startsWith('Once upon a time') && text.split(' ').length > 12;
  });
  await page.reload();
  assert(page.url() === chatUrl, 'the reload left the chat');
  // The answer is replayed from its start and continues live: wait for its last word.
  await page.waitForFunction(
    (end) => {
      const messages = document.querySelectorAll('[data-testid="message-assistant"]');
      return (messages[messages.length - 1]?.querySelector('[data-testid="message-text"]')?.textContent ?? '').includes(
        end,
      );
    },
    STORY_END,
    { timeout: 60_000 },
  );
  await page.getByTestId('send').waitFor({ state: 'visible', timeout: 30_000 });
  const shown = await lastAssistantText(page);
  assert(shown.startsWith(STORY_START), `the resumed answer does not start with the story: ${shown.slice(0, 80)}`);
  assert(occurrences(shown, STORY_START) === 1, `the story's start is shown more than once: ${shown}`);
  assert(occurrences(shown, STORY_END) === 1, `the story's end is shown more than once: ${shown}`);
  assert((await page.locator('[data-testid="message-assistant"]').count()) === 1, 'the answer is shown twice');
  assert((await page.locator('[data-testid="message-user"]').count()) === 1, 'the question is shown twice');
  await page.screenshot({ path: join(screenshots, '12-resumed-after-reload.png') });

  // What was stored is what was shown, completed.
  await page.reload();
  await page.getByTestId('composer').waitFor();
  assert((await lastAssistantText(page)) === shown, 'the stored answer differs from the resumed one');
  assert((await lastAssistant(page).getAttribute('data-status')) === 'completed', 'the answer is not completed');
}

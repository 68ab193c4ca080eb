import type { ThreadTitleInput } from './generate-thread-title.js';

/** A deterministic title: the first words of the user's message (at most 6 words, 80 characters). */
export function offlineThreadTitle({ userText }: ThreadTitleInput): string {
  const words = userText.replace(/\s+/g, ' ').trim().split(' ').slice(0, 6).join(' ');
  return words.replace(/[.?!,;:]+$/, '') || 'New chat';
}

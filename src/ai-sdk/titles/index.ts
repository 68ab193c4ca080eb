/** Thread titles, written after a chat's first exchange. */
export { generateThreadTitle, type ChatTitleGenerator, type ThreadTitleInput } from './generate-thread-title.js';
export { offlineThreadTitle } from './offline-thread-title.js';

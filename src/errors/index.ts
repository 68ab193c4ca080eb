export { AgentHistoryError } from './agent-history-error.js';
export { InvalidTenantError } from './invalid-tenant-error.js';
export { NotFoundError, type NotFoundEntity } from './not-found-error.js';
export { InvalidArgumentError } from './invalid-argument-error.js';
export { InvalidMessageError } from './invalid-message-error.js';
export { FileUrlNotAllowedError } from './file-url-not-allowed-error.js';
export { MessageTooLargeError } from './message-too-large-error.js';
export { VersionConflictError } from './version-conflict-error.js';
export { DatabaseError } from './database-error.js';

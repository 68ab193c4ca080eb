/** The exclusion reason written on the answers a regeneration supersedes (the rows stay in the log). */
export const SUPERSEDED_BY_REGENERATE = 'superseded-by-regenerate';
/** The exclusion reason written on the messages an edit supersedes (the rows stay in the log). */
export const SUPERSEDED_BY_EDIT = 'superseded-by-edit';

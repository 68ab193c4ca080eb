import postgres from 'postgres';

/** One statement's plan as `auto_explain` logged it (`log_analyze`, JSON format). */
export interface ExecutedPlan {
  'Query Text': string;
  Plan: PlanNode;
}

/** A node of an executed plan (the fields the tests read; the server sends more). */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Every node of `plan`, depth first. */
export function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}

export const AUTO_EXPLAIN_SETTINGS = [
  'auto_explain.log_min_duration = 0',
  'auto_explain.log_nested_statements = on',
  'auto_explain.log_analyze = on',
  'auto_explain.log_format = json',
  'auto_explain.log_level = notice',
];

/** The plans in `auto_explain`'s notices ("duration: … ms  plan:\n{…}"). */
export function plansOfNotices(notices: string[]): ExecutedPlan[] {
  return notices
    .filter((notice) => notice.startsWith('duration:'))
    .map((notice) => JSON.parse(notice.slice(notice.indexOf('{'))) as ExecutedPlan);
}

/**
 * Runs `statement` as superuser on the server at `adminUrl` (its own connection, closed after) with `auto_explain`
 * logging every statement it runs, nested ones too, and returns their plans as executed, innermost first.
 */
export async function explainNestedOnServer(
  adminUrl: string,
  statement: string,
  settings: readonly string[] = [],
): Promise<ExecutedPlan[]> {
  const notices: string[] = [];
  const explaining = postgres(adminUrl, { max: 1, onnotice: (notice) => notices.push(notice.message ?? '') });
  try {
    await explaining.begin(async (tx) => {
      await tx.unsafe(`LOAD 'auto_explain'`);
      for (const setting of [...AUTO_EXPLAIN_SETTINGS, ...settings]) await tx.unsafe(`SET LOCAL ${setting}`);
      await tx.unsafe(statement);
    });
  } finally {
    await explaining.end();
  }
  return plansOfNotices(notices);
}

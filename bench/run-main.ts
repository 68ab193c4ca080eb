/** Runs a bench script's `main` and exits: 0 when it resolves, 1 (after printing the error) when it rejects. */
export function runMain(main: () => Promise<unknown>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

/** Progress goes to stderr so that stdout carries only the results table. */
export function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

type Json = Record<string, unknown>;

/*
 * The shape-level handling of message components that every message needs whatever validates their
 * fields: ids filled in, and the count the limits of GUILDS.md §5 are about.
 */

/**
 * Every component gets an `id`: the one sent, or the next number after those before it in reading order
 * (the interface fills missing ids sequentially; responses always carry them).
 */
export function numberComponents(components: readonly Json[]): Json[] {
  let next = 0;
  const used = new Set<number>();
  const collect = (list: readonly Json[]) => {
    for (const component of list) {
      if (typeof component['id'] === 'number') used.add(component['id']);
      if (Array.isArray(component['components'])) collect(component['components'] as Json[]);
      const accessory = component['accessory'];
      if (accessory && typeof accessory === 'object') collect([accessory as Json]);
    }
  };
  collect(components);
  const fill = (list: readonly Json[]): Json[] =>
    list.map((component) => {
      const out: Json = { ...component };
      if (typeof out['id'] !== 'number') {
        do next += 1;
        while (used.has(next));
        out['id'] = next;
      }
      if (Array.isArray(component['components'])) out['components'] = fill(component['components'] as Json[]);
      const accessory = component['accessory'];
      if (accessory && typeof accessory === 'object') out['accessory'] = fill([accessory as Json])[0];
      return out;
    });
  return fill(components);
}

/** Components counted at every depth (rows, sections, containers and what they hold). */
export function countComponents(components: readonly Json[]): number {
  let count = 0;
  for (const component of components) {
    count += 1;
    const children = component['components'];
    if (Array.isArray(children)) count += countComponents(children as Json[]);
    const accessory = component['accessory'];
    if (accessory && typeof accessory === 'object') count += 1;
  }
  return count;
}
